// The OpenCL lowering target; see target.h.
#include "target/opencl/target.h"

namespace tl {

CudaTarget OpenCLLoweringTarget(const OpenCLLimits& lim) {
  CudaTarget t;
  t.arch = "OpenCL device " + lim.device;
  t.sm = 80;  // the sm_80 lowering rules, minus the features switched off below
  t.smem_limit = lim.local_mem;
  t.max_threads = lim.max_work_group;
  t.mma = false;
  t.cp_async = false;
  t.shuffle = false;
  t.subgroups = lim.subgroups;
  t.backend = "OpenCL";
  return t;
}

PrimFunc LowerForOpenCL(const PrimFunc& f, const OpenCLLimits& lim, CudaLowerOptions opt, CudaLowerInfo* info,
                        std::vector<PassRecord>* trace) {
  opt.disable_cp_async = true;
  return LowerForCUDA(f, OpenCLLoweringTarget(lim), opt, info, trace);
}

}  // namespace tl
