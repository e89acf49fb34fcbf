// MFMA fragment layouts; see mfma_fragment.h.
#include "layout/mfma_fragment.h"

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
  Expr wave = Div(f.tid, 64), lane = Mod(f.tid, 64), tile = Div(f.loc, outs), r = Mod(f.loc, outs);
  f.index = {Mod(wave, wm) * C(wM) + Div(tile, nt) * C(R) + TileRow(R, lane, r),
             Div(wave, wm) * C(wN) + Mod(tile, nt) * C(R) + Mod(lane, R)};
  Expr ii = Mod(f.idx[0], wM), jj = Mod(f.idx[1], wN), a = Mod(ii, R);
  Expr wave_of = Div(f.idx[1], wN) * C(wm) + Div(f.idx[0], wM);
  if (R == 16) {
    f.thread = wave_of * C(64) + Div(a, 4) * C(16) + Mod(jj, 16);
    f.local = (Div(ii, 16) * C(nt) + Div(jj, 16)) * C(4) + Mod(a, 4);
  } else {
    f.thread = wave_of * C(64) + Div(Mod(a, 8), 4) * C(32) + Mod(jj, 32);
    f.local = (Div(ii, 32) * C(nt) + Div(jj, 32)) * C(16) + Div(a, 8) * C(4) + Mod(a, 4);
  }
  return f;
}

Fragment MfmaRows(int64_t M, int64_t wm, int64_t wn, int64_t R) {
  int64_t wM = M / wm, outs = R * R / 64, group = R;  // the lanes sharing a row: a 16- or 32-lane group
  Fragment f = NewFragment({M}, 64 * wm * wn, (wM / R) * outs, group * wn,
                           "mfma_rows(" + std::to_string(M) + ", waves " + std::to_string(wm) + "x" +
                               std::to_string(wn) + (R == 32 ? ", 32x32 tiles" : "") + ")");
  f.kind = "mfma_rows";
  f.params = {M, 0, wm, wn, R};
  Expr wave = Div(f.tid, 64), lane = Mod(f.tid, 64);
  f.index = {Mod(wave, wm) * C(wM) + Div(f.loc, outs) * C(R) + TileRow(R, lane, Mod(f.loc, outs))};
  Expr ii = Mod(f.idx[0], wM), a = Mod(ii, R);
  Expr wave_of = Div(f.rep, group) * C(wm) + Div(f.idx[0], wM);
  if (R == 16) {
    f.thread = wave_of * C(64) + Div(a, 4) * C(16) + Mod(f.rep, 16);
    f.local = Div(ii, 16) * C(4) + Mod(a, 4);
  } else {
    f.thread = wave_of * C(64) + Div(Mod(a, 8), 4) * C(32) + Mod(f.rep, 32);
    f.local = Div(ii, 32) * C(16) + Div(a, 8) * C(4) + Mod(a, 4);
  }
  f.replica = Mod(lane, group) + Div(wave, wm) * C(group);
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

}  // namespace tl
