// The OpenCL lowering target; see target.h.
#include "target/opencl/target.h"

namespace tl {

GpuFeatures OpenCLFeatures(const OpenCLLimits& lim) {
  GpuFeatures f;
  f.name = "OpenCL";
  f.arch = "OpenCL device " + lim.device;
  f.label = "OpenCL";
  f.matrix = MatrixUnit::kNone;  // T.gemm: per-thread multiply-adds
  f.async_copy = AsyncCopy::kNone;
  f.swizzle = SharedSwizzle::kXor;
  f.shuffle = false;  // OpenCL 1.2 devices (PoCL among them) need not have sub-groups
  f.ordered_atomics = false;  // OpenCL 1.2 atomics have no memory orders
  f.wave = 32;
  f.subgroup_reduce = lim.subgroups;
  f.subgroup_feature = "subgroups";
  f.vector_shared_loads = false;
  f.vector_shared_stores = false;
  f.int_to_global_pointer = false;
  f.hoist_branch_barriers = true;  // PoCL corrupts its heap on a barrier in both branches
  f.smem_limit = lim.local_mem;
  f.max_threads = lim.max_work_group;
  f.shared_memory_name = "local";
  return f;
}

PrimFunc LowerForOpenCL(const PrimFunc& f, const OpenCLLimits& lim, CudaLowerOptions opt, CudaLowerInfo* info,
                        std::vector<PassRecord>* trace) {
  return LowerForGPU(f, OpenCLFeatures(lim), opt, info, trace);
}

}  // namespace tl
