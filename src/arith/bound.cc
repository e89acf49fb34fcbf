// BoundOf: the interval an integer expression lies in, given intervals of its vars.
#include <algorithm>
#include <optional>

#include "arith/simplify.h"

namespace tl {
namespace {

int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
int64_t FloorMod(int64_t a, int64_t b) { return a - FloorDiv(a, b) * b; }

std::optional<int64_t> AddO(std::optional<int64_t> a, std::optional<int64_t> b) {
  if (!a || !b) return std::nullopt;
  return *a + *b;
}

Interval MulI(const Interval& a, const Interval& b) {
  if (!(a.lo && a.hi && b.lo && b.hi)) {
    // Non-negative times non-negative stays non-negative.
    if (a.lo && *a.lo >= 0 && b.lo && *b.lo >= 0) return {*a.lo * *b.lo, std::nullopt};
    return {};
  }
  int64_t c[4] = {*a.lo * *b.lo, *a.lo * *b.hi, *a.hi * *b.lo, *a.hi * *b.hi};
  return {*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
}

// The smallest 2^k - 1 that is >= v (v >= 0).
int64_t OnesCover(int64_t v) {
  int64_t top = 1;
  while (top <= v && top < (int64_t(1) << 62)) top <<= 1;
  return top - 1;
}

Interval BitwiseI(BinaryOp op, DataType t, const Interval& x, const Interval& y) {
  const bool xn = x.lo && *x.lo >= 0, yn = y.lo && *y.lo >= 0;
  switch (op) {
    case BinaryOp::kBitAnd:
      // A non-negative operand bounds the result: its zero bits stay zero.
      if (xn && yn && x.hi && y.hi) return {int64_t(0), std::min(*x.hi, *y.hi)};
      if (xn && x.hi) return {int64_t(0), x.hi};
      if (yn && y.hi) return {int64_t(0), y.hi};
      if (xn || yn) return {int64_t(0), std::nullopt};
      return {};
    case BinaryOp::kBitOr:
    case BinaryOp::kBitXor:
      if (xn && yn && x.hi && y.hi) return {int64_t(0), OnesCover(std::max(*x.hi, *y.hi))};
      if (xn && yn) return {int64_t(0), std::nullopt};
      return {};
    case BinaryOp::kShl: {
      if (!y.IsConst() || *y.lo < 0 || *y.lo >= std::min(t.bits(), 62) || !x.lo || !x.hi) return {};
      const int64_t lim = int64_t(1) << (62 - *y.lo);  // no overflow of the interval arithmetic
      if (*x.lo <= -lim || *x.hi >= lim) return {};
      Interval r{*x.lo * (int64_t(1) << *y.lo), *x.hi * (int64_t(1) << *y.lo)};
      // The shifted value must fit the type, or it wraps.
      if (t.bits() < 64) {
        const int64_t tlo = t.is_int() ? -(int64_t(1) << (t.bits() - 1)) : 0;
        const int64_t thi = t.is_int() ? (int64_t(1) << (t.bits() - 1)) - 1 : (int64_t(1) << t.bits()) - 1;
        if (*r.lo < tlo || *r.hi > thi) return {};
      }
      return r;
    }
    case BinaryOp::kShr:
      if (y.IsConst() && *y.lo >= 0 && *y.lo < std::min(t.bits(), 63) && (t.is_int() || xn)) {
        const int64_t d = int64_t(1) << *y.lo;
        return {x.lo ? std::optional<int64_t>(FloorDiv(*x.lo, d)) : std::nullopt,
                x.hi ? std::optional<int64_t>(FloorDiv(*x.hi, d)) : std::nullopt};
      }
      // Any count: a non-negative value only shrinks (an out-of-range count gives 0).
      if (xn) return {int64_t(0), x.hi};
      return {};
    default: return {};
  }
}

}  // namespace

Interval BoundOf(const Expr& e, const BoundMap& bounds) {
  int64_t c;
  if (AsConstInt(e, &c)) return {c, c};
  if (auto* v = As<VarNode>(e)) {
    auto it = bounds.find(v);
    Interval r = it != bounds.end() ? it->second : Interval{};
    if (v->dtype.is_uint()) {  // an unsigned value is never negative
      if (!r.lo || *r.lo < 0) r.lo = 0;
      if (v->dtype.bits() < 63 && !r.hi) r.hi = (int64_t(1) << v->dtype.bits()) - 1;
    }
    return r;
  }
  if (auto* call = As<CallNode>(e); call && call->op == "tl.thread_idx") return {int64_t(0), std::nullopt};
  if (auto* cast = As<CastNode>(e)) {
    if (!cast->dtype.is_integer() || !cast->value->dtype.is_integer()) return {};
    Interval v = BoundOf(cast->value, bounds);
    // The operand's bounds hold only if every value in them survives the conversion; otherwise
    // the cast may wrap anywhere in the target type's range.
    int bits = cast->dtype.bits();
    if (bits >= 64) {
      if (cast->dtype.is_int() || (v.lo && *v.lo >= 0)) return v;
      return {int64_t(0), std::nullopt};
    }
    int64_t tlo = cast->dtype.is_int() ? -(int64_t(1) << (bits - 1)) : 0;
    int64_t thi = cast->dtype.is_int() ? (int64_t(1) << (bits - 1)) - 1 : (int64_t(1) << bits) - 1;
    if (v.lo && v.hi && *v.lo >= tlo && *v.hi <= thi) return v;
    return {tlo, thi};
  }
  if (auto* call = As<CallNode>(e); call && call->op == "tl.bitwise_xor" && call->args.size() == 2) {
    // x ^ y of non-negative values below 2^k stays in [0, 2^k).
    Interval x = BoundOf(call->args[0], bounds), y = BoundOf(call->args[1], bounds);
    if (!x.lo || !y.lo || !x.hi || !y.hi || *x.lo < 0 || *y.lo < 0) return {};
    int64_t top = 1;
    while (top <= std::max(*x.hi, *y.hi) && top < (int64_t(1) << 62)) top <<= 1;
    return {int64_t(0), top - 1};
  }
  auto* b = As<BinaryNode>(e);
  if (!b || !e->dtype.is_integer()) return {};
  Interval x = BoundOf(b->a, bounds), y = BoundOf(b->b, bounds);
  switch (b->op) {
    case BinaryOp::kAdd: return {AddO(x.lo, y.lo), AddO(x.hi, y.hi)};
    case BinaryOp::kSub: {
      auto neg = [](std::optional<int64_t> v) { return v ? std::optional<int64_t>(-*v) : std::nullopt; };
      return {AddO(x.lo, neg(y.hi)), AddO(x.hi, neg(y.lo))};
    }
    case BinaryOp::kMul: return MulI(x, y);
    case BinaryOp::kFloorDiv:
      if (y.IsConst() && *y.lo > 0) {
        return {x.lo ? std::optional<int64_t>(FloorDiv(*x.lo, *y.lo)) : std::nullopt,
                x.hi ? std::optional<int64_t>(FloorDiv(*x.hi, *y.lo)) : std::nullopt};
      }
      return {};
    case BinaryOp::kFloorMod:
      if (y.IsConst() && *y.lo > 0) {
        if (x.lo && x.hi && FloorDiv(*x.lo, *y.lo) == FloorDiv(*x.hi, *y.lo))
          return {FloorMod(*x.lo, *y.lo), FloorMod(*x.hi, *y.lo)};
        return {int64_t(0), *y.lo - 1};
      }
      return {};
    case BinaryOp::kBitAnd:
    case BinaryOp::kBitOr:
    case BinaryOp::kBitXor:
    case BinaryOp::kShl:
    case BinaryOp::kShr: return BitwiseI(b->op, e->dtype, x, y);
    case BinaryOp::kMin: {
      auto lo = x.lo && y.lo ? std::optional<int64_t>(std::min(*x.lo, *y.lo)) : std::nullopt;
      std::optional<int64_t> hi =
          x.hi && y.hi ? std::optional<int64_t>(std::min(*x.hi, *y.hi)) : (x.hi ? x.hi : y.hi);
      return {lo, hi};
    }
    case BinaryOp::kMax: {
      std::optional<int64_t> lo =
          x.lo && y.lo ? std::optional<int64_t>(std::max(*x.lo, *y.lo)) : (x.lo ? x.lo : y.lo);
      auto hi = x.hi && y.hi ? std::optional<int64_t>(std::max(*x.hi, *y.hi)) : std::nullopt;
      return {lo, hi};
    }
    default: return {};
  }
}

Interval LoopVarRange(const Expr& min, const Expr& extent, const BoundMap& bounds) {
  Interval lo = BoundOf(min, bounds), len = BoundOf(extent, bounds);
  std::optional<int64_t> hi;
  if (lo.hi && len.hi) hi = *lo.hi + *len.hi - 1;
  Interval end = BoundOf(Simplify(Binary(BinaryOp::kAdd, min, extent), bounds), bounds);
  if (end.hi && (!hi || *end.hi - 1 < *hi)) hi = *end.hi - 1;
  return {lo.lo, hi};
}

}  // namespace tl
