// The HIP backend's pipeline: the shared GPU passes on HipFeatures (MFMA, wave64, LDS), with its own
// register-staged prefetch for pipelined loops (no async copy on CDNA).
#include "target/hip/passes.h"
#include "target/hip/target.h"

namespace tl {

PassContext HipPassContext(const Target& t, const PassConfig& pc) { return GpuPassContext(HipFeatures(t), t, pc); }

Pipeline HipPipeline(const PassContext&) {
  const IRStage thread = IRStage::kThread, planned = IRStage::kSharedPlanned;
  return Concat(GpuTileToThreadSteps(),  // CheckThreadBindings ... LowerTileOpsGPU, Simplify
                {
                    // pipelined copies go through registers (stage_prefetch_in_registers.cc)
                    {"StagePrefetchInRegisters", StagePrefetchInRegisters, thread},
                    Step("SplitInteriorBlocks", thread),
                    Step("PlanSharedMemory", planned),
                    Step("InsertBarriers", planned),
                });
}

}  // namespace tl
