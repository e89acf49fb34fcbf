// Compile-time rejection of buffer accesses that are provably out of range: an index of a
// static dimension whose every possible value (given the loop and block ranges) lies outside
// [0, extent). Such an access can only corrupt memory (B[-1], x[i + 1000] on a (128,) buffer).
// Accesses that are only possibly out of range are left to the guards of the lowering.
#pragma once
#include "ir/function.h"

namespace tl {

/// Throws UserError (kType) at the statement holding the first provably out-of-range access.
void CheckStaticIndices(const PrimFunc& f);

}  // namespace tl
