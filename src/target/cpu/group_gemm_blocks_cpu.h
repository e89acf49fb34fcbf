// GroupGemmBlocksCPU: on the CPU target, a GEMM kernel over a large 2-D grid whose body is
//
//   prologue(C);  for k: T.copy(A[by.., k..], A_s); T.copy(B[k.., bx..], B_s); T.gemm(A_s, B_s, C);
//   epilogue(C)
//
// (the shape CoalesceGemmKStepsCPU leaves the demo's GEMM in) runs each grid step on a 2 x 2 group
// of blocks in lockstep over k: per k step, one copy of each of the two A tiles and of the two B
// tiles feeds four gemm calls, so every tile read from global memory serves two blocks instead of
// one. At 2048^3 with 128 x 128 x 128 tiles the copies out of global memory (rows 8 KiB apart, which
// no cache level keeps) are about a fifth of the run; this halves them.
//
// Applies only when: the kernel's on-chip buffers are exactly A_s, B_s and the accumulator; the A
// copy's source does not depend on the grid's x block index and the B copy's does not depend on y;
// everything outside the K loop names only the accumulator, global tensors and scalars; the grid's
// x and y extents are constant and give at least kMinGroups groups (so that every core stays busy);
// the accumulator group fits the CPU target's on-chip limit. Blocks past an odd grid edge are
// skipped by guards. Requires: tile-level IR. Records the rewrite in `choices`.
#pragma once
#include <string>
#include <vector>

#include "ir/function.h"

namespace tl {
PrimFunc GroupGemmBlocksCPU(const PrimFunc& f, std::vector<std::string>* choices);
}  // namespace tl
