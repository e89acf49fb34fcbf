// CodegenHIP: prints a thread-level function (docs/thread_ir.md) as one HIP C++ translation unit
// that includes only tl_device/hip/common.h (compiled with -nogpuinc: no hip_runtime.h).
//
// The kernel is `extern "C" __global__ <name>_kernel(params..., symbolic dims...)` as on CUDA;
// the shared byte buffer PlanSharedMemory placed is a static LDS array of its planned size, so the
// code object's metadata reports the kernel's LDS. MFMA calls (`tl.mfma`) become the header's
// wrappers of __builtin_amdgcn_mfma_*.
#pragma once
#include <string>

#include "ir/function.h"

namespace tl {
std::string CodegenHIP(const PrimFunc& f, const std::string& arch);
}  // namespace tl
