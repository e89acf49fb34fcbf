// The arithmetic of T.reduce_* shared by every backend's lowering: the identity each reduction
// starts from, how two partials combine, and how a source element enters (cast, |x|).
#pragma once
#include <cmath>

#include "ir/stmt.h"

namespace tl {

/// The value a reduction of kind `k` over dtype `t` starts from.
inline Expr ReduceIdentity(ReduceKind k, DataType t) {
  switch (k) {
    case ReduceKind::kSum:
    case ReduceKind::kAbsSum:
    case ReduceKind::kAbsMax: return t.is_float() ? FloatImm(t, 0.0) : IntImm(t, 0);
    case ReduceKind::kMax: return t.is_float() ? FloatImm(t, -INFINITY) : Call(t, "min_value", {});
    case ReduceKind::kMin: return t.is_float() ? FloatImm(t, INFINITY) : Call(t, "max_value", {});
  }
  return nullptr;
}

/// Two partial results combined.
inline Expr ReduceCombine(ReduceKind k, const Expr& a, const Expr& b) {
  switch (k) {
    case ReduceKind::kSum:
    case ReduceKind::kAbsSum: return Binary(BinaryOp::kAdd, a, b);
    case ReduceKind::kMax:
    case ReduceKind::kAbsMax: return Binary(BinaryOp::kMax, a, b);
    case ReduceKind::kMin: return Binary(BinaryOp::kMin, a, b);
  }
  return nullptr;
}

/// A source element as it enters the reduction into dtype `t`.
inline Expr ReduceElement(ReduceKind k, Expr v, DataType t) {
  if (v->dtype != t) v = Cast(t, v);
  if (k == ReduceKind::kAbsSum || k == ReduceKind::kAbsMax) v = Call(t, "abs", {v});
  return v;
}

}  // namespace tl
