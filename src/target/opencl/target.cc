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
  f.fetch_atomics = false;    // not implemented in the OpenCL code generator
  f.wave = 32;
  f.subgroup_reduce = lim.subgroups;
  f.subgroup_feature = "subgroups";
  f.vector_shared_loads = false;
  f.vector_shared_stores = false;
  f.int_to_global_pointer = false;
  f.smem_limit = lim.local_mem;
  f.max_threads = lim.max_work_group;
  f.shared_memory_name = "local";
  return f;
}

}  // namespace tl
