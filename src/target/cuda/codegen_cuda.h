// CodegenCUDA: prints a thread-level function (docs/thread_ir.md) as one CUDA C++ translation
// unit that includes only tl_device/cuda/common.h.
//
// The kernel is `extern "C" __global__ <name>_kernel(params..., symbolic dims...)`: tensor
// parameters as device pointers, scalar parameters by value, then one int per symbolic dim in
// the order of SymbolicVars(f). Shared buffers are carved out of dynamic shared memory at the
// offsets PlanSharedMemory recorded in the function's attrs.
#pragma once
#include <string>

#include "ir/function.h"

namespace tl {
std::string CodegenCUDA(const PrimFunc& f, const std::string& arch);
std::string CudaKernelName(const PrimFunc& f);
}  // namespace tl
