// Tests of the IR core: data types, expression construction and type promotion, the visitor and
// mutator bases, Substitute, and the error types.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ir/dtype.h"
#include "ir/expr.h"
#include "ir/functor.h"
#include "ir/stmt.h"
#include "ir/structural.h"
#include "support/error.h"

namespace tl {
namespace {

// ------------------------------------------------------------------------------- data types

DataType MustParse(const std::string& s) {
  DataType t;
  EXPECT_TRUE(DataType::Parse(s, &t)) << "failed to parse " << s;
  return t;
}

struct DTypeCase {
  const char* name;
  DataType::Code code;
  int bits;
  int lanes;
  int bytes;
};

TEST(DataTypeTest, ParsesAndPrintsEveryScalarType) {
  using C = DataType::Code;
  const DTypeCase cases[] = {
      {"float16", C::kFloat, 16, 1, 2},
      {"bfloat16", C::kBFloat, 16, 1, 2},
      {"float32", C::kFloat, 32, 1, 4},
      {"float64", C::kFloat, 64, 1, 8},
      {"float8_e4m3fn", C::kFloat8E4M3, 8, 1, 1},
      {"float8_e5m2", C::kFloat8E5M2, 8, 1, 1},
      {"int4", C::kInt, 4, 1, 1},
      {"int8", C::kInt, 8, 1, 1},
      {"int16", C::kInt, 16, 1, 2},
      {"int32", C::kInt, 32, 1, 4},
      {"int64", C::kInt, 64, 1, 8},
      {"uint8", C::kUInt, 8, 1, 1},
      {"uint16", C::kUInt, 16, 1, 2},
      {"uint32", C::kUInt, 32, 1, 4},
      {"uint64", C::kUInt, 64, 1, 8},
      {"bool", C::kBool, 1, 1, 1},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    DataType t = MustParse(c.name);
    EXPECT_EQ(t.code(), c.code);
    EXPECT_EQ(t.bits(), c.bits);
    EXPECT_EQ(t.lanes(), c.lanes);
    EXPECT_EQ(t.bytes(), c.bytes);
    EXPECT_EQ(t.str(), c.name);
    // Round trip through the printed name.
    EXPECT_EQ(MustParse(t.str()), t);
  }
}

TEST(DataTypeTest, VectorLanes) {
  DataType t = MustParse("float16x8");
  EXPECT_EQ(t, DataType::Float(16, 8));
  EXPECT_EQ(t.lanes(), 8);
  EXPECT_EQ(t.bytes(), 16);
  EXPECT_EQ(t.str(), "float16x8");
  EXPECT_EQ(t.element_of(), DataType::Float(16));
  EXPECT_EQ(t.element_of().with_lanes(4).str(), "float16x4");

  EXPECT_EQ(MustParse("int32x4"), DataType::Int(32, 4));
  EXPECT_EQ(MustParse("int32x4").bytes(), 16);
  EXPECT_EQ(MustParse("uint8x16").bytes(), 16);
  EXPECT_EQ(MustParse("int4x8").bytes(), 4);
  EXPECT_EQ(MustParse("int4x3").bytes(), 2);  // 12 bits round up to 2 bytes
  EXPECT_EQ(MustParse("bfloat16x2").str(), "bfloat16x2");
  EXPECT_EQ(MustParse("float32x1"), DataType::Float(32));
  EXPECT_EQ(MustParse("float32x1").str(), "float32");
}

TEST(DataTypeTest, EveryTypeWithLanesRoundTrips) {
  const char* names[] = {"float16", "bfloat16", "float32", "float64", "float8_e4m3fn", "float8_e5m2",
                         "int4",    "int8",     "int16",   "int32",   "int64",         "uint8",
                         "uint16",  "uint32",   "uint64",  "bool"};
  for (const char* n : names) {
    DataType base = MustParse(n);
    for (int lanes : {2, 4, 16}) {
      DataType v = base.with_lanes(lanes);
      SCOPED_TRACE(v.str());
      EXPECT_EQ(v.str(), std::string(n) + "x" + std::to_string(lanes));
      DataType back;
      ASSERT_TRUE(DataType::Parse(v.str(), &back));
      EXPECT_EQ(back, v);
      EXPECT_EQ(back.bytes(), (base.bits() * lanes + 7) / 8);
    }
  }
}

TEST(DataTypeTest, AliasesOfFloat8) {
  EXPECT_EQ(MustParse("float8_e4m3").code(), DataType::Code::kFloat8E4M3);
  EXPECT_EQ(MustParse("e4m3_float8").str(), "float8_e4m3fn");
  EXPECT_EQ(MustParse("e5m2_float8").str(), "float8_e5m2");
}

TEST(DataTypeTest, RejectsBadNames) {
  const char* bad[] = {"",         "float",   "float12",       "float8",         "int",
                       "int3",     "int128",  "int1",          "uint",           "uint7",
                       "bfloat32", "double",  "Float32",       "float32x",       "float32x0",
                       "x4",       "int32xa", "int 32",        "float16x8x2",    "float8_e4m3fnz",
                       "boolean",  "i32",     "float16x70000", "float16x123456", "int32x-4"};
  for (const char* n : bad) {
    DataType t = DataType::Int(8);
    EXPECT_FALSE(DataType::Parse(n, &t)) << "accepted '" << n << "' as " << t.str();
  }
}

TEST(DataTypeTest, Predicates) {
  EXPECT_TRUE(DataType::Int(32).is_int());
  EXPECT_TRUE(DataType::Int(32).is_integer());
  EXPECT_FALSE(DataType::Int(32).is_uint());
  EXPECT_TRUE(DataType::UInt(8).is_integer());
  EXPECT_TRUE(DataType::BFloat16().is_float());
  EXPECT_TRUE(MustParse("float8_e5m2").is_float());
  EXPECT_FALSE(DataType::Bool().is_integer());
  EXPECT_TRUE(DataType::Bool().is_bool());
  EXPECT_TRUE(DataType::Void().is_void());
  EXPECT_EQ(DataType::Void().str(), "void");
  EXPECT_EQ(DataType::Handle().str(), "handle");
  EXPECT_EQ(DataType::Index(), DataType::Int(32));
  EXPECT_NE(DataType::Float(16), DataType::BFloat16());
  EXPECT_NE(DataType::Float(16), DataType::Float(16, 2));
}

// ------------------------------------------------------------------------------ expressions

TEST(ExprTest, Literals) {
  Expr i = Int(7);
  ASSERT_NE(As<IntImmNode>(i), nullptr);
  EXPECT_EQ(As<IntImmNode>(i)->value, 7);
  EXPECT_EQ(i->dtype, DataType::Int(32));
  EXPECT_EQ(As<FloatImmNode>(i), nullptr);
  EXPECT_TRUE(IsConstInt(i, 7));
  EXPECT_FALSE(IsConstInt(i, 8));
  EXPECT_FALSE(IsConstInt(FloatImm(DataType::Float(32), 7.0), 7));

  Expr b = Bool(true);
  EXPECT_EQ(b->dtype, DataType::Bool());
  EXPECT_TRUE(IsConstInt(b, 1));
  // Bool literals normalise any nonzero value to 1.
  EXPECT_TRUE(IsConstInt(IntImm(DataType::Bool(), 5), 1));

  Expr s = StringImm("hi");
  ASSERT_NE(As<StringImmNode>(s), nullptr);
  EXPECT_EQ(As<StringImmNode>(s)->value, "hi");
}

TEST(ExprTest, VarsHaveIdentity) {
  Var a = MakeVar("i"), b = MakeVar("i");
  EXPECT_NE(a, b);
  EXPECT_EQ(a->name, b->name);
  EXPECT_EQ(a->dtype, DataType::Int(32));
  EXPECT_EQ(MakeVar("n", DataType::Int(64))->dtype, DataType::Int(64));
  EXPECT_FALSE(StructuralEqual(Expr(a), Expr(b)));
  EXPECT_TRUE(StructuralEqual(Expr(a), Expr(b), /*map_free_vars=*/true));
}

TEST(ExprTest, LiteralAdoptsOtherSidesType) {
  Var h = MakeVar("h", DataType::Float(16));
  Expr e = h + Int(2);
  EXPECT_EQ(e->dtype, DataType::Float(16));
  auto* b = As<BinaryNode>(e);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->a, h);  // the var is not cast
  auto* lit = As<FloatImmNode>(b->b);
  ASSERT_NE(lit, nullptr) << "the int literal becomes a float16 literal, not a cast";
  EXPECT_EQ(lit->dtype, DataType::Float(16));
  EXPECT_EQ(lit->value, 2.0);

  // On the left as well.
  Var n = MakeVar("n", DataType::Int(64));
  Expr f = Int(3) * n;
  EXPECT_EQ(f->dtype, DataType::Int(64));
  auto* fb = As<BinaryNode>(f);
  ASSERT_NE(fb, nullptr);
  ASSERT_NE(As<IntImmNode>(fb->a), nullptr);
  EXPECT_EQ(fb->a->dtype, DataType::Int(64));
  EXPECT_EQ(As<IntImmNode>(fb->a)->value, 3);

  // A float literal with an int var does not become an int: the sum is float.
  Var i = MakeVar("i");
  Expr g = i + FloatImm(DataType::Float(32), 0.5);
  EXPECT_EQ(g->dtype, DataType::Float(32));
  auto* gb = As<BinaryNode>(g);
  ASSERT_NE(gb, nullptr);
  ASSERT_NE(As<CastNode>(gb->a), nullptr);
  EXPECT_EQ(gb->a->dtype, DataType::Float(32));
  EXPECT_EQ(As<FloatImmNode>(gb->b)->value, 0.5);
}

TEST(ExprTest, Promotion) {
  Var i32 = MakeVar("a"), i64 = MakeVar("b", DataType::Int(64));
  Var f16 = MakeVar("c", DataType::Float(16)), f32 = MakeVar("d", DataType::Float(32));
  Var bf = MakeVar("e", DataType::BFloat16());

  Expr s = i32 + i64;
  EXPECT_EQ(s->dtype, DataType::Int(64));
  EXPECT_NE(As<CastNode>(As<BinaryNode>(s)->a), nullptr);
  EXPECT_EQ(As<BinaryNode>(s)->b, i64);

  Expr m = i32 * f16;  // int with float is float
  EXPECT_EQ(m->dtype, DataType::Float(16));
  EXPECT_EQ(As<BinaryNode>(m)->a->dtype, DataType::Float(16));
  EXPECT_NE(As<CastNode>(As<BinaryNode>(m)->a), nullptr);

  EXPECT_EQ((f16 + f32)->dtype, DataType::Float(32));
  EXPECT_EQ((f16 - bf)->dtype, DataType::Float(32));  // neither half type holds the other
  EXPECT_EQ((Int(1) + IntImm(DataType::Int(64), 2))->dtype, DataType::Int(64));
  EXPECT_EQ((Int(1) + FloatImm(DataType::Float(32), 2))->dtype, DataType::Float(32));
}

TEST(ExprTest, ComparisonsAndLogicGiveBool) {
  Var x = MakeVar("x"), f = MakeVar("f", DataType::Float(32));
  for (BinaryOp op :
       {BinaryOp::kEQ, BinaryOp::kNE, BinaryOp::kLT, BinaryOp::kLE, BinaryOp::kGT, BinaryOp::kGE}) {
    SCOPED_TRACE(BinaryOpName(op));
    EXPECT_TRUE(IsComparison(op));
    Expr c = Binary(op, x, Int(4));
    EXPECT_EQ(c->dtype, DataType::Bool());
    EXPECT_EQ(As<BinaryNode>(c)->a->dtype, DataType::Int(32));
    Expr d = Binary(op, f, x);
    EXPECT_EQ(d->dtype, DataType::Bool());
    EXPECT_EQ(As<BinaryNode>(d)->b->dtype, DataType::Float(32));  // operands promoted, not the result
  }
  EXPECT_FALSE(IsComparison(BinaryOp::kAdd));
  EXPECT_FALSE(IsComparison(BinaryOp::kAnd));
  Expr l = Binary(BinaryOp::kAnd, Binary(BinaryOp::kLT, x, Int(3)), Binary(BinaryOp::kGT, x, Int(0)));
  EXPECT_EQ(l->dtype, DataType::Bool());
  EXPECT_EQ(Binary(BinaryOp::kOr, Bool(true), Bool(false))->dtype, DataType::Bool());
  EXPECT_EQ(Not(Binary(BinaryOp::kLT, x, Int(3)))->dtype, DataType::Bool());
  EXPECT_EQ(std::string(BinaryOpName(BinaryOp::kFloorDiv)), "floordiv");
  EXPECT_EQ(std::string(BinaryOpName(BinaryOp::kOr)), "or");
  EXPECT_EQ(std::string(BinaryOpName(BinaryOp::kAdd)), "add");
}

TEST(ExprTest, CastAndSelect) {
  Var x = MakeVar("x");
  EXPECT_EQ(Cast(DataType::Int(32), x), x) << "a no-op cast returns its operand";
  Expr c = Cast(DataType::Float(16), x);
  auto* cn = As<CastNode>(c);
  ASSERT_NE(cn, nullptr);
  EXPECT_EQ(c->dtype, DataType::Float(16));
  EXPECT_EQ(cn->value, x);

  Expr cond = Binary(BinaryOp::kLT, x, Int(4));
  Expr s = Select(cond, x, Int(0));
  auto* sn = As<SelectNode>(s);
  ASSERT_NE(sn, nullptr);
  EXPECT_EQ(s->dtype, DataType::Int(32));
  EXPECT_EQ(sn->cond, cond);
  EXPECT_EQ(sn->true_value, x);
  EXPECT_TRUE(IsConstInt(sn->false_value, 0));

  // The literal branch adopts the other branch's type.
  Var h = MakeVar("h", DataType::Float(16));
  Expr s2 = Select(cond, Int(0), h);
  EXPECT_EQ(s2->dtype, DataType::Float(16));
  EXPECT_EQ(As<SelectNode>(s2)->true_value->dtype, DataType::Float(16));
  EXPECT_NE(As<FloatImmNode>(As<SelectNode>(s2)->true_value), nullptr);
  // Two non-literal branches of different types are promoted.
  Var n = MakeVar("n", DataType::Int(64));
  Expr s3 = Select(cond, x, n);
  EXPECT_EQ(s3->dtype, DataType::Int(64));
  EXPECT_EQ(As<SelectNode>(s3)->true_value->dtype, DataType::Int(64));
  // A non-bool condition becomes a bool.
  Expr s4 = Select(x, Int(1), Int(2));
  EXPECT_EQ(As<SelectNode>(s4)->cond->dtype, DataType::Bool());
}

TEST(ExprTest, BuffersAndLoads) {
  Var m = MakeVar("m");
  Buffer A = MakeBuffer("A", DataType::Float(16), {m, Int(64)}, Scope::kGlobal);
  Expr l = Load(A, {Int(1), Int(2)});
  auto* ln = As<BufferLoadNode>(l);
  ASSERT_NE(ln, nullptr);
  EXPECT_EQ(l->dtype, DataType::Float(16));
  EXPECT_EQ(ln->buffer, A);
  EXPECT_EQ(ln->indices.size(), 2u);
  EXPECT_EQ(std::string(ScopeName(Scope::kFragment)), "local.fragment");
  EXPECT_EQ(std::string(ScopeName(Scope::kShared)), "shared");
  EXPECT_EQ(std::string(ScopeName(Scope::kLocalVar)), "local.var");

  Region r = Region::Full(A);
  EXPECT_EQ(r.buffer, A);
  ASSERT_EQ(r.ranges.size(), 2u);
  EXPECT_TRUE(IsConstInt(r.ranges[0].min, 0));
  EXPECT_EQ(r.ranges[0].extent, m);
  EXPECT_TRUE(IsConstInt(r.ranges[1].extent, 64));
}

TEST(StmtTest, SeqFlattensAndDropsNulls) {
  Var x = MakeVar("x");
  Stmt a = Evaluate(x), b = Evaluate(Int(1)), c = Evaluate(Int(2));
  Stmt inner = Seq({a, b});
  Stmt outer = Seq({inner, nullptr, c});
  auto* q = As<SeqNode>(outer);
  ASSERT_NE(q, nullptr);
  ASSERT_EQ(q->seq.size(), 3u);
  EXPECT_EQ(q->seq[0], a);
  EXPECT_EQ(q->seq[1], b);
  EXPECT_EQ(q->seq[2], c);
  EXPECT_EQ(Seq({nullptr, a}), a) << "a single statement comes back as is";
  EXPECT_EQ(std::string(ForKindName(ForKind::kPipelined)), "Pipelined");
  EXPECT_EQ(std::string(ReduceKindName(ReduceKind::kAbsMax)), "absmax");
}

// ------------------------------------------------------------------------- visitor / mutator

struct Counter : IRVisitor {
  int vars = 0, binaries = 0, calls = 0, loads = 0, stmts = 0, buffers = 0;
  void VisitStmt(const Stmt& s) override {
    if (s) ++stmts;
    IRVisitor::VisitStmt(s);
  }
  void VisitBuffer(const Buffer&) override { ++buffers; }

 protected:
  void VisitVar(const VarNode*) override { ++vars; }
  void VisitBinary(const BinaryNode* n) override {
    ++binaries;
    IRVisitor::VisitBinary(n);
  }
  void VisitCall(const CallNode* n) override {
    ++calls;
    IRVisitor::VisitCall(n);
  }
  void VisitLoad(const BufferLoadNode* n) override {
    ++loads;
    IRVisitor::VisitLoad(n);
  }
};

TEST(VisitorTest, CountsNodes) {
  Var x = MakeVar("x"), y = MakeVar("y");
  Buffer A = MakeBuffer("A", DataType::Float(32), {Int(16)}, Scope::kShared);
  // (x + y) * x + exp(A[x - 1]) ... built as a float expression
  Expr idx = x - Int(1);
  Expr e = Cast(DataType::Float(32), (x + y) * x) + Call(DataType::Float(32), "exp", {Load(A, {idx})});
  Counter c;
  c.VisitExpr(e);
  EXPECT_EQ(c.vars, 4);      // x, y, x, x
  EXPECT_EQ(c.binaries, 4);  // +, *, outer +, -
  EXPECT_EQ(c.calls, 1);
  EXPECT_EQ(c.loads, 1);
  EXPECT_EQ(c.buffers, 1);

  // Statements: a loop storing into a buffer, under an if, in a sequence.
  Var i = MakeVar("i");
  Stmt st = Store(A, Cast(DataType::Float(32), i), {i});
  Stmt loop = For(i, Int(0), Int(16), ForKind::kSerial, st, {{"num_stages", Int(2)}});
  Stmt body = Seq({If(Binary(BinaryOp::kLT, x, Int(3)), loop, Evaluate(y)), Evaluate(x)});
  Counter d;
  d.VisitStmt(body);
  EXPECT_EQ(d.stmts, 6);  // seq, if, for, store, evaluate, evaluate
  // x (cond), i (cast), i (index), y, x: the loop var itself is a definition, not a use.
  EXPECT_EQ(d.vars, 5);
  EXPECT_EQ(d.binaries, 1);
  EXPECT_EQ(d.buffers, 1);
}

TEST(VisitorTest, VisitsTileOpsAndKernels) {
  Var bx = MakeVar("bx");
  Buffer A = MakeBuffer("A", DataType::Float(16), {Int(128), Int(64)}, Scope::kGlobal);
  Buffer As_ = MakeBuffer("A_shared", DataType::Float(16), {Int(32), Int(64)}, Scope::kShared);
  Buffer C = MakeBuffer("C", DataType::Float(32), {Int(32), Int(32)}, Scope::kFragment);
  Region src{A, {{bx * Int(32), Int(32)}, {Int(0), Int(64)}}};
  Stmt copy = std::make_shared<CopyNode>(src, Region::Full(As_), false, Span{});
  Stmt fill = std::make_shared<FillNode>(Region::Full(C), FloatImm(DataType::Float(32), 0), Span{});
  Stmt gemm = std::make_shared<GemmNode>(Region::Full(As_), Region::Full(As_), Region::Full(C), false, true,
                                         GemmWarpPolicy::kSquare, false, 1, Span{});
  Stmt kernel = std::make_shared<KernelNode>(
      std::vector<Expr>{Int(4)}, std::vector<Var>{bx}, std::vector<Expr>{Int(128)},
      std::vector<Buffer>{As_, C}, std::vector<std::pair<Buffer, Expr>>{}, Seq({fill, copy, gemm}), Span{});
  Counter c;
  c.VisitStmt(kernel);
  EXPECT_EQ(c.stmts, 5);  // kernel, seq, fill, copy, gemm
  EXPECT_EQ(c.vars, 1);   // bx in the copy's region
  EXPECT_EQ(c.binaries, 1);
  EXPECT_EQ(c.buffers, 2 + 1 + 2 + 3);  // allocs, fill, copy, gemm

  int seen = 0;
  std::vector<StmtKind> order;
  PostOrderVisitStmt(kernel, [&](const Stmt& s) {
    ++seen;
    order.push_back(s->kind);
  });
  EXPECT_EQ(seen, 5);
  ASSERT_EQ(order.size(), 5u);
  EXPECT_EQ(order.front(), StmtKind::kTileOp);
  EXPECT_EQ(order.back(), StmtKind::kKernel) << "post-order visits the kernel last";
}

// Replaces every var named "x" by the literal 7.
struct ReplaceX : IRMutator {
  int visits = 0;

 protected:
  Expr VisitVar(const Var& v) override {
    ++visits;
    return v->name == "x" ? Int(7) : Expr(v);
  }
};

TEST(MutatorTest, ReturnsSamePointerWhenNothingChanges) {
  Var y = MakeVar("y"), z = MakeVar("z");
  Buffer A = MakeBuffer("A", DataType::Float(32), {Int(16), Int(16)}, Scope::kShared);
  Expr e = Select(Binary(BinaryOp::kLT, y, z), Cast(DataType::Float(32), y * z),
                  Call(DataType::Float(32), "exp", {Load(A, {y, z})}));
  ReplaceX m;
  EXPECT_EQ(m.VisitExpr(e), e);
  EXPECT_GT(m.visits, 0);

  Var i = MakeVar("i");
  Stmt s =
      Seq({For(i, Int(0), Int(16), ForKind::kParallel, Store(A, FloatImm(DataType::Float(32), 1), {i, y})),
           If(Binary(BinaryOp::kGT, y, Int(0)), Evaluate(z), Evaluate(y)),
           Let(MakeVar("t"), y + Int(1), Evaluate(z)),
           std::make_shared<FillNode>(Region::Full(A), FloatImm(DataType::Float(32), 0), Span{})});
  EXPECT_EQ(m.VisitStmt(s), s);
}

TEST(MutatorTest, RebuildsOnlyTheChangedPath) {
  Var x = MakeVar("x"), y = MakeVar("y"), z = MakeVar("z");
  Expr left = x + y;
  Expr right = y * z;
  Expr e = left - right;
  ReplaceX m;
  Expr r = m.VisitExpr(e);
  ASSERT_NE(r, e);
  auto* rb = As<BinaryNode>(r);
  ASSERT_NE(rb, nullptr);
  EXPECT_EQ(rb->op, BinaryOp::kSub);
  EXPECT_NE(rb->a, left);
  EXPECT_EQ(rb->b, right) << "the untouched subtree is shared";
  auto* la = As<BinaryNode>(rb->a);
  ASSERT_NE(la, nullptr);
  EXPECT_TRUE(IsConstInt(la->a, 7));
  EXPECT_EQ(la->b, y);

  // Statements: only the changed branch of a sequence is rebuilt.
  Stmt keep = Evaluate(y + z);
  Stmt change = Evaluate(x + z);
  Stmt s = Seq({keep, change});
  Stmt rs = m.VisitStmt(s);
  ASSERT_NE(rs, s);
  auto* q = As<SeqNode>(rs);
  ASSERT_NE(q, nullptr);
  ASSERT_EQ(q->seq.size(), 2u);
  EXPECT_EQ(q->seq[0], keep);
  EXPECT_NE(q->seq[1], change);

  // A loop whose body changes keeps its var, kind and annotations.
  Var i = MakeVar("i");
  Stmt loop = For(i, Int(0), Int(8), ForKind::kPipelined, change, {{"num_stages", Int(3)}});
  Stmt rl = m.VisitStmt(loop);
  auto* f = As<ForNode>(rl);
  ASSERT_NE(f, nullptr);
  ASSERT_NE(rl, loop);
  EXPECT_EQ(f->var, i);
  EXPECT_EQ(f->for_kind, ForKind::kPipelined);
  ASSERT_EQ(f->annotations.count("num_stages"), 1u);
  EXPECT_TRUE(IsConstInt(f->annotations.at("num_stages"), 3));
  EXPECT_EQ(f->min, As<ForNode>(loop)->min);
}

TEST(MutatorTest, SubstitutesBuffersEverywhere) {
  Buffer A = MakeBuffer("A", DataType::Float(32), {Int(8)}, Scope::kShared);
  Buffer B = MakeBuffer("B", DataType::Float(32), {Int(8)}, Scope::kShared);
  struct Swap : IRMutator {
    Buffer from, to;
    Buffer VisitBuffer(const Buffer& b) override { return b == from ? to : b; }
  } sw;
  sw.from = A;
  sw.to = B;
  Var i = MakeVar("i");
  Stmt s = Seq({Store(A, Load(A, {i}), {i}),
                std::make_shared<FillNode>(Region::Full(A), FloatImm(DataType::Float(32), 0), Span{})});
  Stmt r = sw.VisitStmt(s);
  auto* q = As<SeqNode>(r);
  ASSERT_NE(q, nullptr);
  auto* st = As<StoreNode>(q->seq[0]);
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(st->buffer, B);
  EXPECT_EQ(As<BufferLoadNode>(st->value)->buffer, B);
  EXPECT_EQ(As<FillNode>(q->seq[1])->dst.buffer, B);
}

TEST(SubstituteTest, ReplacesByIdentity) {
  Var i = MakeVar("i"), i2 = MakeVar("i"), k = MakeVar("k");
  Expr e = i * Int(4) + i2;
  Expr r = Substitute(e, {{i.get(), k + Int(1)}});
  // i -> k + 1 but the other var named i is untouched.
  EXPECT_TRUE(StructuralEqual(r, (k + Int(1)) * Int(4) + i2));
  EXPECT_FALSE(StructuralEqual(r, (k + Int(1)) * Int(4) + i));
  // An empty map changes nothing and returns the same pointer.
  EXPECT_EQ(Substitute(e, {}), e);

  Buffer A = MakeBuffer("A", DataType::Int(32), {Int(8)}, Scope::kLocal);
  Stmt s = Seq({Store(A, i, {i2}), Evaluate(k)});
  Stmt rs = Substitute(s, {{i2.get(), Int(3)}});
  auto* q = As<SeqNode>(rs);
  ASSERT_NE(q, nullptr);
  auto* st = As<StoreNode>(q->seq[0]);
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(st->value, i);
  EXPECT_TRUE(IsConstInt(st->indices[0], 3));
  EXPECT_EQ(q->seq[1], As<SeqNode>(s)->seq[1]);
}

// ------------------------------------------------------------------------------------ errors

TEST(ErrorTest, UserErrorQuotesTheSourceLineWithACaret) {
  RegisterSource("<test_ir_kernel>", "def f(A):\n    x = A[0] + bogus\n    return x\n");
  Span sp{"<test_ir_kernel>", 2, 16};
  try {
    TL_USER_ERROR(kType, sp, "name '", "bogus", "' is not defined");
    FAIL() << "no throw";
  } catch (const UserError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kType);
    EXPECT_EQ(e.raw_message(), "name 'bogus' is not defined");
    EXPECT_EQ(e.span().line, 2);
    const std::string expected =
        "<test_ir_kernel>:2:16: name 'bogus' is not defined\n"
        "        x = A[0] + bogus\n" +
        std::string(4 + 15, ' ') + "^";
    EXPECT_EQ(std::string(e.what()), expected);
  }
  // The caret sits under the column.
  std::string f = FormatSpan(Span{"<test_ir_kernel>", 1, 1});
  EXPECT_EQ(f, "<test_ir_kernel>:1:1\n    def f(A):\n    ^");
  std::string g = FormatSpan(Span{"<test_ir_kernel>", 3, 12});
  size_t caret_line = g.rfind('\n');
  ASSERT_NE(caret_line, std::string::npos);
  EXPECT_EQ(g.substr(caret_line + 1), std::string(4 + 11, ' ') + "^");
  EXPECT_EQ(g.substr(0, g.find('\n')), "<test_ir_kernel>:3:12");
}

TEST(ErrorTest, UserErrorWithoutSpanOrSource) {
  UserError e(ErrorKind::kArgument, "expected 3 arguments");
  EXPECT_EQ(std::string(e.what()), "expected 3 arguments");
  EXPECT_FALSE(e.span().defined());
  // A span whose file is unknown still gets its location prefix.
  UserError u(ErrorKind::kSyntax, "bad", Span{"<nowhere_registered>", 4, 2});
  EXPECT_EQ(std::string(u.what()), "<nowhere_registered>:4:2: bad");
  EXPECT_EQ(FormatSpan(Span{}), "");
}

TEST(ErrorTest, TabsInTheSourceLineAreKeptUnderTheCaret) {
  RegisterSource("<tabbed>", "\tx = 1\n");
  EXPECT_EQ(FormatSpan(Span{"<tabbed>", 1, 2}), "<tabbed>:1:2\n    \tx = 1\n    \t^");
}

TEST(ErrorTest, InternalErrorIsMarkedAsABug) {
  InternalError e("broken invariant");
  std::string w = e.what();
  EXPECT_NE(w.find("internal compiler error"), std::string::npos);
  EXPECT_NE(w.find("bug"), std::string::npos);
  EXPECT_NE(w.find("broken invariant"), std::string::npos);
  try {
    int v = 3;
    TL_ICHECK(v == 4, "v was ", v);
    FAIL() << "no throw";
  } catch (const InternalError& ie) {
    std::string m = ie.what();
    EXPECT_NE(m.find("internal compiler error"), std::string::npos);
    EXPECT_NE(m.find("v == 4"), std::string::npos);
    EXPECT_NE(m.find("v was 3"), std::string::npos);
  }
  EXPECT_NO_THROW(TL_ICHECK(1 + 1 == 2));
  // Binary with a null operand is an internal error, not a crash.
  EXPECT_THROW(Binary(BinaryOp::kAdd, nullptr, Int(1)), InternalError);
}

}  // namespace
}  // namespace tl
