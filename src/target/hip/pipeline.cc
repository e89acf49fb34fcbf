// The HIP backend's pipeline: the shared GPU passes on HipFeatures (MFMA, wave64, LDS), with its own
// register-staged prefetch for pipelined loops (no async copy on CDNA).
#include "target/hip/passes.h"
#include "target/hip/target.h"

#include <algorithm>

#include "transform/gpu/pack_fp4_tiles.h"

namespace tl {

PrimFunc PackFp4TilesHIP(const PrimFunc& f, const PassContext& ctx) {
  if (ctx.features.mfma_fp8 != "ocp") return f;  // gfx950's scaled MFMAs read fp4 two a byte
  // (each operand on its own: the MFMA takes fp4 packed with any other format)
  return PackFp4Tiles(
      f, ctx,
      {[](const GemmBlockScaledNode& g) { return !g.Nvf4Words(); }, false, "T.mma_gemm_blockscaled's MXFP4"});
}

PassContext HipPassContext(const Target& t, const PassConfig& pc) { return GpuPassContext(HipFeatures(t), t, pc); }

Pipeline HipPipeline(const PassContext& ctx) {
  const IRStage thread = IRStage::kThread, planned = IRStage::kSharedPlanned;
  Pipeline p = GpuTileToThreadSteps();  // CheckThreadBindings ... LowerTileOpsGPU, Simplify
  // gfx950: fp4 operands of MXFP4 gemms (and the tensors copied into them) two values a byte
  if (ctx.features.mfma_fp8 == "ocp")
    p.insert(std::find_if(p.begin(), p.end(),
                          [](const PipelineStep& s) { return s.name == "LegalizeTileOpsGPU"; }),
             {"PackFp4TilesHIP", PackFp4TilesHIP, IRStage::kTile});
  return Concat(p, {
                       // pipelined copies go through registers (stage_prefetch_in_registers.cc)
                       {"StagePrefetchInRegisters", StagePrefetchInRegisters, thread},
                       Step("SplitInteriorBlocks", thread),
                       Step("PlanSharedMemory", planned),
                       Step("InsertBarriers", planned),
                   });
}

}  // namespace tl
