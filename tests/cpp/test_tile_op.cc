// Tile ops as objects: an op defined only here (T.axpy, through the TileOpNode interface) is
// visited, rebuilt by a mutator, compared, hashed and printed by the generic IR machinery, its
// written operand is found, and a backend without a lowering for it says so.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "ir/functor.h"
#include "ir/printer.h"
#include "ir/structural.h"
#include "support/error.h"
#include "target/backend.h"
#include "target/launch_spec_builder.h"
#include "target/cuda/target.h"
#include "transform/gpu_passes.h"
#include "transform/layout_rules.h"
#include "transform/cpu/tile_lowerer.h"
#include "layout/fragment.h"

using namespace tl;

namespace {

Expr I(int64_t v) { return IntImm(DataType::Int(32), v); }

// T.axpy(x, y, alpha): y += alpha * x on tiles -- a test-only op.
struct AxpyNode : TileOpNode {
  static constexpr const char kOp[] = "axpy";
  AxpyNode(Region x_, Region y_, Expr a, bool f, Span s)
      : TileOpNode(kOp, std::move(s)), x(std::move(x_)), y(std::move(y_)), alpha(std::move(a)), fast(f) {}
  const Region x, y;
  const Expr alpha;
  const bool fast;
  std::vector<std::pair<const Region*, Access>> Regions() const override {
    return {{&x, Access::kRead}, {&y, Access::kReadWrite}};
  }
  std::vector<Expr> Exprs() const override { return {alpha}; }
  Stmt WithOperands(std::vector<Region> r, std::vector<Expr> e) const override {
    return std::make_shared<AxpyNode>(r.at(0), r.at(1), e.at(0), fast, span);
  }
  std::vector<int64_t> Attrs() const override { return {fast}; }
  TileOpCall Call() const override {
    TileOpCall c{"axpy",
                 {{TileOpArg::kRegion, &x, nullptr},
                  {TileOpArg::kRegion, &y, nullptr},
                  {TileOpArg::kExpr, nullptr, alpha}},
                 {}};
    if (fast) c.keywords.emplace_back("fast", "True");
    return c;
  }
};

struct Prog {
  Buffer X, Y;
  Var a;
  PrimFunc f;
};

Prog Make(bool fast, double scale = 1.0) {
  DataType f32 = DataType::Float(32);
  Prog p;
  p.X = MakeBuffer("X", f32, {I(64)}, Scope::kGlobal);
  p.Y = MakeBuffer("Y", f32, {I(64)}, Scope::kGlobal);
  p.a = MakeVar("alpha", f32);
  Var bx = MakeVar("bx");
  Stmt op = std::make_shared<AxpyNode>(Region::Full(p.X), Region::Full(p.Y), Expr(p.a) * FloatImm(f32, scale),
                                       fast, Span{"axpy.py", 3, 5});
  Stmt kernel =
      std::make_shared<KernelNode>(std::vector<Expr>{I(1)}, std::vector<Var>{bx}, std::vector<Expr>{I(32)},
                                   std::vector<Buffer>{}, std::vector<std::pair<Buffer, Expr>>{}, op, Span{});
  p.f = MakePrimFunc(
      "axpy_kernel",
      {{MakeVar("X", DataType::Handle()), p.X}, {MakeVar("Y", DataType::Handle()), p.Y}, {p.a, nullptr}},
      kernel);
  return p;
}

}  // namespace

TEST(TileOpObjects, GenericMachineryHandlesAnOpItDoesNotKnow) {
  Prog p = Make(true);
  // printer: the op's own call, keywords included
  std::string text = PrintPrimFunc(p.f);
  EXPECT_NE(text.find("T.axpy(X, Y, alpha * 1.0"), std::string::npos) << text;
  EXPECT_NE(text.find("fast=True)"), std::string::npos) << text;
  // visitor: reaches the op's regions and expressions
  int loads_of_alpha = 0;
  struct V : IRVisitor {
    int* n;
    const VarNode* a;
    std::set<const BufferNode*> regions;
    void VisitBuffer(const Buffer& b) override { regions.insert(b.get()); }
    void VisitVar(const VarNode* v) override {
      if (v == a) ++*n;
    }
  } v;
  v.n = &loads_of_alpha;
  v.a = p.a.get();
  v.VisitStmt(p.f->body);
  EXPECT_EQ(loads_of_alpha, 1);
  EXPECT_EQ(v.regions, (std::set<const BufferNode*>{p.X.get(), p.Y.get()}));
  // mutator: rebuilt through WithOperands, attributes kept
  struct Swap : IRMutator {
    Buffer from, to;
    Buffer VisitBuffer(const Buffer& b) override { return b == from ? to : b; }
  } m;
  m.from = p.X;
  m.to = MakeBuffer("Z", DataType::Float(32), {I(64)}, Scope::kGlobal);
  Stmt rebuilt = m.VisitStmt(p.f->body);
  const auto* op = As<AxpyNode>(As<KernelNode>(rebuilt)->body);
  ASSERT_NE(op, nullptr);
  EXPECT_EQ(op->x.buffer, m.to);
  EXPECT_TRUE(op->fast);
  EXPECT_EQ(op->span.line, 3);
  // structural equality and hashing see operands and attributes
  EXPECT_TRUE(StructuralEqual(p.f, Make(true).f));
  EXPECT_EQ(StructuralHash(p.f), StructuralHash(Make(true).f));
  EXPECT_FALSE(StructuralEqual(p.f, Make(false).f));
  EXPECT_FALSE(StructuralEqual(p.f, Make(true, 2.0).f));
  // written parameters come from the op's declared accesses
  EXPECT_EQ(WrittenParams(p.f), (std::vector<bool>{false, true, false}));
}

TEST(TileOpObjects, ABackendWithoutALoweringSaysSoAtTheOpsLine) {
  Prog p = Make(false);
  BuildOptions o;
  o.build_binary = false;
  for (const char* target : {"cuda -arch=sm_80"}) {  // (the CPU lowering is registered below)
    try {
      Compile(p.f, ParseTarget(target), {}, o);
      FAIL() << target;
    } catch (const UserError& e) {
      std::string m = e.what();
      EXPECT_NE(m.find("T.axpy has no lowering"), std::string::npos) << m;
      EXPECT_NE(m.find("axpy.py:3:5"), std::string::npos) << m;
    }
  }
}

TEST(TileOpObjects, OpsAreBuiltByNameAndChecked) {
  std::vector<std::string> names = TileOpNames();
  for (const char* n : {"copy", "gemm", "fill", "reduce_sum", "reduce_absmax", "atomic_add", "cumsum"})
    EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
  DataType f32 = DataType::Float(32);
  Buffer A = MakeBuffer("A", f32, {I(64), I(32)}, Scope::kGlobal);
  Buffer S = MakeBuffer("S", f32, {I(64), I(16)}, Scope::kShared);
  Stmt c =
      MakeTileOp("copy", {Region::Full(A), Region::Full(A)}, {}, {{"disable_tma", 1}}, Span{"k.py", 4, 2});
  ASSERT_NE(As<CopyNode>(c), nullptr);
  EXPECT_TRUE(As<CopyNode>(c)->disable_tma);
  EXPECT_EQ(As<GemmNode>(c), nullptr);
  // the op's own check runs on the way: mismatched tiles are a type error at the op's line
  try {
    MakeTileOp("copy", {Region::Full(A), Region::Full(S)}, {}, {}, Span{"k.py", 9, 5});
    FAIL();
  } catch (const UserError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kType);
    EXPECT_NE(std::string(e.what()).find("k.py:9:5"), std::string::npos) << e.what();
  }
  Stmt r = MakeTileOp("reduce_max",
                      {Region::Full(A), Region::Full(MakeBuffer("m", f32, {I(64)}, Scope::kFragment))}, {},
                      {{"dim", 1}}, Span{});
  ASSERT_NE(As<ReduceNode>(r), nullptr);
  EXPECT_EQ(As<ReduceNode>(r)->reduce_kind, ReduceKind::kMax);
  EXPECT_TRUE(As<ReduceNode>(r)->clear);
  EXPECT_THROW(MakeTileOp("no_such_op", {}, {}, {}, Span{}), InternalError);
}

namespace {
// The op's CPU lowering, registered from "its own file" (here): y[i] += alpha * x[i] over the tile.
const cpu_lowering::CpuOpLoweringRegistrar kAxpyCpu("axpy", [](cpu_lowering::CpuTileLowerer& L,
                                                               const TileOpNode& n) {
  auto* op = static_cast<const AxpyNode*>(&n);
  std::vector<Expr> ext;
  for (auto& r : op->y.ranges) ext.push_back(r.extent);
  Expr alpha = L.VisitExpr(op->alpha);
  return L.Nest(ext, n.span, [&](const std::vector<Expr>& i) {
    std::vector<Expr> xi, yi;
    for (size_t d = 0; d < i.size(); ++d) {
      xi.push_back(op->x.ranges[d].min + i[d]);
      yi.push_back(op->y.ranges[d].min + i[d]);
    }
    return Store(op->y.buffer, Load(op->y.buffer, yi) + alpha * Load(op->x.buffer, xi), yi, n.span);
  });
});
}  // namespace

TEST(TileOpObjects, AnOpWithItsOwnLoweringRunsOnTheCpuTarget) {
  // Nothing outside this file knows T.axpy: the op, its lowering and this kernel are all here.
  Prog p = Make(false, 0.5);
  BuildOptions o;
  o.include_dir = TL_TEST_INCLUDE_DIR;
  o.use_cache = false;
  CompiledKernel k = Compile(p.f, ParseTarget("cpu"), {}, o);
  auto mod = LoadModule(k);
  std::vector<float> x(64), y(64), want(64);
  for (int i = 0; i < 64; ++i) {
    x[i] = 0.25f * static_cast<float>(i) - 3.0f;
    y[i] = static_cast<float>(i % 7);
    want[i] = y[i] + 3.0f * 0.5f * x[i];
  }
  auto tensor = [](std::vector<float>& v) {
    TensorArg a;
    a.data = v.data();
    a.dtype = "float32";
    a.shape = {64};
    a.strides = {1};
    return a;
  };
  TensorArg alpha;
  alpha.is_tensor = false;
  alpha.scalar = 3.0;
  mod->Launch({tensor(x), tensor(y), alpha}, 0);
  for (int i = 0; i < 64; ++i) EXPECT_FLOAT_EQ(y[i], want[i]) << i;
}

namespace {
// The op's layout rule (GPU targets), registered from "its own file": a fragment destination is
// replicated in every thread.
const LayoutRuleRegistrar kAxpyRule("axpy", [](LayoutRuleContext& c, const TileOpNode& n) {
  auto* op = static_cast<const AxpyNode*>(&n);
  if (op->y.buffer->scope != Scope::kFragment) return false;
  return c.Assign(op->y.buffer, Replicated({64}, c.threads()), "T.axpy destination", n.span);
});
}  // namespace

TEST(TileOpObjects, LayoutInferenceRunsTheOpsOwnRule) {
  DataType f32 = DataType::Float(32);
  Buffer X = MakeBuffer("X", f32, {I(64)}, Scope::kGlobal);
  Buffer F = MakeBuffer("F", f32, {I(64)}, Scope::kFragment);
  Var bx = MakeVar("bx");
  Stmt op = std::make_shared<AxpyNode>(Region::Full(X), Region::Full(F), FloatImm(f32, 2.0), false,
                                       Span{"axpy.py", 8, 5});
  Stmt kernel = std::make_shared<KernelNode>(std::vector<Expr>{I(1)}, std::vector<Var>{bx},
                                             std::vector<Expr>{I(64)}, std::vector<Buffer>{F},
                                             std::vector<std::pair<Buffer, Expr>>{}, op, Span{});
  PrimFunc f = MakePrimFunc("axpy_frag", {{MakeVar("X", DataType::Handle()), X}}, kernel);
  CompileInfo info;
  PassContext ctx{CudaFeatures(ParseCudaTarget("sm_80")), {}, &info, {}, {}};
  PrimFunc out = InferLayouts(f, ctx);
  // the replicated layout the rule chose is recorded on the fragment (the free default would be striped)
  Expr layout;
  PostOrderVisitStmt(out->body, [&](const Stmt& s) {
    auto* a = As<AttrStmtNode>(s);
    if (a && a->key == "tl.layout" && a->node == F) layout = a->value;
  });
  ASSERT_NE(layout, nullptr) << PrintPrimFunc(out);
  EXPECT_TRUE(FragmentFromExpr(layout).SameAs(Replicated({64}, 64))) << PrintPrimFunc(out);
  EXPECT_FALSE(Replicated({64}, 64).SameAs(Striped({64}, 64, 1)));
}
