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

}  // namespace index_expr
}  // namespace tl
