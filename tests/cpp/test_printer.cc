// Tests of the IR printer: expressions with precedence and parentheses, statements of every kind,
// whole PrimFuncs with symbolic dims, and disambiguation of names that clash.
#include <gtest/gtest.h>

#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "ir/expr.h"
#include "ir/function.h"
#include "ir/printer.h"
#include "ir/stmt.h"

namespace tl {
namespace {

Expr F32(double v) { return FloatImm(DataType::Float(32), v); }
Expr Lt(Expr a, Expr b) { return Binary(BinaryOp::kLT, std::move(a), std::move(b)); }

class PrinterTest : public ::testing::Test {
 protected:
  Var a = MakeVar("a"), b = MakeVar("b"), c = MakeVar("c");
};

TEST_F(PrinterTest, ArithmeticPrecedence) {
  EXPECT_EQ(PrintExpr(a - (b - c)), "a - (b - c)");
  EXPECT_EQ(PrintExpr((a - b) - c), "a - b - c");
  EXPECT_EQ(PrintExpr((a + b) * c), "(a + b) * c");
  EXPECT_EQ(PrintExpr(a * (b + c)), "a * (b + c)");
  EXPECT_EQ(PrintExpr(a + b * c), "a + b * c");
  EXPECT_EQ(PrintExpr(a * b + c), "a * b + c");
  EXPECT_EQ(PrintExpr(a + (b + c)), "a + (b + c)");  // keeps the tree shape
  EXPECT_EQ(PrintExpr((a + b) - (b + c)), "a + b - (b + c)");
}

TEST_F(PrinterTest, FloorDivModAndCalls) {
  EXPECT_EQ(PrintExpr(Binary(BinaryOp::kFloorDiv, a, Int(32))), "a // 32");
  EXPECT_EQ(PrintExpr(Binary(BinaryOp::kFloorMod, a, Int(32))), "a % 32");
  EXPECT_EQ(PrintExpr(Binary(BinaryOp::kFloorDiv, a + b, Int(4))), "(a + b) // 4");
  EXPECT_EQ(PrintExpr(Binary(BinaryOp::kFloorDiv, a, Int(4)) * Int(2)), "a // 4 * 2");
  EXPECT_EQ(PrintExpr(a * Binary(BinaryOp::kFloorMod, b, Int(4))), "a * (b % 4)");
  EXPECT_EQ(PrintExpr(Binary(BinaryOp::kFloorMod, Binary(BinaryOp::kFloorDiv, a, Int(4)), Int(8))),
            "a // 4 % 8");
  EXPECT_EQ(PrintExpr(Binary(BinaryOp::kFloorDiv, a, Binary(BinaryOp::kFloorDiv, b, Int(2)))),
            "a // (b // 2)");
  EXPECT_EQ(PrintExpr(Binary(BinaryOp::kFloorMod, a, Int(8)) + Int(1)), "a % 8 + 1");
  // Truncating division and modulus of integers are spelled as calls.
  EXPECT_EQ(PrintExpr(Binary(BinaryOp::kDiv, a, b)), "T.truncdiv(a, b)");
  EXPECT_EQ(PrintExpr(Binary(BinaryOp::kMod, a, b)), "T.truncmod(a, b)");
  Var x = MakeVar("x", DataType::Float(32));
  EXPECT_EQ(PrintExpr(Binary(BinaryOp::kDiv, x, F32(2))), "x / 2.0");
  EXPECT_EQ(PrintExpr(Binary(BinaryOp::kMin, a, b + Int(1))), "T.min(a, b + 1)");
  EXPECT_EQ(PrintExpr(Binary(BinaryOp::kMax, a * Int(2), Int(0))), "T.max(a * 2, 0)");
  EXPECT_EQ(PrintExpr(Binary(BinaryOp::kMin, a, b) * Int(2)), "T.min(a, b) * 2");
  EXPECT_EQ(PrintExpr(Call(DataType::Float(32), "exp2", {x * F32(1.5)})), "T.exp2(x * 1.5)");
  EXPECT_EQ(PrintExpr(Call(DataType::Float(32), "pow", {x, F32(2)})), "T.pow(x, 2.0)");
}

TEST_F(PrinterTest, SelectCastAndLogic) {
  EXPECT_EQ(PrintExpr(Select(Lt(a, b), a, b)), "T.if_then_else(a < b, a, b)");
  EXPECT_EQ(PrintExpr(Cast(DataType::Float(16), a + b)), "T.cast(a + b, \"float16\")");
  EXPECT_EQ(PrintExpr(Cast(DataType::Float(32), a) * F32(2)), "T.cast(a, \"float32\") * 2.0");
  EXPECT_EQ(PrintExpr(Lt(a + Int(1), b)), "a + 1 < b");
  EXPECT_EQ(PrintExpr(Binary(BinaryOp::kAnd, Lt(a, b), Binary(BinaryOp::kGE, b, c))), "a < b and b >= c");
  EXPECT_EQ(PrintExpr(Binary(BinaryOp::kAnd, Binary(BinaryOp::kOr, Lt(a, b), Lt(b, c)), Lt(a, c))),
            "(a < b or b < c) and a < c");
  EXPECT_EQ(PrintExpr(Binary(BinaryOp::kOr, Lt(a, b), Binary(BinaryOp::kAnd, Lt(b, c), Lt(a, c)))),
            "a < b or b < c and a < c");
  EXPECT_EQ(PrintExpr(Binary(BinaryOp::kEQ, Lt(a, b), Lt(b, c))), "(a < b) == (b < c)");
  EXPECT_EQ(PrintExpr(Not(Lt(a, b))), "not (a < b)");
  EXPECT_EQ(PrintExpr(Binary(BinaryOp::kAnd, Not(Lt(a, b)), Lt(b, c))), "not (a < b) and b < c");
  EXPECT_EQ(PrintExpr(Binary(BinaryOp::kOr, Lt(b, c), Not(Lt(a, b)))), "b < c or not (a < b)");
}

// `not` binds more loosely than comparisons in Python: `not (p) == q` means `not (p == q)`.
TEST_F(PrinterTest, NotUnderAComparisonIsParenthesized) {
  Var p = MakeVar("p", DataType::Bool()), q = MakeVar("q", DataType::Bool());
  EXPECT_EQ(PrintExpr(Binary(BinaryOp::kEQ, Not(p), q)), "(not (p)) == q");
  EXPECT_EQ(PrintExpr(Binary(BinaryOp::kNE, p, Not(q))), "p != (not (q))");
}

TEST_F(PrinterTest, Literals) {
  EXPECT_EQ(PrintExpr(Int(5)), "5");
  EXPECT_EQ(PrintExpr(Int(-3)), "-3");
  EXPECT_EQ(PrintExpr(a - Int(-3)), "a - -3");
  EXPECT_EQ(PrintExpr(IntImm(DataType::Int(64), 5)), "T.int64(5)");
  EXPECT_EQ(PrintExpr(IntImm(DataType::UInt(8), 255)), "T.uint8(255)");
  EXPECT_EQ(PrintExpr(Bool(true)), "True");
  EXPECT_EQ(PrintExpr(Bool(false)), "False");
  EXPECT_EQ(PrintExpr(F32(1.5)), "1.5");
  EXPECT_EQ(PrintExpr(F32(2)), "2.0");
  EXPECT_EQ(PrintExpr(F32(-0.25)), "-0.25");
  EXPECT_EQ(PrintExpr(FloatImm(DataType::Float(16), 0.5)), "T.float16(0.5)");
  EXPECT_EQ(PrintExpr(FloatImm(DataType::BFloat16(), 3)), "T.bfloat16(3.0)");
  EXPECT_EQ(PrintExpr(F32(std::numeric_limits<double>::infinity())), "T.infinity(\"float32\")");
  EXPECT_EQ(PrintExpr(FloatImm(DataType::Float(16), -std::numeric_limits<double>::infinity())),
            "-T.infinity(\"float16\")");
  EXPECT_EQ(PrintExpr(F32(std::numeric_limits<double>::quiet_NaN())), "T.nan(\"float32\")");
  EXPECT_EQ(PrintExpr(StringImm("a\"b")), "\"a\\\"b\"");
  // Printed floats read back exactly.
  for (double v : {0.1, 1.0 / 3.0, 1e-30, 6.02e23, -123456.789}) {
    std::string s = PrintExpr(F32(v));
    EXPECT_EQ(std::strtod(s.c_str(), nullptr), v) << s;
    EXPECT_NE(s.find_first_of(".e"), std::string::npos) << s << " must read back as a float";
  }
  // A literal next to a float16 var adopts its type and prints as such.
  Var h = MakeVar("h", DataType::Float(16));
  EXPECT_EQ(PrintExpr(h * Int(2)), "h * T.float16(2.0)");
}

TEST_F(PrinterTest, LoadsAndNameClashes) {
  Buffer A = MakeBuffer("A", DataType::Float(32), {Int(16), Int(16)}, Scope::kShared);
  Var i = MakeVar("i"), i2 = MakeVar("i");
  EXPECT_EQ(PrintExpr(Load(A, {i, i2})), "A[i, i_1]");
  EXPECT_EQ(PrintExpr(i * i + i2), "i * i + i_1") << "the same var keeps its name";
  Var i3 = MakeVar("i"), i_1 = MakeVar("i_1");
  EXPECT_EQ(PrintExpr(i + i_1 + i2 + i3), "i + i_1 + i_2 + i_3");
  // The printer reserves the T namespace.
  EXPECT_EQ(PrintExpr(MakeVar("T") + Int(1)), "T_1 + 1");
  // A var and a buffer of the same name are told apart too.
  Var Avar = MakeVar("A");
  EXPECT_EQ(PrintExpr(Load(A, {Avar, Int(0)})), "A[A_1, 0]");
  // Names are handed out left to right, whatever the compiler's evaluation order.
  Var j = MakeVar("j"), j2 = MakeVar("j");
  EXPECT_EQ(PrintExpr(Select(Lt(j, Int(1)), j2, j)), "T.if_then_else(j < 1, j_1, j)");
  EXPECT_EQ(PrintExpr(Binary(BinaryOp::kMax, j2, j)), "T.max(j, j_1)");
  Buffer Bj = MakeBuffer("j", DataType::Int(32), {Int(4)}, Scope::kLocal);
  EXPECT_EQ(PrintStmt(Store(Bj, j2, {j})), "j[j_1] = j_2\n");
}

// ------------------------------------------------------------------------------- statements

TEST_F(PrinterTest, LoopsOfEachKind) {
  Buffer A = MakeBuffer("A", DataType::Float(32), {Int(64)}, Scope::kShared);
  Var i = MakeVar("i");
  Stmt st = Store(A, F32(1), {i});
  EXPECT_EQ(PrintStmt(For(i, Int(0), Int(16), ForKind::kSerial, st)),
            "for i in T.serial(0, 16):\n    A[i] = 1.0\n");
  EXPECT_EQ(PrintStmt(For(i, Int(2), Int(6), ForKind::kSerial, st)),
            "for i in T.serial(2, 8):\n    A[i] = 1.0\n");
  EXPECT_EQ(PrintStmt(For(i, Int(0), Int(16), ForKind::kParallel, st)),
            "for i in T.Parallel(16):\n    A[i] = 1.0\n");
  EXPECT_EQ(PrintStmt(For(i, Int(0), Int(8), ForKind::kPipelined, st, {{"num_stages", Int(3)}})),
            "for i in T.Pipelined(8, num_stages=3):\n    A[i] = 1.0\n");
  EXPECT_EQ(PrintStmt(For(i, Int(0), Int(4), ForKind::kUnrolled, st)),
            "for i in T.unroll(4):\n    A[i] = 1.0\n");
  EXPECT_EQ(PrintStmt(For(i, Int(0), Int(8), ForKind::kVectorized, st)),
            "for i in T.vectorized(8):\n    A[i] = 1.0\n");
  EXPECT_EQ(PrintStmt(For(i, Int(1), Int(4), ForKind::kParallel, st)),
            "for i in T.Parallel(1, 5):\n    A[i] = 1.0\n");
  Var m = MakeVar("m");
  EXPECT_EQ(PrintStmt(For(i, m, Int(4), ForKind::kSerial, st)),
            "for i in T.serial(m, m + 4):\n    A[i] = 1.0\n");
  EXPECT_EQ(PrintStmt(For(i, Int(0), m, ForKind::kSerial, st)), "for i in T.serial(0, m):\n    A[i] = 1.0\n");
  EXPECT_EQ(
      PrintStmt(For(i, Int(0), m, ForKind::kPipelined, st, {{"num_stages", Int(2)}, {"order", Int(1)}})),
      "for i in T.Pipelined(m, num_stages=2, order=1):\n    A[i] = 1.0\n");
  // Indentation applies to every line.
  EXPECT_EQ(PrintStmt(For(i, Int(0), Int(2), ForKind::kParallel, st), 2),
            "        for i in T.Parallel(2):\n            A[i] = 1.0\n");
}

TEST_F(PrinterTest, NestedLoopsWithClashingNames) {
  Buffer A = MakeBuffer("A", DataType::Float(32), {Int(4), Int(4)}, Scope::kShared);
  Var i = MakeVar("i"), i2 = MakeVar("i");
  Stmt s = For(i, Int(0), Int(4), ForKind::kParallel,
               For(i2, Int(0), Int(4), ForKind::kParallel, Store(A, F32(0), {i, i2})));
  EXPECT_EQ(PrintStmt(s),
            "for i in T.Parallel(4):\n"
            "    for i_1 in T.Parallel(4):\n"
            "        A[i, i_1] = 0.0\n");
  // Sibling loops over distinct vars of the same name.
  Buffer B = MakeBuffer("B", DataType::Float(32), {Int(4)}, Scope::kShared);
  Stmt sib = Seq({For(i, Int(0), Int(4), ForKind::kSerial, Store(B, F32(0), {i})),
                  For(i2, Int(0), Int(4), ForKind::kSerial, Store(B, F32(1), {i2}))});
  EXPECT_EQ(PrintStmt(sib),
            "for i in T.serial(0, 4):\n"
            "    B[i] = 0.0\n"
            "for i_1 in T.serial(0, 4):\n"
            "    B[i_1] = 1.0\n");
}

TEST_F(PrinterTest, IfElseLetAndEvaluate) {
  Buffer A = MakeBuffer("A", DataType::Float(32), {Int(8)}, Scope::kLocal);
  Var i = MakeVar("i");
  Stmt s = If(Lt(i, Int(4)), Store(A, F32(0), {i}), Store(A, F32(1), {i - Int(4)}));
  EXPECT_EQ(PrintStmt(s),
            "if i < 4:\n"
            "    A[i] = 0.0\n"
            "else:\n"
            "    A[i - 4] = 1.0\n");
  EXPECT_EQ(PrintStmt(If(Lt(i, Int(4)), Evaluate(Call(DataType::Void(), "sync_threads", {})))),
            "if i < 4:\n    T.call_intrin(\"void\", \"sync_threads\")\n");
  Var t = MakeVar("t");
  EXPECT_EQ(PrintStmt(Let(t, i * Int(2), Store(A, F32(2), {t}))), "t = i * 2\nA[t] = 2.0\n");
  // Nested if inside else keeps indentation.
  Stmt nested = If(Lt(i, Int(1)), Evaluate(i), If(Lt(i, Int(2)), Evaluate(i + Int(1))));
  EXPECT_EQ(PrintStmt(nested),
            "if i < 1:\n"
            "    i\n"
            "else:\n"
            "    if i < 2:\n"
            "        i + 1\n");
}

class TileOpPrinterTest : public ::testing::Test {
 protected:
  Var bx = MakeVar("bx"), by = MakeVar("by");
  Buffer A = MakeBuffer("A", DataType::Float(16), {Int(128), Int(64)}, Scope::kGlobal);
  Buffer C = MakeBuffer("C", DataType::Float(32), {Int(128), Int(128)}, Scope::kGlobal);
  Buffer As_ = MakeBuffer("A_shared", DataType::Float(16), {Int(32), Int(64)}, Scope::kShared);
  Buffer Bs = MakeBuffer("B_shared", DataType::Float(16), {Int(32), Int(64)}, Scope::kShared);
  Buffer Cl = MakeBuffer("C_local", DataType::Float(32), {Int(32), Int(32)}, Scope::kFragment);
  Buffer Ml = MakeBuffer("m_local", DataType::Float(32), {Int(32)}, Scope::kFragment);
  Buffer L = MakeBuffer("l", DataType::Float(32), {Int(4)}, Scope::kLocal);
  Buffer V = MakeBuffer("acc", DataType::Float(32), {Int(1)}, Scope::kLocalVar);
};

TEST_F(TileOpPrinterTest, EachTileOp) {
  Region a_tile{A, {{by * Int(32), Int(32)}, {Int(0), Int(64)}}};
  EXPECT_EQ(PrintStmt(std::make_shared<CopyNode>(a_tile, Region::Full(As_), false, Span{})),
            "T.copy(A[by * 32:by * 32 + 32, 0:64], A_shared)\n");
  Region fixed{A, {{Int(16), Int(16)}, {Int(0), Int(64)}}};
  EXPECT_EQ(PrintStmt(std::make_shared<CopyNode>(fixed, Region::Full(As_), true, Span{})),
            "T.copy(A[16:32, 0:64], A_shared, disable_tma=True)\n");
  EXPECT_EQ(PrintStmt(std::make_shared<FillNode>(Region::Full(Cl), F32(0), Span{})),
            "T.fill(C_local, 0.0)\n");
  EXPECT_EQ(PrintStmt(std::make_shared<GemmNode>(Region::Full(As_), Region::Full(Bs), Region::Full(Cl), false,
                                                 false, GemmWarpPolicy::kSquare, false, 1, Span{})),
            "T.gemm(A_shared, B_shared, C_local)\n");
  EXPECT_EQ(PrintStmt(std::make_shared<GemmNode>(Region::Full(As_), Region::Full(Bs), Region::Full(Cl), true,
                                                 true, GemmWarpPolicy::kFullRow, true, 2, Span{})),
            "T.gemm(A_shared, B_shared, C_local, transpose_A=True, transpose_B=True, "
            "policy=T.GemmWarpPolicy.FullRow, clear_accum=True, k_pack=2)\n");
  EXPECT_EQ(PrintStmt(std::make_shared<GemmNode>(Region::Full(As_), Region::Full(Bs), Region::Full(Cl), false,
                                                 true, GemmWarpPolicy::kFullCol, false, 1, Span{})),
            "T.gemm(A_shared, B_shared, C_local, transpose_B=True, policy=T.GemmWarpPolicy.FullCol)\n");
  EXPECT_EQ(PrintStmt(std::make_shared<ReduceNode>(ReduceKind::kMax, Region::Full(Cl), Region::Full(Ml), 1,
                                                   true, Span{})),
            "T.reduce_max(C_local, m_local, dim=1)\n");
  EXPECT_EQ(PrintStmt(std::make_shared<ReduceNode>(ReduceKind::kAbsSum, Region::Full(Cl), Region::Full(Ml), 0,
                                                   false, Span{})),
            "T.reduce_abssum(C_local, m_local, dim=0, clear=False)\n");
  Region c_tile{C, {{bx * Int(32), Int(32)}, {by * Int(32), Int(32)}}};
  EXPECT_EQ(PrintStmt(std::make_shared<AtomicAddNode>(c_tile, Region::Full(Cl), nullptr, Span{})),
            "T.atomic_add(C[bx * 32:bx * 32 + 32, by * 32:by * 32 + 32], C_local)\n");
  Region point{C, {{bx, Int(1)}, {by, Int(1)}}};
  EXPECT_EQ(PrintStmt(std::make_shared<AtomicAddNode>(point, std::nullopt, F32(1), Span{})),
            "T.atomic_add(C[bx, by], 1.0)\n");
  EXPECT_EQ(PrintStmt(std::make_shared<CumsumNode>(Region::Full(Cl), Region::Full(Cl), 0, true, Span{})),
            "T.cumsum(C_local, C_local, dim=0, reverse=True)\n");
  EXPECT_EQ(PrintStmt(std::make_shared<CumsumNode>(Region::Full(Ml), Region::Full(Ml), 0, false, Span{})),
            "T.cumsum(m_local, m_local, dim=0)\n");
  // A partial region of a local buffer with a constant offset.
  Region part{Cl, {{Int(0), Int(16)}, {Int(8), Int(8)}}};
  EXPECT_EQ(PrintStmt(std::make_shared<FillNode>(part, F32(1), Span{})),
            "T.fill(C_local[0:16, 8:16], 1.0)\n");
}

TEST_F(TileOpPrinterTest, KernelWithAllocations) {
  Stmt body = Seq({std::make_shared<FillNode>(Region::Full(Cl), F32(0), Span{}),
                   std::make_shared<CopyNode>(Region{A, {{by * Int(32), Int(32)}, {Int(0), Int(64)}}},
                                              Region::Full(As_), false, Span{})});
  Stmt k = std::make_shared<KernelNode>(std::vector<Expr>{Int(4), Int(8)}, std::vector<Var>{bx, by},
                                        std::vector<Expr>{Int(128)}, std::vector<Buffer>{As_, Cl, L, V},
                                        std::vector<std::pair<Buffer, Expr>>{{V, F32(0)}}, body, Span{});
  EXPECT_EQ(PrintStmt(k),
            "with T.Kernel(4, 8, threads=128) as (bx, by):\n"
            "    A_shared = T.alloc_shared((32, 64), \"float16\")\n"
            "    C_local = T.alloc_fragment((32, 32), \"float32\")\n"
            "    l = T.alloc_local((4,), \"float32\")\n"
            "    acc = T.alloc_var(\"float32\", init=0.0)\n"
            "    T.fill(C_local, 0.0)\n"
            "    T.copy(A[by * 32:by * 32 + 32, 0:64], A_shared)\n");
  Stmt k1 = std::make_shared<KernelNode>(std::vector<Expr>{Int(16)}, std::vector<Var>{bx},
                                         std::vector<Expr>{Int(32), Int(4)}, std::vector<Buffer>{},
                                         std::vector<std::pair<Buffer, Expr>>{}, Evaluate(bx), Span{});
  EXPECT_EQ(PrintStmt(k1), "with T.Kernel(16, threads=[32, 4]) as bx:\n    bx\n");
}

TEST(PrimFuncPrinterTest, SymbolicDimGetsADynamicPreamble) {
  Var m = MakeVar("m");
  Var bx = MakeVar("bx"), i = MakeVar("i"), j = MakeVar("j");
  Buffer A = MakeBuffer("A", DataType::Float(16), {m, Int(64)}, Scope::kGlobal);
  Buffer B = MakeBuffer("B", DataType::Float(16), {m, Int(64)}, Scope::kGlobal);
  Var scale = MakeVar("scale", DataType::Float(32));
  Stmt store =
      Store(B, Load(A, {bx * Int(32) + i, j}) * Cast(DataType::Float(16), scale), {bx * Int(32) + i, j});
  Stmt loops =
      For(i, Int(0), Int(32), ForKind::kParallel, For(j, Int(0), Int(64), ForKind::kParallel, store));
  Expr grid = Binary(BinaryOp::kFloorDiv, m + Int(31), Int(32));
  Stmt k = std::make_shared<KernelNode>(std::vector<Expr>{grid}, std::vector<Var>{bx},
                                        std::vector<Expr>{Int(128)}, std::vector<Buffer>{},
                                        std::vector<std::pair<Buffer, Expr>>{}, loops, Span{});
  PrimFunc f = MakePrimFunc("scale_copy",
                            {{MakeVar("A_handle", DataType::Handle()), A},
                             {MakeVar("B_handle", DataType::Handle()), B},
                             {scale, nullptr}},
                            k);
  EXPECT_EQ(PrintPrimFunc(f),
            "m = T.dynamic(\"m\")\n"
            "\n"
            "@T.prim_func\n"
            "def scale_copy(A: T.Tensor((m, 64), \"float16\"), B: T.Tensor((m, 64), \"float16\"), "
            "scale: T.float32):\n"
            "    with T.Kernel((m + 31) // 32, threads=128) as bx:\n"
            "        for i in T.Parallel(32):\n"
            "            for j in T.Parallel(64):\n"
            "                B[bx * 32 + i, j] = A[bx * 32 + i, j] * T.cast(scale, \"float16\")\n");
}

TEST(PrimFuncPrinterTest, StaticShapesHaveNoPreambleAndEmptyBodyIsPass) {
  Buffer A = MakeBuffer("A", DataType::Float(32), {Int(8)}, Scope::kGlobal);
  PrimFunc f = MakePrimFunc("empty", {{MakeVar("A_handle", DataType::Handle()), A}}, nullptr);
  EXPECT_EQ(PrintPrimFunc(f),
            "@T.prim_func\n"
            "def empty(A: T.Tensor((8,), \"float32\")):\n"
            "    pass\n");
}

TEST(PrimFuncPrinterTest, Int64DynamicDimsAndManyParams) {
  Var n = MakeVar("n", DataType::Int(64)), k = MakeVar("k");
  Buffer X = MakeBuffer("X", DataType::BFloat16(), {n, k}, Scope::kGlobal);
  Buffer Y = MakeBuffer("Y", DataType::Float(32), {k}, Scope::kGlobal);
  Var i = MakeVar("i", DataType::Int(64));
  Stmt body = For(i, IntImm(DataType::Int(64), 0), n, ForKind::kSerial, Store(Y, F32(0), {Int(0)}));
  PrimFunc f =
      MakePrimFunc("g", {{MakeVar("x", DataType::Handle()), X}, {MakeVar("y", DataType::Handle()), Y}}, body);
  std::string s = PrintPrimFunc(f);
  EXPECT_EQ(s,
            "n = T.dynamic(\"n\", \"int64\")\n"
            "k = T.dynamic(\"k\")\n"
            "\n"
            "@T.prim_func\n"
            "def g(X: T.Tensor((n, k), \"bfloat16\"), Y: T.Tensor((k,), \"float32\")):\n"
            "    for i in T.serial(0, n):\n"
            "        Y[0] = 0.0\n");
}

TEST(PrimFuncPrinterTest, ClashingNamesInAFunction) {
  // Two distinct loop vars named i, and a loop var that shares a buffer's name.
  Buffer A = MakeBuffer("A", DataType::Float(32), {Int(4)}, Scope::kGlobal);
  Var i = MakeVar("i"), i2 = MakeVar("i"), av = MakeVar("A");
  Stmt body = Seq({For(i, Int(0), Int(4), ForKind::kParallel, Store(A, F32(0), {i})),
                   For(i2, Int(0), Int(4), ForKind::kParallel, Store(A, F32(1), {i2})),
                   For(av, Int(0), Int(4), ForKind::kParallel, Store(A, F32(2), {av}))});
  PrimFunc f = MakePrimFunc("clash", {{MakeVar("A_handle", DataType::Handle()), A}}, body);
  EXPECT_EQ(PrintPrimFunc(f),
            "@T.prim_func\n"
            "def clash(A: T.Tensor((4,), \"float32\")):\n"
            "    for i in T.Parallel(4):\n"
            "        A[i] = 0.0\n"
            "    for i_1 in T.Parallel(4):\n"
            "        A[i_1] = 1.0\n"
            "    for A_1 in T.Parallel(4):\n"
            "        A[A_1] = 2.0\n");
}

}  // namespace
}  // namespace tl
