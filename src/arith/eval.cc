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
      }
      return false;
    }
    default: return false;
  }
}

}  // namespace tl
