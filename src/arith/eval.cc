#include "arith/eval.h"

#include <algorithm>

namespace tl {
namespace {
int64_t FloorDivI(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
int64_t FloorModI(int64_t a, int64_t b) { return a - FloorDivI(a, b) * b; }
}  // namespace

int64_t WrapToInt(DataType t, int64_t v) {
  if (t.is_bool()) return v != 0;
  if (t.bits() >= 64) return v;
  uint64_t mask = (uint64_t(1) << t.bits()) - 1;
  uint64_t u = static_cast<uint64_t>(v) & mask;
  if (t.is_int() && ((u >> (t.bits() - 1)) & 1)) u |= ~mask;
  return static_cast<int64_t>(u);
}

int64_t EvalBitwise(BinaryOp op, DataType t, int64_t x, int64_t y) {
  const int bits = t.bits();
  // The bits of x as an unsigned value of t's width (x may be held sign-extended).
  const uint64_t ux =
      bits >= 64 ? static_cast<uint64_t>(x) : static_cast<uint64_t>(x) & ((uint64_t(1) << bits) - 1);
  const uint64_t count =
      static_cast<uint64_t>(WrapToInt(t, y)) & (bits >= 64 ? ~uint64_t(0) : ((uint64_t(1) << bits) - 1));
  const bool in_range = t.is_int() ? WrapToInt(t, y) >= 0 && WrapToInt(t, y) < bits : count < uint64_t(bits);
  switch (op) {
    case BinaryOp::kBitAnd: return WrapToInt(t, x & y);
    case BinaryOp::kBitOr: return WrapToInt(t, x | y);
    case BinaryOp::kBitXor: return WrapToInt(t, x ^ y);
    case BinaryOp::kShl: return in_range ? WrapToInt(t, static_cast<int64_t>(ux << count)) : 0;
    case BinaryOp::kShr:
      if (t.is_int()) {
        int64_t sx = WrapToInt(t, x);
        return in_range ? (sx >> count)
                        : (sx < 0 ? -1 : 0);  // >> on int64_t is arithmetic (C++20; all our compilers)
      }
      return in_range ? WrapToInt(t, static_cast<int64_t>(ux >> count)) : 0;
    default: break;
  }
  TL_ICHECK(false, "EvalBitwise of ", BinaryOpName(op));
  return 0;
}

bool EvalInt(const Expr& e, const std::map<const VarNode*, int64_t>& env, int64_t* out) {
  switch (e->kind) {
    case ExprKind::kIntImm: *out = static_cast<const IntImmNode*>(e.get())->value; return true;
    case ExprKind::kVar: {
      auto it = env.find(static_cast<const VarNode*>(e.get()));
      if (it == env.end()) return false;
      *out = it->second;
      return true;
    }
    case ExprKind::kCast: {
      auto* c = static_cast<const CastNode*>(e.get());
      return c->dtype.is_int() || c->dtype.is_uint() || c->dtype.is_bool() ? EvalInt(c->value, env, out)
                                                                           : false;
    }
    case ExprKind::kNot: {
      int64_t a;
      if (!EvalInt(static_cast<const NotNode*>(e.get())->a, env, &a)) return false;
      *out = !a;
      return true;
    }
    case ExprKind::kSelect: {
      auto* s = static_cast<const SelectNode*>(e.get());
      int64_t c;
      if (!EvalInt(s->cond, env, &c)) return false;
      return EvalInt(c ? s->true_value : s->false_value, env, out);
    }
    case ExprKind::kCall: {
      auto* c = static_cast<const CallNode*>(e.get());
      if (c->op == "tl.bitwise_xor" && c->args.size() == 2) {
        int64_t a, b;
        if (!EvalInt(c->args[0], env, &a) || !EvalInt(c->args[1], env, &b)) return false;
        *out = a ^ b;
        return true;
      }
      return false;
    }
    case ExprKind::kBinary: {
      auto* b = static_cast<const BinaryNode*>(e.get());
      int64_t x, y;
      if (!EvalInt(b->a, env, &x) || !EvalInt(b->b, env, &y)) return false;
      switch (b->op) {
        case BinaryOp::kAdd: *out = x + y; return true;
        case BinaryOp::kSub: *out = x - y; return true;
        case BinaryOp::kMul: *out = x * y; return true;
        case BinaryOp::kDiv:
          if (!y) return false;
          *out = x / y;
          return true;
        case BinaryOp::kMod:
          if (!y) return false;
          *out = x % y;
          return true;
        case BinaryOp::kFloorDiv:
          if (!y) return false;
          *out = FloorDivI(x, y);
          return true;
        case BinaryOp::kFloorMod:
          if (!y) return false;
          *out = FloorModI(x, y);
          return true;
        case BinaryOp::kMin: *out = std::min(x, y); return true;
        case BinaryOp::kMax: *out = std::max(x, y); return true;
        case BinaryOp::kEQ: *out = x == y; return true;
        case BinaryOp::kNE: *out = x != y; return true;
        case BinaryOp::kLT: *out = x < y; return true;
        case BinaryOp::kLE: *out = x <= y; return true;
        case BinaryOp::kGT: *out = x > y; return true;
        case BinaryOp::kGE: *out = x >= y; return true;
        case BinaryOp::kAnd: *out = x && y; return true;
        case BinaryOp::kOr: *out = x || y; return true;
        case BinaryOp::kBitAnd:
        case BinaryOp::kBitOr:
        case BinaryOp::kBitXor:
        case BinaryOp::kShl:
        case BinaryOp::kShr:
          if (!b->dtype.is_integer()) return false;
          *out = EvalBitwise(b->op, b->dtype, x, y);
          return true;
      }
      return false;
    }
    default: return false;
  }
}

}  // namespace tl
