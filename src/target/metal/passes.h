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

/// The first step: every type the kernel uses (parameters, buffers, atomics) is one MSL has, else a
/// UserError at its line (target.cc). Changes nothing.
PrimFunc CheckMetalTypes(const PrimFunc& f, const PassContext& ctx);

/// The pass context (MetalFeatures) and the pipeline of the Metal target.
PassContext MetalPassContext(const Target& t, const PassConfig& pc);
Pipeline MetalPipeline(const PassContext& ctx);

}  // namespace tl
