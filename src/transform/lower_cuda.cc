// LowerForGPU: the entry point of the shared GPU lowering (the passes are one per file; the order is
// RunCudaPipeline's in pipeline.cc). Each GPU backend calls it with the GpuFeatures of its target.
#include "transform/lower_cuda.h"

#include "transform/cuda_passes.h"

namespace tl {

PrimFunc LowerForGPU(const PrimFunc& f, const GpuFeatures& features, const CudaLowerOptions& opt,
                     CudaLowerInfo* info, std::vector<PassRecord>* trace) {
  CudaLowerInfo local;
  CudaPassContext ctx{features, opt, info ? info : &local};
  return RunCudaPipeline(f, ctx, trace);
}

}  // namespace tl
