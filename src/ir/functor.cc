// Default traversal of every node kind for IRVisitor and IRMutator.
#include "ir/functor.h"

#include <functional>
#include <map>
#include <set>

namespace tl {

// ---------------------------------------------------------------- visitor
void IRVisitor::VisitExpr(const Expr& e) {
  switch (e->kind) {
    case ExprKind::kIntImm:
    case ExprKind::kFloatImm:
    case ExprKind::kStringImm: return;
    case ExprKind::kVar: return VisitVar(static_cast<const VarNode*>(e.get()));
    case ExprKind::kBinary: return VisitBinary(static_cast<const BinaryNode*>(e.get()));
    case ExprKind::kNot: return VisitExpr(static_cast<const NotNode*>(e.get())->a);
    case ExprKind::kCast: return VisitExpr(static_cast<const CastNode*>(e.get())->value);
    case ExprKind::kSelect: {
      auto* n = static_cast<const SelectNode*>(e.get());
      VisitExpr(n->cond);
      VisitExpr(n->true_value);
      VisitExpr(n->false_value);
      return;
    }
    case ExprKind::kCall: return VisitCall(static_cast<const CallNode*>(e.get()));
    case ExprKind::kBufferLoad: return VisitLoad(static_cast<const BufferLoadNode*>(e.get()));
  }
}

void IRVisitor::VisitLoad(const BufferLoadNode* n) {
  VisitBuffer(n->buffer);
  for (auto& i : n->indices) VisitExpr(i);
}
void IRVisitor::VisitStore(const StoreNode* n) {
  VisitBuffer(n->buffer);
  VisitExpr(n->value);
  for (auto& i : n->indices) VisitExpr(i);
}
void IRVisitor::VisitFor(const ForNode* n) {
  VisitExpr(n->min);
  VisitExpr(n->extent);
  for (auto& kv : n->annotations) VisitExpr(kv.second);
  VisitStmt(n->body);
}
void IRVisitor::VisitKernel(const KernelNode* n) {
  for (auto& g : n->grid) VisitExpr(g);
  for (auto& t : n->threads) VisitExpr(t);
  for (auto& b : n->alloc_buffers) VisitBuffer(b);
  for (auto& kv : n->var_inits) VisitExpr(kv.second);
  VisitStmt(n->body);
}
void IRVisitor::VisitRegion(const Region& r) {
  VisitBuffer(r.buffer);
  for (auto& rg : r.ranges) {
    VisitExpr(rg.min);
    VisitExpr(rg.extent);
  }
}
void IRVisitor::VisitTileOp(const StmtNode* s) {
  auto* op = As<TileOpNode>(s);
  if (!op) return;
  for (auto& [r, access] : op->Regions()) VisitRegion(*r);
  for (auto& e : op->Exprs())
    if (e) VisitExpr(e);
}
void IRVisitor::VisitStmt(const Stmt& s) {
  if (!s) return;
  switch (s->kind) {
    case StmtKind::kStore: return VisitStore(static_cast<const StoreNode*>(s.get()));
    case StmtKind::kEvaluate: return VisitExpr(static_cast<const EvaluateNode*>(s.get())->value);
    case StmtKind::kLet: return VisitLet(static_cast<const LetNode*>(s.get()));
    case StmtKind::kFor: return VisitFor(static_cast<const ForNode*>(s.get()));
    case StmtKind::kWhile: return VisitWhile(static_cast<const WhileNode*>(s.get()));
    case StmtKind::kIf: {
      auto* n = static_cast<const IfNode*>(s.get());
      VisitExpr(n->cond);
      VisitStmt(n->then_case);
      VisitStmt(n->else_case);
      return;
    }
    case StmtKind::kSeq:
      for (auto& x : static_cast<const SeqNode*>(s.get())->seq) VisitStmt(x);
      return;
    case StmtKind::kKernel: return VisitKernel(static_cast<const KernelNode*>(s.get()));
    case StmtKind::kAttr: return VisitAttr(static_cast<const AttrStmtNode*>(s.get()));
    default: return VisitTileOp(s.get());
  }
}

// ---------------------------------------------------------------- mutator
std::vector<Expr> IRMutator::VisitExprs(const std::vector<Expr>& v, bool* changed) {
  std::vector<Expr> out;
  out.reserve(v.size());
  for (auto& e : v) {
    out.push_back(VisitExpr(e));
    if (out.back() != e) *changed = true;
  }
  return out;
}

Expr IRMutator::VisitExpr(const Expr& e) {
  switch (e->kind) {
    case ExprKind::kIntImm:
    case ExprKind::kFloatImm:
    case ExprKind::kStringImm: return e;
    case ExprKind::kVar: return VisitVar(std::static_pointer_cast<const VarNode>(e));
    case ExprKind::kBinary: return VisitBinary(e, static_cast<const BinaryNode*>(e.get()));
    case ExprKind::kNot: {
      auto* n = static_cast<const NotNode*>(e.get());
      Expr a = VisitExpr(n->a);
      return a == n->a ? e : Not(a);
    }
    case ExprKind::kCast: {
      auto* n = static_cast<const CastNode*>(e.get());
      Expr a = VisitExpr(n->value);
      return a == n->value ? e : Cast(n->dtype, a);
    }
    case ExprKind::kSelect: {
      auto* n = static_cast<const SelectNode*>(e.get());
      Expr c = VisitExpr(n->cond), t = VisitExpr(n->true_value), f = VisitExpr(n->false_value);
      if (c == n->cond && t == n->true_value && f == n->false_value) return e;
      return Select(c, t, f);
    }
    case ExprKind::kCall: return VisitCall(e, static_cast<const CallNode*>(e.get()));
    case ExprKind::kBufferLoad: return VisitLoad(e, static_cast<const BufferLoadNode*>(e.get()));
  }
  return e;
}

Expr IRMutator::VisitBinary(const Expr& e, const BinaryNode* n) {
  Expr a = VisitExpr(n->a), b = VisitExpr(n->b);
  if (a == n->a && b == n->b) return e;
  return Binary(n->op, a, b);
}
Expr IRMutator::VisitCall(const Expr& e, const CallNode* n) {
  bool changed = false;
  auto args = VisitExprs(n->args, &changed);
  return changed ? Call(n->dtype, n->op, std::move(args)) : e;
}
Expr IRMutator::VisitLoad(const Expr& e, const BufferLoadNode* n) {
  bool changed = false;
  auto idx = VisitExprs(n->indices, &changed);
  Buffer b = VisitBuffer(n->buffer);
  if (!changed && b == n->buffer) return e;
  return Load(b, std::move(idx));
}
Region IRMutator::VisitRegion(const Region& r) {
  Region out{VisitBuffer(r.buffer), {}};
  for (auto& rg : r.ranges) out.ranges.push_back({VisitExpr(rg.min), VisitExpr(rg.extent)});
  return out;
}

namespace {
bool SameRegion(const Region& a, const Region& b) {
  if (a.buffer != b.buffer || a.ranges.size() != b.ranges.size()) return false;
  for (size_t i = 0; i < a.ranges.size(); ++i)
    if (a.ranges[i].min != b.ranges[i].min || a.ranges[i].extent != b.ranges[i].extent) return false;
  return true;
}
}  // namespace

Stmt IRMutator::VisitStore(const Stmt& s, const StoreNode* n) {
  bool changed = false;
  auto idx = VisitExprs(n->indices, &changed);
  Expr v = VisitExpr(n->value);
  Buffer b = VisitBuffer(n->buffer);
  if (!changed && v == n->value && b == n->buffer) return s;
  return Store(b, v, std::move(idx), n->span);
}
Stmt IRMutator::VisitFor(const Stmt& s, const ForNode* n) {
  Expr mn = VisitExpr(n->min), ext = VisitExpr(n->extent);
  std::map<std::string, Expr> ann;
  bool changed = mn != n->min || ext != n->extent;
  for (auto& kv : n->annotations) {
    ann[kv.first] = VisitExpr(kv.second);
    changed |= ann[kv.first] != kv.second;
  }
  Stmt body = VisitStmt(n->body);
  if (!changed && body == n->body) return s;
  return For(n->var, mn, ext, n->for_kind, body, std::move(ann), n->span);
}
Stmt IRMutator::VisitIf(const Stmt& s, const IfNode* n) {
  Expr c = VisitExpr(n->cond);
  Stmt t = VisitStmt(n->then_case);
  Stmt e = n->else_case ? VisitStmt(n->else_case) : nullptr;
  if (c == n->cond && t == n->then_case && e == n->else_case) return s;
  return If(c, t, e, n->span);
}
Stmt IRMutator::VisitWhile(const Stmt& s, const WhileNode* n) {
  Expr c = VisitExpr(n->cond);
  Stmt b = VisitStmt(n->body);
  if (c == n->cond && b == n->body) return s;
  return While(c, b, n->span);
}
Stmt IRMutator::VisitSeq(const Stmt& s, const SeqNode* n) {
  std::vector<Stmt> v;
  bool changed = false;
  for (auto& x : n->seq) {
    v.push_back(VisitStmt(x));
    changed |= v.back() != x;
  }
  return changed ? Seq(std::move(v), n->span) : s;
}
Stmt IRMutator::VisitLet(const Stmt& s, const LetNode* n) {
  Expr v = VisitExpr(n->value);
  Stmt b = VisitStmt(n->body);
  if (v == n->value && b == n->body) return s;
  return Let(n->var, v, b, n->span);
}
Stmt IRMutator::VisitKernel(const Stmt& s, const KernelNode* n) {
  bool changed = false;
  auto grid = VisitExprs(n->grid, &changed);
  auto threads = VisitExprs(n->threads, &changed);
  std::vector<Buffer> allocs;
  for (auto& b : n->alloc_buffers) {
    allocs.push_back(VisitBuffer(b));
    changed |= allocs.back() != b;
  }
  std::vector<std::pair<Buffer, Expr>> inits;
  for (auto& kv : n->var_inits) {
    inits.push_back({VisitBuffer(kv.first), VisitExpr(kv.second)});
    changed |= inits.back().first != kv.first || inits.back().second != kv.second;
  }
  Stmt body = VisitStmt(n->body);
  if (!changed && body == n->body) return s;
  return std::make_shared<KernelNode>(grid, n->block_vars, threads, allocs, inits, body, n->span);
}
Stmt IRMutator::VisitAttr(const Stmt& s, const AttrStmtNode* n) {
  Buffer node = n->node ? VisitBuffer(n->node) : nullptr;
  Expr v = VisitExpr(n->value);
  Stmt b = VisitStmt(n->body);
  if (node == n->node && v == n->value && b == n->body) return s;
  return AttrStmt(node, n->key, v, b, n->span);
}
Stmt IRMutator::VisitTileOp(const Stmt& s) {
  auto* op = As<TileOpNode>(s);
  if (!op) return s;
  bool same = true;
  std::vector<Region> regions;
  for (auto& [r, access] : op->Regions()) {
    regions.push_back(VisitRegion(*r));
    same = same && SameRegion(regions.back(), *r);
  }
  std::vector<Expr> exprs;
  for (auto& e : op->Exprs()) {
    exprs.push_back(e ? VisitExpr(e) : e);
    same = same && exprs.back() == e;
  }
  return same ? s : op->WithOperands(std::move(regions), std::move(exprs));
}
Stmt IRMutator::VisitStmt(const Stmt& s) {
  if (!s) return s;
  switch (s->kind) {
    case StmtKind::kStore: return VisitStore(s, As<StoreNode>(s));
    case StmtKind::kEvaluate: {
      auto* n = As<EvaluateNode>(s);
      Expr v = VisitExpr(n->value);
      return v == n->value ? s : Evaluate(v, n->span);
    }
    case StmtKind::kLet: return VisitLet(s, As<LetNode>(s));
    case StmtKind::kFor: return VisitFor(s, As<ForNode>(s));
    case StmtKind::kIf: return VisitIf(s, As<IfNode>(s));
    case StmtKind::kWhile: return VisitWhile(s, As<WhileNode>(s));
    case StmtKind::kSeq: return VisitSeq(s, As<SeqNode>(s));
    case StmtKind::kKernel: return VisitKernel(s, As<KernelNode>(s));
    case StmtKind::kAttr: return VisitAttr(s, As<AttrStmtNode>(s));
    default: return VisitTileOp(s);
  }
}

// ---------------------------------------------------------------- helpers
void PostOrderVisitStmt(const Stmt& s, const std::function<void(const Stmt&)>& f) {
  if (!s) return;
  switch (s->kind) {
    case StmtKind::kLet: PostOrderVisitStmt(As<LetNode>(s)->body, f); break;
    case StmtKind::kFor: PostOrderVisitStmt(As<ForNode>(s)->body, f); break;
    case StmtKind::kWhile: PostOrderVisitStmt(As<WhileNode>(s)->body, f); break;
    case StmtKind::kIf:
      PostOrderVisitStmt(As<IfNode>(s)->then_case, f);
      PostOrderVisitStmt(As<IfNode>(s)->else_case, f);
      break;
    case StmtKind::kSeq:
      for (auto& x : As<SeqNode>(s)->seq) PostOrderVisitStmt(x, f);
      break;
    case StmtKind::kKernel: PostOrderVisitStmt(As<KernelNode>(s)->body, f); break;
    case StmtKind::kAttr: PostOrderVisitStmt(As<AttrStmtNode>(s)->body, f); break;
    default: break;
  }
  f(s);
}

namespace {
class Substituter : public IRMutator {
 public:
  explicit Substituter(const std::map<const VarNode*, Expr>& m) : m_(m) {}
  Expr VisitVar(const Var& v) override {
    auto it = m_.find(v.get());
    return it == m_.end() ? v : it->second;
  }

 private:
  const std::map<const VarNode*, Expr>& m_;
};
}  // namespace

class DefUniquifier : public IRMutator {
 public:
  Expr VisitVar(const Var& v) override {
    auto it = m_.find(v.get());
    return it == m_.end() ? v : it->second;
  }
  Stmt VisitFor(const Stmt& s, const ForNode* n) override {
    Expr mn = VisitExpr(n->min), ext = VisitExpr(n->extent);
    Var v = Define(n->var);
    Stmt r = IRMutator::VisitFor(s, n);
    Undefine(n->var);
    auto* f = As<ForNode>(r);
    if (v == n->var && mn == n->min && ext == n->extent) return r;
    return For(v, mn, ext, f->for_kind, f->body, f->annotations, f->span);
  }
  Stmt VisitLet(const Stmt& s, const LetNode* n) override {
    Expr x = VisitExpr(n->value);
    Var v = Define(n->var);
    Stmt b = VisitStmt(n->body);
    Undefine(n->var);
    if (v == n->var && x == n->value && b == n->body) return s;
    return Let(v, x, b, n->span);
  }

 private:
  Var Define(const Var& v) {
    if (seen_.insert(v.get()).second) return v;
    Var nv = MakeVar(v->name, v->dtype);
    saved_.push_back({v.get(), m_.count(v.get()) ? m_[v.get()] : nullptr});
    m_[v.get()] = nv;
    return nv;
  }
  void Undefine(const Var& v) {
    if (saved_.empty() || saved_.back().first != v.get()) return;
    if (saved_.back().second)
      m_[v.get()] = saved_.back().second;
    else
      m_.erase(v.get());
    saved_.pop_back();
  }
  std::set<const VarNode*> seen_;
  std::map<const VarNode*, Expr> m_;
  std::vector<std::pair<const VarNode*, Expr>> saved_;
};

Expr Substitute(const Expr& e, const std::map<const VarNode*, Expr>& vmap) {
  return Substituter(vmap).VisitExpr(e);
}
Stmt Substitute(const Stmt& s, const std::map<const VarNode*, Expr>& vmap) {
  return Substituter(vmap).VisitStmt(s);
}
Stmt UniquifyDefs(const Stmt& s) { return DefUniquifier().VisitStmt(s); }

VarUses VarsOf(const Expr& e) {
  struct V : IRVisitor {
    VarUses u;
    void VisitVar(const VarNode* v) override { u.vars.insert(v); }
    void VisitLoad(const BufferLoadNode* n) override {
      u.loads = true;
      IRVisitor::VisitLoad(n);
    }
  } v;
  v.VisitExpr(e);
  return v.u;
}

static void CollectAddTerms(const Expr& e, std::vector<Expr>* out) {
  auto* b = As<BinaryNode>(e);
  if (b && b->op == BinaryOp::kAdd) {
    CollectAddTerms(b->a, out);
    CollectAddTerms(b->b, out);
    return;
  }
  int64_t c = 0;
  if (AsConstInt(e, &c) && c == 0) return;
  out->push_back(e);
}

std::vector<Expr> AddTerms(const Expr& e) {
  std::vector<Expr> out;
  CollectAddTerms(e, &out);
  return out;
}

std::array<int64_t, 3> ClusterDims(const Stmt& s) {
  std::array<int64_t, 3> d{1, 1, 1};
  PostOrderVisitStmt(s, [&](const Stmt& x) {
    auto* a = As<AttrStmtNode>(x);
    auto* c = a && a->key == "tl.cluster_dims" ? As<CallNode>(a->value) : nullptr;
    if (!c) return;
    TL_ICHECK(c->args.size() == 3, "tl.cluster_dims takes T.list(x, y, z)");
    for (size_t i = 0; i < 3; ++i)
      TL_ICHECK(AsConstInt(c->args[i], &d[i]) && d[i] >= 1, "tl.cluster_dims: bad extent");
  });
  return d;
}

}  // namespace tl
