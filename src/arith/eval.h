// Evaluating integer expressions on concrete values (launch grids, shapes, layout tables).
#pragma once
#include <map>

#include "ir/expr.h"

namespace tl {
/// Evaluates an integer expression with the given var values (floor semantics for floordiv and
/// floormod, C semantics for div and mod); false when it cannot (an unbound var, a load, a call
/// other than tl.bitwise_xor, a division by zero).
bool EvalInt(const Expr& e, const std::map<const VarNode*, int64_t>& env, int64_t* out);
}  // namespace tl
