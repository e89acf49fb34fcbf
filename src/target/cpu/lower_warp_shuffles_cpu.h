// Warp shuffles (T.tvm_warp_shuffle) on the CPU target, which runs a block's threads one after another.
#pragma once
#include "ir/function.h"

namespace tl {

/// Each T.tvm_warp_shuffle in per-thread code becomes a store of the thread's value into a shared staging
/// buffer (one slot a thread) before its statement and a load of the source lane's slot in its place. The
/// CPU's thread lowering then splits the block's thread loop between the two, as it does wherever the GPU
/// lowerings put a barrier (a shared buffer read after another statement wrote it), so every thread's value
/// is staged before any thread reads. Shuffles the CPU cannot order so (under a condition on the thread index
/// or on memory, inside T.Parallel, in a loop bound) are refused at their line.
PrimFunc LowerWarpShufflesCPU(const PrimFunc& f);

}  // namespace tl
