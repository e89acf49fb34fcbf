// The OpenCL backend's own passes and its pipeline (pipeline.cc).
#pragma once
#include "transform/pass_registry.h"

namespace tl {

/// A barrier at the head of both branches of an if/else (SplitInteriorBlocks' paths) moves before the
/// if, once: PoCL corrupts its heap on the two (hoist_branch_barriers.cc).
PrimFunc HoistBranchBarriers(const PrimFunc& f, const PassContext& ctx);

/// The pass context (OpenCLFeatures of the device's limits) and the pipeline of an OpenCL target.
PassContext OpenCLPassContext(const Target& t, const PassConfig& pc);
Pipeline OpenCLPipeline(const PassContext& ctx);

}  // namespace tl
