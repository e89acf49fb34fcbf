// The CUDA target as a plain value: architecture and the limits the compiler checks against, and
// the GpuFeatures the shared GPU lowering reads for it.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "target/gpu_features.h"
#include "target/target.h"
#include "transform/gpu_options.h"
#include "transform/compile_info.h"
#include "transform/pipeline.h"

namespace tl {

struct CudaTarget {
  std::string arch = "sm_80";  // "sm_80", "sm_86", "sm_89", "sm_90", "sm_90a", "sm_100a", ..., "sm_121a"
  int sm = 80;                 // 80, 86, 89, 90, 100, 103, 110, 120, 121
  int64_t smem_limit = 0;      // max dynamic shared memory per block (opt-in), bytes
  int64_t max_threads = 1024;
};

/// Parses "cuda", "cuda -arch=sm_86", "cuda:sm_89", "cuda -arch sm_90a", "sm_80". Throws a
/// UserError for an architecture this backend does not know.
CudaTarget ParseCudaTarget(const std::string& spec);

/// What an NVIDIA GPU of `t`'s architecture offers: tensor cores through mma.sync (fp8 from sm_89),
/// 16-byte cp.async into XOR-swizzled tiles, 32-lane warp shuffles; from sm_90 TMA (and its swizzle
/// modes), on sm_90a wgmma.
GpuFeatures CudaFeatures(const CudaTarget& t);

/// The CUDA target of a parsed "cuda" Target (its arch; sm_80 when none is named).
CudaTarget CudaTargetOf(const Target& t);

/// Tile program -> thread-level IR for CUDA: the CUDA pipeline (pipeline.cc) on CudaFeatures(target),
/// as Compile() runs it.
PrimFunc LowerForCUDA(const PrimFunc& f, const CudaTarget& target, const GpuOptions& opt,
                      CompileInfo* info, std::vector<PassRecord>* trace = nullptr);

}  // namespace tl
