// How deeply expressions nest. Every recursive walk of the compiler (simplifier, printer, code
// generators) uses one C++ stack frame or more per level, so a program whose expressions nest
// beyond a fixed depth is rejected up front with a user error instead of overflowing the stack.
#pragma once
#include "ir/function.h"

namespace tl {

/// Deepest nesting the compiler accepts in one expression.
constexpr int64_t kMaxExprDepth = 1000;

/// Longest path from `e` down to a leaf (a constant or var has depth 1). Computed without
/// recursion; a subtree shared by several parents is measured once.
int64_t ExprDepth(const Expr& e);

/// Throws UserError (kSyntax), at the span of the statement holding it, if any expression of `f`
/// (body, buffer shapes included) nests deeper than kMaxExprDepth.
void CheckExprDepth(const PrimFunc& f);

}  // namespace tl
