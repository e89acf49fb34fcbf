// Metal Shading Language code generation from the GPU thread-level IR (the CUDA lowering run with
// the Metal switches, src/target/metal/target.h). Threadgroups are blocks; the planned shared byte
// buffer is one `threadgroup` array with typed views; `tl.syncthreads` is threadgroup_barrier;
// `tl.shfl_xor` is simd_shuffle_xor; the simdgroup calls of T.gemm are simdgroup_matrix objects
// with simdgroup_load / simdgroup_store / simdgroup_multiply_accumulate. The source is
// self-contained MSL (metal_stdlib only); small helpers live in a `tl` namespace at its top.
#pragma once
#include <string>

#include "ir/function.h"

namespace tl {

/// `f` must be lowered by the Metal pipeline (pipeline.cc). Throws a UserError for what MSL cannot express
/// (T.print, T.device_assert, 64-bit atomics).
std::string CodegenMetal(const PrimFunc& f);

}  // namespace tl
