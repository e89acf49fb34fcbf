// GpuOptionsFor: see gpu_options.h.
#include "transform/gpu_options.h"

namespace tl {

GpuOptions GpuOptionsFor(const PassConfig& pc) {
  GpuOptions o;
  o.disable_barriers = pc.disable_barrier_insertion;
  o.user_sync_shared = pc.user_sync_shared;
  o.disable_cp_async = pc.disable_async_copy;
  o.disable_wgmma = pc.disable_wgmma;
  o.disable_tcgen05 = pc.disable_tcgen05;
  o.disable_tma = pc.disable_tma_lower;
  o.corrupt_mma_layout = pc.test_corrupt_mma_layout;
  o.skip_fence_proxy = pc.test_skip_fence_proxy;
  o.disable_warp_specialized = pc.disable_warp_specialized;
  o.test_ws_skip_empty_arrive = pc.test_ws_skip_empty_arrive;
  o.test_ws_early_release = pc.test_ws_early_release;
  return o;
}

}  // namespace tl
