// State shared by the CUDA passes of one compilation, and the passes' entry points. The passes
// run in the order of RunCudaPipeline (pipeline.cc), one file each: legalize_tile_ops_cuda.cc,
// layout_inference.cc, lower_tile_ops_cuda.cc, plan_shared_memory.cc, insert_barriers.cc.
#pragma once
#include <string>
#include <vector>

#include "layout/fragment.h"
#include "transform/lower_cuda.h"

namespace tl {

/// What every GPU pass may read besides its input function: what the hardware offers and the options. `info`
/// collects diagnostics for the user (choices, warnings, the shared-memory table); no pass reads
/// it. Everything one pass decides for a later one is in the IR (docs/thread_ir.md, "Facts").
struct CudaPassContext {
  GpuFeatures features;
  CudaLowerOptions opt;
  CudaLowerInfo* info = nullptr;
};

/// Tile ops that cannot run asynchronously become T.Parallel nests; cp.async copies are wrapped
/// in `tl.copy_async`, and buffers of pipelined copies get `tl.num_stages`.
PrimFunc LegalizeTileOpsCUDA(const PrimFunc& f, const CudaPassContext& ctx);
/// Requires legalized tile IR. Wraps the kernel body in `tl.layout` for every fragment and
/// annotates every T.Parallel nest with `tl.loop_layout`.
/// T.Parallel nests with run-time extents become guarded partitions over the block's threads
/// (partition_dynamic_parallel.cc); before InferLayouts.
PrimFunc PartitionDynamicParallel(const PrimFunc& f);
PrimFunc InferLayouts(const PrimFunc& f, const CudaPassContext& ctx);
/// Requires the facts of the two passes above; produces thread-level IR (docs/thread_ir.md).
PrimFunc LowerTileOpsCUDA(const PrimFunc& f, const CudaPassContext& ctx);
/// HIP: the steady state of a pipelined loop loads its prefetch into registers before the compute
/// and stores them to LDS after it (src/transform/hip/stage_prefetch_in_registers.cc).
PrimFunc StagePrefetchInRegisters(const PrimFunc& f, const CudaPassContext& ctx);
/// Requires thread-level IR. The kernel body becomes `if (interior) fast else body`, where the
/// fast copy has the block-uniform bound checks removed (split_interior_blocks.cc).
PrimFunc SplitInteriorBlocks(const PrimFunc& f, const CudaPassContext& ctx);
/// Places every shared buffer in one byte buffer (views with byte offsets), with reuse.
PrimFunc PlanSharedMemory(const PrimFunc& f, const CudaPassContext& ctx);
/// __syncthreads where shared-memory accesses of different threads conflict.
PrimFunc InsertBarriers(const PrimFunc& f, const CudaPassContext& ctx);
/// OpenCL: a barrier at the head of both branches of an if/else (SplitInteriorBlocks' paths) moves
/// before the if, once (PoCL corrupts its heap on the two; hoist_branch_barriers.cc).
PrimFunc HoistBranchBarriers(const PrimFunc& f, const CudaPassContext& ctx);
PrimFunc RunCudaPipeline(const PrimFunc& f, const CudaPassContext& ctx, std::vector<PassRecord>* trace);

}  // namespace tl
