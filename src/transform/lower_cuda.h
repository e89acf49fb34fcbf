// The shared GPU lowering (CUDA, HIP, Metal, OpenCL): tile program -> thread-level program
// (docs/thread_ir.md), on the GpuFeatures of the target (src/target/gpu_features.h; each GPU backend
// builds its own).
//
//   LegalizeTileOpsCUDA  copies / fills / atomics that are plain loops become T.Parallel nests;
//                        global->shared copies that can use 16-byte cp.async stay copy ops (the
//                        others are reported as warnings, with the reason); pipeline stages are
//                        planned for the async copies of T.Pipelined loops
//   LayoutInference      fragment layouts (strict: gemm accumulators and register operands,
//                        reductions; common: T.Parallel nests; free: striped) to a fixpoint
//   LowerTileOpsCUDA     gemm -> ldmatrix + mma.sync, copies -> cp.async, reductions -> warp
//                        shuffles + shared memory, T.Parallel -> per-thread unrolled code,
//                        T.Pipelined -> multi-stage cp.async pipeline, shared buffers -> flat
//                        swizzled buffers, fragments -> per-thread register arrays
//   InsertBarriers       __syncthreads where shared-memory accesses of different threads conflict
//   PlanSharedMemory     offsets with liveness-based reuse; over the limit is a compile error
#pragma once
#include "transform/compile_info.h"
#include <map>
#include <string>
#include <vector>

#include "target/gpu_features.h"
#include "transform/pass_config.h"
#include "transform/pipeline.h"

namespace tl {

struct CudaLowerOptions {
  bool disable_barriers = false;          // pass config "tl.disable_barrier_insertion" (for race tests)
  bool disable_cp_async = false;          // "tl.disable_async_copy"
  bool disable_wgmma = false;             // "tl.disable_wgmma": sm_90a T.gemm uses mma.sync
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
CudaLowerOptions GpuLowerOptions(const PassConfig& pc);

// What the lowering reports (decisions, warnings, the shared-memory plan, the block size).
using CudaLowerInfo = CompileInfo;

/// The shared GPU lowering for a target with `features` (each GPU backend builds its own:
/// src/target/<kind>/target.cc).
PrimFunc LowerForGPU(const PrimFunc& f, const GpuFeatures& features, const CudaLowerOptions& opt,
                     CudaLowerInfo* info, std::vector<PassRecord>* trace = nullptr);

}  // namespace tl
