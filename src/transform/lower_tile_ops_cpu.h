// LowerTileOpsCPU: replaces every tile op (copy, gemm, fill, reduce, atomic_add, cumsum) by
// loops over its region and calls of the host micro-kernels, for the CPU target.
//
// Requires: a checked tile-level function. Produces: a function whose only non-loop statements
// are stores, lets, ifs and evaluated calls (tl_cpu_gemm, atomic_add), ready for CodegenCPU.
#pragma once
#include "ir/function.h"

namespace tl {
PrimFunc LowerTileOpsCPU(const PrimFunc& f);
/// One copy, fill or atomic_add as a T.Parallel loop nest over its tile, with global accesses
/// guarded (out-of-range loads give zero, out-of-range stores are skipped). Shared by targets.
Stmt TileOpToParallelLoops(const Stmt& op);
}  // namespace tl
