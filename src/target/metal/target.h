// The Metal target: the GPU thread-level pipeline (pipeline.cc) on what
// Apple GPUs offer -- threadgroups are blocks and threadgroup memory is shared memory (32 KB),
// SIMD-groups are 32-wide warps (reductions use simd_shuffle_xor), T.gemm runs on simdgroup_matrix
// 8x8 tiles (src/target/metal/lower_gemm_simdgroup.cc); no cp.async / ldmatrix / mma.sync, and
// shared tiles are not swizzled (simdgroup_load reads plain rows).
#pragma once
#include "target/gpu_features.h"

namespace tl {

/// What an Apple GPU offers; its limits: 32 KB of threadgroup memory, 1024 threads per threadgroup.
GpuFeatures MetalFeatures();


}  // namespace tl
