// Tests of structural equality and hashing modulo renaming.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "ir/expr.h"
#include "ir/function.h"
#include "ir/stmt.h"
#include "ir/structural.h"

namespace tl {
namespace {

// Knobs of a GEMM-like kernel; each default-constructed spec builds alpha-equivalent functions.
struct Spec {
  std::string suffix;  // appended to every var and buffer name
  int64_t block = 32;
  DataType in_dtype = DataType::Float(16);
  ForKind k_kind = ForKind::kPipelined;
  int64_t num_stages = 3;
  bool stage_annotation = true;
  int64_t k_dim = 64;
  bool swap_operands = false;       // C_local[i, j] + bias vs bias + C_local[i, j]
  bool swap_store_indices = false;  // C[.., j] vs transposed indices in the store
  bool trans_b = true;
  Scope local_scope = Scope::kFragment;
  bool read_b_in_epilogue = false;  // reads B where A is read (same shapes)
  DataType m_dtype = DataType::Int(32);
  bool swap_params = false;
  std::string func_name = "gemm";
};

PrimFunc Build(const Spec& s) {
  auto V = [&](const std::string& n, DataType t = DataType::Int(32)) { return MakeVar(n + s.suffix, t); };
  auto B_ = [&](const std::string& n, DataType t, std::vector<Expr> shape, Scope sc) {
    return MakeBuffer(n + s.suffix, t, std::move(shape), sc);
  };
  Var m = V("m", s.m_dtype);
  Expr blk = Int(s.block);
  Buffer A = B_("A", s.in_dtype, {m, Int(s.k_dim)}, Scope::kGlobal);
  Buffer B = B_("B", s.in_dtype, {m, Int(s.k_dim)}, Scope::kGlobal);
  Buffer C = B_("C", DataType::Float(32), {m, m}, Scope::kGlobal);
  Var bias = V("bias", DataType::Float(32));
  Var bx = V("bx"), by = V("by"), k = V("k"), i = V("i"), j = V("j");
  Buffer As_ = B_("A_shared", s.in_dtype, {blk, Int(32)}, Scope::kShared);
  Buffer Bs = B_("B_shared", s.in_dtype, {blk, Int(32)}, Scope::kShared);
  Buffer Cl = B_("C_local", DataType::Float(32), {blk, blk}, s.local_scope);

  Region a_tile{A, {{by * blk, blk}, {k * Int(32), Int(32)}}};
  Region b_tile{B, {{bx * blk, blk}, {k * Int(32), Int(32)}}};
  std::map<std::string, Expr> ann;
  if (s.stage_annotation) ann["num_stages"] = Int(s.num_stages);
  Stmt kloop =
      For(k, Int(0), Int(s.k_dim / 32), s.k_kind,
          Seq({std::make_shared<CopyNode>(a_tile, Region::Full(As_), false, Span{}),
               std::make_shared<CopyNode>(b_tile, Region::Full(Bs), false, Span{}),
               std::make_shared<GemmNode>(Region::Full(As_), Region::Full(Bs), Region::Full(Cl), false,
                                          s.trans_b, GemmWarpPolicy::kSquare, false, 1, Span{})}),
          ann);
  Expr acc = Load(Cl, {i, j});
  Expr val = s.swap_operands ? Expr(bias + acc) : Expr(acc + bias);
  if (s.read_b_in_epilogue)
    val = val + Cast(DataType::Float(32), Load(B, {by * blk + i, j}));
  else
    val = val + Cast(DataType::Float(32), Load(A, {by * blk + i, j}));
  std::vector<Expr> idx = {by * blk + i, bx * blk + j};
  if (s.swap_store_indices) idx = {bx * blk + j, by * blk + i};
  Stmt epi =
      For(i, Int(0), blk, ForKind::kParallel, For(j, Int(0), blk, ForKind::kParallel, Store(C, val, idx)));
  Expr grid = Binary(BinaryOp::kFloorDiv, m + (blk - Int(1)), blk);
  Stmt body = std::make_shared<KernelNode>(
      std::vector<Expr>{grid, grid}, std::vector<Var>{bx, by}, std::vector<Expr>{Int(128)},
      std::vector<Buffer>{As_, Bs, Cl}, std::vector<std::pair<Buffer, Expr>>{},
      Seq({std::make_shared<FillNode>(Region::Full(Cl), FloatImm(DataType::Float(32), 0), Span{}), kloop,
           epi}),
      Span{});
  std::vector<Param> params = {{V("A_handle", DataType::Handle()), A},
                               {V("B_handle", DataType::Handle()), B},
                               {V("C_handle", DataType::Handle()), C},
                               {bias, nullptr}};
  if (s.swap_params) std::swap(params[0], params[1]);
  return MakePrimFunc(s.func_name, params, body);
}

TEST(StructuralTest, AlphaEquivalentFunctionsAreEqualAndHashEqual) {
  PrimFunc f = Build({});
  PrimFunc g = Build({});  // fresh vars and buffers with the same names
  Spec renamed;
  renamed.suffix = "_renamed";
  PrimFunc h = Build(renamed);
  EXPECT_TRUE(StructuralEqual(f, f));
  EXPECT_TRUE(StructuralEqual(f, g));
  EXPECT_TRUE(StructuralEqual(f, h));
  EXPECT_TRUE(StructuralEqual(h, f));
  EXPECT_EQ(StructuralHash(f), StructuralHash(g));
  EXPECT_EQ(StructuralHash(f), StructuralHash(h));
  // The function name is not part of the structure either.
  Spec other_name;
  other_name.func_name = "other";
  EXPECT_TRUE(StructuralEqual(f, Build(other_name)));
}

TEST(StructuralTest, EachChangeMakesFunctionsUnequal) {
  PrimFunc base = Build({});
  uint64_t base_hash = StructuralHash(base);
  std::vector<std::pair<std::string, std::function<void(Spec*)>>> changes = {
      {"constant (block size)", [](Spec* s) { s->block = 64; }},
      {"constant (num_stages value)", [](Spec* s) { s->num_stages = 2; }},
      {"dtype of inputs", [](Spec* s) { s->in_dtype = DataType::BFloat16(); }},
      {"dtype of a symbolic dim", [](Spec* s) { s->m_dtype = DataType::Int(64); }},
      {"loop kind", [](Spec* s) { s->k_kind = ForKind::kSerial; }},
      {"annotation dropped", [](Spec* s) { s->stage_annotation = false; }},
      {"buffer shape", [](Spec* s) { s->k_dim = 128; }},
      {"operand order", [](Spec* s) { s->swap_operands = true; }},
      {"index order", [](Spec* s) { s->swap_store_indices = true; }},
      {"gemm flag", [](Spec* s) { s->trans_b = false; }},
      {"buffer scope", [](Spec* s) { s->local_scope = Scope::kLocal; }},
      {"which buffer is read", [](Spec* s) { s->read_b_in_epilogue = true; }},
      {"parameter order", [](Spec* s) { s->swap_params = true; }},
  };
  for (auto& [what, change] : changes) {
    SCOPED_TRACE(what);
    Spec s;
    change(&s);
    PrimFunc f = Build(s);
    EXPECT_FALSE(StructuralEqual(base, f));
    EXPECT_FALSE(StructuralEqual(f, base));
    EXPECT_NE(StructuralHash(f), base_hash);
    // ... while the changed function is still alpha-equivalent to a renamed copy of itself.
    s.suffix = "_x";
    EXPECT_TRUE(StructuralEqual(f, Build(s)));
    EXPECT_EQ(StructuralHash(f), StructuralHash(Build(s)));
  }
}

TEST(StructuralTest, FreeVarsAreComparedByIdentityUnlessMapped) {
  Var x = MakeVar("x"), y = MakeVar("y"), x2 = MakeVar("x");
  EXPECT_TRUE(StructuralEqual(x + Int(1), x + Int(1)));
  EXPECT_EQ(StructuralHash(x + Int(1)), StructuralHash(x + Int(1)));
  EXPECT_FALSE(StructuralEqual(x + Int(1), x2 + Int(1))) << "same name, different var";
  EXPECT_FALSE(StructuralEqual(x + Int(1), y + Int(1)));
  EXPECT_TRUE(StructuralEqual(x + Int(1), x2 + Int(1), true));
  EXPECT_TRUE(StructuralEqual(x + Int(1), y + Int(1), true));
  EXPECT_EQ(StructuralHash(x + Int(1), true), StructuralHash(y + Int(1), true));
  // Mapped by position of first use: x + y ~ y + x, but x + x is not x + y.
  EXPECT_TRUE(StructuralEqual(x + y, y + x, true));
  EXPECT_FALSE(StructuralEqual(x + y, y + x));
  EXPECT_FALSE(StructuralEqual(x + x, x + y, true));
  EXPECT_FALSE(StructuralEqual(x * y + x, x * y + y, true));
  EXPECT_TRUE(StructuralEqual(x * y + x, y * x + y, true));
  // A mapped var still has its dtype compared.
  EXPECT_FALSE(StructuralEqual(Expr(x), Expr(MakeVar("x", DataType::Int(64))), true));
}

TEST(StructuralTest, ExpressionDetails) {
  Var x = MakeVar("x");
  EXPECT_FALSE(StructuralEqual(x + Int(1), x + Int(2)));
  EXPECT_FALSE(StructuralEqual(x + Int(1), x - Int(1)));
  EXPECT_FALSE(StructuralEqual(x + Int(1), Int(1) + x));
  EXPECT_FALSE(StructuralEqual(Int(1), IntImm(DataType::Int(64), 1)));
  EXPECT_FALSE(StructuralEqual(Int(1), FloatImm(DataType::Float(32), 1)));
  EXPECT_FALSE(StructuralEqual(FloatImm(DataType::Float(32), 1), FloatImm(DataType::Float(16), 1)));
  EXPECT_TRUE(StructuralEqual(FloatImm(DataType::Float(32), 0.5), FloatImm(DataType::Float(32), 0.5)));
  EXPECT_FALSE(StructuralEqual(Cast(DataType::Float(16), x), Cast(DataType::Float(32), x)));
  EXPECT_FALSE(StructuralEqual(Call(DataType::Float(32), "exp", {x}), Call(DataType::Float(32), "log", {x})));
  EXPECT_FALSE(
      StructuralEqual(Call(DataType::Float(32), "max", {x}), Call(DataType::Float(32), "max", {x, x})));
  EXPECT_FALSE(StructuralEqual(StringImm("ab"), StringImm("ba")));
  EXPECT_TRUE(StructuralEqual(StringImm("ab"), StringImm("ab")));
  Expr c = Binary(BinaryOp::kLT, x, Int(4));
  EXPECT_FALSE(StructuralEqual(Select(c, x, Int(0)), Select(c, Int(0), x)));
  EXPECT_FALSE(StructuralEqual(Not(c), c));
  Buffer A = MakeBuffer("A", DataType::Float(32), {Int(4)}, Scope::kShared);
  Buffer A2 = MakeBuffer("A", DataType::Float(32), {Int(4)}, Scope::kShared);
  Buffer A3 = MakeBuffer("A", DataType::Float(32), {Int(8)}, Scope::kShared);
  EXPECT_TRUE(StructuralEqual(Load(A, {x}), Load(A, {x})));
  EXPECT_FALSE(StructuralEqual(Load(A, {x}), Load(A2, {x}))) << "free buffers compared by identity";
  EXPECT_TRUE(StructuralEqual(Load(A, {x}), Load(A2, {x}), true));
  EXPECT_FALSE(StructuralEqual(Load(A, {x}), Load(A3, {x}), true)) << "a mapped buffer's shape still counts";
}

TEST(StructuralTest, BoundVarsInStatementsAreAlphaRenamed) {
  Buffer A = MakeBuffer("A", DataType::Float(32), {Int(16), Int(16)}, Scope::kShared);
  auto nest = [&](bool transpose, const std::string& n1, const std::string& n2) {
    Var i = MakeVar(n1), j = MakeVar(n2);
    std::vector<Expr> idx = transpose ? std::vector<Expr>{j, i} : std::vector<Expr>{i, j};
    return For(i, Int(0), Int(16), ForKind::kParallel,
               For(j, Int(0), Int(16), ForKind::kParallel, Store(A, FloatImm(DataType::Float(32), 0), idx)));
  };
  // Loop vars are defined by the loops, so no mapping of free vars is needed.
  EXPECT_TRUE(StructuralEqual(nest(false, "i", "j"), nest(false, "p", "q")));
  EXPECT_EQ(StructuralHash(nest(false, "i", "j")), StructuralHash(nest(false, "p", "q")));
  // Swapping the names is still the same program; swapping the indices is not.
  EXPECT_TRUE(StructuralEqual(nest(false, "i", "j"), nest(false, "j", "i")));
  EXPECT_FALSE(StructuralEqual(nest(false, "i", "j"), nest(true, "i", "j")));

  // Let-bound vars too.
  Var x = MakeVar("x");
  auto let = [&](const std::string& n) {
    Var t = MakeVar(n);
    return Let(t, x * Int(2), Store(A, FloatImm(DataType::Float(32), 1), {t, t}));
  };
  EXPECT_TRUE(StructuralEqual(let("t"), let("u")));
  // A free buffer in a statement is compared by identity.
  Buffer Aother = MakeBuffer("A", DataType::Float(32), {Int(16), Int(16)}, Scope::kShared);
  Stmt s1 = Evaluate(Load(A, {x, x}));
  Stmt s2 = Evaluate(Load(Aother, {x, x}));
  EXPECT_FALSE(StructuralEqual(s1, s2));
  EXPECT_TRUE(StructuralEqual(s1, s2, true));
  // A statement with a free var.
  Var y = MakeVar("y");
  EXPECT_FALSE(StructuralEqual(Evaluate(x), Evaluate(y)));
  EXPECT_TRUE(StructuralEqual(Evaluate(x), Evaluate(y), true));
  // If with and without an else branch.
  Expr c = Binary(BinaryOp::kLT, x, Int(1));
  EXPECT_FALSE(StructuralEqual(If(c, Evaluate(x)), If(c, Evaluate(x), Evaluate(x))));
  // Loop bounds.
  Var i = MakeVar("i");
  EXPECT_FALSE(StructuralEqual(For(i, Int(0), Int(4), ForKind::kSerial, Evaluate(i)),
                               For(i, Int(1), Int(4), ForKind::kSerial, Evaluate(i))));
  EXPECT_FALSE(StructuralEqual(For(i, Int(0), Int(4), ForKind::kSerial, Evaluate(i), {{"a", Int(1)}}),
                               For(i, Int(0), Int(4), ForKind::kSerial, Evaluate(i), {{"b", Int(1)}})));
}

TEST(StructuralTest, TileOpFlagsMatter) {
  Buffer S = MakeBuffer("S", DataType::Float(32), {Int(8), Int(8)}, Scope::kFragment);
  Buffer D = MakeBuffer("D", DataType::Float(32), {Int(8)}, Scope::kFragment);
  auto reduce = [&](ReduceKind k, int dim, bool clear) {
    return Stmt(std::make_shared<ReduceNode>(k, Region::Full(S), Region::Full(D), dim, clear, Span{}));
  };
  EXPECT_TRUE(StructuralEqual(reduce(ReduceKind::kSum, 1, true), reduce(ReduceKind::kSum, 1, true)));
  EXPECT_FALSE(StructuralEqual(reduce(ReduceKind::kSum, 1, true), reduce(ReduceKind::kMax, 1, true)));
  EXPECT_FALSE(StructuralEqual(reduce(ReduceKind::kSum, 1, true), reduce(ReduceKind::kSum, 0, true)));
  EXPECT_FALSE(StructuralEqual(reduce(ReduceKind::kSum, 1, true), reduce(ReduceKind::kSum, 1, false)));
  auto cumsum = [&](bool rev) {
    return Stmt(std::make_shared<CumsumNode>(Region::Full(D), Region::Full(D), 0, rev, Span{}));
  };
  EXPECT_FALSE(StructuralEqual(cumsum(true), cumsum(false)));
  auto copy = [&](bool no_tma) {
    return Stmt(std::make_shared<CopyNode>(Region::Full(D), Region::Full(D), no_tma, Span{}));
  };
  EXPECT_FALSE(StructuralEqual(copy(true), copy(false)));
  Stmt scalar = std::make_shared<AtomicAddNode>(Region{D, {{Int(0), Int(1)}}}, std::nullopt,
                                                FloatImm(DataType::Float(32), 1), Span{});
  Stmt tile = std::make_shared<AtomicAddNode>(Region{D, {{Int(0), Int(1)}}}, Region{D, {{Int(0), Int(1)}}},
                                              nullptr, Span{});
  EXPECT_FALSE(StructuralEqual(scalar, tile));
  EXPECT_TRUE(StructuralEqual(scalar, scalar));
}

}  // namespace
}  // namespace tl
