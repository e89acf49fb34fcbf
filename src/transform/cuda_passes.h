// State shared by the CUDA passes of one compilation, and the passes' entry points. The passes
// run in the order of RunCudaPipeline (pipeline.cc), one file each: legalize_tile_ops_cuda.cc,
// layout_inference.cc, lower_tile_ops_cuda.cc, plan_shared_memory.cc, insert_barriers.cc.
#pragma once
#include <map>
#include <set>
#include <string>

#include "layout/fragment.h"
#include "transform/lower_cuda.h"

namespace tl {

struct SharedMeta {
  std::string shape, dtype;
  int64_t stages = 1;
};

struct CudaCtx {
  CudaTarget target;
  CudaLowerOptions opt;
  CudaLowerInfo* info = nullptr;
  int64_t threads = 0;
  std::map<const BufferNode*, Fragment> layout;        // fragment buffer -> layout
  std::map<const BufferNode*, std::string> layout_origin;
  std::map<const ForNode*, Fragment> loop_layout;      // outermost loop of a T.Parallel nest -> partition
  std::map<const BufferNode*, int64_t> stages;         // shared buffers filled by pipelined cp.async
  std::set<const CopyNode*> async_copies;              // global->shared copies lowered to cp.async
  std::map<std::string, SharedMeta> shared_meta;       // lowered shared buffer -> its tile shape and stages
  std::map<std::string, std::pair<int64_t, int64_t>> smem;  // shared buffer -> [offset, end) bytes
};

PrimFunc LegalizeTileOpsCUDA(const PrimFunc& f, CudaCtx* ctx);
PrimFunc InferLayouts(const PrimFunc& f, CudaCtx* ctx);
PrimFunc LowerTileOpsCUDA(const PrimFunc& f, CudaCtx* ctx);
PrimFunc PlanSharedMemory(const PrimFunc& f, CudaCtx* ctx);
PrimFunc InsertBarriers(const PrimFunc& f, CudaCtx* ctx);
PrimFunc RunCudaPipeline(const PrimFunc& f, CudaCtx* ctx, std::vector<PassRecord>* trace);

}  // namespace tl
