// The OpenCL target: the GPU thread-level pipeline (pipeline.cc) on what
// OpenCL offers -- work-groups are blocks and __local memory is shared memory; no
// tensor-core mma (T.gemm becomes per-thread multiply-adds over the same accumulator layout), no
// async copies, no warp shuffles: reductions exchange partials through __local memory (OpenCL 1.2
// devices, PoCL on a CPU among them, need not have sub-groups); with the target feature "subgroups"
// (cl_khr_subgroups) reductions over all work-items combine within sub-groups first.
#pragma once
#include <cstdint>
#include <string>

#include "target/gpu_features.h"

namespace tl {

/// What the lowering checks against. Without a device (code generation only) the OpenCL 1.2
/// guaranteed minimums are used; with one, its CL_DEVICE_LOCAL_MEM_SIZE and
/// CL_DEVICE_MAX_WORK_GROUP_SIZE.
struct OpenCLLimits {
  int64_t local_mem = 32 * 1024;
  int64_t max_work_group = 256;
  std::string device = "the OpenCL 1.2 minimum (no device queried)";
  bool subgroups = false;  // cl_khr_subgroups reductions (the target's feature "subgroups")
};

/// What an OpenCL device with `lim` offers.
GpuFeatures OpenCLFeatures(const OpenCLLimits& lim);

}  // namespace tl
