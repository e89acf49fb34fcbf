// MFMA fragment layouts; see mfma_fragment.h.
#include "layout/mfma_fragment.h"

#include "support/error.h"

namespace tl {
namespace {

Expr C(int64_t v) { return Int(v); }
Expr Div(const Expr& a, int64_t b) { return Binary(BinaryOp::kFloorDiv, a, C(b)); }
Expr Mod(const Expr& a, int64_t b) { return Binary(BinaryOp::kFloorMod, a, C(b)); }

Fragment Start(std::vector<int64_t> shape, int64_t threads, int64_t locals, int64_t reps, std::string desc) {
  Fragment f;
  f.shape = std::move(shape);
  f.threads = threads;
  f.locals = locals;
  f.replicas = reps;
  f.desc = std::move(desc);
  f.tid = MakeVar("tid");
  f.loc = MakeVar("loc");
  f.rep = MakeVar("rep");
  for (size_t i = 0; i < f.shape.size(); ++i) f.idx.push_back(MakeVar("i" + std::to_string(i)));
  f.replica = C(0);
  return f;
}

}  // namespace

Fragment MfmaAccumulator(int64_t M, int64_t N, int64_t wm, int64_t wn) {
  int64_t wM = M / wm, wN = N / wn, nt = wN / 16;
  Fragment f = Start({M, N}, 64 * wm * wn, (wM / 16) * nt * 4, 1,
                     "mfma_C(" + std::to_string(M) + "x" + std::to_string(N) + ", waves " + std::to_string(wm) +
                         "x" + std::to_string(wn) + ")");
  f.kind = "mfma_C";
  f.params = {M, N, wm, wn};
  Expr wave = Div(f.tid, 64), lane = Mod(f.tid, 64), tile = Div(f.loc, 4), v = Mod(f.loc, 4);
  f.index = {Mod(wave, wm) * C(wM) + Div(tile, nt) * C(16) + Div(lane, 16) * C(4) + v,
             Div(wave, wm) * C(wN) + Mod(tile, nt) * C(16) + Mod(lane, 16)};
  Expr ii = Mod(f.idx[0], wM), jj = Mod(f.idx[1], wN);
  f.thread = (Div(f.idx[1], wN) * C(wm) + Div(f.idx[0], wM)) * C(64) + Div(Mod(ii, 16), 4) * C(16) + Mod(jj, 16);
  f.local = (Div(ii, 16) * C(nt) + Div(jj, 16)) * C(4) + Mod(ii, 4);
  return f;
}

Fragment MfmaRows(int64_t M, int64_t wm, int64_t wn) {
  int64_t wM = M / wm;
  Fragment f = Start({M}, 64 * wm * wn, (wM / 16) * 4, 16 * wn,
                     "mfma_rows(" + std::to_string(M) + ", waves " + std::to_string(wm) + "x" + std::to_string(wn) +
                         ")");
  f.kind = "mfma_rows";
  f.params = {M, 0, wm, wn};
  Expr wave = Div(f.tid, 64), lane = Mod(f.tid, 64);
  f.index = {Mod(wave, wm) * C(wM) + Div(f.loc, 4) * C(16) + Div(lane, 16) * C(4) + Mod(f.loc, 4)};
  Expr ii = Mod(f.idx[0], wM);
  f.thread = (Div(f.rep, 16) * C(wm) + Div(f.idx[0], wM)) * C(64) + Div(Mod(ii, 16), 4) * C(16) + Mod(f.rep, 16);
  f.local = Div(ii, 16) * C(4) + Mod(ii, 4);
  f.replica = Mod(lane, 16) + Div(wave, wm) * C(16);
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
