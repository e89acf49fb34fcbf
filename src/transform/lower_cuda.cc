// LowerForCUDA: the entry point of the CUDA lowering (the passes are one per file; the order is
// RunCudaPipeline's in pipeline.cc).
#include "transform/lower_cuda.h"

#include "transform/cuda_passes.h"

namespace tl {

PrimFunc LowerForCUDA(const PrimFunc& f, const CudaTarget& target, const CudaLowerOptions& opt,
                      CudaLowerInfo* info, std::vector<PassRecord>* trace) {
  CudaLowerInfo local;
  CudaPassContext ctx{target, opt, info ? info : &local};
  return RunCudaPipeline(f, ctx, trace);
}

}  // namespace tl
