// One pass registry and one pass driver for every backend.
//
// A pipeline is a list of steps; a step is a pass (a name and a function of the function being
// lowered and the PassContext) and the IR stage its output must verify at (ir/verify.h). Shared
// passes are registered by name in pass_registry.cc; a backend's own passes are steps it writes in
// its folder (src/target/<kind>/pipeline.cc). Compile(), the lower trace and the per-pass test hook
// (_ffi.run_pass) all run a backend's steps through RunPipeline / RunPipelineStep, so a pass run
// alone is exactly the pass the pipeline runs, with the same context.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "ir/function.h"
#include "ir/verify.h"
#include "target/gpu_features.h"
#include "target/target.h"
#include "transform/compile_info.h"
#include "transform/gpu_options.h"
#include "transform/pass_config.h"
#include "transform/pipeline.h"

namespace tl {

/// What every pass may read besides its input function. GPU kinds fill `features` (what the hardware
/// offers; shared passes never ask which backend they serve) and `opt` (GpuOptions(config)). `info`
/// collects diagnostics for the user (choices, warnings, the shared-memory table); no pass reads it.
/// Everything one pass decides for a later one is in the IR (docs/thread_ir.md, "Facts").
struct PassContext {
  GpuFeatures features;
  GpuOptions opt;
  CompileInfo* info = nullptr;
  Target target;
  PassConfig config;
};

/// The context of a GPU kind's passes: its features, and the options of the configs (GpuOptionsFor).
PassContext GpuPassContext(const GpuFeatures& features, const Target& t, const PassConfig& pc);

using PassFn = std::function<PrimFunc(const PrimFunc&, const PassContext&)>;

/// A pass that reads nothing but its input, as a PassFn.
PassFn ContextFree(PrimFunc (*pass)(const PrimFunc&));

struct PipelineStep {
  std::string name;
  PassFn run;
  IRStage stage = IRStage::kTile;  // the invariants its output keeps (checked after it)
};
using Pipeline = std::vector<PipelineStep>;

/// The shared pass `name` as a step (InternalError for a name pass_registry.cc does not list).
PipelineStep Step(const std::string& name, IRStage stage = IRStage::kTile);
/// The names of the shared passes, sorted.
std::vector<std::string> SharedPassNames();

/// The shared GPU steps from a tile program to thread-level IR, the start of every GPU pipeline:
/// CheckThreadBindings, ExpandViewTileOps, Simplify, RasterizeBlocks, InjectBoundGuards, ResolveBufferViews,
/// LegalizeTileOpsGPU, PartitionDynamicParallel, LayoutInference, LowerTileOpsGPU (thread-level from
/// here), Simplify. A backend's pipeline continues with its own steps and SplitInteriorBlocks,
/// PlanSharedMemory and InsertBarriers.
Pipeline GpuTileToThreadSteps();
/// `a`, then `b`.
Pipeline Concat(Pipeline a, const Pipeline& b);

/// The steps Compile() runs before any backend's pipeline (HoistWorkspaces: the signature the
/// runtime sees).
const Pipeline& FrontSteps();

/// Runs the steps in order, the IR verifier after each; appends one record per step to `trace`.
PrimFunc RunPipeline(const Pipeline& p, const PrimFunc& f, const PassContext& ctx,
                     std::vector<PassRecord>* trace = nullptr);
/// The `occurrence`-th (from 0) step named `name` of `p`, alone on `f`, verified as RunPipeline does.
/// UserError(kUnsupported) listing the steps when there is none.
PrimFunc RunPipelineStep(const Pipeline& p, const std::string& name, int occurrence, const PrimFunc& f,
                         const PassContext& ctx);

}  // namespace tl
