// Pass pipelines per target.
#include "transform/pipeline.h"

#include <chrono>
#include <functional>

#include "arith/simplify.h"
#include "ir/functor.h"
#include "ir/structural.h"
#include "ir/verify.h"
#include "transform/cuda/hopper_wgmma.h"
#include "transform/cuda/warp_specialize.h"
#include "transform/cuda/wgmma_proxy_fence.h"
#include "transform/cuda_passes.h"
#include "transform/hoist_workspaces.h"
#include "transform/inject_bound_guards.h"
#include "transform/lower_thread_bindings.h"
#include "transform/rasterize_blocks.h"
#include "transform/resolve_buffer_views.h"
#include "transform/lower_tile_ops_cpu.h"
#include "transform/metal/metal_passes.h"

namespace tl {
namespace {

class Driver {
 public:
  Driver(PrimFunc f, std::vector<PassRecord>* trace) : f_(std::move(f)), trace_(trace) {}

  /// Runs `pass`, then the IR verifier for `stage` (the invariants the pass's output must keep).
  Driver& Run(const std::string& name, const std::function<PrimFunc(const PrimFunc&)>& pass,
              IRStage stage = IRStage::kTile) {
    auto t0 = std::chrono::steady_clock::now();
    PrimFunc out = pass(f_);
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (trace_) trace_->push_back({name, out, ms, out != f_ && !StructuralEqual(out, f_)});
    f_ = out;
    VerifyIR(f_, stage, name);
    return *this;
  }
  PrimFunc result() const { return f_; }

 private:
  PrimFunc f_;
  std::vector<PassRecord>* trace_;
};

// Simplify, except that a kernel whose whole body is provably dead stays a kernel with an empty body:
// on a GPU it still launches (and does nothing), and the passes after this one need its T.Kernel scope.
PrimFunc SimplifyKeepingKernel(const PrimFunc& f) {
  PrimFunc out = Simplify(f);
  if (!FindKernel(f->body) || FindKernel(out->body)) return out;
  struct EmptyKernel : IRMutator {
    Stmt VisitKernel(const Stmt& s, const KernelNode* n) override {
      return std::make_shared<KernelNode>(n->grid, n->block_vars, n->threads, std::vector<Buffer>{},
                                          std::vector<std::pair<Buffer, Expr>>{}, Seq({}, s->span), s->span);
    }
  };
  return Simplify(WithBody(f, EmptyKernel().VisitStmt(f->body)));
}

}  // namespace

PrimFunc LowerForCPU(const PrimFunc& f, std::vector<PassRecord>* trace) {
  return Driver(HoistWorkspaces(f), trace)
      .Run("RejectGpuOnlyCallsCPU",  // calls the CPU target cannot run, at the user's line (first)
           [](const PrimFunc& g) {
             RejectGpuOnlyCallsOnCPU(g->body);
             return g;
           })
      .Run("ExpandViewTileOps", ExpandViewTileOps)
      .Run("Simplify", [](const PrimFunc& g) { return Simplify(g); })
      .Run("RasterizeBlocks", RasterizeBlocks)
      .Run("InjectBoundGuards", InjectBoundGuards)
      .Run("ResolveBufferViews", ResolveBufferViews)
      .Run("LowerThreadBindingsCPU", LowerThreadBindingsCPU)
      .Run("LowerTileOpsCPU", LowerTileOpsCPU)
      .Run("Simplify", [](const PrimFunc& g) { return Simplify(g); })
      .result();
}

PrimFunc RunCudaPipeline(const PrimFunc& f, const CudaPassContext& ctx, std::vector<PassRecord>* trace) {
  auto with = [&ctx](PrimFunc (*pass)(const PrimFunc&, const CudaPassContext&)) {
    return [&ctx, pass](const PrimFunc& g) { return pass(g, ctx); };
  };
  Driver d(CheckThreadBindings(HoistWorkspaces(f)), trace);
  d.Run("ExpandViewTileOps", ExpandViewTileOps)
      .Run("Simplify", SimplifyKeepingKernel)
      .Run("RasterizeBlocks", RasterizeBlocks)
      .Run("InjectBoundGuards", InjectBoundGuards)
      .Run("ResolveBufferViews", ResolveBufferViews)
      .Run("LegalizeTileOpsCUDA", with(LegalizeTileOpsCUDA))
      .Run("PartitionDynamicParallel", PartitionDynamicParallel)
      .Run("LayoutInference", with(InferLayouts))
      .Run("LowerTileOpsCUDA", with(LowerTileOpsCUDA), IRStage::kThread)
      .Run(
          "Simplify", [](const PrimFunc& g) { return Simplify(g); }, IRStage::kThread);
  if (ctx.features.matrix == MatrixUnit::kSimdgroupMatrix)  // simdgroup_matrix staging (transform/metal/)
    d.Run("HoistSimdgroupStaging", with(HoistSimdgroupStaging), IRStage::kThread);
  if (ctx.features.async_copy == AsyncCopy::kSynchronous)  // pipelined copies go through registers
    d.Run("StagePrefetchInRegisters", with(StagePrefetchInRegisters), IRStage::kThread);
  d.Run("SplitInteriorBlocks", with(SplitInteriorBlocks), IRStage::kThread)
      .Run("PlanSharedMemory", with(PlanSharedMemory), IRStage::kSharedPlanned);
  // fence.proxy.async only where generic writes reach wgmma operands. Before InsertBarriers: a fence
  // must come before the barrier that orders the writes against another warp group's wgmma, and the
  // operand-less fence is what that pass sees.
  if (ctx.features.wgmma)
    d.Run("ElideWgmmaProxyFences", with(ElideWgmmaProxyFences), IRStage::kSharedPlanned);
  d.Run("InsertBarriers", with(InsertBarriers), IRStage::kSharedPlanned);
  if (ctx.features.hoist_branch_barriers)  // PoCL: hoist_branch_barriers.cc
    d.Run("HoistBranchBarriers", with(HoistBranchBarriers), IRStage::kSharedPlanned);
  if (ctx.features.wgmma)  // warp specialisation (transform/cuda/warp_specialize.cc)
    d.Run("WsNamedBarriers", with(WsNamedBarriers), IRStage::kSharedPlanned);
  return d.result();
}

}  // namespace tl
