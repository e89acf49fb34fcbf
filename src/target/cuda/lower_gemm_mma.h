// CUDA's T.gemm lowerings (src/target/cuda/lower_gemm_mma.cc, lower_gemm_tf32.cc), for LowerTileOpsGPU.
#pragma once
#include "op/gemm.h"

namespace tl {
namespace gpu_lowering {
class GpuTileLowerer;
/// ldmatrix + mma.sync over the accumulator's warp grid (wgmma where the accumulator has a warp-group layout).
Stmt LowerGemmMma(GpuTileLowerer& L, const GemmNode* g);
/// float32 A, B and C: mma.sync m16n8k8 tf32.
Stmt LowerGemmTf32(GpuTileLowerer& L, const GemmNode* g);
}  // namespace gpu_lowering
}  // namespace tl
