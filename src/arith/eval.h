// Evaluating integer expressions on concrete values (launch grids, shapes, layout tables).
#pragma once
#include <map>

#include "ir/expr.h"

namespace tl {
/// Evaluates an integer expression with the given var values (floor semantics for floordiv and
/// floormod, C semantics for div and mod); false when it cannot (an unbound var, a load, a call
/// other than tl.bitwise_xor, a division by zero).
bool EvalInt(const Expr& e, const std::map<const VarNode*, int64_t>& env, int64_t* out);

/// v wrapped to the width of the integer type t (two's complement, sign-extended when signed).
int64_t WrapToInt(DataType t, int64_t v);

/// x OP y for a bitwise op (IsBitwise) on values of the integer type t, wrapped to t. A shift count
/// outside [0, bits(t)) gives 0 for <<, and for >> the sign fill on signed types and 0 on unsigned
/// ones: what PTX's shl / shr give, since they clamp the count (docs/semantics.md).
int64_t EvalBitwise(BinaryOp op, DataType t, int64_t x, int64_t y);
}  // namespace tl
