// The CPU backend's pass context and pipeline (pipeline.cc): the tile-level GEMM rewrites of this
// folder, then the shared front passes, the thread bindings and the tile-op lowering for the host.
#pragma once
#include "transform/pass_registry.h"

namespace tl {

PassContext CpuPassContext(const Target& t, const PassConfig& pc);
Pipeline CpuPipeline(const PassContext& ctx);

}  // namespace tl
