// The shared passes by name, and the one driver (see pass_registry.h).
#include "transform/pass_registry.h"

#include <algorithm>
#include <chrono>
#include <map>

#include "arith/simplify.h"
#include "ir/functor.h"
#include "ir/structural.h"
#include "support/error.h"
#include "target/backend.h"
#include "transform/gpu_passes.h"
#include "transform/hoist_workspaces.h"
#include "transform/inject_bound_guards.h"
#include "transform/lower_thread_bindings.h"
#include "transform/materialize_ws_schedule.h"
#include "transform/rasterize_blocks.h"
#include "transform/resolve_buffer_views.h"

namespace tl {
namespace {

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

// Attributes a program addresses to one target kind ("<kind>.<key>", e.g. "ascend.position" of T.alloc_L1)
// are placement hints for that kind's lowering: for every other target they are dropped here, before any
// pass.
PrimFunc DropOtherTargetsAttrs(const PrimFunc& f, const PassContext& ctx) {
  struct Drop : IRMutator {
    std::string own;
    std::vector<std::string> kinds = BackendKinds();
    Stmt VisitAttr(const Stmt& s, const AttrStmtNode* n) override {
      for (const std::string& k : kinds)
        if (k != own && n->key.rfind(k + ".", 0) == 0) return VisitStmt(n->body);
      return IRMutator::VisitAttr(s, n);
    }
  } d;
  d.own = ctx.target.kind;
  Stmt body = d.VisitStmt(f->body);
  return body == f->body ? f : WithBody(f, body);
}

PassFn WithContext(PrimFunc (*pass)(const PrimFunc&, const PassContext&)) {
  return [pass](const PrimFunc& f, const PassContext& ctx) { return pass(f, ctx); };
}

// Every shared pass, by the name the trace and the hook use. Backend-only passes live in their
// backend's folder (src/target/<kind>/pipeline.cc).
const std::map<std::string, PassFn>& SharedPasses() {
  static const std::map<std::string, PassFn> passes = {
      {"HoistWorkspaces", ContextFree(HoistWorkspaces)},
      {"DropOtherTargetsAttrs", WithContext(DropOtherTargetsAttrs)},
      {"MaterializeWsSchedule", WithContext(MaterializeWsSchedule)},
      {"CheckThreadBindings", ContextFree(CheckThreadBindings)},
      {"ExpandViewTileOps", ContextFree(ExpandViewTileOps)},
      {"Simplify", ContextFree(SimplifyKeepingKernel)},
      {"RasterizeBlocks", ContextFree(RasterizeBlocks)},
      {"InjectBoundGuards", ContextFree(InjectBoundGuards)},
      {"ResolveBufferViews", ContextFree(ResolveBufferViews)},
      // the shared GPU lowering (gpu_passes.h), on the target's GpuFeatures
      {"LegalizeTileOpsGPU", WithContext(LegalizeTileOpsGPU)},
      {"PartitionDynamicParallel", ContextFree(PartitionDynamicParallel)},
      {"LayoutInference", WithContext(InferLayouts)},
      {"LowerTileOpsGPU", WithContext(LowerTileOpsGPU)},
      {"SplitInteriorBlocks", WithContext(SplitInteriorBlocks)},
      {"PlanSharedMemory", WithContext(PlanSharedMemory)},
      {"InsertBarriers", WithContext(InsertBarriers)},
  };
  return passes;
}

PrimFunc RunStep(const PipelineStep& s, const PrimFunc& f, const PassContext& ctx, std::vector<PassRecord>* trace) {
  auto t0 = std::chrono::steady_clock::now();
  PrimFunc out = s.run(f, ctx);
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (trace) trace->push_back({s.name, out, ms, out != f && !StructuralEqual(out, f)});
  VerifyIR(out, s.stage, s.name);
  return out;
}

}  // namespace

PassFn ContextFree(PrimFunc (*pass)(const PrimFunc&)) {
  return [pass](const PrimFunc& f, const PassContext&) { return pass(f); };
}

PassContext GpuPassContext(const GpuFeatures& features, const Target& t, const PassConfig& pc) {
  return {features, GpuOptionsFor(pc), nullptr, t, pc};
}

PipelineStep Step(const std::string& name, IRStage stage) {
  auto& passes = SharedPasses();
  auto it = passes.find(name);
  if (it == passes.end()) throw InternalError("no shared pass named '" + name + "' (pass_registry.cc)");
  return {name, it->second, stage};
}

std::vector<std::string> SharedPassNames() {
  std::vector<std::string> out;
  for (auto& [name, fn] : SharedPasses()) out.push_back(name);
  return out;
}

Pipeline GpuTileToThreadSteps() {
  return {Step("CheckThreadBindings"),       Step("ExpandViewTileOps"), Step("Simplify"),
          Step("RasterizeBlocks"),           Step("InjectBoundGuards"), Step("ResolveBufferViews"),
          Step("LegalizeTileOpsGPU"),       Step("PartitionDynamicParallel"),
          Step("LayoutInference"),           Step("LowerTileOpsGPU", IRStage::kThread),
          Step("Simplify", IRStage::kThread)};
}

Pipeline Concat(Pipeline a, const Pipeline& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

const Pipeline& FrontSteps() {
  static const Pipeline front = {Step("HoistWorkspaces"), Step("DropOtherTargetsAttrs"),
                                 Step("MaterializeWsSchedule")};
  return front;
}

PrimFunc RunPipeline(const Pipeline& p, const PrimFunc& f, const PassContext& ctx, std::vector<PassRecord>* trace) {
  PrimFunc g = f;
  for (const PipelineStep& s : p) g = RunStep(s, g, ctx, trace);
  return g;
}

PrimFunc RunPipelineStep(const Pipeline& p, const std::string& name, int occurrence, const PrimFunc& f,
                         const PassContext& ctx) {
  int seen = 0;
  for (const PipelineStep& s : p)
    if (s.name == name && seen++ == occurrence) return RunStep(s, f, ctx, nullptr);
  std::string have;
  for (const PipelineStep& s : p) have += (have.empty() ? "" : ", ") + s.name;
  throw UserError(ErrorKind::kUnsupported, "this target's pipeline has no step '" + name + "'" +
                                               (seen ? " number " + std::to_string(occurrence) +
                                                           " (it runs " + std::to_string(seen) + " times)"
                                                     : "") +
                                               "; its steps are: " + have);
}

}  // namespace tl
