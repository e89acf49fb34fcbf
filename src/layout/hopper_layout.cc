// Hopper layouts; see hopper_layout.h.
#include "layout/hopper_layout.h"

#include "arith/simplify.h"
#include "ir/index_expr.h"

namespace tl {
namespace {

using namespace index_expr;

std::string Groups(int64_t wgm, int64_t wgn) {
  return "warp groups " + std::to_string(wgm) + "x" + std::to_string(wgn);
}

}  // namespace

Fragment WgmmaAccumulator(int64_t M, int64_t N, int64_t wgm, int64_t wgn) {
  int64_t wm = 4 * wgm, wn = wgn, wN = N / wn, nt = wN / 8, mt = M / (16 * wm);
  Fragment f =
      NewFragment({M, N}, 32 * wm * wn, mt * nt * 4, 1,
                  "wgmma_C(" + std::to_string(M) + "x" + std::to_string(N) + ", " + Groups(wgm, wgn) + ")");
  Expr warp = Div(f.tid, 32), lane = Mod(f.tid, 32), tile = Div(f.loc, 4), r = Mod(f.loc, 4);
  f.index = {Div(tile, nt) * C(16 * wm) + Mod(warp, wm) * C(16) + Div(lane, 4) + Div(r, 2) * C(8),
             Div(warp, wm) * C(wN) + Mod(tile, nt) * C(8) + Mod(lane, 4) * C(2) + Mod(r, 2)};
  Expr i = f.idx[0], j = f.idx[1], jj = Mod(j, wN), i16 = Mod(i, 16);
  f.kind = "mma_C";
  f.params = {M, N, wm, wn, 1};
  f.thread =
      Simplify((Div(j, wN) * C(wm) + Mod(Div(i, 16), wm)) * C(32) + Mod(i16, 8) * C(4) + Div(Mod(jj, 8), 2));
  f.local = Simplify((Div(i, 16 * wm) * C(nt) + Div(jj, 8)) * C(4) + Div(i16, 8) * C(2) + Mod(jj, 2));
  return f;
}

Fragment WgmmaRows(int64_t M, int64_t wgm, int64_t wgn) {
  int64_t wm = 4 * wgm, wn = wgn, mt = M / (16 * wm);
  Fragment f = NewFragment({M}, 32 * wm * wn, mt * 2, 4 * wn,
                           "wgmma_rows(" + std::to_string(M) + ", " + Groups(wgm, wgn) + ")");
  Expr warp = Div(f.tid, 32), lane = Mod(f.tid, 32);
  f.kind = "mma_rows";
  f.params = {M, 0, wm, wn, 1};
  f.index = {Div(f.loc, 2) * C(16 * wm) + Mod(warp, wm) * C(16) + Div(lane, 4) + Mod(f.loc, 2) * C(8)};
  Expr i = f.idx[0], i16 = Mod(i, 16);
  f.thread =
      Simplify((Div(f.rep, 4) * C(wm) + Mod(Div(i, 16), wm)) * C(32) + Mod(i16, 8) * C(4) + Mod(f.rep, 4));
  f.local = Simplify(Div(i, 16 * wm) * C(2) + Div(i16, 8));
  f.replica = Mod(lane, 4) + Div(warp, wm) * C(4);
  return f;
}

bool IsWgmmaLayout(const Fragment& f) {
  return (f.kind == "mma_C" || f.kind == "mma_rows") && f.params.size() > 4 && f.params[4] == 1;
}

Fragment RowsOfAccumulator(const Fragment& acc) {
  if (IsWgmmaLayout(acc)) return WgmmaRows(acc.params[0], acc.params[2] / 4, acc.params[3]);
  return MmaRows(acc.params[0], acc.params[2], acc.params[3]);
}

int64_t HopperSwizzleBytes(int64_t rows, int64_t cols, int elem_bytes) {
  int64_t rb = cols * elem_bytes;
  if (rows % 8 != 0) return 0;
  if (rb == 32 || rb == 64) return rb;
  if (rb >= 128 && rb % 128 == 0) return 128;
  return 0;
}

Expr HopperSharedOffset(const Expr& row, const Expr& col, int64_t rows, int64_t cols, int elem_bytes) {
  int64_t rb = cols * elem_bytes;
  if (rb <= 128 || rb % 128 != 0) return SwizzledOffset(row, col, cols, elem_bytes);
  int64_t P = 128 / elem_bytes;  // elements per panel row
  return Simplify(Div(col, P) * C(rows * P) + SwizzledOffset(row, Mod(col, P), P, elem_bytes));
}

}  // namespace tl
