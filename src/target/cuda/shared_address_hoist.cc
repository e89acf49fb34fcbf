// See shared_address_hoist.h.
#include "target/cuda/shared_address_hoist.h"

#include <algorithm>
#include <set>

#include "ir/functor.h"
#include "ir/structural.h"

namespace tl {
namespace {

class Planner {
 public:
  Planner(const VarNode* loop_var, int64_t max_count) : max_count_(max_count) { inner_.insert(loop_var); }

  void Walk(const Stmt& s) {
    if (!s) return;
    switch (s->kind) {
      case StmtKind::kSeq:
        for (auto& x : As<SeqNode>(s)->seq) Walk(x);
        break;
      case StmtKind::kLet: {
        auto* n = As<LetNode>(s);
        inner_.insert(n->var.get());
        Walk(n->body);
        break;
      }
      case StmtKind::kFor: {
        auto* n = As<ForNode>(s);
        int64_t mn = 0, ext = 0;
        bool unrolled = n->for_kind == ForKind::kUnrolled && AsConstInt(n->min, &mn) &&
                        AsConstInt(n->extent, &ext) && ext > 0;
        if (unrolled) {
          unrolled_.push_back(n);
          Walk(n->body);
          unrolled_.pop_back();
        } else {
          inner_.insert(n->var.get());
          Walk(n->body);
        }
        break;
      }
      case StmtKind::kIf: {
        auto* n = As<IfNode>(s);
        Walk(n->then_case);
        Walk(n->else_case);
        break;
      }
      case StmtKind::kAttr: Walk(As<AttrStmtNode>(s)->body); break;
      case StmtKind::kEvaluate: {
        auto* c = As<CallNode>(As<EvaluateNode>(s)->value);
        if (!c) break;
        if (c->op == "tl.ldmatrix" && c->args.size() > 3) Operand(c->args[3]);
        if (c->op == "tl.cp_async" && c->args.size() > 1) {
          Operand(c->args[0]);
          Operand(c->args[1]);
        }
        break;
      }
      default: break;
    }
  }

  SharedAddressPlan plan;

 private:
  void Operand(const Expr& e) {
    auto* l = As<BufferLoadNode>(e);
    if (!l) return;
    bool shared = l->buffer->scope == Scope::kShared && l->buffer->data && l->indices.size() == 1;
    if (!shared && l->buffer->scope != Scope::kGlobal) return;
    SharedAddressGroup g;
    SharedAddressUse use;
    g.buffer = l->buffer;
    std::set<const ForNode*> deps;
    bool worth = false;
    for (const Expr& index : l->indices) {
      std::vector<Expr> terms = AddTerms(index), hoisted, rest;
      for (auto& t : terms) {
        VarUses v = VarsOf(t);
        bool varying = v.loads, outer = false;
        std::set<const ForNode*> mine;
        for (const VarNode* var : v.vars) {
          auto it = std::find_if(unrolled_.begin(), unrolled_.end(),
                                 [&](const ForNode* f) { return f->var.get() == var; });
          if (it != unrolled_.end())
            mine.insert(*it);
          else if (inner_.count(var))
            varying = true;
          else
            outer = true;
        }
        if (varying || !outer) {
          rest.push_back(t);
          continue;
        }
        hoisted.push_back(t);
        deps.insert(mine.begin(), mine.end());
      }
      // One plain `v` or `v * c` term is as cheap to recompute as to keep in a register; any
      // hoisted term of a global (64-bit) address is worth it.
      auto cheap = [](const Expr& t) {
        auto* b = As<BinaryNode>(t);
        return As<VarNode>(t) || (b && b->op == BinaryOp::kMul && As<VarNode>(b->a) && As<IntImmNode>(b->b));
      };
      if (!hoisted.empty() && (!shared || hoisted.size() > 1 || !cheap(hoisted[0]))) worth = true;
      g.hoisted.push_back(hoisted);
      use.rest.push_back(rest);
    }
    if (!worth) return;
    for (const ForNode* f : unrolled_)  // outermost first, as the loops nest
      if (deps.count(f)) {
        int64_t ext = 0;
        AsConstInt(f->extent, &ext);
        g.loops.push_back(f);
        g.count *= ext;
      }
    if (g.count > max_count_) return;
    int found = -1;
    for (size_t i = 0; i < plan.groups.size() && found < 0; ++i) {
      const SharedAddressGroup& o = plan.groups[i];
      if (o.buffer != g.buffer || o.loops != g.loops || o.hoisted.size() != g.hoisted.size()) continue;
      bool same = true;
      for (size_t d = 0; d < o.hoisted.size() && same; ++d) {
        same = o.hoisted[d].size() == g.hoisted[d].size();
        for (size_t j = 0; j < o.hoisted[d].size() && same; ++j)
          same = StructuralEqual(o.hoisted[d][j], g.hoisted[d][j]);
      }
      if (same) found = static_cast<int>(i);
    }
    if (found < 0) {
      found = static_cast<int>(plan.groups.size());
      plan.groups.push_back(g);
    }
    use.group = found;
    plan.uses.emplace_back(l, use);
  }

  int64_t max_count_;
  std::set<const VarNode*> inner_;
  std::vector<const ForNode*> unrolled_;
};

}  // namespace

SharedAddressPlan PlanSharedAddressHoist(const ForNode* loop, int64_t max_count) {
  Planner p(loop->var.get(), max_count);
  p.Walk(loop->body);
  return std::move(p.plan);
}

}  // namespace tl
