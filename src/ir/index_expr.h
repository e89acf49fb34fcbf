// Short spellings for the index arithmetic that layouts and lowerings build (constants, floor
// division and modulo by a constant): `using namespace tl::index_expr;` inside a .cc file.
#pragma once
#include <cstdint>

#include "ir/expr.h"

namespace tl {
namespace index_expr {

inline Expr C(int64_t v) { return Int(v); }
inline Expr Div(const Expr& a, int64_t b) { return Binary(BinaryOp::kFloorDiv, a, C(b)); }
inline Expr Mod(const Expr& a, int64_t b) { return Binary(BinaryOp::kFloorMod, a, C(b)); }
/// An iteration number counted in a register from 0 (a pipeline's across the runs of its enclosing loops): as
/// uint32, so that bound analysis knows it is not negative and its stage and phase (`g % s`, `g / s % 2`) are a
/// mask and a shift rather than floor division's sign fix-ups. Counts stay below 2^31.
inline Expr IterationNumber(const Expr& g) { return Cast(DataType::UInt(32), g); }

}  // namespace index_expr
}  // namespace tl
