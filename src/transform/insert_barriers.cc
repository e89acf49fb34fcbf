// InsertBarriers: __syncthreads where shared-memory accesses of different threads conflict.
#include <map>
#include <set>

#include "ir/functor.h"
#include "transform/cuda_passes.h"

namespace tl {
namespace {

// Barrier insertion over thread-level IR. State: shared buffers read and written since the last
// barrier. A statement that reads what was written, or writes what was read or written, gets a
// __syncthreads before it. Buffers alias when their planned byte ranges overlap. Statements
// under a thread-dependent `if` are treated as one unit (a barrier cannot go inside).
class Barriers {
 public:
  explicit Barriers(CudaCtx* ctx) : ctx_(ctx) {}

  // Writes remember which statement (by source position) made them: two writes from the same
  // tile op come from one thread partition and never overlap, so only writes from different
  // ops need ordering.
  struct State {
    std::set<std::string> r;
    std::map<std::string, std::string> w;  // buffer -> writer ("*" when several)
    void Merge(const State& o) {
      r.insert(o.r.begin(), o.r.end());
      for (auto& [b, who] : o.w) {
        auto it = w.find(b);
        if (it == w.end()) w[b] = who; else if (it->second != who) it->second = "*";
      }
    }
  };

  Stmt Visit(const Stmt& s, State& st) {
    if (!s) return s;
    switch (s->kind) {
      case StmtKind::kSeq: {
        std::vector<Stmt> out;
        for (auto& x : As<SeqNode>(s)->seq) out.push_back(Visit(x, st));
        return Seq(out, s->span);
      }
      case StmtKind::kLet: {
        auto* l = As<LetNode>(s);
        if (auto* c = As<CallNode>(l->value); c && c->op == "tl.thread_idx") tainted_.insert(l->var.get());
        if (Tainted(l->value)) tainted_.insert(l->var.get());
        Stmt b = Visit(l->body, st);
        return b == l->body ? s : Let(l->var, l->value, b, s->span);
      }
      case StmtKind::kKernel: {
        auto* k = As<KernelNode>(s);
        State fresh;
        Stmt b = Visit(k->body, fresh);
        return std::make_shared<KernelNode>(k->grid, k->block_vars, k->threads, k->alloc_buffers, k->var_inits, b, k->span);
      }
      case StmtKind::kEvaluate: {
        auto* c = As<CallNode>(As<EvaluateNode>(s)->value);
        if (c && c->op == "tl.syncthreads") {
          st = State();
          return s;
        }
        return Leaf(s, st);
      }
      case StmtKind::kIf: {
        auto* n = As<IfNode>(s);
        if (Tainted(n->cond)) return Leaf(s, st);
        State a = st, b = st;
        Stmt t = Visit(n->then_case, a);
        Stmt e = n->else_case ? Visit(n->else_case, b) : nullptr;
        st = a;
        st.Merge(b);
        return If(n->cond, t, e, s->span);
      }
      case StmtKind::kFor: {
        auto* n = As<ForNode>(s);
        std::set<std::string> managed;
        auto m = n->annotations.find("tl.pipeline_managed");
        if (m != n->annotations.end()) {
          std::string names = As<StringImmNode>(m->second)->value, cur;
          for (char ch : names + ",") {
            if (ch == ',') { if (!cur.empty()) managed.insert(cur); cur.clear(); } else cur += ch;
          }
        }
        auto saved = ignore_;
        ignore_.insert(managed.begin(), managed.end());
        // First pass finds what the end of one iteration leaves pending for the next.
        State dry = st;
        Visit(n->body, dry);
        State entry = st;
        entry.Merge(dry);
        Stmt b = Visit(n->body, entry);
        ignore_ = saved;
        st.Merge(entry);
        for (auto& x : managed) { st.r.insert(x); st.w[x] = "*"; }
        return For(n->var, n->min, n->extent, n->for_kind, b, n->annotations, s->span);
      }
      default: return Leaf(s, st);
    }
  }

 private:
  bool Tainted(const Expr& e) const {
    bool t = false;
    struct V : IRVisitor {
      const std::set<const VarNode*>* s; bool* t;
      void VisitVar(const VarNode* v) override { if (s->count(v)) *t = true; }
    } v;
    v.s = &tainted_;
    v.t = &t;
    v.VisitExpr(e);
    return t;
  }

  bool Alias(const std::string& a, const std::string& b) const {
    if (a == b) return true;
    auto x = ctx_->smem.find(a), y = ctx_->smem.find(b);
    if (x == ctx_->smem.end() || y == ctx_->smem.end()) return false;
    return x->second.first < y->second.second && y->second.first < x->second.second;
  }
  template <typename A, typename B>
  bool Hits(const A& a, const B& b) const {
    for (auto& x : a)
      for (auto& y : b)
        if (Alias(Key(x), Key(y))) return true;
    return false;
  }
  static const std::string& Key(const std::string& s) { return s; }
  static const std::string& Key(const std::pair<const std::string, std::string>& p) { return p.first; }
  bool WriteAfterWrite(const State& acc, const State& st) const {
    for (auto& [x, who] : acc.w)
      for (auto& [y, prev] : st.w)
        if (Alias(x, y) && (x != y || who != prev || who == "*")) return true;
    return false;
  }

  Stmt Leaf(const Stmt& s, State& st) {
    State acc;
    struct V : IRVisitor {
      State* a;
      const std::set<std::string>* ign;
      std::string who;
      void VisitLoad(const BufferLoadNode* n) override {
        if (n->buffer->scope == Scope::kShared && !ign->count(n->buffer->name)) a->r.insert(n->buffer->name);
        IRVisitor::VisitLoad(n);
      }
      void VisitStore(const StoreNode* n) override {
        if (n->buffer->scope == Scope::kShared && !ign->count(n->buffer->name)) a->w[n->buffer->name] = who;
        IRVisitor::VisitStore(n);
      }
      void VisitCall(const CallNode* n) override {
        if ((n->op == "tl.cp_async" || n->op == "tl.atomic_add") && !n->args.empty()) {
          auto* d = As<BufferLoadNode>(n->args[0]);
          if (d && d->buffer->scope == Scope::kShared && !ign->count(d->buffer->name)) a->w[d->buffer->name] = who;
          for (auto& x : d ? d->indices : std::vector<Expr>{}) VisitExpr(x);
          for (size_t i = 1; i < n->args.size(); ++i) VisitExpr(n->args[i]);
          return;
        }
        IRVisitor::VisitCall(n);
      }
    } v;
    v.a = &acc;
    v.ign = &ignore_;
    v.who = s->span.file + ":" + std::to_string(s->span.line) + ":" + std::to_string(s->span.col);
    if (!s->span.defined()) v.who = "*";
    v.VisitStmt(s);
    bool conflict = Hits(acc.r, st.w) || WriteAfterWrite(acc, st) || Hits(acc.w, st.r);
    Stmt out = s;
    if (conflict) {
      out = Seq({Evaluate(Call(DataType::Void(), "tl.syncthreads", {}), s->span), s}, s->span);
      st = State();
    }
    st.Merge(acc);
    return out;
  }

  CudaCtx* ctx_;
  std::set<std::string> ignore_;
  std::set<const VarNode*> tainted_;
};

}  // namespace

PrimFunc InsertBarriers(const PrimFunc& f, CudaCtx* ctx) {
  if (ctx->opt.disable_barriers) return f;
  Barriers::State st;
  return WithBody(f, Barriers(ctx).Visit(f->body, st));
}

}  // namespace tl
