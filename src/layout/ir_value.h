// Building and reading the IR values layouts are stored as (`T.fragment(...)`, `T.shared_layout(...)`):
// calls whose arguments are T.list(...) calls, int64 constants, strings and placeholder vars. A malformed
// value is a compiler bug (the values are written by the compiler or checked by the front end).
#pragma once
#include <string>
#include <vector>

#include "ir/expr.h"
#include "support/error.h"

namespace tl {
namespace ir_value {

inline Expr List(const std::vector<Expr>& v) { return Call(DataType::Handle(), "list", v); }
inline std::vector<Expr> Ints(const std::vector<int64_t>& v) {
  std::vector<Expr> r;
  for (auto x : v) r.push_back(IntImm(DataType::Int(64), x));
  return r;
}
inline const std::vector<Expr>& ListArgs(const Expr& e, const char* what) {
  auto* c = As<CallNode>(e);
  TL_ICHECK(c && c->op == "list", std::string("malformed ") + what + ": expected a T.list");
  return c->args;
}
inline int64_t IntArg(const Expr& e, const char* what) {
  int64_t v;
  TL_ICHECK(AsConstInt(e, &v), std::string("malformed ") + what + ": expected an integer");
  return v;
}
inline std::string StrArg(const Expr& e, const char* what) {
  auto* s = As<StringImmNode>(e);
  TL_ICHECK(s, std::string("malformed ") + what + ": expected a string");
  return s->value;
}
inline Var VarArg(const Expr& e, const char* what) {
  TL_ICHECK(e && e->kind == ExprKind::kVar,
            std::string("malformed ") + what + ": expected a placeholder var");
  return std::static_pointer_cast<const VarNode>(e);
}

}  // namespace ir_value
}  // namespace tl
