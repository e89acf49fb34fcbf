// The Metal backend's pipeline: its dtype check, the shared GPU passes on MetalFeatures
// (simdgroup_matrix, 32 KB of threadgroup memory), and simdgroup staging out of K loops.
#include "target/metal/passes.h"
#include "target/metal/target.h"

namespace tl {

PassContext MetalPassContext(const Target& t, const PassConfig& pc) {
  GpuFeatures f = MetalFeatures();
  f.cooperative_tensors = t.Has("metal4");
  if (f.cooperative_tensors) f.label = "Metal 4";
  return GpuPassContext(f, t, pc);
}

Pipeline MetalPipeline(const PassContext&) {
  const IRStage thread = IRStage::kThread, planned = IRStage::kSharedPlanned;
  const Pipeline check = {{"CheckMetalTypes", CheckMetalTypes, IRStage::kTile}};
  return Concat(Concat(check, GpuTileToThreadSteps()),  // CheckThreadBindings ... LowerTileOpsGPU, Simplify
                {
                    // accumulators stay simdgroup matrices across K loops (hoist_simdgroup_staging.cc)
                    {"HoistSimdgroupStaging", HoistSimdgroupStaging, thread},
                    // loop-invariant A operands stay in simdgroup matrices (FlashAttention's Q)
                    {"HoistSimdgroupOperands", HoistSimdgroupOperands, thread},
                    Step("SplitInteriorBlocks", thread),
                    Step("PlanSharedMemory", planned),
                    Step("InsertBarriers", planned),
                });
}

}  // namespace tl
