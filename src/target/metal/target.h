// The Metal backend's lowering: the GPU thread-level pipeline (src/transform/lower_cuda.h) with the
// switches Apple GPUs need -- threadgroups are blocks and threadgroup memory is shared memory (32 KB),
// SIMD-groups are 32-wide warps (reductions use simd_shuffle_xor), T.gemm runs on simdgroup_matrix
// 8x8 tiles (src/transform/metal/lower_gemm_simdgroup.cc); no cp.async / ldmatrix / mma.sync, and
// shared tiles are not swizzled (simdgroup_load reads plain rows).
#pragma once
#include <vector>

#include "target/cuda/target.h"
#include "transform/lower_cuda.h"

namespace tl {

/// Apple GPU limits: 32 KB of threadgroup memory, 1024 threads per threadgroup.
CudaTarget MetalLoweringTarget();

/// Tile program -> thread-level IR for Metal (`opt.disable_cp_async` is forced on). Checks the dtypes
/// Metal lacks (float64, fp8, 64-bit atomics) at the op that uses them.
PrimFunc LowerForMetal(const PrimFunc& f, CudaLowerOptions opt, CudaLowerInfo* info,
                       std::vector<PassRecord>* trace = nullptr);

}  // namespace tl
