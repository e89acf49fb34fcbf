// The Metal backend's lowering: the GPU thread-level pipeline (src/transform/lower_cuda.h) on what
// Apple GPUs offer -- threadgroups are blocks and threadgroup memory is shared memory (32 KB),
// SIMD-groups are 32-wide warps (reductions use simd_shuffle_xor), T.gemm runs on simdgroup_matrix
// 8x8 tiles (src/transform/metal/lower_gemm_simdgroup.cc); no cp.async / ldmatrix / mma.sync, and
// shared tiles are not swizzled (simdgroup_load reads plain rows).
#pragma once
#include <vector>

#include "target/gpu_features.h"
#include "transform/lower_cuda.h"

namespace tl {

/// What an Apple GPU offers; its limits: 32 KB of threadgroup memory, 1024 threads per threadgroup.
GpuFeatures MetalFeatures();

/// Tile program -> thread-level IR for Metal (`opt.disable_cp_async` is forced on). Checks the dtypes
/// Metal lacks (float64, fp8, 64-bit atomics) at the op that uses them.
PrimFunc LowerForMetal(const PrimFunc& f, CudaLowerOptions opt, CudaLowerInfo* info,
                       std::vector<PassRecord>* trace = nullptr);

}  // namespace tl
