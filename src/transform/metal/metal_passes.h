// Passes of the Metal lowering only (the rest of the pipeline is the GPU one, transform/cuda_passes.h).
#pragma once
#include "transform/cuda_passes.h"

namespace tl {

/// Requires thread-level IR from LowerTileOpsCUDA with `target.simdgroup` (Metal). A T.gemm moves
/// its accumulator from registers into simdgroup matrices (`tl.simdgroup_stage_in`) and back
/// (`tl.simdgroup_stage_out`); in a serial loop where nothing else touches that accumulator's
/// registers, both moves go out of the loop, so the matrices stay simdgroup_matrix objects across the
/// K loop and the accumulator goes through threadgroup memory once before and once after it. A no-op
/// for other targets.
PrimFunc HoistSimdgroupStaging(const PrimFunc& f, const CudaPassContext& ctx);

}  // namespace tl
