// Hopper (sm_90/sm_90a) layouts: the wgmma accumulator fragment and the shared-tile layout that
// wgmma's matrix descriptors (and TMA's swizzle modes) can address.
//
// The wgmma accumulator of one m64nNk16 instruction, from the PTX ISA's figure for the D matrix
// (.f32 accumulators): warp w of the warp group holds rows 16*w + g and 16*w + g + 8 (g = lane/4),
// register d[4*j + r] holds column 8*j + 2*(lane%4) + (r%2) of row 16*w + g + 8*(r/2). Per warp this
// is the m16n8 accumulator of mma.sync repeated over N/8 column tiles, so the fragment is an
// "mma_C" layout whose warps' m16 tiles are interleaved: a block of wgm x wgn warp groups (wm = 4*wgm
// warps along M) gives warp w its i-th m16 tile at rows i*16*wm + (w % wm)*16. Instruction i of warp
// group (a, b) then covers rows i*64*wgm + 64*a.. of the tile, which a descriptor can address. The
// fragment's params are {M, N, wm, wn, 1}; the trailing 1 marks the interleaving.
#pragma once
#include "layout/fragment.h"

namespace tl {

/// The accumulator of wgmma m64nNk16 over an M x N tile held by wgm x wgn warp groups.
Fragment WgmmaAccumulator(int64_t M, int64_t N, int64_t wgm, int64_t wgn);
/// The row vector a wgmma accumulator reduces to along dim 1 (as MmaRows for mma.sync).
Fragment WgmmaRows(int64_t M, int64_t wgm, int64_t wgn);
/// True when an "mma_C" / "mma_rows" fragment has interleaved (wgmma) m16 tiles.
bool IsWgmmaLayout(const Fragment& f);
/// The row-vector layout of a reduction along dim 1 of accumulator `acc` (mma.sync or wgmma).
Fragment RowsOfAccumulator(const Fragment& acc);

/// Bytes of the swizzle pattern a [rows, cols] shared tile of `elem_bytes`-byte elements is stored
/// in on sm_90 (128, 64 or 32), or 0 when the tile has no wgmma-addressable layout: rows of 32 or
/// 64 bytes use the 32B / 64B modes, rows of a multiple of 128 bytes are cut into 128-byte-wide
/// panels stored one after the other, each in the 128B mode.
int64_t HopperSwizzleBytes(int64_t rows, int64_t cols, int elem_bytes);
/// Physical element offset of (row, col) in such a tile on sm_90+. Equal to SwizzledOffset (the
/// sm_80 layout) except for rows wider than 128 bytes, which are cut into panels.
Expr HopperSharedOffset(const Expr& row, const Expr& col, int64_t rows, int64_t cols, int elem_bytes);

}  // namespace tl
