// CUDA's T.gemm lowerings (src/target/cuda/lower_gemm_mma.cc, lower_gemm_tf32.cc), for LowerTileOpsGPU.
#pragma once
#include "op/gemm.h"

namespace tl {
namespace gpu_lowering {
class GpuTileLowerer;
/// ldmatrix + mma.sync over the accumulator's warp grid (wgmma where the accumulator has a warp-group layout).
Stmt LowerGemmMma(GpuTileLowerer& L, const GemmNode* g);
/// float32 A, B and C: mma.sync m16n8k8 tf32.
Stmt LowerGemmTf32(GpuTileLowerer& L, const GemmNode* g);

// Pieces the mma.sync lowerings share (lower_gemm_mma.cc).
/// `locals` registers of the accumulator `cl` set to zero (clear_accum).
Stmt ClearAccumulator(const Buffer& cl, int64_t locals, DataType t, const Span& sp);
/// The element (row, col) of shared operand tile `r`, in the tile's stored coordinates along `dims`.
Expr SharedTileElement(GpuTileLowerer& L, const Region& r, const std::vector<size_t>& dims, const Expr& row,
                       const Expr& col);
}  // namespace gpu_lowering
}  // namespace tl
