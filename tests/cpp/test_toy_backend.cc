// A toy GPU backend, defined in this file alone (docs/adding_a_backend.md): a target kind of its own, a
// GpuFeatures (no matrix unit, no async copy, no shuffles, 16 KB of shared memory), a pipeline of the shared
// GPU passes plus one pass of its own, and a code generator that prints the lowered IR. Compile() runs it
// like a built-in backend: the target parses, the trace is the backend's list, its own pass runs after the
// shared ones, the shared passes lower for what it offers (per-thread multiply-adds, no mma), its limit is
// the shared-memory error, and the emulator runs the lowered kernel against a double reference.
#include <gtest/gtest.h>

#include <random>

#include "emulator/emulator.h"
#include "emulator/numeric.h"
#include "ir/functor.h"
#include "ir/printer.h"
#include "support/error.h"
#include "target/backend.h"
#include "transform/gpu/tile_lowerer.h"
#include "tile_gemm_fixture.h"

namespace tl {
namespace {

GpuFeatures ToyFeatures() {
  GpuFeatures f;
  f.name = "Toy";
  f.arch = "toy device";
  f.label = "Toy";
  f.matrix = MatrixUnit::kNone;
  f.async_copy = AsyncCopy::kNone;
  f.swizzle = SharedSwizzle::kNone;
  f.shuffle = false;
  f.wave = 32;
  f.vector_shared_loads = false;
  f.vector_shared_stores = false;
  f.int_to_global_pointer = false;
  f.smem_limit = 16 * 1024;
  f.max_threads = 256;
  return f;
}

// The backend's own pass: reports how many barriers the lowered kernel has; changes nothing.
PrimFunc ToyCountBarriers(const PrimFunc& f, const PassContext& ctx) {
  struct Count : IRVisitor {
    int n = 0;
    void VisitExpr(const Expr& e) override {
      if (auto* c = As<CallNode>(e); c && c->op == "tl.syncthreads") ++n;
      IRVisitor::VisitExpr(e);
    }
  } count;
  count.VisitStmt(f->body);
  const int n = count.n;
  if (ctx.info) ctx.info->choices.push_back("toy: " + std::to_string(n) + " barrier(s)");
  return f;
}

Backend ToyBackend() {
  Backend b;
  b.kind = "toygpu";
  b.header_dir = "";
  b.execution_backends = {"emulator"};
  b.emulatable = true;
  b.resolve = [](const Target& t, bool) { return t; };
  b.pass_context = [](const Target& t, const PassConfig& pc) { return GpuPassContext(ToyFeatures(), t, pc); };
  b.pipeline = [](const PassContext&) {
    const IRStage thread = IRStage::kThread, planned = IRStage::kSharedPlanned;
    return Concat(GpuTileToThreadSteps(), {Step("SplitInteriorBlocks", thread), Step("PlanSharedMemory", planned),
                                           Step("InsertBarriers", planned),
                                           {"ToyCountBarriers", ToyCountBarriers, planned}});
  };
  b.codegen = [](const PrimFunc& lowered, const Target&) { return "// toy\n" + PrintPrimFunc(lowered); };
  b.entry = [](const PrimFunc& lowered) { return lowered->name; };
  b.build = [](const CompiledKernel& k, const PassConfig&, const BuildOptions&, CompileInfo*) {
    Artifact a;
    a.format = "toy";
    a.binary = k.source;
    return a;
  };
  b.load = [](const CompiledKernel&) -> std::shared_ptr<RuntimeModule> {
    throw UserError(ErrorKind::kUnsupported, "the toy backend has no device; run it in the emulator");
  };
  return b;
}

// Its own T.gemm lowering, registered for its kind from this file: it notes the gemm and hands it to the shared
// lowering (per-thread multiply-adds), as a backend with a matrix unit would lower the forms it has and defer
// the rest.
void RegisterToyGemm() {
  gpu_lowering::RegisterGpuOpLowering(
      "gemm",
      [](gpu_lowering::GpuTileLowerer& L, const TileOpNode& n) {
        L.ctx_.info->choices.push_back("toy gemm at line " + std::to_string(n.span.line));
        return L.LowerShared(n);
      },
      "toygpu");
}

void RegisterToy() {
  static bool done = [] {
    RegisterToyGemm();
    RegisterBackend(ToyBackend());
    return true;
  }();
  (void)done;
}

TEST(ToyBackend, ItsKindParsesOnceRegistered) {
  RegisterToy();
  const Target t = ParseTarget("toygpu -arch=t1");
  EXPECT_EQ(t.kind, "toygpu");
  EXPECT_EQ(t.arch, "t1");
  EXPECT_EQ(ParseTarget(t.str()), t);
  EXPECT_THROW(ParseTarget("toygpu -mattr=+x"), UserError);
  EXPECT_THROW(ParseTarget("toygpu2"), UserError);  // not registered
}

TEST(ToyBackend, CompileRunsItsPipelineAndTheEmulatorItsKernel) {
  RegisterToy();
  const int64_t M = 48, N = 40, K = 56;  // ragged against the 32x32x16 tiles
  BuildOptions o;
  o.trace = true;
  CompiledKernel k = Compile(TileGemm(M, N, K, 32, 32, 16, 128, 2), ParseTarget("toygpu"), {}, o);
  std::vector<std::string> names;
  for (auto& r : k.trace) names.push_back(r.name);
  ASSERT_EQ(names.size(), 18u);
  EXPECT_EQ(names.front(), "HoistWorkspaces");
  EXPECT_EQ(names.back(), "ToyCountBarriers");
  EXPECT_EQ(k.artifact.format, "toy");
  EXPECT_EQ(k.source.rfind("// toy\n", 0), 0u);
  // what it offers, and nothing it does not: no mma, no ldmatrix, no cp.async, no shuffles
  const std::string ir = PrintPrimFunc(k.lowered);
  for (const char* s : {"mma", "ldmatrix", "cp_async", "shfl"}) EXPECT_EQ(ir.find(s), std::string::npos) << s;
  bool counted = false;
  for (auto& c : k.info.choices) counted |= c.rfind("toy: ", 0) == 0 && c != "toy: 0 barrier(s)";
  EXPECT_TRUE(counted) << "its own pass ran on the barriers the shared passes inserted";
  int own_gemm = 0;
  for (auto& c : k.info.choices) own_gemm += c.rfind("toy gemm at line ", 0) == 0;
  EXPECT_EQ(own_gemm, 1) << "its own T.gemm lowering ran, once";

  std::mt19937 rng(20261202);
  std::normal_distribution<double> nd;
  std::vector<uint16_t> a(M * K), b(K * N);
  std::vector<double> ad(a.size()), bd(b.size());
  for (size_t i = 0; i < a.size(); ++i) ad[i] = emu::DecodeMinifloat(a[i] = uint16_t(emu::EncodeMinifloat(nd(rng), 5, 10, false)), 5, 10, false);
  for (size_t i = 0; i < b.size(); ++i) bd[i] = emu::DecodeMinifloat(b[i] = uint16_t(emu::EncodeMinifloat(nd(rng), 5, 10, false)), 5, 10, false);
  std::vector<float> out(M * N, -1.f);
  emu::Result r = emu::Run(k.lowered, {a.data(), b.data(), out.data()}, {}, emu::Options());
  for (auto& rep : r.reports) ADD_FAILURE() << rep.kind << ": " << rep.message;
  double worst = 0;
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double ref = 0;
      for (int64_t q = 0; q < K; ++q) ref += ad[i * K + q] * bd[q * N + j];
      worst = std::max(worst, std::abs(ref - out[i * N + j]));
    }
  EXPECT_LT(worst, 1e-3) << "seed 20261202";
}

TEST(ToyBackend, ItsSharedMemoryLimitIsTheError) {
  RegisterToy();
  BuildOptions o;
  o.build_binary = false;
  try {  // 2 stages of 128x64 + 64x128 fp16 tiles: 64 KB, over its 16 KB
    Compile(TileGemm(256, 256, 256, 128, 128, 64, 128, 2), ParseTarget("toygpu"), {}, o);
    FAIL() << "a 64 KB plan fit in 16 KB";
  } catch (const UserError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("16384-byte limit of toy device"), std::string::npos) << m;
  }
}

}  // namespace
}  // namespace tl

namespace tl {
namespace {
TEST(ToyBackend, OpLoweringsAreRegisteredPerBackendKind) {
  RegisterToy();
  using gpu_lowering::GpuOpLoweringKinds;
  // T.gemm: the shared lowering, each matrix unit's backend its own (from src/target/<kind>/), and the toy's
  EXPECT_EQ(GpuOpLoweringKinds("gemm"), (std::vector<std::string>{"", "cuda", "hip", "metal", "toygpu"}));
  EXPECT_EQ(GpuOpLoweringKinds("reduce"), (std::vector<std::string>{"", "hip"}));
  // copies are loops after legalization, except CUDA's copies out of tensor memory (tcgen05.ld)
  EXPECT_EQ(GpuOpLoweringKinds("copy"), std::vector<std::string>{"cuda"});
  EXPECT_EQ(GpuOpLoweringKinds("tcgen05_gemm"), std::vector<std::string>{"cuda"});
  // the CUDA and OpenCL lowerings of one gemm: CUDA's own (mma.sync) and the shared one (no mma)
  BuildOptions o;
  o.build_binary = false;
  const std::string cuda = Compile(TileGemm(64, 64, 64, 64, 64, 32, 128, 2), ParseTarget("cuda -arch=sm_80"), {}, o).source;
  EXPECT_NE(cuda.find("mma_m16n8k16"), std::string::npos);
  const std::string ir = PrintPrimFunc(Compile(TileGemm(64, 64, 64, 64, 64, 32, 128, 2), ParseTarget("toygpu"), {}, o).lowered);
  EXPECT_EQ(ir.find("mma"), std::string::npos);
}
}  // namespace
}  // namespace tl
