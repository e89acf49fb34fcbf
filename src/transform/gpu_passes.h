// The shared GPU passes (registered by name in pass_registry.cc; each GPU backend lists them in its
// pipeline, src/target/<kind>/pipeline.cc), one file each: legalize_tile_ops_gpu.cc,
// layout_inference.cc, gpu/lower_tile_ops.cc, split_interior_blocks.cc, plan_shared_memory.cc,
// insert_barriers.cc.
#pragma once
#include <string>
#include <vector>

#include "layout/fragment.h"
#include "transform/pass_registry.h"

namespace tl {

/// Tile ops that cannot run asynchronously become T.Parallel nests; cp.async copies are wrapped
/// in `tl.copy_async`, and buffers of pipelined copies get `tl.num_stages`.
PrimFunc LegalizeTileOpsGPU(const PrimFunc& f, const PassContext& ctx);
/// Requires legalized tile IR. Wraps the kernel body in `tl.layout` for every fragment and
/// annotates every T.Parallel nest with `tl.loop_layout`.
/// T.Parallel nests with run-time extents become guarded partitions over the block's threads
/// (partition_dynamic_parallel.cc); before InferLayouts.
PrimFunc PartitionDynamicParallel(const PrimFunc& f);
PrimFunc InferLayouts(const PrimFunc& f, const PassContext& ctx);
/// Requires the facts of the two passes above; produces thread-level IR (docs/thread_ir.md).
PrimFunc LowerTileOpsGPU(const PrimFunc& f, const PassContext& ctx);
/// Requires thread-level IR. The kernel body becomes `if (interior) fast else body`, where the
/// fast copy has the block-uniform bound checks removed (split_interior_blocks.cc).
PrimFunc SplitInteriorBlocks(const PrimFunc& f, const PassContext& ctx);
/// Places every shared buffer in one byte buffer (views with byte offsets), with reuse.
PrimFunc PlanSharedMemory(const PrimFunc& f, const PassContext& ctx);
/// __syncthreads where shared-memory accesses of different threads conflict.
PrimFunc InsertBarriers(const PrimFunc& f, const PassContext& ctx);

}  // namespace tl
