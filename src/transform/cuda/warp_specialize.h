// Warp specialisation on sm_90a (src/transform/cuda/warp_specialize.cc, docs/warp_specialization.md).
#pragma once
#include "transform/gpu_passes.h"

namespace tl {

/// AttrStmt key around a warp-specialised region (its value: the consumer thread count T). The
/// emulator runs a kernel holding one with one fiber per warp group, so that a wait in one warp group
/// lets the others run.
extern const char* const kWarpSpecializedKey;
/// AttrStmt key around statements only the first T threads (the consumers) execute.
extern const char* const kWsConsumerKey;
/// AttrStmt key around the consumers' pipeline loop (found again by WsSplitKernel).
extern const char* const kWsPipelineKey;

/// Tile ops and T.Parallel / T.Pipelined loops are lowered for every thread of the block, but a T.ws
/// block runs on its warp groups only: any of them inside `ws` (the block's body; T.tma_copy and
/// T.wait_wgmma excepted, which work per warp group) is a UserError naming the op, at its line.
void CheckWsBlockOps(const Stmt& ws, int64_t block_threads);

/// After InsertBarriers: a __syncthreads inside a consumers-only region becomes `bar.sync 1, T`
/// (tl.named_barrier_sync), since the producer warp group never reaches it.
PrimFunc WsNamedBarriers(const PrimFunc& f, const PassContext& ctx);

}  // namespace tl
