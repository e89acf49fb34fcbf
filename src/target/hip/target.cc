// The HIP lowering target; see target.h.
#include "target/hip/target.h"

namespace tl {

GpuFeatures HipFeatures(const Target& t) {
  GpuFeatures f;
  f.name = "HIP";
  f.arch = t.arch;
  f.label = "HIP";
  f.matrix = MatrixUnit::kMfma;  // T.gemm on v_mfma (fp8 from gfx940: src/target/hip/lower_gemm_mfma.cc)
  f.async_copy = AsyncCopy::kSynchronous;  // multi-stage LDS buffers; each copy a global load + LDS store
  f.swizzle = SharedSwizzle::kXor;         // (MFMA operand tiles take their own: gpu/mfma_lds.cc)
  f.shuffle = true;                        // ds_bpermute
  f.wave = t.warp_size;
  f.vector_shared_loads = true;   // ds_read_b128
  f.vector_shared_stores = true;  // ds_write_b128
  f.int_to_global_pointer = true;
  f.mfma_k8 = t.arch == "gfx950";
  f.mfma_fp8 = t.arch == "gfx950" ? "ocp" : t.arch == "gfx90a" ? "" : "fnuz";
  f.smem_limit = t.smem_limit;
  f.max_threads = t.max_threads;
  return f;
}

}  // namespace tl
