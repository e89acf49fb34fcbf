// The HIP target: the GPU thread-level pipeline (pipeline.cc) on what AMD
// CDNA offers -- a wave64 device with 64 KB of LDS per work-group and 1024 threads, MFMA
// matrix cores for T.gemm (src/target/hip/lower_gemm_mfma.cc), cross-lane ds_bpermute shuffles for
// reductions. Global -> LDS copies keep the async-copy IR (tl.cp_async with commit / wait groups), so
// T.Pipelined gets num_stages rotating LDS buffers; the code generator prints each 16-byte copy as a
// synchronous global load + LDS store (one of the behaviours the async contract allows) and the
// commit / wait groups as nothing.
#pragma once
#include "target/gpu_features.h"
#include "target/target.h"

namespace tl {

/// What the shared GPU passes read for a "hip" Target (arch gfx90a / gfx940 / ...).
GpuFeatures HipFeatures(const Target& t);

}  // namespace tl
