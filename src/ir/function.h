// PrimFunc: a kernel entry with tensor (Buffer) and scalar parameters and a body.
#pragma once
#include "ir/stmt.h"

namespace tl {

/// A parameter is either a tensor (buffer set) or a scalar (var only).
struct Param {
  Var var;
  Buffer buffer;  // null for scalar parameters
};

struct PrimFuncNode {
  PrimFuncNode(std::string n, std::vector<Param> p, Stmt b, std::map<std::string, std::string> a, Span s)
      : name(std::move(n)),
        params(std::move(p)),
        body(std::move(b)),
        attrs(std::move(a)),
        span(std::move(s)) {}
  const std::string name;
  const std::vector<Param> params;
  const Stmt body;
  const std::map<std::string, std::string> attrs;
  const Span span;
};
using PrimFunc = std::shared_ptr<const PrimFuncNode>;

inline PrimFunc MakePrimFunc(std::string name, std::vector<Param> params, Stmt body,
                             std::map<std::string, std::string> attrs = {}, Span span = {}) {
  return std::make_shared<PrimFuncNode>(std::move(name), std::move(params), std::move(body), std::move(attrs),
                                        std::move(span));
}
inline PrimFunc WithBody(const PrimFunc& f, Stmt body) {
  if (body == f->body) return f;
  return MakePrimFunc(f->name, f->params, std::move(body), f->attrs, f->span);
}

/// A function whose body launches several T.Kernel scopes one after another, as one function per kernel
/// (each keeps every parameter and the statements around the kernels; the i-th is named `<name>_kernel<i>`);
/// a function with at most one kernel is returned alone.
std::vector<PrimFunc> SplitKernels(const PrimFunc& f);

}  // namespace tl
