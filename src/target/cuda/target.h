// The CUDA target as a plain value: architecture and the limits the compiler checks against.
#pragma once
#include <cstdint>
#include <string>

namespace tl {

struct CudaTarget {
  std::string arch = "sm_80";  // "sm_80", "sm_86", "sm_89", "sm_90", "sm_90a"
  int sm = 80;                 // 80, 86, 89, 90
  int64_t smem_limit = 0;      // max dynamic shared memory per block (opt-in), bytes
  int64_t max_threads = 1024;
  // What the GPU lowering may use. The OpenCL backend reuses this lowering with these off
  // (src/target/opencl/target.h): no tensor-core mma.sync / ldmatrix (T.gemm becomes per-thread
  // multiply-adds), no cp.async, no warp shuffles (reductions exchange partials through shared memory).
  bool mma = true;
  bool wgmma = true;  // sm_90a: T.gemm may use wgmma.mma_async (off with the pass config "tl.disable_wgmma")
  bool cp_async = true;
  bool shuffle = true;  // warp shuffles; without them reductions exchange partials through shared memory
  // OpenCL cl_khr_subgroups (with shuffle off): a reduction over all threads combines within each
  // sub-group with sub_group_reduce_* and across sub-groups through shared memory. No sub-group size
  // is assumed (it is implementation-defined): only get_sub_group_id / get_num_sub_groups.
  bool subgroups = false;
  bool simdgroup = false;  // Metal: T.gemm on simdgroup_matrix 8x8 tiles (src/transform/metal/)
  bool swizzle = true;     // XOR-swizzled shared tiles (off for Metal: simdgroup_load needs plain rows)
  bool mfma = false;  // AMD MFMA matrix cores (HIP): T.gemm on v_mfma with wave64 fragment layouts
  int wave = 32;      // lanes that shuffle together (64 on AMD CDNA)
  std::string backend = "CUDA";  // how messages name the target ("CUDA", "OpenCL")
};

/// Parses "cuda", "cuda -arch=sm_86", "cuda:sm_89", "cuda -arch sm_90a", "sm_80". Throws a
/// UserError for an architecture this backend does not know.
CudaTarget ParseCudaTarget(const std::string& spec);

}  // namespace tl
