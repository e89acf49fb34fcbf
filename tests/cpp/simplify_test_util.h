// Helpers shared by the simplifier's tests: short constructors, constant / structural-equality
// assertions, and a reference evaluator with floor semantics.
#pragma once
#include <gtest/gtest.h>
#include <cstdlib>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>
#include "arith/simplify.h"
#include "ir/expr.h"
#include "ir/printer.h"
#include "ir/stmt.h"
#include "ir/structural.h"

namespace tl {
namespace simplify_test {

inline Expr FDiv(Expr a, Expr b) { return Binary(BinaryOp::kFloorDiv, std::move(a), std::move(b)); }
inline Expr FMod(Expr a, Expr b) { return Binary(BinaryOp::kFloorMod, std::move(a), std::move(b)); }
inline Expr TDiv(Expr a, Expr b) { return Binary(BinaryOp::kDiv, std::move(a), std::move(b)); }
inline Expr TMod(Expr a, Expr b) { return Binary(BinaryOp::kMod, std::move(a), std::move(b)); }
inline Expr Min(Expr a, Expr b) { return Binary(BinaryOp::kMin, std::move(a), std::move(b)); }
inline Expr Max(Expr a, Expr b) { return Binary(BinaryOp::kMax, std::move(a), std::move(b)); }
inline Expr Cmp(BinaryOp op, Expr a, Expr b) { return Binary(op, std::move(a), std::move(b)); }

// Asserts that `e` is the integer constant `v`.
#define EXPECT_CONST(e, v)                                                        \
  do {                                                                            \
    Expr e_ = (e);                                                                \
    int64_t got_;                                                                 \
    EXPECT_TRUE(AsConstInt(e_, &got_) && got_ == (v)) << "got " << PrintExpr(e_); \
  } while (0)

#define EXPECT_SEQUAL(a, b)                                                             \
  do {                                                                                  \
    Expr a_ = (a), b_ = (b);                                                            \
    EXPECT_TRUE(StructuralEqual(a_, b_)) << PrintExpr(a_) << "  vs  " << PrintExpr(b_); \
  } while (0)

// ---------------------------------------------------------------------- reference evaluator

inline int64_t RefFloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0))) --q;
  return q;
}
inline int64_t RefFloorMod(int64_t a, int64_t b) { return a - RefFloorDiv(a, b) * b; }

using Env = std::map<const VarNode*, int64_t>;

// Evaluates an integer (or bool) expression; fails the test on anything it cannot evaluate.
inline int64_t Eval(const Expr& e, const Env& env) {
  int64_t c;
  if (AsConstInt(e, &c)) return c;
  if (auto* v = As<VarNode>(e)) {
    auto it = env.find(v);
    if (it == env.end()) {
      ADD_FAILURE() << "unbound var " << v->name;
      return 0;
    }
    return it->second;
  }
  if (auto* n = As<NotNode>(e)) return !Eval(n->a, env);
  if (auto* s = As<SelectNode>(e))
    return Eval(s->cond, env) ? Eval(s->true_value, env) : Eval(s->false_value, env);
  if (auto* cst = As<CastNode>(e)) {
    int64_t x = Eval(cst->value, env);
    return cst->dtype.is_bool() ? x != 0 : x;
  }
  auto* b = As<BinaryNode>(e);
  if (!b) {
    ADD_FAILURE() << "cannot evaluate " << PrintExpr(e);
    return 0;
  }
  int64_t x = Eval(b->a, env), y = Eval(b->b, env);
  switch (b->op) {
    case BinaryOp::kAdd: return x + y;
    case BinaryOp::kSub: return x - y;
    case BinaryOp::kMul: return x * y;
    case BinaryOp::kDiv:
    case BinaryOp::kMod:
    case BinaryOp::kFloorDiv:
    case BinaryOp::kFloorMod:
      if (y == 0) {
        ADD_FAILURE() << "division by zero in " << PrintExpr(e);
        return 0;
      }
      break;
    default: break;
  }
  switch (b->op) {
    case BinaryOp::kDiv: return x / y;
    case BinaryOp::kMod: return x % y;
    case BinaryOp::kFloorDiv: return RefFloorDiv(x, y);
    case BinaryOp::kFloorMod: return RefFloorMod(x, y);
    case BinaryOp::kMin: return std::min(x, y);
    case BinaryOp::kMax: return std::max(x, y);
    case BinaryOp::kEQ: return x == y;
    case BinaryOp::kNE: return x != y;
    case BinaryOp::kLT: return x < y;
    case BinaryOp::kLE: return x <= y;
    case BinaryOp::kGT: return x > y;
    case BinaryOp::kGE: return x >= y;
    case BinaryOp::kAnd: return x && y;
    case BinaryOp::kOr: return x || y;
    default: break;
  }
  return 0;
}

}  // namespace simplify_test
}  // namespace tl
