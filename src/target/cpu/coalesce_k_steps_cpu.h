// CoalesceGemmKStepsCPU: on the CPU target, a K loop whose body only copies tiles of global
// tensors into on-chip tiles and multiplies them,
//
//   for k in T.Pipelined(n):  T.copy(A[.., k*bk ..], A_s);  T.copy(B[k*bk .., ..], B_s);  T.gemm(A_s, B_s, C)
//
// runs U = target_k / bk consecutive k steps per iteration on U-times-deeper tiles (A_s: bm x U*bk,
// B_s: U*bk x bn); target_k is 128, or 256 where CacheGemmTilesCPU then serves the tiles from its
// caches. Each gemm call then has K = target_k: the accumulator tile, usually larger than L1,
// is read and written back U times less often, and the copies move rows U times longer. A step
// past the loop's end fills its slice with zeros, so any trip count is exact. When U divides a
// constant trip count and the source slices of consecutive steps are adjacent along K, each
// deeper tile is filled by one copy of rows U*bk long instead of U copies of rows bk long.
//
// Applies only when the on-chip tiles are used by nothing else in the kernel, the gemm does not
// clear its accumulator and bk divides target_k (bk < target_k). Requires: tile-level IR. Records each
// rewrite in `choices`.
#pragma once
#include <string>
#include <vector>

#include "ir/function.h"

namespace tl {
PrimFunc CoalesceGemmKStepsCPU(const PrimFunc& f, std::vector<std::string>* choices, int64_t target_k = 128);
}  // namespace tl
