// The OpenCL backend's pipeline: the shared GPU passes on OpenCLFeatures of the device (no async copy,
// no matrix unit), and barriers hoisted out of both branches of an if for PoCL.
#include "target/opencl/passes.h"
#include "target/opencl/target.h"

namespace tl {

Pipeline OpenCLPipeline(const PassContext&) {
  const IRStage thread = IRStage::kThread, planned = IRStage::kSharedPlanned;
  return Concat(GpuTileToThreadSteps(),  // CheckThreadBindings ... LowerTileOpsGPU, Simplify
                {
                    Step("SplitInteriorBlocks", thread),
                    Step("PlanSharedMemory", planned),
                    Step("InsertBarriers", planned),
                    // PoCL corrupts its heap on a barrier at the head of both branches (hoist_branch_barriers.cc)
                    {"HoistBranchBarriers", HoistBranchBarriers, planned},
                });
}

}  // namespace tl
