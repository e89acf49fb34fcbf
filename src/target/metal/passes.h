// The Metal backend's own passes and its pipeline (pipeline.cc); the rest of the pipeline is the shared GPU
// passes (transform/gpu_passes.h).
#pragma once
#include "transform/pass_registry.h"

namespace tl {

/// Requires thread-level IR from LowerTileOpsGPU on the simdgroup-matrix unit. A T.gemm moves
/// its accumulator from registers into simdgroup matrices (`tl.simdgroup_stage_in`) and back
/// (`tl.simdgroup_stage_out`); in a serial loop where nothing else touches that accumulator's
/// registers, both moves go out of the loop, so the matrices stay simdgroup_matrix objects across the
/// K loop and the accumulator goes through threadgroup memory once before and once after it. A no-op
/// for other targets.
PrimFunc HoistSimdgroupStaging(const PrimFunc& f, const PassContext& ctx);

/// Requires thread-level IR from LowerTileOpsGPU on the simdgroup-matrix unit. A T.gemm whose A operand
/// tiles (its `tl.simdgroup_a_loads`) are the same in every iteration of an enclosing serial loop (their
/// threadgroup tile is not touched elsewhere in the loop, their addresses do not depend on it), e.g.
/// FlashAttention's Q: the loads move before the loop into simdgroup matrices for every K step, which the
/// loop's MMAs read. The tile is then dead during the loop, so PlanSharedMemory gives its bytes to others. A
/// no-op for other targets.
PrimFunc HoistSimdgroupOperands(const PrimFunc& f, const PassContext& ctx);

/// The first step: every type the kernel uses (parameters, buffers, atomics) is one MSL has, else a
/// UserError at its line (target.cc). Changes nothing.
PrimFunc CheckMetalTypes(const PrimFunc& f, const PassContext& ctx);

/// The pass context (MetalFeatures) and the pipeline of the Metal target.
PassContext MetalPassContext(const Target& t, const PassConfig& pc);
Pipeline MetalPipeline(const PassContext& ctx);

}  // namespace tl
