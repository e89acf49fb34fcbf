// CheckThreadBindings and LowerThreadBindingsCPU; see lower_thread_bindings.h.
#include "transform/lower_thread_bindings.h"

#include <map>
#include <set>

#include "arith/simplify.h"
#include "ir/functor.h"
#include "support/error.h"
#include "transform/gpu_util.h"
#include "transform/resolve_buffer_views.h"

namespace tl {
namespace {

using gpu_pass::IsBarrier;
using gpu_pass::IsNamedBarrier;

struct ThreadIdxFinder : IRVisitor {
  bool found = false;
  // Also a value-returning atomic (T.atomic_add(..., return_prev=True)): each executing thread gets its own
  // previous value, so a statement holding one is per thread (ReadsThreadIndex; not the T.Parallel check).
  bool fetch = false;
  void VisitCall(const CallNode* n) override {
    found |= n->op == "tl.thread_idx" || (fetch && (n->op == "atomic_fetch_add" || n->op == "tl.atomic_fetch_add"));
    IRVisitor::VisitCall(n);
  }
};
bool UsesThreadIdx(const Expr& e) {
  ThreadIdxFinder v;
  v.VisitExpr(e);
  return v.found;
}
bool UsesThreadIdx(const Stmt& s) {
  ThreadIdxFinder v;
  v.VisitStmt(s);
  return v.found;
}
// The thread index or a value-returning atomic: work each thread does for itself.
bool PerThreadWork(const Expr& e) {
  ThreadIdxFinder v;
  v.fetch = true;
  v.VisitExpr(e);
  return v.found;
}
bool PerThreadWork(const Stmt& s) {
  ThreadIdxFinder v;
  v.fetch = true;
  v.VisitStmt(s);
  return v.found;
}
bool HasSync(const Stmt& s) {
  bool found = false;
  PostOrderVisitStmt(s, [&](const Stmt& x) { found |= IsBarrier(x) || IsNamedBarrier(x); });
  return found;
}
/// A barrier of the whole block (T.sync_threads()), not a named barrier of part of it.
bool HasBlockSync(const Stmt& s) {
  bool found = false;
  PostOrderVisitStmt(s, [&](const Stmt& x) { found |= IsBarrier(x); });
  return found;
}
bool ReadsBuffers(const Expr& e) {
  bool found = false;
  struct V : IRVisitor {
    bool* found;
    void VisitLoad(const BufferLoadNode* n) override {
      *found = true;
      IRVisitor::VisitLoad(n);
    }
  } v;
  v.found = &found;
  v.VisitExpr(e);
  return found;
}
/// A region under a condition on the thread index that may hold named barriers (T.sync_threads(id, count))
/// but no block-wide one, in either branch (an `elif` chain of warp roles, each with barriers of its own
/// threads): the condition reads no memory, so it selects the same threads all through the region.
bool NamedBarrierRegion(const IfNode* i) {
  return !HasBlockSync(i->then_case) && !(i->else_case && HasBlockSync(i->else_case)) &&
         !ReadsBuffers(i->cond);
}

class Checker : public SpanTrackingVisitor {
 protected:
  void VisitFor(const ForNode* n) override {
    if (n->for_kind != ForKind::kParallel) return IRVisitor::VisitFor(n);
    Span saved = span_;
    if (n->span.defined()) span_ = n->span;
    PostOrderVisitStmt(n->body, [&](const Stmt& x) {
      if (IsBarrier(x) || IsNamedBarrier(x))
        throw UserError(
            ErrorKind::kUnsupported,
            "T.sync_threads inside T.Parallel: the loop's iterations are spread over the threads by "
            "the compiler; put the barrier between loops",
            x->span.defined() ? x->span : span_);
    });
    if (UsesThreadIdx(n->body))
      throw UserError(
          ErrorKind::kUnsupported,
          "the thread index (T.get_thread_binding / T.thread_binding) inside T.Parallel: the compiler "
          "spreads the loop's iterations over the threads; index by the loop variables, or write the "
          "per-thread code outside T.Parallel",
          span_);
    span_ = saved;
  }
  void VisitTileOp(const StmtNode* s) override {
    auto* op = As<TileOpNode>(s);
    if (std::string(op->op) == "atomic_add") {  // a scalar atomic per thread is fine
      bool scalar = true;
      for (auto& [r, access] : op->Regions())
        for (auto& rg : r->ranges) scalar &= IsConstInt(Simplify(rg.extent), 1);
      if (scalar) return;
    }
    bool uses = false;
    for (auto& [r, access] : op->Regions())
      for (auto& rg : r->ranges) uses |= UsesThreadIdx(rg.min) || UsesThreadIdx(rg.extent);
    for (auto& e : op->Exprs()) uses |= e && UsesThreadIdx(e);
    if (uses)
      throw UserError(
          ErrorKind::kUnsupported,
          std::string("T.") + op->op +
              " with an operand that depends on the thread index: a tile op is run by all threads "
              "together; slice by block indices and loop variables",
          s->span.defined() ? s->span : span_);
  }

 public:
  void VisitStmt(const Stmt& s) override {
    if (auto* i = As<IfNode>(s);
        i && UsesThreadIdx(i->cond) && (HasSync(i->then_case) || HasSync(i->else_case)) && !NamedBarrierRegion(i))
      throw UserError(
          ErrorKind::kUnsupported,
          "T.sync_threads under a condition on the thread index: threads that skip it never reach "
          "the barrier the others wait at (a named barrier, T.sync_threads(id, count), may sit under a "
          "condition that reads no memory)",
          s->span);
    SpanTrackingVisitor::VisitStmt(s);
  }
};

/// Replaces tl.thread_idx() by `var`.
struct ReplaceThreadIdx : IRMutator {
  Var var;
  Expr VisitCall(const Expr& e, const CallNode* n) override {
    if (n->op == "tl.thread_idx") return var;
    return IRMutator::VisitCall(e, n);
  }
};

// Shared buffers (by storage) a statement reads and writes, tile ops' operands included.
struct SharedAccess {
  std::set<const BufferNode*> r, w;
  bool Conflicts(const SharedAccess& later) const {
    auto meets = [](const std::set<const BufferNode*>& a, const std::set<const BufferNode*>& b) {
      for (auto* x : a)
        if (b.count(x)) return true;
      return false;
    };
    return meets(later.r, w) || meets(later.w, r) || meets(later.w, w);
  }
  void Merge(const SharedAccess& o) {
    r.insert(o.r.begin(), o.r.end());
    w.insert(o.w.begin(), o.w.end());
  }
};
SharedAccess SharedAccessOf(const Stmt& s) {
  struct V : IRVisitor {
    SharedAccess a;
    void VisitLoad(const BufferLoadNode* n) override {
      if (n->buffer->scope == Scope::kShared) a.r.insert(StorageOwner(n->buffer));
      IRVisitor::VisitLoad(n);
    }
    void VisitStore(const StoreNode* n) override {
      if (n->buffer->scope == Scope::kShared) a.w.insert(StorageOwner(n->buffer));
      IRVisitor::VisitStore(n);
    }
    void VisitTileOp(const StmtNode* s) override {
      if (auto* op = As<TileOpNode>(s))
        for (auto& [rg, access] : op->Regions()) {
          if (rg->buffer->scope != Scope::kShared) continue;
          if (access != Access::kWrite) a.r.insert(StorageOwner(rg->buffer));
          if (access != Access::kRead) a.w.insert(StorageOwner(rg->buffer));
        }
      IRVisitor::VisitTileOp(s);
    }
  } v;
  v.VisitStmt(s);
  return v.a;
}

// Whether a sequence of per-thread statements must be split into phases (each a loop over the
// block's threads) where no T.sync_threads is written: where the GPU lowerings put a barrier
// (InsertBarriers: a shared buffer read or written after another statement wrote it, or written
// after one read it), and around statements run by all threads together (tile ops, T.Parallel),
// which the CPU runs once, not once per thread.
template <typename PerThreadFn>
bool NeedsPhases(const Stmt& s, const PerThreadFn& per_thread) {
  bool needs = false;
  PostOrderVisitStmt(s, [&](const Stmt& x) {
    auto* seq = As<SeqNode>(x);
    if (needs || !seq || !per_thread(x)) return;
    SharedAccess st;
    for (auto& e : seq->seq) {
      if (!per_thread(e)) {
        needs = true;  // a statement of the whole block beside per-thread ones
        return;
      }
      SharedAccess a = SharedAccessOf(e);
      if (st.Conflicts(a)) {
        needs = true;
        return;
      }
      st.Merge(a);
    }
  });
  return needs;
}

// Local buffers given one copy per thread (privatised): a [threads, ...] buffer indexed by the
// thread's loop variable in every per-thread region.
using PrivateLocals = std::map<const BufferNode*, Buffer>;

bool ReadsAny(const Stmt& s, const PrivateLocals& priv) {
  if (priv.empty()) return false;
  struct V : IRVisitor {
    const PrivateLocals* p;
    bool found = false;
    void VisitBuffer(const Buffer& b) override { found |= p->count(b.get()) > 0; }
  } v;
  v.p = &priv;
  v.VisitStmt(s);
  return v.found;
}
bool ReadsAny(const Expr& e, const PrivateLocals& priv) {
  if (priv.empty()) return false;
  struct V : IRVisitor {
    const PrivateLocals* p;
    bool found = false;
    void VisitBuffer(const Buffer& b) override { found |= p->count(b.get()) > 0; }
  } v;
  v.p = &priv;
  v.VisitExpr(e);
  return v.found;
}

/// Replaces tl.thread_idx() by `var`, and each privatised local `b[i...]` by `b'[var, i...]`.
struct ToThreadLoop : ReplaceThreadIdx {
  const PrivateLocals* priv = nullptr;
  Expr VisitLoad(const Expr& e, const BufferLoadNode* n) override {
    auto it = priv->find(n->buffer.get());
    if (it == priv->end()) return IRMutator::VisitLoad(e, n);
    std::vector<Expr> idx{var};
    for (auto& i : n->indices) idx.push_back(VisitExpr(i));
    return Load(it->second, std::move(idx));
  }
  Stmt VisitStore(const Stmt& s, const StoreNode* n) override {
    auto it = priv->find(n->buffer.get());
    if (it == priv->end()) return IRMutator::VisitStore(s, n);
    std::vector<Expr> idx{var};
    for (auto& i : n->indices) idx.push_back(VisitExpr(i));
    return Store(it->second, VisitExpr(n->value), std::move(idx), n->span);
  }
  Stmt VisitTileOp(const Stmt& s) override {
    auto* op = As<TileOpNode>(s);
    bool touches = false;
    if (op)
      for (auto& [r, access] : op->Regions()) touches |= priv->count(r->buffer.get()) > 0;
    if (!touches) return IRMutator::VisitTileOp(s);
    std::vector<Region> regions;
    for (auto& [r, access] : op->Regions()) {
      Region out = VisitRegion(*r);
      auto it = priv->find(r->buffer.get());
      if (it != priv->end()) {
        out.buffer = it->second;
        out.ranges.insert(out.ranges.begin(), Range{var, Int(1)});
      }
      regions.push_back(std::move(out));
    }
    std::vector<Expr> exprs;
    for (auto& e : op->Exprs()) exprs.push_back(e ? VisitExpr(e) : e);
    return op->WithOperands(std::move(regions), std::move(exprs));
  }
};

class CpuLowering {
 public:
  CpuLowering(int64_t threads, PrivateLocals priv) : threads_(threads), priv_(std::move(priv)) {}

  // Run by each thread: it reads the thread index or touches a privatised local.
  bool PerThreadStmt(const Stmt& s) const { return PerThreadWork(s) || ReadsAny(s, priv_); }
  bool PerThreadExpr(const Expr& e) const { return PerThreadWork(e) || ReadsAny(e, priv_); }
  bool Phases(const Stmt& s) const {
    return NeedsPhases(s, [this](const Stmt& x) { return PerThreadStmt(x); });
  }

  Stmt Lower(const Stmt& s) {
    if (!s) return s;
    if (!HasSync(s) && !Phases(s)) {
      if (PerThreadStmt(s)) return PerThread(s);
      NoteOutside(s);
      return s;
    }
    switch (s->kind) {
      case StmtKind::kSeq: {
        // Consecutive per-thread statements share one loop over the threads until one conflicts
        // with what the loop already reads or writes in shared memory: there the GPU has a barrier,
        // and here the next phase begins.
        std::vector<Stmt> out, group;
        SharedAccess st;
        auto flush = [&] {
          if (!group.empty()) out.push_back(PerThread(group.size() == 1 ? group[0] : Seq(group, s->span)));
          group.clear();
          st = SharedAccess();
        };
        for (auto& x : As<SeqNode>(s)->seq) {
          if (HasSync(x) || Phases(x) || !PerThreadStmt(x)) {
            flush();
            out.push_back(Lower(x));
            continue;
          }
          SharedAccess a = SharedAccessOf(x);
          if (st.Conflicts(a)) flush();
          group.push_back(x);
          st.Merge(a);
        }
        flush();
        return Seq(out, s->span);
      }
      case StmtKind::kEvaluate: return Seq({}, s->span);  // the sync itself: phases are sequential here
      case StmtKind::kLet: {
        auto* n = As<LetNode>(s);
        if (PerThreadExpr(n->value)) return Lower(Substitute(n->body, {{n->var.get(), n->value}}));
        NoteOutside(Evaluate(n->value, s->span));  // a local it reads is read by the whole block
        return Let(n->var, n->value, Lower(n->body), s->span);
      }
      case StmtKind::kAttr: {
        auto* n = As<AttrStmtNode>(s);
        return AttrStmt(n->node, n->key, n->value, Lower(n->body), s->span);
      }
      case StmtKind::kFor: {
        auto* n = As<ForNode>(s);
        if (PerThreadExpr(n->min) || PerThreadExpr(n->extent)) return Divergent(s);
        return For(n->var, n->min, n->extent, n->for_kind, Lower(n->body), n->annotations, s->span);
      }
      case StmtKind::kIf: {
        auto* n = As<IfNode>(s);
        if (PerThreadExpr(n->cond) && NamedBarrierRegion(n) && !ReadsAny(n->cond, priv_)) {
          // The threads this condition selects sync among themselves (named barriers): the region is lowered
          // in phases like any other, each phase running for the selected threads only.
          guards_.push_back(n->cond);
          Stmt body = Lower(n->then_case);
          guards_.pop_back();
          return body;
        }
        if (PerThreadExpr(n->cond)) return Divergent(s);
        return If(n->cond, Lower(n->then_case), n->else_case ? Lower(n->else_case) : nullptr, s->span);
      }
      case StmtKind::kWhile: {
        auto* n = As<WhileNode>(s);
        if (PerThreadExpr(n->cond)) return Divergent(s);
        return While(n->cond, Lower(n->body), s->span);
      }
      default: return s;
    }
  }

  /// Local variables written in one per-thread region and used in another or outside them: on the
  /// GPU each thread has its own copy, so here they need one copy per thread (privatisation).
  std::vector<const BufferNode*> SharedAcrossRegions() const {
    std::vector<const BufferNode*> out;
    for (auto& [buf, regions] : uses_)
      if (!priv_.count(buf) && written_.count(buf) && (regions.size() > 1 || outside_.count(buf)))
        out.push_back(buf);
    return out;
  }
  void NoteOutside(const Stmt& s) {
    struct V : IRVisitor {
      std::set<const BufferNode*>* out;
      void VisitBuffer(const Buffer& b) override {
        if (b->scope == Scope::kLocal || b->scope == Scope::kLocalVar) out->insert(b.get());
      }
    } v;
    v.out = &outside_;
    v.VisitStmt(s);
  }

 private:
  Stmt PerThread(const Stmt& s) {
    int id = next_region_++;
    struct V : IRVisitor {
      std::map<const BufferNode*, std::set<int>>* uses;
      std::set<const BufferNode*>* written;
      int id;
      void VisitBuffer(const Buffer& b) override {
        if (b->scope == Scope::kLocal || b->scope == Scope::kLocalVar) (*uses)[b.get()].insert(id);
      }
      void VisitStore(const StoreNode* n) override {
        if (n->buffer->scope == Scope::kLocal || n->buffer->scope == Scope::kLocalVar)
          written->insert(n->buffer.get());
        IRVisitor::VisitStore(n);
      }
    } v;
    v.uses = &uses_;
    v.written = &written_;
    v.id = id;
    v.VisitStmt(s);
    ToThreadLoop r;
    r.var = MakeVar("thread");
    r.priv = &priv_;
    Stmt body = s;
    for (auto g = guards_.rbegin(); g != guards_.rend(); ++g) body = If(*g, body, nullptr, s->span);
    return For(r.var, Int(0), Int(threads_), ForKind::kSerial, r.VisitStmt(body), {}, s->span);
  }
  // Control flow that depends on the thread index: each thread takes its own path, so the GPU puts
  // no barrier inside it (InsertBarriers treats it as one unit) and neither are phases split here; a
  // T.sync_threads inside is an error (threads would wait at different barriers).
  Stmt Divergent(const Stmt& s) {
    if (!HasSync(s)) return PerThread(s);
    throw UserError(
        ErrorKind::kUnsupported,
        "T.sync_threads inside control flow that depends on the thread index: threads would wait at "
        "different barriers",
        s->span);
  }

  int64_t threads_;
  PrivateLocals priv_;
  std::vector<Expr> guards_;  // conditions of the named-barrier regions being lowered (NamedBarrierRegion)
  int next_region_ = 0;
  std::map<const BufferNode*, std::set<int>> uses_;
  std::set<const BufferNode*> written_, outside_;
};

}  // namespace

bool ReadsThreadIndex(const Stmt& s) { return PerThreadWork(s); }

namespace {

// Buffers `e` reads, and buffers `s` may write: stored to, named by a tile op, or passed to a call as an
// element (T.atomic_add(A[i], v) writes A through its operand); a conservative over-approximation.
std::set<const BufferNode*> BuffersRead(const Expr& e) {
  std::set<const BufferNode*> out;
  struct V : IRVisitor {
    std::set<const BufferNode*>* out;
    void VisitLoad(const BufferLoadNode* n) override {
      out->insert(n->buffer.get());
      IRVisitor::VisitLoad(n);
    }
  } v;
  v.out = &out;
  v.VisitExpr(e);
  return out;
}
bool MayWriteAny(const Stmt& s, const std::set<const BufferNode*>& bufs) {
  struct V : IRVisitor {
    const std::set<const BufferNode*>* bufs;
    bool found = false;
    void VisitBuffer(const Buffer& b) override { found |= bufs->count(b.get()) > 0; }
    void VisitLoad(const BufferLoadNode* n) override {
      for (auto& i : n->indices) VisitExpr(i);  // a plain read
    }
    void VisitCall(const CallNode* n) override {
      for (auto& a : n->args)
        if (auto* l = As<BufferLoadNode>(a)) found |= bufs->count(l->buffer.get()) > 0;
      IRVisitor::VisitCall(n);
    }
  } v;
  v.bufs = &bufs;
  v.VisitStmt(s);
  return v.found;
}

}  // namespace

PrimFunc CheckThreadBindings(const PrimFunc& f) {
  // A let whose value reads the thread index is inlined into its uses, so that per-thread statements carry
  // their own values; where its value reads memory its body may write, inlining would read the new contents
  // (`x = A[tx] + 1; A[tx] = 0; C[tx] = x`), so the value goes into a per-thread local at the let instead
  // (evaluated once, as the let says).
  struct Inline : IRMutator {
    std::vector<Buffer>* allocs = nullptr;  // the enclosing kernel's new locals
    Stmt VisitKernel(const Stmt& s, const KernelNode* n) override {
      std::vector<Buffer> mine;
      std::vector<Buffer>* saved = allocs;
      allocs = &mine;
      Stmt out = IRMutator::VisitKernel(s, n);
      allocs = saved;
      if (mine.empty()) return out;
      auto* k = As<KernelNode>(out);
      std::vector<Buffer> all = k->alloc_buffers;
      all.insert(all.end(), mine.begin(), mine.end());
      return std::make_shared<KernelNode>(k->grid, k->block_vars, k->threads, all, k->var_inits, k->body, k->span);
    }
    Stmt VisitLet(const Stmt& s, const LetNode* n) override {
      Expr v = VisitExpr(n->value);
      if (!UsesThreadIdx(v)) return IRMutator::VisitLet(s, n);
      if (allocs) {
        auto read = BuffersRead(v);
        if (!read.empty() && MayWriteAny(n->body, read)) {
          Buffer b = MakeBuffer(n->var->name + "_let", v->dtype, {Int(1)}, Scope::kLocal, n->span);
          allocs->push_back(b);
          Stmt body = VisitStmt(Substitute(n->body, {{n->var.get(), Load(b, {Int(0)})}}));
          return Seq({Store(b, v, {Int(0)}, n->span), body}, n->span);
        }
      }
      return VisitStmt(Substitute(n->body, {{n->var.get(), v}}));
    }
  } inl;
  Stmt body = inl.VisitStmt(f->body);
  Checker c;
  c.VisitStmt(body);
  return body == f->body ? f : WithBody(f, body);
}

// The kernel body, preceded by the initial values of the privatised T.alloc_var locals (stores the
// lowering runs per thread).
Stmt Prologue(const KernelNode* k, const PrivateLocals& priv) {
  std::vector<Stmt> head;
  for (auto& [b, v] : k->var_inits)
    if (priv.count(b.get())) head.push_back(Store(b, v, std::vector<Expr>(b->shape.size(), Int(0)), b->span));
  if (head.empty()) return k->body;
  head.push_back(k->body);
  return Seq(head, k->span);
}

PrimFunc LowerThreadBindingsCPU(const PrimFunc& f0) {
  PrimFunc f = CheckThreadBindings(f0);
  struct Mut : IRMutator {
    Stmt VisitKernel(const Stmt& s, const KernelNode* k) override {
      if (!PerThreadWork(k->body) && !HasSync(k->body)) return s;
      int64_t threads = 1;
      for (auto& t : k->threads) {
        auto v = BoundOf(t, {}).hi;
        if (!v) throw UserError(ErrorKind::kUnsupported, "the thread count must be a constant", k->span);
        threads *= *v;
      }
      // Per-thread locals live across the phases (or are also used by whole-block statements) get
      // one copy per thread, as on the GPU, and the body is lowered again; privatising one can split
      // regions differently, so this repeats until no local is shared (each round adds one at least).
      std::set<const BufferNode*> shared;
      Stmt body;
      PrivateLocals priv;
      for (int round = 0;; ++round) {
        CpuLowering low(threads, priv);
        body = low.Lower(Prologue(k, priv));
        std::vector<const BufferNode*> more = low.SharedAcrossRegions();
        if (more.empty()) break;
        if (round > 64) throw InternalError("LowerThreadBindingsCPU: privatising locals does not converge");
        for (const BufferNode* b : more) {
          bool owned = false;
          for (auto& a : k->alloc_buffers) owned |= a.get() == b;
          if (!owned || b->data)
            throw UserError(ErrorKind::kUnsupported,
                            "'" + b->name +
                                "' is a per-thread local variable used across a T.sync_threads, but it "
                                "is a view of another buffer: the CPU target cannot give each thread its "
                                "own copy of it; allocate it with T.alloc_local",
                            b->span);
          std::vector<Expr> shape{Int(threads)};
          shape.insert(shape.end(), b->shape.begin(), b->shape.end());
          priv[b] = MakeBuffer(b->name, b->dtype, shape, Scope::kLocal, b->span);
        }
      }
      std::vector<Buffer> allocs = k->alloc_buffers;
      for (auto& a : allocs)
        if (auto it = priv.find(a.get()); it != priv.end()) a = it->second;
      std::vector<std::pair<Buffer, Expr>> inits;
      for (auto& [b, v] : k->var_inits)
        if (!priv.count(b.get())) inits.push_back({b, v});
      return std::make_shared<KernelNode>(k->grid, k->block_vars, k->threads, allocs, inits, body, k->span);
    }
  } mut;
  Stmt body = mut.VisitStmt(f->body);
  return body == f->body ? f : WithBody(f, body);
}

}  // namespace tl
