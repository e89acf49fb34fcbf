// HoistWorkspaces; see hoist_workspaces.h.
#include "transform/hoist_workspaces.h"

#include "ir/functor.h"

namespace tl {

PrimFunc HoistWorkspaces(const PrimFunc& f) {
  struct Mut : IRMutator {
    std::vector<Buffer> hoisted;
    Stmt VisitKernel(const Stmt& s, const KernelNode* k) override {
      Stmt out = IRMutator::VisitKernel(s, k);
      auto* m = As<KernelNode>(out);
      std::vector<Buffer> keep;
      for (auto& b : m->alloc_buffers) {
        if (b->scope == Scope::kGlobal && !b->data) {
          hoisted.push_back(b);
        } else {
          keep.push_back(b);
        }
      }
      if (keep.size() == m->alloc_buffers.size()) return out;
      return std::make_shared<KernelNode>(m->grid, m->block_vars, m->threads, keep, m->var_inits, m->body,
                                          m->span);
    }
  } mut;
  Stmt body = mut.VisitStmt(f->body);
  if (mut.hoisted.empty()) return f;
  std::vector<Param> params = f->params;
  for (auto& b : mut.hoisted) params.push_back({MakeVar(b->name, DataType::Handle()), b});
  return MakePrimFunc(f->name, params, body, f->attrs, f->span);
}

}  // namespace tl
