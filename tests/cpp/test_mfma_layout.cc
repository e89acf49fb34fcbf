// The MFMA fragment layouts (src/layout/mfma_fragment.h): the inverse map (thread, local) -> index and
// the forward map index -> (thread, local) agree, every element is held exactly once per replica, and
// lanes sit where the CDNA3 ISA guide puts them.
#include <gtest/gtest.h>

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
  // 16x16 tiles, one wave: lane 35 (lane group 2, column 3) register 1 holds D[4 * 2 + 1][3].
  Fragment a = MfmaAccumulator(16, 16, 1, 1, 16);
  auto i16 = a.IndexAt(Int(35), Int(1));
  int64_t r, c;
  ASSERT_TRUE(AsConstInt(i16[0], &r) && AsConstInt(i16[1], &c));
  EXPECT_EQ(r, 9);
  EXPECT_EQ(c, 3);
  // 32x32 tiles: lane 39 (half 1, column 7) register 8 holds D[8 * 2 + 4 * 1 + 0][7] = D[20][7].
  Fragment b = MfmaAccumulator(32, 32, 1, 1, 32);
  auto i32 = b.IndexAt(Int(39), Int(8));
  ASSERT_TRUE(AsConstInt(i32[0], &r) && AsConstInt(i32[1], &c));
  EXPECT_EQ(r, 20);
  EXPECT_EQ(c, 7);
  // Wave grid: 128x128 on 4 waves, square -> 2x2; 64x48 on 2 waves -> 2x1 (48 / 2 is not a multiple of 16).
  EXPECT_EQ(MfmaWaveGrid(128, 128, 4, 0), std::make_pair(int64_t{2}, int64_t{2}));
  EXPECT_EQ(MfmaWaveGrid(64, 48, 2, 0), std::make_pair(int64_t{2}, int64_t{1}));
  EXPECT_THROW(MfmaWaveGrid(16, 16, 2, 0), UserError);
}

}  // namespace
}  // namespace tl
