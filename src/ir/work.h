// WorkOf: the arithmetic and global-memory traffic a function's tile ops describe (TileLang's
// tilelang.tools.Analyzer), counted over its grids and serial loops.
#pragma once
#include <cstdint>
#include <string>

#include "ir/function.h"

namespace tl {

struct Work {
  int64_t flops = 0;         // 2 * M * N * K per T.gemm call
  int64_t global_bytes = 0;  // bytes of each T.copy whose source or destination is a global tensor
  int64_t blocks = 0;        // blocks of every kernel, summed
  std::string unknown;       // the first loop or grid extent that is not a constant ("" when none)
};

/// Counts every T.gemm and global T.copy times the trip counts of the loops around it and the blocks of
/// its kernel. A loop or grid extent that is not a constant counts once and is named in `unknown`.
Work WorkOf(const PrimFunc& f);

}  // namespace tl
