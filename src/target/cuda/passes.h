// The CUDA backend's pass context and pipeline (pipeline.cc); its own passes are in
// wgmma_proxy_fence.h and transform/gpu/warp_specialize.h.
#pragma once
#include "target/cuda/target.h"
#include "transform/pass_registry.h"

namespace tl {

/// CudaFeatures of the target's arch, and the options of the configs.
PassContext CudaPassContext(const Target& t, const PassConfig& pc);
Pipeline CudaPipeline(const PassContext& ctx);

/// After LowerTileOpsGPU on the tcgen05 family: the kernel's tensor-memory buffers become columns of one
/// tcgen05.alloc by warp 0 at the start (freed at the end), their addresses read from a shared word
/// (lower_tcgen05.cc).
PrimFunc LowerTensorMemoryCUDA(const PrimFunc& f, const PassContext& ctx);

/// Before LegalizeTileOpsGPU on the tcgen05 family: a T.gemm accumulating across a loop becomes tcgen05.mma into
/// tensor memory in TileLang's explicit form (gemm_to_tcgen05.cc).
PrimFunc GemmToTcgen05CUDA(const PrimFunc& f, const PassContext& ctx);
/// T.set_max_nreg calls at the start of thread-range branches that split a warp group, alike for the group,
/// become one call per warp group before the branches (hoist_setmaxnreg.cc).
PrimFunc HoistSetMaxNregCUDA(const PrimFunc& f, const PassContext& ctx);
/// sm_120a: fp4 tensors and tiles used only by NVFP4 block-scaled gemms stored two values a byte
/// (transform/gpu/pack_fp4_tiles.h).
PrimFunc PackFp4TilesCUDA(const PrimFunc& f, const PassContext& ctx);
PrimFunc PadFp4TilesCUDA(const PrimFunc& f, const PassContext& ctx);
PrimFunc PackNvf4TilesCUDA(const PrimFunc& f, const PassContext& ctx);

}  // namespace tl
