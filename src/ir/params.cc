#include "ir/params.h"

#include <functional>
#include <set>

namespace tl {

std::vector<Var> SymbolicVars(const PrimFunc& f) {
  std::vector<Var> out;
  std::set<const VarNode*> seen;
  // Collect by walking shapes; keep owning pointers by looking the var up in the shape exprs. A scalar
  // parameter is not a symbol (its value is an argument).
  for (auto& p : f->params)
    if (!p.buffer && p.var) seen.insert(p.var.get());
  for (auto& p : f->params) {
    if (!p.buffer) continue;
    for (auto& d : p.buffer->shape) {
      std::function<void(const Expr&)> walk = [&](const Expr& e) {
        if (auto* v = As<VarNode>(e)) {
          if (seen.insert(v).second) out.push_back(std::static_pointer_cast<const VarNode>(e));
          return;
        }
        if (auto* b = As<BinaryNode>(e)) {
          walk(b->a);
          walk(b->b);
        }
        if (auto* c = As<CastNode>(e)) walk(c->value);
      };
      walk(d);
    }
  }
  return out;
}

}  // namespace tl
