// Argument readers shared by the emulator's builtin implementations (intrinsics*.cc): a malformed
// call is a user error naming the builtin.
#pragma once
#include <string>

#include "emulator/executor.h"

namespace tl::emu {

[[noreturn]] inline void Bad(const CallNode* c, const std::string& why) {
  TL_USER_ERROR(kUnsupported, Span{}, "emulator: malformed call of ", c->op, ": ", why);
}

inline int64_t ConstArg(const CallNode* c, size_t i) {
  int64_t v;
  if (i >= c->args.size() || !AsConstInt(c->args[i], &v))
    Bad(c, "argument " + std::to_string(i) + " must be an integer literal");
  return v;
}

/// A memory operand `&buf[idx]`: a BufferLoad, possibly wrapped in address_of.
inline const BufferLoadNode* Operand(const CallNode* c, size_t i) {
  if (i >= c->args.size()) Bad(c, "missing argument " + std::to_string(i));
  Expr e = c->args[i];
  if (auto* a = As<CallNode>(e))
    if (a->op == "address_of" && a->args.size() == 1) e = a->args[0];
  auto* l = As<BufferLoadNode>(e);
  if (!l) Bad(c, "argument " + std::to_string(i) + " must be a buffer element (memory operand)");
  return l;
}

inline const std::string& StrArg(const CallNode* c, size_t i) {
  auto* s = i < c->args.size() ? As<StringImmNode>(c->args[i]) : nullptr;
  if (!s) Bad(c, "argument " + std::to_string(i) + " must be a string literal");
  return s->value;
}

}  // namespace tl::emu
