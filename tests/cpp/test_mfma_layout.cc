// The MFMA fragment layouts (src/layout/mfma_fragment.h): the inverse map (thread, local) -> index and
// the forward map index -> (thread, local) agree, every element is held exactly once per replica, and
// lanes sit where the CDNA3 ISA guide puts them.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "layout/mfma_fragment.h"

namespace tl {
namespace {

// Enumerates every (thread, local) slot: its index must map forward to the same thread (for the
// thread's replica) and local, and each element must be reached `replicas` times in all.
void CheckBijective(const Fragment& f) {
  SCOPED_TRACE(f.desc);
  std::map<std::vector<int64_t>, int> seen;
  for (int64_t t = 0; t < f.threads; ++t) {
    std::map<const VarNode*, int64_t> env{{f.tid.get(), t}};
    int64_t rep = 0;
    ASSERT_TRUE(EvalInt(f.replica, env, &rep));
    for (int64_t l = 0; l < f.locals; ++l) {
      env[f.loc.get()] = l;
      std::vector<int64_t> idx;
      std::map<const VarNode*, int64_t> fwd{{f.rep.get(), rep}};
      for (size_t d = 0; d < f.index.size(); ++d) {
        int64_t v;
        ASSERT_TRUE(EvalInt(f.index[d], env, &v));
        ASSERT_GE(v, 0);
        ASSERT_LT(v, f.shape[d]);
        idx.push_back(v);
        fwd[f.idx[d].get()] = v;
      }
      int64_t th, lo;
      ASSERT_TRUE(EvalInt(f.thread, fwd, &th));
      ASSERT_TRUE(EvalInt(f.local, fwd, &lo));
      EXPECT_EQ(th, t) << "slot (" << t << ", " << l << ")";
      EXPECT_EQ(lo, l) << "slot (" << t << ", " << l << ")";
      ++seen[idx];
    }
  }
  int64_t total = 1;
  for (auto s : f.shape) total *= s;
  EXPECT_EQ(static_cast<int64_t>(seen.size()), total);
  for (auto& [i, n] : seen) EXPECT_EQ(n, f.replicas);
}

TEST(MfmaLayout, AccumulatorsAndRowsAreBijective) {
  for (auto [M, N, wm, wn, R] :
       std::vector<std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t>>{{64, 48, 2, 1, 16},
                                                                            {128, 128, 2, 2, 32},
                                                                            {64, 64, 1, 2, 32},
                                                                            {32, 64, 1, 2, 16},
                                                                            {64, 128, 2, 2, 32}}) {
    CheckBijective(MfmaAccumulator(M, N, wm, wn, R));
    CheckBijective(MfmaRows(M, wm, wn, R));
  }
}

TEST(MfmaLayout, LanesFollowTheIsaGuide) {
  // The MFMAs compute the transposed tile (D = C^T). 16x16 tiles, one wave: lane 35 (lane group 2, ISA
  // column 3) register 1 holds D[4 * 2 + 1][3] = C[3][9].
  Fragment a = MfmaAccumulator(16, 16, 1, 1, 16);
  auto i16 = a.IndexAt(Int(35), Int(1));
  int64_t r, c;
  ASSERT_TRUE(AsConstInt(i16[0], &r) && AsConstInt(i16[1], &c));
  EXPECT_EQ(r, 3);
  EXPECT_EQ(c, 9);
  // 32x32 tiles: lane 39 (half 1, ISA column 7) register 8 holds D[8 * 2 + 4 * 1 + 0][7] = C[7][20].
  Fragment b = MfmaAccumulator(32, 32, 1, 1, 32);
  auto i32 = b.IndexAt(Int(39), Int(8));
  ASSERT_TRUE(AsConstInt(i32[0], &r) && AsConstInt(i32[1], &c));
  EXPECT_EQ(r, 7);
  EXPECT_EQ(c, 20);
  // Registers 4q .. 4q+3 of a lane are 4 consecutive columns of one row (one 16-byte store of float32).
  for (int64_t q = 0; q < 4; ++q)
    for (int64_t v = 0; v < 4; ++v) {
      auto x = b.IndexAt(Int(39), Int(4 * q + v)), y = b.IndexAt(Int(39), Int(4 * q));
      int64_t r0, c0;
      ASSERT_TRUE(AsConstInt(x[0], &r) && AsConstInt(x[1], &c) && AsConstInt(y[0], &r0) &&
                  AsConstInt(y[1], &c0));
      EXPECT_EQ(r, r0);
      EXPECT_EQ(c, c0 + v);
      EXPECT_EQ(c0 % 4, 0);
    }
  // Wave grid: 128x128 on 4 waves, square -> 2x2; 64x48 on 2 waves -> 2x1 (48 / 2 is not a multiple of 16).
  EXPECT_EQ(MfmaWaveGrid(128, 128, 4, 0), std::make_pair(int64_t{2}, int64_t{2}));
  EXPECT_EQ(MfmaWaveGrid(64, 48, 2, 0), std::make_pair(int64_t{2}, int64_t{1}));
  EXPECT_THROW(MfmaWaveGrid(16, 16, 2, 0), UserError);
}

// The LDS layout of 16-bit tiles whose rows are k (K x N B, K x M A): a permutation of whole 16-byte
// chunks, and the column reads of an MFMA step (lane l: column n0 + l % R of row P (l / R) + v, P = 4
// unpacked, 8 k-packed) conflict-free per 32-lane ds_read_u16 pass (32 banks of 4 bytes) and, for rows of
// whole 128-byte lines, over the whole wave. Row-major tiles conflict (the counts checked to differ).
int Ways(const std::vector<int64_t>& bytes, size_t per) {
  int worst = 0;
  for (size_t p = 0; p < bytes.size(); p += per) {
    std::map<int64_t, std::set<int64_t>> banks;
    for (size_t l = p; l < p + per; ++l) banks[bytes[l] / 4 % 32].insert(bytes[l] / 4);
    for (auto& [b, w] : banks) worst = std::max(worst, static_cast<int>(w.size()));
  }
  return worst;
}

TEST(MfmaLayout, KRowsSwizzleIsAChunkPermutationWithoutBankConflicts) {
  for (int64_t cols : {32, 64, 128, 256}) {
    std::set<int64_t> seen;
    for (int64_t r = 0; r < 64; ++r)
      for (int64_t c = 0; c < cols; ++c) {
        int64_t o = MfmaKRowsOffsetInt(r, c, cols, 2);
        seen.insert(o);
        EXPECT_EQ(o % 8, c % 8);  // chunks move whole
        EXPECT_EQ(o / cols, r);   // within their row
      }
    EXPECT_EQ(static_cast<int64_t>(seen.size()), 64 * cols);
    for (int64_t R : {16, 32})
      for (int64_t P : {4, 8}) {
        int plain = 0;
        for (int64_t k0 = 0; k0 < 64; k0 += P * (64 / R))
          for (int64_t v = 0; v < P; ++v)
            for (int64_t n0 = 0; n0 + R <= cols; n0 += R) {
              std::vector<int64_t> sw, rm;
              for (int64_t l = 0; l < 64; ++l) {
                int64_t row = k0 + P * (l / R) + v, col = n0 + l % R;
                sw.push_back(2 * MfmaKRowsOffsetInt(row, col, cols, 2));
                rm.push_back(2 * (row * cols + col));
              }
              SCOPED_TRACE(testing::Message() << "cols " << cols << " R " << R << " P " << P << " v " << v);
              EXPECT_EQ(Ways(sw, 32), 1);
              if (cols % 64 == 0) {
                EXPECT_EQ(Ways(sw, 64), 1);
              }
              plain = std::max(plain, Ways(rm, 64));
            }
        EXPECT_GE(plain, 2) << cols << " " << R << " " << P;
      }
  }
}

}  // namespace
}  // namespace tl
