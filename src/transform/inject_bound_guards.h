// InjectBoundGuards: element-wise accesses of global tensors outside the tensor are made safe, on
// every target, as TileLang does: a store that may fall outside is skipped there, a load that may
// fall outside reads 0. Accesses proven in bounds (from loop ranges, block indices and enclosing
// `if` conditions) are left alone, so kernels whose sizes divide the tiles carry no checks. An
// access proven always outside the tensor is a compile error at its line.
// Tile ops keep their own guards (at both ends of the tensor); a global region of one that starts at a
// constant negative index is a compile error at its line. Requires tile IR; runs before the target's
// lowering.
#pragma once
#include "ir/function.h"

namespace tl {

PrimFunc InjectBoundGuards(const PrimFunc& f);

}  // namespace tl
