// The HIP lowering target; see target.h.
#include "target/hip/target.h"

namespace tl {

CudaTarget HipLoweringTarget(const Target& t) {
  CudaTarget c;
  c.arch = t.arch;
  c.sm = 80;  // the shared GPU lowering rules, with the switches below
  c.smem_limit = t.smem_limit;
  c.max_threads = t.max_threads;
  c.mma = false;      // no mma.sync / ldmatrix; T.gemm is MFMA (mfma = true)
  c.cp_async = true;  // the async-copy IR for multi-stage LDS buffers; printed as synchronous copies
  c.shuffle = true;
  c.mfma = true;
  c.wave = t.warp_size;
  c.backend = "HIP";
  return c;
}

PrimFunc LowerForHIP(const PrimFunc& f, const Target& t, CudaLowerOptions opt, CudaLowerInfo* info,
                     std::vector<PassRecord>* trace) {
  return LowerForCUDA(f, HipLoweringTarget(t), opt, info, trace);
}

}  // namespace tl
