// The options of the shared GPU lowering (CUDA, HIP, Metal, OpenCL), from the pass configs. The
// lowering itself is each backend's pipeline (src/target/<kind>/pipeline.cc) of shared passes
// (transform/gpu_passes.h, registered in transform/pass_registry.cc) and its own:
//
//   LegalizeTileOpsGPU  copies / fills / atomics that are plain loops become T.Parallel nests;
//                        global->shared copies that can use 16-byte cp.async stay copy ops (the
//                        others are reported as warnings, with the reason); pipeline stages are
//                        planned for the async copies of T.Pipelined loops
//   LayoutInference      fragment layouts (strict: gemm accumulators and register operands,
//                        reductions; common: T.Parallel nests; free: striped) to a fixpoint
//   LowerTileOpsGPU     gemm -> the target's matrix unit, copies -> async copies, reductions -> warp
//                        shuffles + shared memory, T.Parallel -> per-thread unrolled code,
//                        T.Pipelined -> multi-stage pipelines, shared buffers -> flat
//                        swizzled buffers, fragments -> per-thread register arrays
//   PlanSharedMemory     offsets with liveness-based reuse; over the limit is a compile error
//   InsertBarriers       barriers where shared-memory accesses of different threads conflict
#pragma once
#include "transform/pass_config.h"

namespace tl {

struct GpuOptions {
  bool disable_barriers = false;          // pass config "tl.disable_barrier_insertion" (for race tests)
  bool user_sync_shared = false;          // "tl.user_sync_shared": barriers for compiler scratch only
  bool disable_cp_async = false;          // "tl.disable_async_copy"
  bool disable_wgmma = false;             // "tl.disable_wgmma": sm_90a T.gemm uses mma.sync
  bool disable_tcgen05 = false;           // "tl.disable_tcgen05": on the tcgen05 family T.gemm uses mma.sync
  bool disable_tma = false;               // "tl.disable_tma_lower": sm_90+ global->shared copies use cp.async
  bool corrupt_mma_layout = false;        // test-only: stores mma accumulators with two columns swapped
  bool skip_fence_proxy = false;          // test-only: wgmma without fence.proxy.async before it
  bool disable_warp_specialized = false;  // "tl.disable_warp_specialized": no producer warp group
  bool test_ws_skip_empty_arrive = false;  // test-only: consumers never release a stage (a deadlock)
  bool test_ws_early_release = false;      // test-only: a stage released before its wgmma's wait
};

/// The one mapping from pass configs to the GPU lowering's options, for every GPU backend (and the
/// per-pass test hook). A config for hardware a target lacks changes nothing there: the lowering reads
/// the target's GpuFeatures first (no TMA on sm_80, no async copy on Metal or OpenCL).
GpuOptions GpuOptionsFor(const PassConfig& pc);

}  // namespace tl
