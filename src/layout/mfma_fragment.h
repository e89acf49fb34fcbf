// Fragment layouts of AMD's MFMA matrix cores (wave64), for the HIP backend's T.gemm and the
// reductions and T.Parallel nests over its accumulators. From AMD's CDNA3 ISA guide / matrix
// instruction calculator, v_mfma_f32_16x16x16f16 (and the bf16_1k form), lane l of a wave:
//   A operand (16 x 16, M x K): 4 elements A[l % 16][4 * (l / 16) + v], v = 0..3
//   B operand (16 x 16, K x N): 4 elements B[4 * (l / 16) + v][l % 16]
//   C / D     (16 x 16, M x N): 4 floats   D[4 * (l / 16) + v][l % 16]
// A tile of M x N is split over a wm x wn grid of waves; wave w covers rows (w % wm) * M/wm.. and
// cols (w / wm) * N/wn.., as 16 x 16 MFMA tiles (mt x nt of them), registers tile-major. T.gemm's MFMAs
// compute each tile transposed (D = B^T A^T: the B operand read as the instruction's A and vice versa; the
// lanes read the same elements), so lane l holds C[l % 16][4 * (l / 16) + v]: 4 consecutive columns, stored
// to global memory as one 16-byte (float32) or 8-byte (16-bit) access.
// (The emulator's MFMA semantics, src/emulator/intrinsics_hip.cc, are written separately.)
#pragma once
#include <utility>

#include "layout/fragment.h"

namespace tl {

/// Accumulator of R x R MFMA tiles (R = 16: v_mfma_f32_16x16x16*, 4 registers per tile and lane; R = 32:
/// v_mfma_f32_32x32x8*, 16 registers, register r of lane l holding C[l%32][8(r/4) + 4(l/32) + r%4]):
/// kind "mfma_C", params {M, N, wm, wn, R}, 64 * wm * wn threads, local (tile_m * nt + tile_n) * R*R/64 + r.
Fragment MfmaAccumulator(int64_t M, int64_t N, int64_t wm, int64_t wn, int64_t R = 16);
/// The row vector an mfma_C tile reduces to along dim 1: row a of a tile is held by the lanes l % R == a of
/// every lane group in every wave of its wave row (replicated 64 / R * wn times); kind "mfma_rows",
/// params {M, 0, wm, wn, R}.
Fragment MfmaRows(int64_t M, int64_t wm, int64_t wn, int64_t R = 16);
/// The wave grid (wm, wn) of a gemm with `waves` waves on an M x N tile under a policy (0 square,
/// 1 full row, 2 full col); each wave's share must be a multiple of 16 x 16. Throws a UserError.
std::pair<int64_t, int64_t> MfmaWaveGrid(int64_t M, int64_t N, int64_t waves, int policy);

/// The LDS offset (in elements) of (row, col) of a 16-bit tile whose rows are k: a K x N B operand, or a
/// K x M A (trans_A), of cols elements a row. Lane l of an MFMA step reads column l % R of rows
/// k(g, v) = base + P g + v (g = l / R, P = 4 unpacked, 8 k-packed, v < P); an aligned 16-byte chunk
/// of a 128-byte row segment moves to chunk c ^ s(row), with s's bits (t_i = bit i of row)
///   s0 = t0, s1 = t2 ^ t4, s2 = t2 ^ t3      (cols a multiple of 64: rows of whole 128-byte lines)
///   s0 = t1, s1 = t2 ^ t3                    (cols = 32: two rows a line)
/// so that the lane groups of one read hit different banks: every 32 lanes (a ds_read_u16 pass) and,
/// for multiples of 64, the whole wave. Whole chunks move, so 16-byte copies stay 16-byte accesses (and
/// an 8-lane pass of them writes one 128-byte line). Two widths whose rows no chunk XOR can separate:
///   cols = 16 (32-byte rows, four a line): row r is stored in slot 4 (r / 4) + (r + r / 4) % 4, so rows
///     4 or 8 apart sit in different quarters of a line and a copy pass (4 rows) fills one line;
///   cols = 48 (96-byte rows): padded to 128 bytes (MfmaLdsRowElems: 64 elements, a third more LDS) with
///     chunk c of row r in slot (c + 2 (r / 4 % 4) + 6 (r % 4)) % 8: rows 4 or 8 apart have their 16-column
///     windows 2 or 4 slots apart, and the 8 chunks of a copy pass (which span 2 or 3 rows) fill 8 slots.
/// 8-bit tiles (fp8 K x N B: 1-byte column reads, rows 8 apart in a pass, 16 apart k-packed) of 64 or a
/// multiple of 128 columns flip bit 0 of the 16-byte chunk index by t3 ^ t4. Other widths are row-major.
Expr MfmaKRowsOffset(const Expr& row, const Expr& col, int64_t cols, int elem_bytes);
int64_t MfmaKRowsOffsetInt(int64_t row, int64_t col, int64_t cols, int elem_bytes);
/// The elements an LDS row of a k-rows tile of cols columns takes (cols, or more where it is padded).
int64_t MfmaLdsRowElems(int64_t cols, int elem_bytes);

/// LDS tiles written from an MFMA accumulator 4 columns (8 bytes) a lane: a staged register operand
/// (FlashAttention's P) and an epilogue tile (its O_shared). An 8-byte pass is 16 lanes holding rows
/// 0..15 of one tile and the same 4 columns: the low (or high) half of one 16-byte chunk in every row,
/// so a tile of whole 16-byte chunks serves them from 16 banks (2-way) whatever the chunk swizzle.
/// These tiles take the 16-byte chunk swizzle (SwizzledOffset) with the two 8-byte halves of each chunk
/// swapped in rows whose bit 3 is set: rows r and r + 8 then use different halves and the pass is
/// conflict-free; the chunks stay whole (16-byte copies and MFMA reads read an aligned chunk and swap
/// its halves back in registers where MfmaHalfSwapped(row) is 1). 16-bit tiles of 16, 32 or a multiple
/// of 64 columns (MfmaHalfSwapFits); other tiles are not changed.
bool MfmaHalfSwapFits(int64_t cols, int elem_bytes);
Expr MfmaHalfSwapOffset(const Expr& row, const Expr& col, int64_t cols, int elem_bytes);
int64_t MfmaHalfSwapOffsetInt(int64_t row, int64_t col, int64_t cols, int elem_bytes);
/// 1 where row's chunks have their halves swapped, else 0.
Expr MfmaHalfSwapped(const Expr& row);

}  // namespace tl
