// OpenCL C code generation from the GPU thread-level IR (the CUDA lowering run with the OpenCL
// target switches, src/target/opencl/target.h). Work-groups are blocks, the planned shared byte
// buffer is one `__local` array, `tl.syncthreads` is a work-group barrier, vector loads/stores are
// vloadN / vstoreN. The source is self-contained OpenCL C 1.2 (no includes); helpers are emitted
// only when used. Sub-group reductions (the lowering's tl.subgroup_* calls, target feature
// "subgroups") are cl_khr_subgroups builtins under its #pragma; such a source is built as OpenCL C
// 2.0 or later (runtime/opencl_runtime.h, BuildOptionsFor).
#pragma once
#include <string>

#include "ir/function.h"

namespace tl {

struct OpenCLSource {
  std::string source;
  std::string kernel_name;
  bool uses_fp64 = false;  // needs cl_khr_fp64
  bool uses_int64_atomics = false;
  bool uses_subgroups = false;  // needs cl_khr_subgroups
};

/// `f` must be lowered by the OpenCL pipeline (pipeline.cc). Throws a UserError for what OpenCL C cannot express
/// (bfloat16 / fp8 / sub-byte dtypes, bool tensors, float16 scalars, T.device_assert). float16
/// is a storage format: loads and stores convert (vload_half / vstore_half_rte), arithmetic is float.
/// `dynamic_register_index`: print the lowering's register select chains as indexed reads (for PoCL,
/// whose vectorising work-group method miscompiles the chains; GPUs keep registers with the chains).
OpenCLSource CodegenOpenCL(const PrimFunc& f, bool dynamic_register_index = false);

}  // namespace tl
