// MFMA fragment layouts; see mfma_fragment.h.
#include "layout/mfma_fragment.h"

#include "arith/simplify.h"
#include "ir/index_expr.h"
#include "support/error.h"

namespace tl {
namespace {

using namespace index_expr;

// Row (within an R x R tile) of accumulator register r of lane l: 16x16: 4 * (l / 16) + r;
// 32x32: 8 * (r / 4) + 4 * (l / 32) + r % 4.
Expr TileRow(int64_t R, const Expr& lane, const Expr& r) {
  return R == 16 ? Div(lane, 16) * C(4) + r : Div(r, 4) * C(8) + Div(lane, 32) * C(4) + Mod(r, 4);
}

}  // namespace

Fragment MfmaAccumulator(int64_t M, int64_t N, int64_t wm, int64_t wn, int64_t R) {
  int64_t wM = M / wm, wN = N / wn, nt = wN / R, outs = R * R / 64;
  Fragment f =
      NewFragment({M, N}, 64 * wm * wn, (wM / R) * nt * outs, 1,
                  "mfma_C(" + std::to_string(M) + "x" + std::to_string(N) + ", waves " + std::to_string(wm) +
                      "x" + std::to_string(wn) + (R == 32 ? ", 32x32 tiles" : "") + ")");
  f.kind = "mfma_C";
  f.params = {M, N, wm, wn, R};
  // Each MFMA computes the transposed tile (D = B^T A^T): the ISA's D row is the tile's column.
  Expr wave = Div(f.tid, 64), lane = Mod(f.tid, 64), tile = Div(f.loc, outs), r = Mod(f.loc, outs);
  f.index = {Mod(wave, wm) * C(wM) + Div(tile, nt) * C(R) + Mod(lane, R),
             Div(wave, wm) * C(wN) + Mod(tile, nt) * C(R) + TileRow(R, lane, r)};
  Expr ii = Mod(f.idx[0], wM), jj = Mod(f.idx[1], wN), b = Mod(jj, R);
  Expr wave_of = Div(f.idx[1], wN) * C(wm) + Div(f.idx[0], wM);
  if (R == 16) {
    f.thread = wave_of * C(64) + Div(b, 4) * C(16) + Mod(ii, 16);
    f.local = (Div(ii, 16) * C(nt) + Div(jj, 16)) * C(4) + Mod(b, 4);
  } else {
    f.thread = wave_of * C(64) + Div(Mod(b, 8), 4) * C(32) + Mod(ii, 32);
    f.local = (Div(ii, 32) * C(nt) + Div(jj, 32)) * C(16) + Div(b, 8) * C(4) + Mod(b, 4);
  }
  return f;
}

Fragment MfmaRows(int64_t M, int64_t wm, int64_t wn, int64_t R) {
  // Row a of a tile is held by the lanes l % R == a of all 64 / R lane groups, in every wave of its wave row.
  int64_t wM = M / wm, G = 64 / R;
  Fragment f = NewFragment({M}, 64 * wm * wn, wM / R, G * wn,
                           "mfma_rows(" + std::to_string(M) + ", waves " + std::to_string(wm) + "x" +
                               std::to_string(wn) + (R == 32 ? ", 32x32 tiles" : "") + ")");
  f.kind = "mfma_rows";
  f.params = {M, 0, wm, wn, R};
  Expr wave = Div(f.tid, 64), lane = Mod(f.tid, 64);
  f.index = {Mod(wave, wm) * C(wM) + f.loc * C(R) + Mod(lane, R)};
  Expr ii = Mod(f.idx[0], wM);
  Expr wave_of = Div(f.rep, G) * C(wm) + Div(f.idx[0], wM);
  f.thread = wave_of * C(64) + Mod(f.rep, G) * C(R) + Mod(ii, R);
  f.local = Div(ii, R);
  f.replica = Div(lane, R) + Div(wave, wm) * C(G);
  return f;
}

std::pair<int64_t, int64_t> MfmaWaveGrid(int64_t M, int64_t N, int64_t waves, int policy) {
  auto fits = [&](int64_t wm, int64_t wn) { return M % (16 * wm) == 0 && N % (16 * wn) == 0; };
  if (policy == 1) {
    for (int64_t wm = waves; wm >= 1; --wm)
      if (waves % wm == 0 && fits(wm, waves / wm)) return {wm, waves / wm};
  } else if (policy == 2) {
    for (int64_t wn = waves; wn >= 1; --wn)
      if (waves % wn == 0 && fits(waves / wn, wn)) return {waves / wn, wn};
  } else {
    std::pair<int64_t, int64_t> best{0, 0};
    double best_score = 1e30;
    for (int64_t wm = 1; wm <= waves; ++wm) {
      if (waves % wm || !fits(wm, waves / wm)) continue;
      double a = static_cast<double>(M) / wm, b = static_cast<double>(N) / (waves / wm);
      double score = a > b ? a / b : b / a;
      if (score < best_score - 1e-9) best_score = score, best = {wm, waves / wm};
    }
    if (best.first) return best;
  }
  static const char* names[] = {"Square", "FullRow", "FullCol"};
  throw UserError(ErrorKind::kLayout, "T.gemm on HIP: a " + std::to_string(M) + "x" + std::to_string(N) +
                                          " accumulator cannot be split over " + std::to_string(waves) +
                                          " waves (64 threads each) with policy " + names[policy] +
                                          " (each wave needs a multiple of 16 rows and 16 columns: MFMA "
                                          "16x16x16 tiles); change the tile or the thread count");
}

int64_t MfmaLdsRowElems(int64_t cols, int elem_bytes) { return elem_bytes == 2 && cols == 48 ? 64 : cols; }

int64_t MfmaKRowsOffsetInt(int64_t row, int64_t col, int64_t cols, int elem_bytes) {
  if (elem_bytes == 1 && cols % 16 == 0 && (cols / 16 == 4 || cols / 16 % 8 == 0))
    return row * cols + ((col / 16) ^ (((row >> 3) ^ (row >> 4)) & 1)) * 16 + col % 16;
  if (elem_bytes != 2 || cols % 8 != 0) return row * cols + col;
  const int64_t cpr = cols / 8, chunk = col / 8;
  if (cpr == 2) return (row / 4 * 4 + (row + row / 4) % 4) * cols + col;
  if (cpr == 6) return row * 64 + (chunk + 2 * (row / 4 % 4) + 6 * (row % 4)) % 8 * 8 + col % 8;
  auto bit = [&](int i) { return (row >> i) & 1; };
  int64_t phys = chunk;
  if (cpr % 8 == 0)
    phys = (chunk / 8) * 8 + ((chunk % 8) ^ (bit(0) | (bit(2) ^ bit(4)) << 1 | (bit(2) ^ bit(3)) << 2));
  else if (cpr == 4)
    phys = chunk ^ (bit(1) | (bit(2) ^ bit(3)) << 1);
  return row * cols + phys * 8 + col % 8;
}

Expr MfmaKRowsOffset(const Expr& row, const Expr& col, int64_t cols, int elem_bytes) {
  int64_t cpr = cols / 8;
  if (elem_bytes == 1 && cols % 16 == 0 &&
      (cols / 16 == 4 || cols / 16 % 8 == 0)) {  // 8-bit: bit 0 of the chunk
    Expr s = Mod(Div(row, 8) + Div(row, 16), 2), chunk = Div(col, 16);
    Expr x = Call(DataType::Int(32), "tl.bitwise_xor", {Simplify(chunk), Simplify(s)});
    return Simplify(row * C(cols) + x * C(16) + Mod(col, 16));
  }
  if (elem_bytes == 2 && cols % 8 == 0 && cpr == 2)  // 32-byte rows: four a line, rotated by row / 4
    return Simplify((Div(row, 4) * C(4) + Mod(row + Div(row, 4), 4)) * C(cols) + col);
  if (elem_bytes == 2 && cols % 8 == 0 && cpr == 6)  // 96-byte rows padded to 128: chunks rotated
    return Simplify(row * C(64) +
                    Mod(Div(col, 8) + Mod(Div(row, 4), 4) * C(2) + Mod(row, 4) * C(6), 8) * C(8) +
                    Mod(col, 8));
  if (elem_bytes != 2 || cols % 8 != 0 || (cpr % 8 != 0 && cpr != 4)) return Simplify(row * C(cols) + col);
  auto bit = [&](int64_t i) { return Mod(Div(row, int64_t{1} << i), 2); };
  auto sum2 = [&](int64_t i, int64_t j) {
    return Mod(Div(row, int64_t{1} << i) + Div(row, int64_t{1} << j), 2);
  };
  Expr s = cpr == 4 ? bit(1) + sum2(2, 3) * C(2) : bit(0) + sum2(2, 4) * C(2) + sum2(2, 3) * C(4);
  Expr chunk = Div(col, 8);
  Expr low = Simplify(cpr == 4 ? chunk : Mod(chunk, 8)), sv = Simplify(s);
  int64_t p, q;
  Expr x = AsConstInt(low, &p) && AsConstInt(sv, &q) ? C(p ^ q)
                                                     : Call(DataType::Int(32), "tl.bitwise_xor", {low, sv});
  Expr phys = cpr == 4 ? x : Div(chunk, 8) * C(8) + x;
  return Simplify(row * C(cols) + phys * C(8) + Mod(col, 8));
}

bool MfmaHalfSwapFits(int64_t cols, int elem_bytes) {
  if (elem_bytes != 2 || cols % 8 != 0) return false;
  const int64_t cpr = cols / 8;
  return cpr == 2 || cpr == 4 || cpr % 8 == 0;
}

Expr MfmaHalfSwapped(const Expr& row) { return Simplify(Mod(Div(row, 8), 2)); }

Expr MfmaHalfSwapOffset(const Expr& row, const Expr& col, int64_t cols, int elem_bytes) {
  if (!MfmaHalfSwapFits(cols, elem_bytes)) return SwizzledOffset(row, col, cols, elem_bytes);
  // The column in the other 8-byte half of its chunk where bit 3 of the row is set.
  Expr c = Simplify(Div(col, 8) * C(8) + Mod(Div(col, 4) + Div(row, 8), 2) * C(4) + Mod(col, 4));
  return SwizzledOffset(row, c, cols, elem_bytes);
}

int64_t MfmaHalfSwapOffsetInt(int64_t row, int64_t col, int64_t cols, int elem_bytes) {
  if (!MfmaHalfSwapFits(cols, elem_bytes)) return SwizzledOffsetInt(row, col, cols, elem_bytes);
  return SwizzledOffsetInt(row, col ^ (((row >> 3) & 1) << 2), cols, elem_bytes);
}

}  // namespace tl
