// User layouts (src/layout/user_layout.h): the mixed-radix fit on hand-worked tables, the inverse of a
// user fragment agreeing with its forward map slot by slot, spreading over more threads, and the checks
// of shared layouts (size, contiguity, collisions).
#include <gtest/gtest.h>

#include <map>

#include "arith/eval.h"
#include "ir/index_expr.h"
#include "layout/user_layout.h"

namespace tl {
namespace {

using namespace index_expr;

int64_t At(const Expr& e, const std::map<const VarNode*, int64_t>& env) {
  int64_t v = -999;
  EXPECT_TRUE(EvalInt(e, env, &v));
  return v;
}

TEST(UserLayout, FitsMixedRadixDigitsWorkedByHand) {
  // g(x, y) = (x % 4) * 32 + y % 32 over [0, 8) x [0, 64): digits x%4 (32), x/4 (0), y%32 (1), y/32 (0)
  std::vector<std::vector<int64_t>> table;
  for (int64_t x = 0; x < 8; ++x)
    for (int64_t y = 0; y < 64; ++y) table.push_back({(x % 4) * 32 + y % 32, (x / 4) * 2 + y / 32});
  Var x = MakeVar("x"), y = MakeVar("y");
  std::vector<Expr> out;
  ASSERT_TRUE(FitMixedRadix({8, 64}, table, 2, {x, y}, &out));
  for (int64_t a = 0; a < 8; ++a)
    for (int64_t b = 0; b < 64; ++b) {
      std::map<const VarNode*, int64_t> env{{x.get(), a}, {y.get(), b}};
      EXPECT_EQ(At(out[0], env), (a % 4) * 32 + b % 32);
      EXPECT_EQ(At(out[1], env), (a / 4) * 2 + b / 32);
    }
  // a radix that is not a power of two: x % 3 + (x / 3) * 10 over [0, 6)
  ASSERT_TRUE(FitMixedRadix({6}, {{0}, {1}, {2}, {10}, {11}, {12}}, 1, {x}, &out));
  EXPECT_EQ(At(out[0], {{x.get(), 4}}), 11);
  // an XOR is not a sum of digits: the fit refuses it rather than guess
  table.clear();
  for (int64_t a = 0; a < 8; ++a)
    for (int64_t b = 0; b < 8; ++b) table.push_back({a ^ b});
  EXPECT_FALSE(FitMixedRadix({8, 8}, table, 1, {x, y}, &out));
}

TEST(UserLayout, FragmentInverseAgreesWithTheForwardMap) {
  // TileLang's reducer test layout on an 8 x 128 tile: thread (c / 4) * 4 + r % 4, register (r / 4) * 4 + c %
  // 4
  Var r = MakeVar("r"), c = MakeVar("c");
  Fragment f = MakeUserFragment("v", {8, 128}, {r, c}, nullptr, 1, Div(c, 4) * C(4) + Mod(r, 4),
                                Div(r, 4) * C(4) + Mod(c, 4), Span{});
  EXPECT_EQ(f.kind, "user");
  EXPECT_EQ(f.threads, 128);
  EXPECT_EQ(f.locals, 8);
  for (int64_t t = 0; t < f.threads; ++t)
    for (int64_t l = 0; l < f.locals; ++l) {
      std::map<const VarNode*, int64_t> slot{{f.tid.get(), t}, {f.loc.get(), l}};
      int64_t i = At(f.index[0], slot), j = At(f.index[1], slot);
      std::map<const VarNode*, int64_t> el{{f.idx[0].get(), i}, {f.idx[1].get(), j}, {f.rep.get(), 0}};
      EXPECT_EQ(At(f.thread, el), t);
      EXPECT_EQ(At(f.local, el), l);
    }
  // element (5, 9): thread 2 * 4 + 1 = 9, register 4 + 1 = 5 (worked by hand)
  std::map<const VarNode*, int64_t> el{{f.idx[0].get(), 5}, {f.idx[1].get(), 9}, {f.rep.get(), 0}};
  EXPECT_EQ(At(f.thread, el), 9);
  EXPECT_EQ(At(f.local, el), 5);
}

TEST(UserLayout, RegistersNumberedInRowMajorOrderWhenNotGiven) {
  // thread = row: thread 3 holds row 3, element (3, j) in register j
  Var r = MakeVar("r"), c = MakeVar("c");
  Fragment f = MakeUserFragment("v", {8, 16}, {r, c}, nullptr, 1, r, nullptr, Span{});
  EXPECT_EQ(f.threads, 8);
  EXPECT_EQ(f.locals, 16);
  std::map<const VarNode*, int64_t> el{{f.idx[0].get(), 3}, {f.idx[1].get(), 11}};
  EXPECT_EQ(At(f.local, el), 11);
  // spread over 32 threads: four thread groups, each a replica; thread 19 (group 2) holds row 3 again
  Fragment g = FragmentOverThreads(f, 32, "v", Span{});
  EXPECT_EQ(g.threads, 32);
  EXPECT_EQ(g.replicas, 4);
  std::map<const VarNode*, int64_t> slot{{g.tid.get(), 19}, {g.loc.get(), 11}};
  EXPECT_EQ(At(g.index[0], slot), 3);
  EXPECT_EQ(At(g.index[1], slot), 11);
  EXPECT_EQ(At(g.replica, {{g.tid.get(), 19}}), 2);
  std::map<const VarNode*, int64_t> fwd{{g.idx[0].get(), 3}, {g.idx[1].get(), 11}, {g.rep.get(), 2}};
  EXPECT_EQ(At(g.thread, fwd), 19);
  EXPECT_THROW(FragmentOverThreads(f, 12, "v", Span{}), UserError);  // 12 is not a multiple of 8
  EXPECT_THROW(FragmentOverThreads(f, 4, "v", Span{}), UserError);
}

TEST(UserLayout, SharedLayoutSizeContiguityAndCollisions) {
  Var i = MakeVar("i"), j = MakeVar("j");
  // padded rows: 16 x 32 halves, rows 40 apart -> 15 * 40 + 32 = 632 slots, 8 elements stay together
  SharedLayout p = MakeSharedLayout("S", {16, 32}, {i, j}, {i * C(40) + j}, Span{});
  EXPECT_EQ(p.size, 632);
  EXPECT_EQ(p.contiguous, 8);
  EXPECT_EQ(At(p.Offset({C(2), C(5)}), {}), 85);
  // chunks of 8 permuted by row: still 8 together; pairs of columns: 2
  Expr xr = Call(DataType::Int(32), "tl.bitwise_xor", {Div(j, 8), Mod(i, 4)});
  EXPECT_EQ(MakeSharedLayout("S", {16, 32}, {i, j}, {i, xr * C(8) + Mod(j, 8)}, Span{}).contiguous, 8);
  EXPECT_EQ(MakeSharedLayout("S", {16, 32}, {i, j}, {Div(j, 2), i * C(2) + Mod(j, 2)}, Span{}).contiguous, 2);
  // two elements in one slot, a negative index, and a layout too sparse are errors
  EXPECT_THROW(MakeSharedLayout("S", {16, 32}, {i, j}, {Div(i, 2), j}, Span{}), UserError);
  EXPECT_THROW(MakeSharedLayout("S", {16, 32}, {i, j}, {i - C(1), j}, Span{}), UserError);
  EXPECT_THROW(MakeSharedLayout("S", {16, 32}, {i, j}, {i * C(1000) + j}, Span{}), UserError);
  // the IR value round-trips
  SharedLayout q = SharedLayoutFromExpr(SharedLayoutToExpr(p));
  EXPECT_EQ(q.size, p.size);
  EXPECT_EQ(q.contiguous, p.contiguous);
  EXPECT_EQ(At(q.Offset({C(2), C(5)}), {}), 85);
}

}  // namespace
}  // namespace tl
