// InsertBarriers: __syncthreads where shared-memory accesses of different threads conflict.
// Requires thread-level IR after PlanSharedMemory: shared buffers alias when they are views of
// one byte buffer with overlapping byte ranges. A tile op's statements carry its identity
// (`tl.tile_op`); loops whose stage buffers a pipeline's own waits order carry
// `tl.pipeline_managed`. Produces the same IR with `T.tl.syncthreads()` statements added.
#include <functional>
#include <map>
#include <set>

#include "ir/functor.h"
#include "ir/structural.h"
#include "transform/gpu_passes.h"
#include "transform/gpu_util.h"
#include "transform/gpu/warp_specialize.h"

namespace tl {
namespace {

// Barrier insertion over thread-level IR. State: shared buffers read and written since the last
// barrier. A statement that reads what was written, or writes what was read or written, gets a
// __syncthreads before it. Buffers alias when their planned byte ranges overlap. Statements
// under a thread-dependent `if` are treated as one unit (a barrier cannot go inside).
class Barriers {
 public:
  // Writes remember which tile op made them: two writes from the same op come from one thread
  // partition and never overlap, so only writes from different ops need ordering. Statements
  // outside any op each count as an op of their own.
  using Who = int64_t;
  static constexpr Who kSeveral = -1;
  struct State {
    std::set<const BufferNode*> r;
    std::map<const BufferNode*, Who> w;  // buffer -> writer (kSeveral when several)
    // Buffers of `w` whose pending writes are all TMA loads completing on one mbarrier (the Load of its
    // word): every thread that waits on it sees them, so a wait run by all threads orders them.
    std::map<const BufferNode*, Expr> tma;
    // Shared buffers read / written inside T.ws blocks: other T.ws blocks order them with the program's
    // mbarriers, but statements every thread runs after the blocks need a barrier.
    std::set<const BufferNode*> ws_r, ws_w;
    void Merge(const State& o) {
      ws_r.insert(o.ws_r.begin(), o.ws_r.end());
      ws_w.insert(o.ws_w.begin(), o.ws_w.end());
      for (auto& [b, who] : o.w) {
        auto ot = o.tma.find(b);
        auto mine = tma.find(b);
        if (ot != o.tma.end() &&
            (!w.count(b) || (mine != tma.end() && StructuralEqual(mine->second, ot->second))))
          tma[b] = ot->second;
        else
          tma.erase(b);
      }
      r.insert(o.r.begin(), o.r.end());
      for (auto& [b, who] : o.w) {
        auto it = w.find(b);
        if (it == w.end())
          w[b] = who;
        else if (it->second != who)
          it->second = kSeveral;
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
        // The value is read before the body runs (`x = S[i]` in a T.Parallel body): a barrier it needs
        // goes before the let.
        Stmt probe = Evaluate(l->value, s->span);
        bool lead = Leaf(probe, st) != probe;
        Stmt b = Visit(l->body, st);
        Stmt out = b == l->body ? s : Let(l->var, l->value, b, s->span);
        return lead ? Seq({Evaluate(Call(DataType::Void(), "tl.syncthreads", {}), s->span), out}, s->span)
                    : out;
      }
      case StmtKind::kKernel: {
        auto* k = As<KernelNode>(s);
        State fresh;
        Stmt b = Visit(k->body, fresh);
        return std::make_shared<KernelNode>(k->grid, k->block_vars, k->threads, k->alloc_buffers,
                                            k->var_inits, b, k->span);
      }
      case StmtKind::kEvaluate: {
        auto* c = As<CallNode>(As<EvaluateNode>(s)->value);
        if (c && c->op == "tl.syncthreads") {
          st = State();
          return s;
        }
        Stmt out = Leaf(s, st);
        if (c && c->op == "tl.mbarrier_wait_parity" && !c->args.empty()) {
          // Run by every thread here (a wait under a thread-dependent condition is inside a leaf): the TMA
          // loads that complete on this barrier have landed for all of them.
          for (auto it = st.tma.begin(); it != st.tma.end();) {
            if (StructuralEqual(it->second, c->args[0])) {
              st.w.erase(it->first);
              it = st.tma.erase(it);
            } else {
              ++it;
            }
          }
        }
        return out;
      }
      case StmtKind::kIf: {
        auto* n = As<IfNode>(s);
        if (Tainted(n->cond))
          return HasRegions(n->then_case) || HasRegions(n->else_case) ? RegionIf(s, n, st) : Leaf(s, st);
        // The condition reads before either branch runs (a loop's `if S[0] > x: break` reads what the
        // previous iteration wrote): a barrier it needs goes before the `if`.
        Stmt probe = Evaluate(n->cond, s->span);
        bool lead = Leaf(probe, st) != probe;
        State a = st, b = st;
        Stmt t = Visit(n->then_case, a);
        Stmt e = n->else_case ? Visit(n->else_case, b) : nullptr;
        st = a;
        st.Merge(b);
        Stmt out = If(n->cond, t, e, s->span);
        return lead ? Seq({Evaluate(Call(DataType::Void(), "tl.syncthreads", {}), s->span), out}, s->span)
                    : out;
      }
      case StmtKind::kAttr: {
        auto* n = As<AttrStmtNode>(s);
        Stmt b;
        if (n->key == "tl.tile_op") {
          Who saved = op_;
          AsConstInt(n->value, &op_);
          b = Visit(n->body, st);
          op_ = saved;
        } else if (n->key == "tl.pipeline_managed") {
          pending_managed_.push_back(n->node.get());
          b = Visit(n->body, st);
        } else if (auto* i = As<IfNode>(n->body); n->key == "tl.warp_specialized" && i && i->then_case &&
                                                  As<AttrStmtNode>(i->then_case) &&
                                                  As<AttrStmtNode>(i->then_case)->key == "tl.ws_consumer") {
          // The automatic warp-specialised split (gpu/warp_specialize.cc): the consumers' branch gets its
          // barriers (WsNamedBarriers makes them `bar.sync 1, T`); the producer's only issues TMA and
          // waits on mbarriers.
          // Whatever is pending (the mbarrier inits) is ordered for every thread, the producer's included.
          bool pending = !st.r.empty() || !st.w.empty();
          st = State();
          b = If(i->cond, Visit(i->then_case, st), i->else_case, i->span);
          if (pending) b = Seq({Evaluate(Call(DataType::Void(), "tl.syncthreads", {}), s->span), b}, s->span);
        } else if (n->key == kWsBlockBarrierKey) {  // a T.ws block's barriers are its warp groups' own
          auto* l = As<CallNode>(n->value);
          int64_t id = 0, threads = 0;
          TL_ICHECK(l && l->args.size() == 2 && AsConstInt(l->args[0], &id) && AsConstInt(l->args[1], &threads),
                    "tl.ws_block_barrier takes list(id, threads)");
          b = SyncThreadsToNamedBarrier(Visit(n->body, st), id, threads);
        } else {
          b = Visit(n->body, st);
        }
        return b == n->body ? s : AttrStmt(n->node, n->key, n->value, b, s->span);
      }
      case StmtKind::kFor: {
        auto* n = As<ForNode>(s);
        if (n->for_kind == ForKind::kVectorized) return Leaf(s, st);  // one wide access: no barrier inside
        return Loop(
            n->body, nullptr, st,
            [&](const Stmt& b) {
              return For(n->var, n->min, n->extent, n->for_kind, b, n->annotations, s->span);
            },
            s->span);
      }
      case StmtKind::kWhile: {  // the condition is read before every iteration, as the body's first statement
        auto* n = As<WhileNode>(s);
        return Loop(
            n->body, n->cond, st, [&](const Stmt& b) { return While(n->cond, b, s->span); }, s->span);
      }
      default: return Leaf(s, st);
    }
  }

  static bool IsRegion(const Stmt& b) {
    auto* a = b ? As<AttrStmtNode>(b) : nullptr;
    return a && a->key == kWsBlockBarrierKey;
  }
  /// A region, or an `if` on the thread index with regions in its branches (an `elif` chain: `elif cta_id ==
  /// 0 and tx < 64: ... elif 128 <= tx < 256:`, whose condition is no one range), seen through attributes.
  bool HasRegions(const Stmt& b) const {
    if (!b) return false;
    if (IsRegion(b)) return true;
    if (auto* a = As<AttrStmtNode>(b)) return HasRegions(a->body);
    auto* n = As<IfNode>(b);
    return n && Tainted(n->cond) && (HasRegions(n->then_case) || HasRegions(n->else_case));
  }
  /// `b` with the regions HasRegions finds given their barriers (each from a fresh state); nothing else
  /// changes.
  Stmt RegionsOnly(const Stmt& b) {
    if (!b) return b;
    if (IsRegion(b)) {
      State inner;
      return Visit(b, inner);
    }
    if (auto* a = As<AttrStmtNode>(b)) {
      Stmt body = RegionsOnly(a->body);
      return body == a->body ? b : AttrStmt(a->node, a->key, a->value, body, a->span);
    }
    if (auto* n = As<IfNode>(b); n && Tainted(n->cond) && HasRegions(b))
      return If(n->cond, RegionsOnly(n->then_case), RegionsOnly(n->else_case), b->span);
    return b;
  }
  /// An `if` on the thread index whose branches are regions (a T.ws block, `if tx < 128:` with tile work: their
  /// body under kWsBlockBarrierKey). The warp groups of a region order what they share with other regions through
  /// the program's mbarriers (as in TileLang): each region gets barriers of its own from a fresh state (named
  /// barriers of its threads); another branch is one unit. What the whole block did before is ordered by a
  /// __syncthreads before the `if` (every thread reaches it) where a branch conflicts with it; what the branches
  /// access is pending for the statements every thread runs after it.
  Stmt RegionIf(const Stmt& s, const IfNode* n, State& st) {
    State outer = st;
    outer.ws_r.clear();
    outer.ws_w.clear();
    const bool entry = Leaf(s, outer) != s;
    if (entry) st = State();
    auto branch = [&](const Stmt& b) -> Stmt {
      if (!b) return b;
      State all;
      Leaf(b, all);  // everything the branch accesses
      st.ws_r.insert(all.r.begin(), all.r.end());
      for (auto& [x, who] : all.w) st.ws_w.insert(x);
      return RegionsOnly(b);
    };
    Stmt t = branch(n->then_case), e = branch(n->else_case);
    Stmt out = If(n->cond, t, e, s->span);
    return entry ? Seq({Evaluate(Call(DataType::Void(), "tl.syncthreads", {}), s->span), out}, s->span) : out;
  }

  /// A loop whose body runs any number of times (a `cond` read before each iteration, for while loops).
  Stmt Loop(const Stmt& body, const Expr& cond, State& st, const std::function<Stmt(const Stmt&)>& rebuild,
            const Span& span) {
    std::set<const BufferNode*> managed(pending_managed_.begin(), pending_managed_.end());
    pending_managed_.clear();
    auto saved = ignore_;
    ignore_.insert(managed.begin(), managed.end());
    Stmt probe = cond ? Seq({Evaluate(cond, span), body}, span) : body;
    // First pass finds what the end of one iteration leaves pending for the next.
    auto visit_body = [&](const State& start, Stmt* out) {
      State dry = start;
      Visit(probe, dry);
      State entry = start;
      entry.Merge(dry);
      *out = Visit(probe, entry);
      return entry;
    };
    Stmt b;
    State entry = visit_body(st, &b);
    bool before = false;
    if (hoist_ && (!st.r.empty() || !st.w.empty())) {
      // A barrier that only orders the loop against what came before it runs once, before
      // the loop, instead of in every iteration (a barrier per unrolled copy chunk or
      // epilogue element on CUDA; costly where OpenCL work-groups run as loops).
      Stmt b2;
      State entry2 = visit_body(State(), &b2);
      if (CountBarriers(b2) < CountBarriers(b)) {
        b = b2;
        entry = entry2;
        st = State();
        before = true;
      }
    }
    ignore_ = saved;
    st.Merge(entry);
    for (auto* x : managed) {
      st.r.insert(x);
      st.w[x] = kSeveral;
    }
    bool lead = false;
    if (cond) b = StripCondProbe(b, &lead);
    before |= lead;  // the first evaluation of the condition needs the barrier too
    Stmt loop = rebuild(b);
    if (before) loop = Seq({Evaluate(Call(DataType::Void(), "tl.syncthreads", {}), span), loop}, span);
    return loop;
  }
  /// The body of a while loop after the pass: the condition's probe statement taken out again. A
  /// barrier the probe needed (the condition reads what the end of the body wrote) stays at the end of
  /// the body, and one placed before the loop covers the first evaluation.
  static Stmt StripCondProbe(const Stmt& b, bool* had_lead) {
    auto* seq = As<SeqNode>(b);
    if (!seq) return As<EvaluateNode>(b) ? Seq({}, b->span) : b;
    std::vector<Stmt> rest;
    std::vector<Stmt> lead;
    size_t i = 0;
    for (; i < seq->seq.size(); ++i) {
      if (As<EvaluateNode>(seq->seq[i]) && !IsBarrier(seq->seq[i])) break;
      lead.push_back(seq->seq[i]);  // barriers before the probe
    }
    for (size_t j = i + 1; j < seq->seq.size(); ++j) rest.push_back(seq->seq[j]);
    for (auto& x : lead) rest.push_back(x);  // ... run after the body, before the next evaluation
    *had_lead = !lead.empty();
    return Seq(rest, b->span);
  }
  static bool IsBarrier(const Stmt& s) {
    auto* e = As<EvaluateNode>(s);
    auto* c = e ? As<CallNode>(e->value) : nullptr;
    return c && c->op == "tl.syncthreads";
  }

 public:
  explicit Barriers(bool hoist, bool user_sync = false) : hoist_(hoist), user_sync_(user_sync) {}

 private:
  static int CountBarriers(const Stmt& s) {
    int n = 0;
    PostOrderVisitStmt(s, [&](const Stmt& x) {
      auto* e = As<EvaluateNode>(x);
      auto* c = e ? As<CallNode>(e->value) : nullptr;
      if (c && c->op == "tl.syncthreads") ++n;
    });
    return n;
  }
  bool Tainted(const Expr& e) const { return gpu_pass::ThreadDependent(e, tainted_); }

  // Two shared buffers share bytes: the same buffer, or views of one byte buffer whose byte
  // ranges overlap.
  static bool Alias(const BufferNode* a, const BufferNode* b) {
    if (a == b) return true;
    if (!a->data || a->data != b->data) return false;
    int64_t na = 0, nb = 0;
    AsConstInt(a->shape[0], &na);
    AsConstInt(b->shape[0], &nb);
    int64_t a0 = a->byte_offset, a1 = a0 + na * a->dtype.bytes();
    int64_t b0 = b->byte_offset, b1 = b0 + nb * b->dtype.bytes();
    return a0 < b1 && b0 < a1;
  }
  template <typename A, typename B>
  bool Hits(const A& a, const B& b) const {
    for (auto& x : a)
      for (auto& y : b)
        if (Alias(Key(x), Key(y))) return true;
    return false;
  }
  static const BufferNode* Key(const BufferNode* s) { return s; }
  static const BufferNode* Key(const std::pair<const BufferNode* const, Who>& p) { return p.first; }
  bool WriteAfterWrite(const State& acc, const State& st) const {
    for (auto& [x, who] : acc.w)
      for (auto& [y, prev] : st.w)
        if (Alias(x, y) && (x != y || who != prev || who == kSeveral)) return true;
    return false;
  }

  Stmt Leaf(const Stmt& s, State& st) {
    State acc;
    struct V : IRVisitor {
      State* a;
      const std::set<const BufferNode*>* ign;
      Who who;
      bool user_sync = false;  // the program orders its own shared buffers (those declared in its source)
      const std::set<const BufferNode*>* mbars = nullptr;  // ... but not its mbarriers' initialisation
      bool Skip(const Buffer& b) const {
        return ign->count(b.get()) || (user_sync && b->span.defined() && !mbars->count(b.get()));
      }
      void VisitLoad(const BufferLoadNode* n) override {
        if (n->buffer->scope == Scope::kShared && !Skip(n->buffer)) a->r.insert(n->buffer.get());
        IRVisitor::VisitLoad(n);
      }
      void VisitStore(const StoreNode* n) override {
        if (n->buffer->scope == Scope::kShared && !Skip(n->buffer)) {
          a->w[n->buffer.get()] = who;
          a->tma.erase(n->buffer.get());
        }
        IRVisitor::VisitStore(n);
      }
      void VisitCall(const CallNode* n) override {
        bool writes = n->op == "tl.cp_async" || n->op == "tl.atomic_add" || n->op == "tl.atomic_add_vec" ||
                      n->op == "tl.atomic_max" || n->op == "tl.atomic_min" || n->op == "tl.mbarrier_init" ||
                      n->op == "tl.simdgroup_store" || n->op == "tl.coop_store" ||
                      n->op == "tl.vector_load" || n->op == "tl.tma_load" || n->op == "tl.tma_load_2sm" ||
                      n->op == "tl.tma_load_gather4" || n->op == "tl.vector_store" ||
                      n->op == "tl.atomic_store" || n->op == "tl.stmatrix" || n->op == "tl.tcgen05_alloc" ||
                      n->op == "tl.tcgen05_alloc_cg2";
        if (writes && !n->args.empty()) {
          // (tl.stmatrix(trans, num, shared row address, registers) writes its third operand)
          auto* d = As<BufferLoadNode>(n->args[n->op == "tl.stmatrix" && n->args.size() > 2 ? 2 : 0]);
          if (d && d->buffer->scope == Scope::kShared && !Skip(d->buffer)) {
            const BufferNode* x = d->buffer.get();
            const bool tma =
                (n->op == "tl.tma_load" || n->op == "tl.tma_load_2sm" || n->op == "tl.tma_load_gather4") &&
                n->args.size() > 1 && As<BufferLoadNode>(n->args[1]);
            const auto seen = a->w.find(x);
            if (tma && (seen == a->w.end() || (a->tma.count(x) && StructuralEqual(a->tma[x], n->args[1]))))
              a->tma[x] = n->args[1];
            else
              a->tma.erase(x);
            a->w[x] = who;
          }
          for (auto& x : d ? d->indices : std::vector<Expr>{}) VisitExpr(x);
          for (size_t i = 1; i < n->args.size(); ++i) VisitExpr(n->args[i]);
          return;
        }
        IRVisitor::VisitCall(n);
      }
    } v;
    v.a = &acc;
    v.ign = &ignore_;
    v.user_sync = user_sync_;
    v.mbars = &mbars_;
    v.who = op_ >= 0 ? op_ : --loose_;  // a statement outside any tile op is an op of its own
    v.VisitStmt(s);
    bool conflict = Hits(acc.r, st.w) || WriteAfterWrite(acc, st) || Hits(acc.w, st.r) ||
                    Hits(acc.r, st.ws_w) || Hits(acc.w, st.ws_w) || Hits(acc.w, st.ws_r);
    Stmt out = s;
    if (conflict) {
      out = Seq({Evaluate(Call(DataType::Void(), "tl.syncthreads", {}), s->span), s}, s->span);
      st = State();
    }
    st.Merge(acc);
    return out;
  }

  bool hoist_ = true;  // hoist loop-entry barriers out of loops
  bool user_sync_ = false;  // "tl.user_sync_shared": only compiler scratch (buffers without a source span)
 public:
  // mbarriers (the buffers tl.mbarrier_init initialises): T.alloc_barrier's inits are the compiler's, so even
  // under tl.user_sync_shared a barrier orders them before the barriers' first use
  std::set<const BufferNode*> mbars_;

 private:
  Who op_ = -1;        // the tile op being visited (-1: none)
  Who loose_ = -1;     // ids below -1 for statements outside tile ops
  std::vector<const BufferNode*> pending_managed_;
  std::set<const BufferNode*> ignore_;
  std::set<const VarNode*> tainted_;
};

}  // namespace

PrimFunc InsertBarriers(const PrimFunc& f, const PassContext& ctx) {
  if (ctx.opt.disable_barriers) return f;
  Barriers::State st;
  Barriers b(true, ctx.opt.user_sync_shared);
  PostOrderVisitStmt(f->body, [&](const Stmt& x) {
    auto* e = As<EvaluateNode>(x);
    auto* c = e ? As<CallNode>(e->value) : nullptr;
    auto* l = c && c->op == "tl.mbarrier_init" && !c->args.empty() ? As<BufferLoadNode>(c->args[0]) : nullptr;
    if (l) b.mbars_.insert(l->buffer.get());
  });
  return WithBody(f, b.Visit(f->body, st));
}

}  // namespace tl
