// RasterizeBlocks: honours T.use_swizzle(panel_size, order) (function attr "tl.use_swizzle"). Blocks
// are handed out panel by panel — a panel is `panel` rows of the grid (order row) or columns (col) —
// and within a panel column by column (row by row), so that consecutive blocks share operand tiles in
// L2. The block indices the body sees are a bijection of the launch indices, bound by lets at the top
// of the kernel body. Requires a kernel with at least two grid dimensions; otherwise it is a no-op
// with nothing to rasterise. Runs on tile IR, on every target.
#pragma once
#include "ir/function.h"

namespace tl {

PrimFunc RasterizeBlocks(const PrimFunc& f);

}  // namespace tl
