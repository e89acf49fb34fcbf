// Tests of the arithmetic simplifier: constant folding, canonical affine forms, floordiv/floormod
// by constants under bounds, bound-decided comparisons and min/max, statement simplification,
// and two randomized properties (idempotence and semantic preservation) checked with a small
// reference evaluator.
#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "arith/simplify.h"
#include "ir/expr.h"
#include "ir/functor.h"
#include "ir/printer.h"
#include "ir/stmt.h"
#include "ir/structural.h"

#include "simplify_test_util.h"

namespace tl {
namespace {

using namespace simplify_test;

TEST(RefEvalTest, FloorSemantics) {
  EXPECT_EQ(RefFloorDiv(-7, 2), -4);
  EXPECT_EQ(RefFloorMod(-7, 2), 1);
  EXPECT_EQ(RefFloorDiv(7, -2), -4);
  EXPECT_EQ(RefFloorMod(7, -2), -1);
  EXPECT_EQ(RefFloorDiv(-8, 4), -2);
  EXPECT_EQ(RefFloorMod(-8, 4), 0);
}

// ----------------------------------------------------------------------- constant folding

TEST(SimplifyTest, FoldsIntegerConstants) {
  EXPECT_CONST(Simplify(Int(3) + Int(4)), 7);
  EXPECT_CONST(Simplify(Int(3) - Int(10)), -7);
  EXPECT_CONST(Simplify(Int(-6) * Int(7)), -42);
  EXPECT_CONST(Simplify(Min(Int(3), Int(-2))), -2);
  EXPECT_CONST(Simplify(Max(Int(3), Int(-2))), 3);
  // Nested constants fold bottom-up.
  EXPECT_CONST(Simplify((Int(2) + Int(3)) * (Int(10) - Int(4))), 30);
  Expr r = Simplify(IntImm(DataType::Int(64), 5) * IntImm(DataType::Int(64), 6));
  EXPECT_CONST(r, 30);
  EXPECT_EQ(r->dtype, DataType::Int(64)) << "folding keeps the type";
}

TEST(SimplifyTest, FloorDivModOfNegativeConstants) {
  struct Case {
    int64_t a, b, fdiv, fmod, tdiv, tmod;
  };
  const Case cases[] = {
      {7, 2, 3, 1, 3, 1},      {-7, 2, -4, 1, -3, -1}, {7, -2, -4, -1, -3, 1},
      {-7, -2, 3, -1, 3, -1},  {-8, 4, -2, 0, -2, 0},  {0, 5, 0, 0, 0, 0},
      {-1, 32, -1, 31, 0, -1}, {31, 32, 0, 31, 0, 31}, {-33, 32, -2, 31, -1, -1},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(std::to_string(c.a) + " / " + std::to_string(c.b));
    EXPECT_CONST(Simplify(FDiv(Int(c.a), Int(c.b))), c.fdiv);
    EXPECT_CONST(Simplify(FMod(Int(c.a), Int(c.b))), c.fmod);
    EXPECT_CONST(Simplify(TDiv(Int(c.a), Int(c.b))), c.tdiv);
    EXPECT_CONST(Simplify(TMod(Int(c.a), Int(c.b))), c.tmod);
  }
  // Division by zero is left alone, not folded or crashed on.
  Expr z = Simplify(FDiv(Int(1), Int(0)));
  EXPECT_NE(As<BinaryNode>(z), nullptr) << PrintExpr(z);
  EXPECT_NE(As<BinaryNode>(Simplify(FMod(Int(1), Int(0)))), nullptr);
}

TEST(SimplifyTest, FoldsComparisonsLogicSelectAndCasts) {
  EXPECT_CONST(Simplify(Cmp(BinaryOp::kLT, Int(3), Int(4))), 1);
  EXPECT_CONST(Simplify(Cmp(BinaryOp::kLE, Int(4), Int(4))), 1);
  EXPECT_CONST(Simplify(Cmp(BinaryOp::kGT, Int(3), Int(4))), 0);
  EXPECT_CONST(Simplify(Cmp(BinaryOp::kGE, Int(-3), Int(4))), 0);
  EXPECT_CONST(Simplify(Cmp(BinaryOp::kEQ, Int(4), Int(4))), 1);
  EXPECT_CONST(Simplify(Cmp(BinaryOp::kNE, Int(4), Int(4))), 0);
  EXPECT_EQ(Simplify(Cmp(BinaryOp::kLT, Int(3), Int(4)))->dtype, DataType::Bool());

  Var x = MakeVar("x");
  Expr c = Cmp(BinaryOp::kLT, x, Int(4));
  EXPECT_EQ(Simplify(Binary(BinaryOp::kAnd, Bool(true), c)), c);
  EXPECT_CONST(Simplify(Binary(BinaryOp::kAnd, Bool(false), c)), 0);
  EXPECT_CONST(Simplify(Binary(BinaryOp::kOr, c, Bool(true))), 1);
  EXPECT_EQ(Simplify(Binary(BinaryOp::kOr, Bool(false), c)), c);
  EXPECT_CONST(Simplify(Not(Cmp(BinaryOp::kLT, Int(1), Int(2)))), 0);
  EXPECT_EQ(Simplify(Not(Not(c))), c);

  EXPECT_EQ(Simplify(Select(Bool(true), x, Int(0))), x);
  EXPECT_CONST(Simplify(Select(Cmp(BinaryOp::kGT, Int(1), Int(2)), x, Int(9))), 9);
  EXPECT_EQ(Simplify(Select(c, x + Int(0), x)), x) << "equal branches";

  Expr cf = Simplify(Cast(DataType::Float(32), Int(3) + Int(4)));
  ASSERT_NE(As<FloatImmNode>(cf), nullptr) << PrintExpr(cf);
  EXPECT_EQ(As<FloatImmNode>(cf)->value, 7.0);
  EXPECT_EQ(cf->dtype, DataType::Float(32));
  Expr ci = Simplify(Cast(DataType::Int(64), Int(3)));
  EXPECT_CONST(ci, 3);
  EXPECT_EQ(ci->dtype, DataType::Int(64));
}

// A cast of a constant to a narrower integer type wraps as the cast would at run time.
TEST(SimplifyTest, CastFoldingWrapsToTheTargetWidth) {
  EXPECT_CONST(Simplify(Cast(DataType::Int(8), Int(300))), 44);
  EXPECT_CONST(Simplify(Cast(DataType::Int(8), Int(200))), -56);
  EXPECT_CONST(Simplify(Cast(DataType::UInt(8), Int(-1))), 255);
  EXPECT_CONST(Simplify(Cast(DataType::Int(16), IntImm(DataType::Int(64), 65537))), 1);
  EXPECT_CONST(Simplify(Cast(DataType::Int(32), IntImm(DataType::Int(64), int64_t(1) << 32))), 0);
  EXPECT_CONST(Simplify(Cast(DataType::Int(64), Int(-5))), -5);
  EXPECT_CONST(Simplify(Cast(DataType::UInt(32), Int(-1))), 4294967295LL);
  EXPECT_CONST(Simplify(Cast(DataType::Bool(), Int(256))), 1);
}

TEST(SimplifyTest, FoldsFloatConstantsAndIdentitiesOnly) {
  DataType f32 = DataType::Float(32);
  Expr r = Simplify(FloatImm(f32, 1.5) + FloatImm(f32, 2.25));
  ASSERT_NE(As<FloatImmNode>(r), nullptr);
  EXPECT_EQ(As<FloatImmNode>(r)->value, 3.75);
  Var x = MakeVar("x", f32);
  EXPECT_EQ(Simplify(x + FloatImm(f32, 0)), x);
  EXPECT_EQ(Simplify(x * FloatImm(f32, 1)), x);
  EXPECT_EQ(Simplify(FloatImm(f32, 1) * x), x);
  EXPECT_CONST(Simplify(Cmp(BinaryOp::kLT, FloatImm(f32, 1), FloatImm(f32, 2))), 1);
  // No reassociation of floats: (x + 1) - 1 stays.
  Expr e = (x + FloatImm(f32, 1)) - FloatImm(f32, 1);
  EXPECT_TRUE(StructuralEqual(Simplify(e), e)) << PrintExpr(Simplify(e));
}

// --------------------------------------------------------------------- canonical affine forms

TEST(SimplifyTest, CanonicalAffineForms) {
  Var x = MakeVar("x"), y = MakeVar("y"), by = MakeVar("by");
  EXPECT_EQ(Simplify(x * Int(4) + y - x * Int(4)), y);
  EXPECT_CONST(Simplify((by + Int(1)) * Int(128) - by * Int(128)), 128);
  EXPECT_SEQUAL(Simplify(x + y), Simplify(y + x));
  EXPECT_SEQUAL(Simplify(x * y), Simplify(y * x));
  EXPECT_SEQUAL(Simplify((x + Int(3)) * Int(2) - x), Simplify(x + Int(6)));
  EXPECT_SEQUAL(Simplify(x + y + x), Simplify(Int(2) * x + y));
  EXPECT_SEQUAL(Simplify(Int(1) + x + Int(2) + y + Int(3)), Simplify(y + x + Int(6)));
  EXPECT_SEQUAL(Simplify((x + y) * (x - y)), Simplify(x * x - y * y));
  EXPECT_CONST(Simplify(x - x), 0);
  EXPECT_CONST(Simplify((x + y) * Int(3) - y * Int(3) - x * Int(3)), 0);
  EXPECT_EQ(Simplify(x * Int(1)), x);
  EXPECT_EQ(Simplify(x + Int(0)), x);
  EXPECT_CONST(Simplify(x * Int(0)), 0);
  EXPECT_TRUE(ProveEqual((x + Int(1)) * Int(4), x * Int(4) + Int(4)));
  EXPECT_FALSE(ProveEqual((x + Int(1)) * Int(4), x * Int(4) + Int(3)));
  // Two vars that share a name are still different atoms.
  Var x2 = MakeVar("x");
  EXPECT_FALSE(ProveEqual(x, x2));
  Expr d = Simplify(x + x2 - x);
  EXPECT_EQ(d, x2);
  // Atoms that are not affine (loads) are kept and combined as units.
  Buffer A = MakeBuffer("A", DataType::Int(32), {Int(8)}, Scope::kLocal);
  Expr ld = Load(A, {x});
  EXPECT_CONST(Simplify(ld * Int(2) + y - ld - y - ld), 0);
  // The result keeps the expression's type.
  Var n = MakeVar("n", DataType::Int(64));
  Expr r = Simplify(n * Int(2) + n);
  EXPECT_EQ(r->dtype, DataType::Int(64));
}

// -------------------------------------------------------------- floordiv / floormod with bounds

TEST(SimplifyTest, FloorDivModByConstantsWithBounds) {
  Var k = MakeVar("k"), i = MakeVar("i");
  BoundMap bm{{i.get(), {0, 31}}};
  EXPECT_EQ(Simplify(FDiv(k * Int(32) + i, Int(32)), bm), k);
  EXPECT_EQ(Simplify(FMod(k * Int(32) + i, Int(32)), bm), i);
  EXPECT_EQ(Simplify(FDiv(i + k * Int(32), Int(32)), bm), k);
  EXPECT_EQ(Simplify(FMod(i, Int(32)), bm), i);
  EXPECT_CONST(Simplify(FDiv(i, Int(32)), bm), 0);
  EXPECT_CONST(Simplify(FDiv(i, Int(64)), bm), 0);
  EXPECT_SEQUAL(Simplify(FDiv(k * Int(64) + i, Int(32)), bm), Simplify(k * Int(2)));
  EXPECT_SEQUAL(Simplify(FDiv(k * Int(32) + i + Int(32), Int(32)), bm), Simplify(k + Int(1)));
  EXPECT_EQ(Simplify(FMod(k * Int(32) + i + Int(64), Int(32)), bm), i);
  // Without the bound the remainder stays.
  Expr nb = Simplify(FDiv(k * Int(32) + i, Int(32)));
  EXPECT_FALSE(StructuralEqual(nb, Expr(k))) << PrintExpr(nb);
  EXPECT_TRUE(ProveEqual(nb, k + FDiv(i, Int(32))));
  // A constant part is peeled off but the remainder check is done on what is left.
  BoundMap bm27{{i.get(), {0, 26}}};
  EXPECT_EQ(Simplify(FDiv(k * Int(32) + i + Int(5), Int(32)), bm27), k);
  EXPECT_SEQUAL(Simplify(FMod(k * Int(32) + i + Int(5), Int(32)), bm27), Simplify(i + Int(5)));
  // Trunc forms reduce to floor forms when the dividend is provably non-negative.
  BoundMap nonneg{{i.get(), {0, 31}}, {k.get(), {0, 100}}};
  EXPECT_EQ(Simplify(TDiv(k * Int(32) + i, Int(32)), nonneg), k);
  EXPECT_EQ(Simplify(TMod(k * Int(32) + i, Int(32)), nonneg), i);
  // ... but not when it could be negative.
  Expr neg = Simplify(TDiv(k * Int(32) + i, Int(32)), bm);
  EXPECT_FALSE(StructuralEqual(neg, Expr(k))) << PrintExpr(neg);
}

TEST(SimplifyTest, NestedFloorDivAndMod) {
  Var x = MakeVar("x"), k = MakeVar("k"), i = MakeVar("i");
  EXPECT_SEQUAL(Simplify(FDiv(FDiv(x, Int(4)), Int(8))), Simplify(FDiv(x, Int(32))));
  EXPECT_SEQUAL(Simplify(FMod(FMod(x, Int(16)), Int(4))), Simplify(FMod(x, Int(4))));
  BoundMap bm{{i.get(), {0, 31}}};
  EXPECT_EQ(Simplify(FDiv(FDiv(k * Int(32) + i, Int(4)), Int(8)), bm), k);
  EXPECT_EQ(Simplify(FDiv(FDiv(FDiv(k * Int(64) + i, Int(2)), Int(2)), Int(16)), bm), k);
  // floormod by a non-divisor is kept.
  Expr m = Simplify(FMod(FMod(x, Int(6)), Int(4)));
  EXPECT_FALSE(StructuralEqual(m, Simplify(FMod(x, Int(4))))) << PrintExpr(m);
  // Division by one.
  EXPECT_EQ(Simplify(FDiv(x, Int(1))), x);
  EXPECT_CONST(Simplify(FMod(x, Int(1))), 0);
}

// ------------------------------------------------------------------ comparisons and min/max

TEST(SimplifyTest, ComparisonsDecidedByBounds) {
  Var i = MakeVar("i"), j = MakeVar("j"), n = MakeVar("n");
  BoundMap bm{{i.get(), {0, 127}}, {j.get(), {0, 3}}};
  EXPECT_CONST(Simplify(Cmp(BinaryOp::kLT, i, Int(128)), bm), 1);
  EXPECT_CONST(Simplify(Cmp(BinaryOp::kGE, i, Int(0)), bm), 1);
  EXPECT_CONST(Simplify(Cmp(BinaryOp::kLE, i, Int(127)), bm), 1);
  EXPECT_CONST(Simplify(Cmp(BinaryOp::kGT, i, Int(127)), bm), 0);
  EXPECT_CONST(Simplify(Cmp(BinaryOp::kEQ, i, Int(200)), bm), 0);
  EXPECT_CONST(Simplify(Cmp(BinaryOp::kNE, i, Int(-1)), bm), 1);
  EXPECT_CONST(Simplify(Cmp(BinaryOp::kLT, i * Int(4) + j, Int(512)), bm), 1);
  EXPECT_CONST(Simplify(Cmp(BinaryOp::kLT, i + j, i + Int(4)), bm), 1);  // decided on the difference
  // Undecidable ones stay comparisons.
  for (Expr e : {Cmp(BinaryOp::kLT, i, Int(127)), Cmp(BinaryOp::kEQ, i, Int(5)), Cmp(BinaryOp::kLT, i, n),
                 Cmp(BinaryOp::kLT, i * Int(4) + j, Int(511))}) {
    Expr s = Simplify(e, bm);
    EXPECT_NE(As<BinaryNode>(s), nullptr) << PrintExpr(e) << " -> " << PrintExpr(s);
  }
  // Without bounds nothing is known about i.
  EXPECT_NE(As<BinaryNode>(Simplify(Cmp(BinaryOp::kLT, i, Int(128)))), nullptr);
  // A floormod is always below its divisor.
  EXPECT_CONST(Simplify(Cmp(BinaryOp::kLT, FMod(n, Int(8)), Int(8))), 1);
  EXPECT_CONST(Simplify(Cmp(BinaryOp::kGE, FMod(n, Int(8)), Int(0))), 1);
}

TEST(SimplifyTest, MinMaxDecidedByBounds) {
  Var i = MakeVar("i"), n = MakeVar("n");
  BoundMap bm{{i.get(), {0, 127}}};
  EXPECT_EQ(Simplify(Min(i, Int(128)), bm), i);
  EXPECT_EQ(Simplify(Max(i, Int(0)), bm), i);
  EXPECT_CONST(Simplify(Max(i, Int(200)), bm), 200);
  EXPECT_CONST(Simplify(Min(i, Int(-1)), bm), -1);
  EXPECT_EQ(Simplify(Min(i + Int(1), i), bm), i);
  EXPECT_EQ(Simplify(Max(n, n)), n);
  Expr keep = Simplify(Min(i, n), bm);
  EXPECT_NE(As<BinaryNode>(keep), nullptr);
  EXPECT_EQ(As<BinaryNode>(keep)->op, BinaryOp::kMin);
  EXPECT_NE(As<BinaryNode>(Simplify(Min(i, Int(64)), bm)), nullptr);
}

TEST(SimplifyTest, BoundOf) {
  Var i = MakeVar("i"), j = MakeVar("j"), n = MakeVar("n");
  BoundMap bm{{i.get(), {0, 31}}, {j.get(), {-4, 4}}};
  Interval b = BoundOf(i * Int(4) + j, bm);
  ASSERT_TRUE(b.lo && b.hi);
  EXPECT_EQ(*b.lo, -4);
  EXPECT_EQ(*b.hi, 128);
  b = BoundOf(i - j, bm);
  EXPECT_EQ(*b.lo, -4);
  EXPECT_EQ(*b.hi, 35);
  b = BoundOf(j * j, bm);
  EXPECT_EQ(*b.lo, -16);
  EXPECT_EQ(*b.hi, 16);
  b = BoundOf(FDiv(j, Int(4)), bm);
  EXPECT_EQ(*b.lo, -1);
  EXPECT_EQ(*b.hi, 1);
  b = BoundOf(FMod(n, Int(8)), bm);
  EXPECT_EQ(*b.lo, 0);
  EXPECT_EQ(*b.hi, 7);
  b = BoundOf(FMod(i, Int(64)), bm);
  EXPECT_EQ(*b.lo, 0);
  EXPECT_EQ(*b.hi, 31);
  b = BoundOf(n + i, bm);
  EXPECT_FALSE(b.lo);
  EXPECT_FALSE(b.hi);
  b = BoundOf(Min(n, i), bm);
  EXPECT_FALSE(b.lo);
  EXPECT_EQ(*b.hi, 31);
  b = BoundOf(Max(n, i), bm);
  EXPECT_EQ(*b.lo, 0);
  EXPECT_FALSE(b.hi);
  EXPECT_TRUE(BoundOf(Int(5), bm).IsConst());
  // Casts: widening keeps the bounds; a narrowing cast that may wrap gives the target's range.
  b = BoundOf(Cast(DataType::Int(64), i), bm);
  EXPECT_EQ(*b.lo, 0);
  EXPECT_EQ(*b.hi, 31);
  b = BoundOf(Cast(DataType::Int(8), i), bm);
  EXPECT_EQ(*b.lo, 0);
  EXPECT_EQ(*b.hi, 31);
  BoundMap wide{{i.get(), {0, 300}}};
  b = BoundOf(Cast(DataType::Int(8), i), wide);
  ASSERT_TRUE(b.lo && b.hi);
  EXPECT_EQ(*b.lo, -128);
  EXPECT_EQ(*b.hi, 127);
  b = BoundOf(Cast(DataType::UInt(8), j), bm);
  ASSERT_TRUE(b.lo && b.hi);
  EXPECT_EQ(*b.lo, 0);
  EXPECT_EQ(*b.hi, 255);
}

TEST(SimplifyTest, NarrowingCastsAreNotSeenThrough) {
  Var i = MakeVar("i");
  BoundMap wide{{i.get(), {0, 300}}};
  // T.cast(200, "int8") is -56, so this comparison is not always true.
  Expr ge = Cmp(BinaryOp::kGE, Cast(DataType::Int(8), i), IntImm(DataType::Int(8), 0));
  Expr s = Simplify(ge, wide);
  EXPECT_NE(As<BinaryNode>(s), nullptr) << PrintExpr(s);
  // A widening cast is seen through.
  EXPECT_CONST(Simplify(Cmp(BinaryOp::kLT, Cast(DataType::Int(64), i), IntImm(DataType::Int(64), 301)), wide),
               1);
  // And a narrowing one whose operand fits.
  BoundMap narrow{{i.get(), {0, 100}}};
  EXPECT_CONST(Simplify(ge, narrow), 1);
}

// ------------------------------------------------------------------------------ statements

TEST(SimplifyStmtTest, DropsEmptyLoopsAndFoldsConstantIfs) {
  Buffer A = MakeBuffer("A", DataType::Float(32), {Int(128)}, Scope::kShared);
  Var i = MakeVar("i"), j = MakeVar("j");
  Stmt keep = Store(A, FloatImm(DataType::Float(32), 1), {j});
  Stmt empty = For(i, Int(0), Int(0), ForKind::kSerial, Store(A, FloatImm(DataType::Float(32), 0), {i}));
  Stmt empty2 = For(i, Int(0), Int(4) - Int(4), ForKind::kParallel, keep);
  EXPECT_EQ(Simplify(Seq({empty, keep, empty2})), keep);
  EXPECT_EQ(Simplify(empty), nullptr);

  EXPECT_EQ(Simplify(If(Cmp(BinaryOp::kLT, Int(1), Int(2)), keep, empty)), keep);
  Stmt other = Store(A, FloatImm(DataType::Float(32), 2), {j});
  EXPECT_EQ(Simplify(If(Cmp(BinaryOp::kGT, Int(1), Int(2)), keep, other)), other);
  EXPECT_EQ(Simplify(If(Bool(false), keep)), nullptr);
  // A non-constant if with an empty then-branch becomes an if on the negated condition.
  Expr c = Cmp(BinaryOp::kLT, j, Int(3));
  Stmt r = Simplify(If(c, empty, other));
  auto* rif = As<IfNode>(r);
  ASSERT_NE(rif, nullptr);
  EXPECT_EQ(rif->then_case, other);
  EXPECT_EQ(rif->else_case, nullptr);
  EXPECT_EQ(rif->cond->kind, ExprKind::kNot);
  // Nothing to do: the very same statement comes back.
  Stmt plain = Seq({keep, other});
  EXPECT_EQ(Simplify(plain), plain);
}

TEST(SimplifyStmtTest, LoopAndBlockRangesAreBounds) {
  Buffer A = MakeBuffer("A", DataType::Float(32), {Int(256)}, Scope::kGlobal);
  Var i = MakeVar("i"), bx = MakeVar("bx");
  Stmt st = Store(A, FloatImm(DataType::Float(32), 0), {bx * Int(128) + i});
  // Inside T.Parallel(128), i < 128 always holds and (bx*128 + i) // 128 is bx.
  Stmt guarded = If(Cmp(BinaryOp::kLT, i, Int(128)), st);
  Stmt loop = For(i, Int(0), Int(128), ForKind::kParallel, guarded);
  Stmt s = Simplify(loop);
  auto* f = As<ForNode>(s);
  ASSERT_NE(f, nullptr);
  EXPECT_TRUE(StructuralEqual(f->body, st)) << PrintStmt(s);
  // A guard that can fail stays.
  Stmt loop2 = For(i, Int(0), Int(129), ForKind::kParallel, guarded);
  EXPECT_TRUE(StructuralEqual(Simplify(loop2), loop2)) << PrintStmt(Simplify(loop2));
  // Loop with a non-zero min: i in [4, 11].
  Stmt loop3 = For(i, Int(4), Int(8), ForKind::kSerial, If(Cmp(BinaryOp::kGE, i, Int(4)), st));
  EXPECT_TRUE(StructuralEqual(As<ForNode>(Simplify(loop3))->body, st));
  // The var's range does not leak out of the loop.
  Stmt after = If(Cmp(BinaryOp::kLT, i, Int(128)), st);
  Stmt seq = Seq({loop, after});
  Stmt simplified_seq = Simplify(seq);
  auto* q = As<SeqNode>(simplified_seq);
  ASSERT_NE(q, nullptr);
  ASSERT_EQ(q->seq.size(), 2u);
  EXPECT_TRUE(StructuralEqual(q->seq[1], after)) << PrintStmt(q->seq[1]);

  // Block index bounds come from the grid.
  Buffer B = MakeBuffer("B", DataType::Int(32), {Int(2)}, Scope::kGlobal);
  Stmt kbody = Store(B, FDiv(bx * Int(128) + i, Int(128)), {FMod(bx, Int(2))});
  Stmt kernel = std::make_shared<KernelNode>(
      std::vector<Expr>{Int(2)}, std::vector<Var>{bx}, std::vector<Expr>{Int(128)}, std::vector<Buffer>{},
      std::vector<std::pair<Buffer, Expr>>{}, For(i, Int(0), Int(128), ForKind::kParallel, kbody), Span{});
  Stmt ks = Simplify(kernel);
  auto* kn = As<KernelNode>(ks);
  ASSERT_NE(kn, nullptr);
  auto* inner = As<StoreNode>(As<ForNode>(kn->body)->body);
  ASSERT_NE(inner, nullptr) << PrintStmt(ks);
  EXPECT_EQ(inner->value, bx) << PrintStmt(ks);
  EXPECT_EQ(inner->indices[0], bx) << PrintStmt(ks);
}

TEST(SimplifyStmtTest, LetValuesAndLoopEndsAreBounds) {
  // FlashAttention backward's causal loop: first = kb; for qb in [first, 64): the extent is 64 - first.
  // Before: first (a let) had no bounds, and qb's upper bound was first's plus the extent's (126), so the
  // guard of each dQ atomic (qb*64 + r < 4096, r < 64) stayed in the loop. Expected: qb in [0, 63] and the
  // guard folds away.
  Buffer A = MakeBuffer("A", DataType::Float(32), {Int(4096)}, Scope::kGlobal);
  Var kb = MakeVar("kb"), first = MakeVar("first"), qb = MakeVar("qb"), r = MakeVar("r");
  Stmt st = Store(A, FloatImm(DataType::Float(32), 0), {qb * Int(64) + r});
  Expr in = Binary(BinaryOp::kAnd, Cmp(BinaryOp::kGE, qb * Int(64) + r, Int(0)),
                   Cmp(BinaryOp::kLT, qb * Int(64) + r, Int(4096)));
  Stmt inner = For(r, Int(0), Int(64), ForKind::kUnrolled, If(in, st));
  Stmt loop = For(qb, first, Int(64) - first, ForKind::kSerial, inner);
  Stmt prog = For(kb, Int(0), Int(64), ForKind::kSerial, Let(first, kb, loop));
  Stmt s = Simplify(prog);
  bool guarded = false;
  PostOrderVisitStmt(s, [&](const Stmt& x) { guarded = guarded || As<IfNode>(x) != nullptr; });
  EXPECT_FALSE(guarded) << PrintStmt(s);
  Interval q = LoopVarRange(first, Int(64) - first, BoundMap{{first.get(), {0, 63}}});
  ASSERT_TRUE(q.lo && q.hi);
  EXPECT_EQ(*q.lo, 0);
  EXPECT_EQ(*q.hi, 63);
  // A loop whose end is not known keeps the sum of the bounds.
  q = LoopVarRange(first, Expr(kb), BoundMap{{first.get(), {0, 63}}, {kb.get(), {0, 10}}});
  EXPECT_EQ(*q.hi, 72);
  // A guard that can fail stays: first in [0, 64] lets qb reach 64 through an extent of 65 - first.
  Stmt loop2 = For(qb, first, Int(65) - first, ForKind::kSerial, inner);
  Stmt s2 = Simplify(For(kb, Int(0), Int(64), ForKind::kSerial, Let(first, kb, loop2)));
  guarded = false;
  PostOrderVisitStmt(s2, [&](const Stmt& x) { guarded = guarded || As<IfNode>(x) != nullptr; });
  EXPECT_TRUE(guarded) << PrintStmt(s2);
}

TEST(SimplifyStmtTest, PrimFuncWithEverythingRemoved) {
  Buffer A = MakeBuffer("A", DataType::Float(32), {Int(8)}, Scope::kGlobal);
  Var i = MakeVar("i");
  PrimFunc f =
      MakePrimFunc("f", {{MakeVar("A_handle", DataType::Handle()), A}},
                   For(i, Int(0), Int(0), ForKind::kSerial, Store(A, FloatImm(DataType::Float(32), 0), {i})));
  PrimFunc g = Simplify(f);
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->name, "f");
  EXPECT_EQ(g->params.size(), 1u);
  ASSERT_NE(g->body, nullptr);
  EXPECT_EQ(PrintPrimFunc(g), "@T.prim_func\ndef f(A: T.Tensor((8,), \"float32\")):\n    pass\n");
  // A function with nothing to simplify comes back as is.
  PrimFunc h = MakePrimFunc("h", {{MakeVar("A_handle", DataType::Handle()), A}},
                            Store(A, FloatImm(DataType::Float(32), 0), {Int(1)}));
  EXPECT_EQ(Simplify(h), h);
}

TEST(SimplifyStmtTest, RemovedBodiesDoNotLeaveDanglingNodes) {
  // An empty loop under a let, a kernel or another loop must not leave a node with a null body.
  Buffer A = MakeBuffer("A", DataType::Float(32), {Int(8)}, Scope::kGlobal);
  Var i = MakeVar("i"), t = MakeVar("t"), bx = MakeVar("bx"), j = MakeVar("j");
  Stmt empty = For(i, Int(0), Int(0), ForKind::kSerial, Store(A, FloatImm(DataType::Float(32), 0), {i}));
  Stmt let = Let(t, bx * Int(2), empty);
  Stmt outer = For(j, Int(0), Int(4), ForKind::kSerial, let);
  Stmt kernel = std::make_shared<KernelNode>(std::vector<Expr>{Int(2)}, std::vector<Var>{bx},
                                             std::vector<Expr>{Int(128)}, std::vector<Buffer>{},
                                             std::vector<std::pair<Buffer, Expr>>{}, outer, Span{});
  Stmt s = Simplify(kernel);
  std::function<void(const Stmt&)> check = [&](const Stmt& x) {
    if (!x) return;
    if (auto* l = As<LetNode>(x)) {
      EXPECT_NE(l->body, nullptr) << "let with a null body";
      check(l->body);
    }
    if (auto* f = As<ForNode>(x)) {
      EXPECT_NE(f->body, nullptr);
      check(f->body);
    }
    if (auto* k = As<KernelNode>(x)) {
      EXPECT_NE(k->body, nullptr) << "kernel with a null body";
      check(k->body);
    }
  };
  check(s);
  EXPECT_EQ(s, nullptr) << "nothing is left to run:\n" << PrintStmt(s);
  EXPECT_EQ(Simplify(Let(t, Int(1), empty)), nullptr);
  // A let whose body survives stays.
  Stmt live = Let(t, bx * Int(2), Seq({empty, Store(A, FloatImm(DataType::Float(32), 0), {t})}));
  Stmt lr = Simplify(live);
  auto* ln = As<LetNode>(lr);
  ASSERT_NE(ln, nullptr);
  ASSERT_NE(ln->body, nullptr);
  EXPECT_EQ(ln->body->kind, StmtKind::kStore);
}

}  // namespace
// Splitting off a small remainder: (l*2 + v) // 4 == l // 2 and (l*2 + v) % 4 == l % 2 * 2 + v when
// 0 <= v < 2 (what vectorising a pair of accumulator registers needs), checked by value too.
TEST(SimplifyTest, DivModSplitsOffABoundedRemainder) {
  Var l = MakeVar("l"), v = MakeVar("v");
  BoundMap b{{l.get(), {-8, 63}}, {v.get(), {0, 1}}};
  Expr x = Expr(l) * Int(2) + Expr(v);
  EXPECT_TRUE(StructuralEqual(Simplify(FDiv(x, Int(4)), b), Simplify(FDiv(Expr(l), Int(2)), b)));
  EXPECT_TRUE(
      StructuralEqual(Simplify(FMod(x, Int(4)), b), Simplify(FMod(Expr(l), Int(2)) * Int(2) + Expr(v), b)));
  for (int64_t lv = -8; lv < 64; ++lv)
    for (int64_t vv = 0; vv < 2; ++vv) {
      std::map<const VarNode*, int64_t> env{{l.get(), lv}, {v.get(), vv}};
      for (const Expr& e :
           {FDiv(x * Int(3), Int(12)), FMod(x * Int(3), Int(12)), FDiv(x, Int(4)), FMod(x, Int(8))})
        EXPECT_EQ(Eval(Simplify(e, b), env), Eval(e, env)) << PrintExpr(e) << " at l=" << lv << " v=" << vv;
    }
  // not applicable when the remainder can reach the factor: (l*2 + w) // 4 with w in [0, 2] stays exact
  Var w = MakeVar("w");
  BoundMap b2{{l.get(), {0, 63}}, {w.get(), {0, 2}}};
  Expr y = Expr(l) * Int(2) + Expr(w);
  for (int64_t lv = 0; lv < 64; ++lv)
    for (int64_t wv = 0; wv < 3; ++wv) {
      std::map<const VarNode*, int64_t> env{{l.get(), lv}, {w.get(), wv}};
      EXPECT_EQ(Eval(Simplify(FDiv(y, Int(4)), b2), env), Eval(FDiv(y, Int(4)), env));
    }
}

TEST(SimplifyTest, FloorModDropsTermsWhoseKnownLowBitsMakeThemMultiples) {
  // A wgmma descriptor's byte offset: a tile offset plus a stage term cast from an unsigned mask product,
  // (int)((u & 1) * 4096). Before: the cast was an opaque atom, so `% 16` of the sum stayed unknown and the
  // descriptor was re-encoded from its address per instruction. Expected: the term is a multiple of 16.
  Var k = MakeVar("k"), u = MakeVar("u", DataType::UInt(32));
  BoundMap b{{k.get(), {0, 7}}};
  Expr stage = Binary(BinaryOp::kMul, Binary(BinaryOp::kBitAnd, Expr(u), IntImm(DataType::UInt(32), 1)),
                      IntImm(DataType::UInt(32), 4096));
  Expr bytes = Expr(k) * Int(32) + Cast(DataType::Int(32), stage) * Int(2);
  EXPECT_CONST(Simplify(FMod(bytes, Int(16)), b), 0);
  // Not when the low bits are not known: k * 8 + (int)(u & 1) * 2 is 2 mod 16 for u = 1.
  Expr odd = Expr(k) * Int(8) + Cast(DataType::Int(32), Binary(BinaryOp::kBitAnd, Expr(u),
                                                                IntImm(DataType::UInt(32), 1))) * Int(2);
  EXPECT_EQ(As<IntImmNode>(Simplify(FMod(odd, Int(16)), b)), nullptr);
  // floordiv cannot drop it (its quotient is not a constant multiple of an atom).
  EXPECT_NE(As<BinaryNode>(Simplify(FDiv(bytes, Int(16)), b)), nullptr);
}

TEST(SimplifyTest, AnUnsignedVarIsNeverNegative) {
  // Before: a uint32 var with no recorded bound (a let bound to a shuffle) had no lower bound, so
  // floormod(v, 2) stayed a floor-division helper in the generated code. Expected: [0, 2^32 - 1].
  Var v = MakeVar("v", DataType::UInt(32)), s = MakeVar("s", DataType::Int(32));
  Interval r = BoundOf(Expr(v), {});
  ASSERT_TRUE(r.lo && r.hi);
  EXPECT_EQ(*r.lo, 0);
  EXPECT_EQ(*r.hi, (int64_t(1) << 32) - 1);
  r = BoundOf(Expr(v), BoundMap{{v.get(), Interval{}}});  // a let with an unknown value
  ASSERT_TRUE(r.lo);
  EXPECT_EQ(*r.lo, 0);
  EXPECT_FALSE(BoundOf(Expr(s), {}).lo);
}

TEST(SimplifyTest, IntegerFoldingWrapsAtTheTypeWidth) {
  EXPECT_CONST(Simplify(Int(2147483647) + Int(1)), -2147483648LL);
  EXPECT_CONST(Simplify(Int(65536) * Int(65536)), 0);
  Expr big = IntImm(DataType::Int(64), 2147483647);
  EXPECT_CONST(Simplify(big + IntImm(DataType::Int(64), 1)), 2147483648LL);
  EXPECT_CONST(Simplify(IntImm(DataType::Int(8), 100) + IntImm(DataType::Int(8), 100)), -56);
  EXPECT_CONST(Simplify(IntImm(DataType::UInt(8), 200) + IntImm(DataType::UInt(8), 100)), 44);
}

}  // namespace tl
