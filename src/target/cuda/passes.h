// The CUDA backend's pass context and pipeline (pipeline.cc); its own passes are in
// wgmma_proxy_fence.h and transform/gpu/warp_specialize.h.
#pragma once
#include "target/cuda/target.h"
#include "transform/pass_registry.h"

namespace tl {

/// CudaFeatures of the target's arch, and the options of the configs.
PassContext CudaPassContext(const Target& t, const PassConfig& pc);
Pipeline CudaPipeline(const PassContext& ctx);

}  // namespace tl
