// The backend registry, the one compile entry point, and LaunchSpec (the runtime's IR-free launch
// description): a stub backend registered from the test is what Compile dispatches to; launch
// programs evaluate like the IR they were compiled from.
#include <gtest/gtest.h>

#include <random>

#include "arith/eval.h"
#include "ir/function.h"
#include "support/error.h"
#include "target/backend.h"
#include "target/launch_spec_builder.h"

using namespace tl;

namespace {

Expr I(int64_t v) { return IntImm(DataType::Int(32), v); }
Expr FloorDiv(Expr a, Expr b) { return Binary(BinaryOp::kFloorDiv, a, b); }
Expr FloorMod(Expr a, Expr b) { return Binary(BinaryOp::kFloorMod, a, b); }
Expr Min(Expr a, Expr b) { return Binary(BinaryOp::kMin, a, b); }
Expr Max(Expr a, Expr b) { return Binary(BinaryOp::kMax, a, b); }
Expr Lt(Expr a, Expr b) { return Binary(BinaryOp::kLT, a, b); }
Expr Div(Expr a, Expr b) { return Binary(BinaryOp::kDiv, a, b); }
Expr Mod(Expr a, Expr b) { return Binary(BinaryOp::kMod, a, b); }

// B[i] = A[i] * 2 over a dynamic n, blocks of 64: the grid is ceildiv(n, 64).
PrimFunc Scale(Var n) {
  DataType f32 = DataType::Float(32);
  Buffer A = MakeBuffer("A", f32, {n}, Scope::kGlobal);
  Buffer B = MakeBuffer("B", f32, {n}, Scope::kGlobal);
  Var bx = MakeVar("bx"), i = MakeVar("i");
  Expr idx = Expr(bx) * I(64) + i;
  Stmt body = For(i, I(0), I(64), ForKind::kParallel,
                  If(Lt(idx, n), Store(B, Load(A, {idx}) * FloatImm(f32, 2.0), {idx})));
  Stmt kernel = std::make_shared<KernelNode>(
      std::vector<Expr>{FloorDiv(Expr(n) + I(63), I(64))}, std::vector<Var>{bx}, std::vector<Expr>{I(64)},
      std::vector<Buffer>{}, std::vector<std::pair<Buffer, Expr>>{}, body, Span{});
  return MakePrimFunc("scale", {{MakeVar("A", DataType::Handle()), A}, {MakeVar("B", DataType::Handle()), B}},
                      kernel);
}

TensorArg Tensor(const std::string& dtype, std::vector<int64_t> shape) {
  TensorArg a;
  static float storage[4096];
  a.data = storage;
  a.dtype = dtype;
  a.shape = shape;
  int64_t s = 1;
  a.strides.assign(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 0;) {
    a.strides[d] = s;
    s *= shape[d];
  }
  return a;
}

}  // namespace

TEST(LaunchSpec, ProgramsEvaluateLikeTheirExpressions) {
  Var m = MakeVar("m"), n = MakeVar("n"), scalar = MakeVar("alpha");
  std::vector<Var> syms{m, n};
  std::vector<Expr> exprs = {
      FloorDiv(Expr(m) + I(127), I(128)), Expr(m) * n - I(3), FloorMod(Expr(n) - I(200), I(7)),
      Min(Expr(m), Expr(n)) + Max(Div(Expr(m), I(3)), I(5)), Select(Lt(m, n), Expr(m), Mod(Expr(n), I(9)))};
  std::mt19937 rng(1234);
  std::printf("seed 1234\n");
  for (const Expr& e : exprs) {
    IntProgram p = CompileIntProgram(e, syms);
    ASSERT_TRUE(p.computable) << p.text;
    for (int trial = 0; trial < 200; ++trial) {
      int64_t mv = static_cast<int64_t>(rng() % 5000) + 1, nv = static_cast<int64_t>(rng() % 5000) + 1;
      int64_t want, got;
      ASSERT_TRUE(EvalInt(e, {{m.get(), mv}, {n.get(), nv}}, &want));
      ASSERT_TRUE(p.Eval({mv, nv}, &got));
      EXPECT_EQ(got, want) << p.text << " at m=" << mv << " n=" << nv;
    }
  }
  // A scalar parameter is no symbol: the program says it cannot be computed at launch.
  IntProgram bad = CompileIntProgram(Expr(m) + scalar, syms);
  EXPECT_FALSE(bad.computable);
  int64_t out;
  EXPECT_FALSE(bad.Eval({1, 2}, &out));
  EXPECT_EQ(CompileIntProgram(Expr(n), syms).LoneSymbol(), 1);
}

TEST(LaunchSpec, ChecksArgumentsWithoutTheIR) {
  Var n = MakeVar("n");
  LaunchSpec s = MakeLaunchSpec(Scale(n), Scale(n), "scale_kernel", 64, 0);
  ASSERT_EQ(s.syms.size(), 1u);
  EXPECT_EQ(s.params[1].written, true);
  EXPECT_EQ(s.params[0].written, false);
  std::vector<TensorArg> args = {Tensor("float32", {1000}), Tensor("float32", {1000})};
  std::vector<int64_t> sv = s.Check(args, {}, "any");
  EXPECT_EQ(sv, std::vector<int64_t>{1000});
  EXPECT_EQ(s.Grid(sv, args), (std::vector<int64_t>{16, 1, 1}));
  try {
    s.Check({Tensor("float32", {1000}), Tensor("float32", {999})}, {}, "any");
    FAIL() << "a mismatched symbol must be an error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("argument 1 ('B') of kernel 'scale'"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("bound to 1000 by A.shape[0]"), std::string::npos) << e.what();
  }
  EXPECT_THROW(s.Check({Tensor("float16", {8}), Tensor("float32", {8})}, {}, "any"), UserError);
  EXPECT_EQ(s.OutputShapes({Tensor("float32", {77})}, {1}), (std::vector<std::vector<int64_t>>{{77}}));
  // a cluster launch (T.ClusterKernel) takes whole clusters: 16 blocks in clusters of 4, but not of 3
  s.cluster = {4, 1, 1};
  EXPECT_EQ(s.Grid(sv, args), (std::vector<int64_t>{16, 1, 1}));
  s.cluster = {3, 1, 1};
  try {
    s.Grid(sv, args);
    FAIL() << "a grid that is not whole clusters must be an error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("x extent is 16 for these arguments, not a multiple of 3"),
              std::string::npos)
        << e.what();
  }
}

TEST(BackendRegistry, UnknownKindListsTheAvailableOnes) {
  try {
    GetBackend("metal-but-not-really");
    FAIL();
  } catch (const UserError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("'cpu'"), std::string::npos) << m;
    EXPECT_NE(m.find("'cuda'"), std::string::npos) << m;
  }
}

TEST(BackendRegistry, CompileDispatchesToTheRegisteredBackend) {
  // A stub backend for a kind the parser knows but no backend serves: Compile runs its pipeline,
  // code generator and toolchain, records the trace, and LoadModule calls its loader.
  std::vector<std::string> calls;
  Backend b;
  b.kind = "metal";
  b.header_dir = "metal";
  b.execution_backends = {"stub"};
  b.resolve = [](const Target& t, bool) { return t; };
  b.pass_context = [](const Target& t, const PassConfig& pc) { return PassContext{{}, {}, nullptr, t, pc}; };
  b.pipeline = [&](const PassContext&) {
    return Pipeline{{"StubPass", [&](const PrimFunc& f, const PassContext& ctx) {
                       calls.push_back(std::string("lower") + (ctx.config.disable_barrier_insertion ? " nobarrier" : ""));
                       ctx.info->threads = 64;
                       return f;
                     }}};
  };
  b.codegen = [&](const PrimFunc& f, const Target&) {
    calls.push_back("codegen");
    return "// stub source for " + f->name;
  };
  b.entry = [](const PrimFunc&) { return std::string("stub_entry"); };
  b.build = [&](const CompiledKernel& k, const PassConfig&, const BuildOptions&, CompileInfo*) {
    calls.push_back("build");
    Artifact a;
    a.format = "stub";
    a.binary = k.source;
    return a;
  };
  struct StubModule : RuntimeModule {
    using RuntimeModule::RuntimeModule;
    std::string device() const override { return "stub"; }
    void Launch(const std::vector<TensorArg>&, uintptr_t) const override {}
  };
  b.load = [&](const CompiledKernel& k) -> std::shared_ptr<RuntimeModule> {
    calls.push_back("load");
    return std::make_shared<StubModule>(k.launch);
  };
  RegisterBackend(b);
  Var n = MakeVar("n");
  BuildOptions o;
  o.trace = true;
  CompiledKernel k = Compile(Scale(n), ParseTarget("metal"), {{"tl.disable_barrier_insertion", "1"}}, o);
  EXPECT_EQ(k.source, "// stub source for scale");
  EXPECT_EQ(k.artifact.binary, k.source);
  ASSERT_EQ(k.trace.size(), 4u);  // Compile()'s front steps, then the backend's pipeline
  EXPECT_EQ(k.trace[0].name, "HoistWorkspaces");
  EXPECT_EQ(k.trace[1].name, "DropOtherTargetsAttrs");
  EXPECT_EQ(k.trace[2].name, "MaterializeWsSchedule");
  EXPECT_EQ(k.trace[3].name, "StubPass");
  EXPECT_EQ(k.launch.entry, "stub_entry");
  EXPECT_EQ(k.launch.threads, 64);
  auto mod = LoadModule(k);
  EXPECT_EQ(mod->device(), "stub");
  EXPECT_EQ(calls, (std::vector<std::string>{"lower nobarrier", "codegen", "build", "load"}));
  // Pass configs are checked in the one entry point: an unknown key lists the known ones.
  try {
    Compile(Scale(n), ParseTarget("metal"), {{"tl.no_such_key", "1"}}, o);
    FAIL();
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("tl.disable_barrier_insertion"), std::string::npos) << e.what();
  }
  // Without a binary there is nothing to load.
  o.build_binary = false;
  EXPECT_THROW(LoadModule(Compile(Scale(n), ParseTarget("metal"), {}, o)), UserError);
}

TEST(BackendRegistry, ABackendWithoutItsPipelineIsRefusedWhenRegistered) {
  Backend b = GetBackend("cpu");  // complete, then one part missing at a time
  b.kind = "half-a-backend";
  b.pipeline = nullptr;
  try {
    RegisterBackend(b);
    FAIL();
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("without its pipeline"), std::string::npos) << e.what();
  }
  b = GetBackend("cpu");
  b.kind = "half-a-backend";
  b.pass_context = nullptr;
  EXPECT_THROW(RegisterBackend(b), InternalError);
  EXPECT_THROW(GetBackend("half-a-backend"), UserError);  // nothing was registered
}

TEST(BackendRegistry, CpuAndCudaAreRegisteredWithTheirTraits) {
  EXPECT_FALSE(GetBackend("cpu").emulatable);
  EXPECT_TRUE(GetBackend("cuda").emulatable);
  EXPECT_EQ(GetBackend("cuda").header_dir, "cuda");
  EXPECT_EQ(GetBackend("cpu").execution_backends.front(), "native");
}
