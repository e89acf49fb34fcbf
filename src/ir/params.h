// Queries on a function's parameters that every code generator and the launch spec share.
#pragma once
#include <vector>

#include "ir/function.h"

namespace tl {
/// Symbolic size vars of a function, in order of first appearance in parameter shapes (a scalar
/// parameter is not one: its value is an argument). The generated entry points take their values in
/// this order.
std::vector<Var> SymbolicVars(const PrimFunc& f);
}  // namespace tl
