// The HIP backend's own passes and its pipeline (pipeline.cc).
#pragma once
#include "transform/pass_registry.h"

namespace tl {

/// The steady state of a pipelined loop loads its prefetch into registers before the compute and
/// stores it to LDS after it: software pipelining without an async copy
/// (stage_prefetch_in_registers.cc).
PrimFunc StagePrefetchInRegisters(const PrimFunc& f, const PassContext& ctx);

/// gfx950: fp4 tensors and tiles used only by MXFP4 block-scaled gemms stored two values a byte
/// (transform/gpu/pack_fp4_tiles.h).
PrimFunc PackFp4TilesHIP(const PrimFunc& f, const PassContext& ctx);

/// The pass context (HipFeatures of the target) and the pipeline of a HIP target.
PassContext HipPassContext(const Target& t, const PassConfig& pc);
Pipeline HipPipeline(const PassContext& ctx);

}  // namespace tl
