// Compile-time rejection of on-chip buffer accesses (shared, fragment, local) that are provably
// out of range: an index of a static dimension whose every possible value (given the loop and
// block ranges) lies outside [0, extent). Such an access can only corrupt memory. Accesses of
// tensors (global buffers) are checked, and guarded, by the InjectBoundGuards pass.
#pragma once
#include "ir/function.h"

namespace tl {

/// Throws UserError (kType) at the statement holding the first provably out-of-range access.
void CheckStaticIndices(const PrimFunc& f);

}  // namespace tl
