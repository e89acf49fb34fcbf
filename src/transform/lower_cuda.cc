// LowerForGPU: the entry point of the shared GPU lowering (the passes are one per file; the order is
// RunCudaPipeline's in pipeline.cc). Each GPU backend calls it with the GpuFeatures of its target.
#include "transform/lower_cuda.h"

#include "transform/cuda_passes.h"

namespace tl {

CudaLowerOptions GpuLowerOptions(const PassConfig& pc) {
  CudaLowerOptions o;
  o.disable_barriers = pc.disable_barrier_insertion;
  o.disable_cp_async = pc.disable_async_copy;
  o.disable_wgmma = pc.disable_wgmma;
  o.disable_tma = pc.disable_tma_lower;
  o.corrupt_mma_layout = pc.test_corrupt_mma_layout;
  o.skip_fence_proxy = pc.test_skip_fence_proxy;
  o.disable_warp_specialized = pc.disable_warp_specialized;
  o.test_ws_skip_empty_arrive = pc.test_ws_skip_empty_arrive;
  o.test_ws_early_release = pc.test_ws_early_release;
  return o;
}

PrimFunc LowerForGPU(const PrimFunc& f, const GpuFeatures& features, const CudaLowerOptions& opt,
                     CudaLowerInfo* info, std::vector<PassRecord>* trace) {
  CudaLowerInfo local;
  CudaPassContext ctx{features, opt, info ? info : &local};
  return RunCudaPipeline(f, ctx, trace);
}

}  // namespace tl
