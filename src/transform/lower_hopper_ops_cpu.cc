// CPU lowering of the Hopper tile ops (op/hopper_ops.h): the CPU gemm is synchronous, so
// T.wait_wgmma has nothing to wait for; mbarriers and the async proxy do not exist on the CPU.
#include "ir/functor.h"
#include "op/hopper_ops.h"
#include "transform/gpu/hopper_wgmma.h"
#include "transform/cpu/tile_lowerer.h"

namespace tl {

void RejectGpuOnlyCallsOnCPU(const Stmt& body) {
  struct V : SpanTrackingVisitor {
    void VisitCall(const CallNode* c) override {
      if (c->op == "tl.ptx_cp_async" || c->op == "tl.cp_async_commit" || c->op == "tl.cp_async_wait")
        throw UserError(ErrorKind::kUnsupported,
                        std::string(c->op == "tl.ptx_cp_async"      ? "T.ptx_cp_async"
                                    : c->op == "tl.cp_async_commit" ? "T.ptx_commit_group"
                                                                    : "T.ptx_wait_group") +
                            " is CUDA's cp.async (sm_80+), not for the CPU",
                        span_);
      if (c->op == "tl.call_extern")
        throw UserError(ErrorKind::kUnsupported,
                        "T.call_extern runs user CUDA C++, which the CPU target cannot compile", span_);
      if (IsClusterOp(c->op))
        throw UserError(
            ErrorKind::kUnsupported,
            ClusterOpName(c->op) +
                " needs thread-block clusters (CUDA sm_90+); the CPU target runs blocks one after "
                "another",
            span_);
      if (c->op == "tl.shfl_sync")
        throw UserError(
            ErrorKind::kUnsupported,
            "T.tvm_warp_shuffle is a warp shuffle; the CPU target runs a block's threads one after "
            "another and has no warps",
            span_);
      if (c->op == "tl.any_sync" || c->op == "tl.all_sync")
        throw UserError(
            ErrorKind::kUnsupported,
            "T." + c->op.substr(3) +
                " is a warp vote; the CPU target runs a block's threads one after another and has "
                "no warps",
            span_);
      SpanTrackingVisitor::VisitCall(c);
    }
    void VisitStmt(const Stmt& s) override {
      if (auto* a = s ? As<AttrStmtNode>(s) : nullptr; a && a->key == "tl.cluster_dims")
        throw UserError(
            ErrorKind::kUnsupported,
            "T.ClusterKernel launches thread-block clusters (CUDA sm_90+); the CPU target runs blocks "
            "one after another",
            s->span);
      if (auto* a = s ? As<AttrStmtNode>(s) : nullptr; a && a->key == "tl.import_source")
        throw UserError(ErrorKind::kUnsupported,
                        "T.import_source adds user CUDA C++, which the CPU target cannot compile", s->span);
      if (auto* ev = As<EvaluateNode>(s))
        if (auto* c = As<CallNode>(ev->value);
            c && (c->op.rfind("tl.mbarrier_", 0) == 0 || c->op == "tl.fence_proxy_async" ||
                  c->op == "tl.set_max_nreg"))
          throw UserError(
              ErrorKind::kUnsupported,
              "T." +
                  (c->op == "tl.fence_proxy_async"                ? std::string("fence_proxy_async")
                   : c->op == "tl.mbarrier_cp_async_arrive_noinc" ? std::string("cp_async_barrier_noinc")
                                                                  : c->op.substr(3)) +
                  " is Hopper-only (cuda sm_90 / sm_90a), not for the CPU",
              s->span);
      SpanTrackingVisitor::VisitStmt(s);
    }
  } v;
  v.VisitStmt(body);
}
namespace cpu_lowering {
namespace {
const CpuOpLoweringRegistrar kTmaCopy("tma_copy", [](CpuTileLowerer&, const TileOpNode& n) -> Stmt {
  throw UserError(ErrorKind::kUnsupported, "T.tma_copy is Hopper-only (cuda sm_90 / sm_90a), not for the CPU",
                  n.span);
});
const CpuOpLoweringRegistrar kWaitWgmma("wait_wgmma", [](CpuTileLowerer&, const TileOpNode& n) -> Stmt {
  return Seq({}, n.span);
});
}  // namespace
}  // namespace cpu_lowering
}  // namespace tl
