// LayoutInference: fragment layouts to a fixpoint (strict: gemm operands and accumulators,
// reductions; common: T.Parallel nests; free: striped), and the partition of every T.Parallel nest.
#include <optional>
#include "arith/simplify.h"
#include "ir/functor.h"
#include "ir/printer.h"
#include "layout/fragment.h"
#include "layout/hopper_layout.h"
#include "layout/user_layout.h"
#include "transform/gpu_passes.h"
#include "transform/gpu/hopper_wgmma.h"
#include "transform/gpu/warp_specialize.h"
#include "transform/gpu_util.h"
#include "transform/layout_rules.h"
#include "transform/gpu/mfma_rules.h"

namespace tl {
namespace {

using namespace gpu_pass;

struct Access {
  Buffer buffer;
  std::vector<Expr> indices;
  bool store;
};
struct ParallelNest {
  const ForNode* outer;
  std::vector<Var> vars;
  std::vector<int64_t> extents;
  Stmt body;
  std::vector<Access> frags;
  int max_bytes = 1;
  int64_t threads = 0;  // the threads it is partitioned over: the block's, or its T.ws block's warp groups'
};

// Calls Note on the buffer of every load and store it visits.
struct BufferAccesses : IRVisitor {
  virtual void Note(const Buffer& b) = 0;
  void VisitLoad(const BufferLoadNode* n) override {
    Note(n->buffer);
    IRVisitor::VisitLoad(n);
  }
  void VisitStore(const StoreNode* n) override {
    Note(n->buffer);
    IRVisitor::VisitStore(n);
  }
};

std::map<std::string, LayoutRule>& Rules() {
  static std::map<std::string, LayoutRule> r;
  return r;
}

class LayoutInferencer : public LayoutRuleContext {
 public:
  int64_t threads() const override { return threads_; }
  const Fragment* LayoutOf(const BufferNode* b) const override {
    auto it = layout_.find(b);
    return it == layout_.end() ? nullptr : &it->second;
  }

  /// Infers every fragment's layout and every T.Parallel nest's partition of kernel `k`.
  void Run(const KernelNode* k) {
    threads_ = kernel_threads_ = KernelThreads(k);
    region_ = {0, kernel_threads_, Span()};
    for (auto& b : k->alloc_buffers)
      if (b->scope == Scope::kFragment) frags_.push_back(b);
    tx_vars_ = ThreadIndexVars(k->body, &div_vars_);
    uniform_vars_ = BlockUniformVars(k);
    ScanFragmentRegions(k->body);
    // Layouts the program gives (T.annotate_layout) come first: every rule must agree with them, or
    // the conflict names the annotation.
    PostOrderVisitStmt(k->body, [&](const Stmt& x) {
      auto* a = As<AttrStmtNode>(x);
      if (a && a->key == "tl.user_layout" && a->node && a->node->scope == Scope::kShared)
        user_shared_[a->node.get()] = SharedLayoutFromExpr(a->value);
      if (!a || a->key != "tl.user_layout" || !a->node || a->node->scope != Scope::kFragment) return;
      Fragment f = FragmentOverThreads(FragmentFromExpr(a->value), ThreadsOf(a->node.get()), a->node->name, a->span);
      if (!ShapeIs(a->node, f.shape))
        throw UserError(ErrorKind::kLayout,
                        "T.annotate_layout: the fragment given for '" + a->node->name +
                            "' is over a tile of " + "shape " + ShapeText(f.shape) +
                            ", not the buffer's shape",
                        a->span);
      Assign(a->node, f, "T.annotate_layout", a->span);
    });
    // Strictest first: a fragment that scalar code reads or writes (outside T.Parallel and tile
    // ops, the same in every thread) must be whole in every thread.
    for (auto& [b, sp] : ScalarFragmentUses(k->body)) {
      std::vector<int64_t> shape;
      for (auto& e : b->shape)
        shape.push_back(ConstOr(e, b->span, "the shape of fragment '" + b->name + "'"));
      Assign(b, Replicated(shape, ThreadsOf(b.get())), "scalar access outside T.Parallel", sp);
    }
    Collect(k->body);
    bool changed = true;
    while (changed) {
      changed = false;
      for (size_t i = 0; i < ruled_.size(); ++i) {
        threads_ = ruled_threads_[i];
        changed |= Rules().at(ruled_[i]->op)(*this, *ruled_[i]);
      }
      for (auto& n : nests_) {
        threads_ = n.threads;
        changed |= InferNest(n);
      }
      threads_ = kernel_threads_;
      if (!changed) {
        // A fragment that some T.Parallel nest reads as a broadcast (a row vector in a 2-D nest) waits
        // until the nests' own fragments have layouts: the broadcast rule then gives it one that agrees
        // with them, where a free layout chosen first would conflict.
        std::vector<const Buffer*> order;
        for (auto& b : frags_)
          if (!layout_.count(b.get()) && !BroadcastUse(b.get())) order.push_back(&b);
        for (auto& b : frags_)
          if (!layout_.count(b.get()) && BroadcastUse(b.get())) order.push_back(&b);
        for (const Buffer* bp : order) {
          const Buffer& b = *bp;
          std::vector<int64_t> shape;
          for (auto& e : b->shape)
            shape.push_back(ConstOr(e, b->span, "the shape of fragment '" + b->name + "'"));
          Assign(b, Striped(shape, ThreadsOf(b.get()), VecFor(shape.back(), b->dtype.bytes())),
                 "default (free) layout", b->span);
          changed = true;
          break;
        }
      }
    }
    for (auto& n : nests_) {
      threads_ = n.threads;
      loop_layout_[n.outer] = LoopLayout(n);
    }
    threads_ = kernel_threads_;
  }

  /// The kernel with the results in the IR: `tl.layout` on the body for each fragment (in
  /// allocation order) and `tl.loop_layout` on the outer loop of each T.Parallel nest.
  Stmt Annotate(const Stmt& kernel) {
    struct Mut : IRMutator {
      LayoutInferencer* self;
      Stmt VisitFor(const Stmt& s, const ForNode* n) override {
        Stmt r = IRMutator::VisitFor(s, n);
        auto it = self->loop_layout_.find(n);
        if (it == self->loop_layout_.end()) return r;
        auto* f = As<ForNode>(r);
        auto ann = f->annotations;
        ann["tl.loop_layout"] = FragmentToExpr(it->second);
        return For(f->var, f->min, f->extent, f->for_kind, f->body, ann, f->span);
      }
      Stmt VisitKernel(const Stmt& s, const KernelNode* k) override {
        Stmt body = VisitStmt(k->body);
        for (auto b = self->frags_.rbegin(); b != self->frags_.rend(); ++b)
          body = AttrStmt(*b, "tl.layout", FragmentToExpr(self->layout_.at(b->get())), body, k->span);
        return std::make_shared<KernelNode>(k->grid, k->block_vars, k->threads, k->alloc_buffers,
                                            k->var_inits, body, k->span);
      }
    } m;
    m.self = this;
    return m.VisitStmt(kernel);
  }

 private:
  int64_t VecFor(int64_t inner, int bytes) const {
    int64_t v = std::max<int64_t>(1, 16 / std::max(1, bytes));
    while (v > 1 && inner % v) v /= 2;
    // whole 16-byte chunks where shared memory takes them from registers (global -> LDS copies)
    return features_.vector_shared_stores ? v : std::min<int64_t>(v, 4);
  }

  // Fragments accessed by statements outside T.Parallel nests and tile ops, with the first span.
  static std::vector<std::pair<Buffer, Span>> ScalarFragmentUses(const Stmt& body) {
    struct V : BufferAccesses {
      std::vector<std::pair<Buffer, Span>> out;
      Span span;
      void Note(const Buffer& b) override {
        if (b->scope != Scope::kFragment) return;
        for (auto& o : out)
          if (o.first == b) return;
        out.push_back({b, span});
      }
      void VisitStmt(const Stmt& s) override {
        if (s && s->span.defined()) span = s->span;
        IRVisitor::VisitStmt(s);
      }
      void VisitFor(const ForNode* n) override {
        if (n->for_kind != ForKind::kParallel) IRVisitor::VisitFor(n);
      }
      void VisitTileOp(const StmtNode*) override {}
    } v;
    v.VisitStmt(body);
    return v.out;
  }

  // The threads a T.ws block's tile work is partitioned over (its warp groups'), or the block's, and where
  // (the base: its first thread).
  struct ThreadRegion {
    int64_t base = 0, count = 0;
    Span span;
  };
  ThreadRegion RegionOf(const AttrStmtNode* a, const ThreadRegion& outer) const {
    if (a->key != "tl.warp_specialized" || !FirstTileWork(a->body)) return outer;
    CheckWsBlockOps(a, features_);  // consecutive warp groups, named barriers (gpu/warp_specialize.cc)
    WsBlock b = WsBlockOf(a);
    return {b.base, b.count, a->span};
  }
  // The regions of the branches of `if (cond)` inside `outer`: those of a condition on the thread index that
  // selects whole warp groups (`tx < 128`), else `outer` (both false when the condition is not such a range).
  std::pair<ThreadRegion, ThreadRegion> BranchRegions(const IfNode* i, const ThreadRegion& outer) const {
    const BranchThreads b = SplitBranches(i, {outer.base, outer.base + outer.count}, tx_vars_, features_,
                                          &uniform_vars_, &div_vars_);
    auto region = [&](ThreadRange g) { return ThreadRegion{g.lo, g.hi - g.lo, i->span}; };
    return {region(b.then_region), region(b.else_region)};
  }
  std::set<const VarNode*> tx_vars_;  // variables bound to the thread index (tx = T.get_thread_binding())
  std::map<const VarNode*, int64_t> div_vars_;  // bound to it divided by a constant (warp_idx = tx // 32)
  std::set<const VarNode*> uniform_vars_;  // variables every thread of a block holds alike
  /// Each fragment is used by the threads of one region: all of the block's, or one T.ws block's warp groups
  /// (whose registers hold it); a fragment two regions use is a UserError naming both.
  void ScanFragmentRegions(const Stmt& body) {
    struct V : BufferAccesses {
      LayoutInferencer* self;
      ThreadRegion cur;
      Span span;
      void Note(const Buffer& b) override {
        if (!b || b->scope != Scope::kFragment) return;
        auto [it, fresh] = self->frag_region_.insert({b.get(), {cur.base, cur.count, span}});
        if (fresh || (it->second.base == cur.base && it->second.count == cur.count)) return;
        auto name = [&](const ThreadRegion& r) {
          return r.count == self->kernel_threads_ ? "all " + std::to_string(r.count) + " threads of the block"
                                                  : "threads " + std::to_string(r.base) + ".." +
                                                        std::to_string(r.base + r.count - 1) +
                                                        " (a T.ws block or a branch on the thread index)";
        };
        throw UserError(ErrorKind::kLayout,
                        "fragment '" + b->name + "' is used by " + name(it->second) + " at " +
                            Loc(it->second.span) + " and by " + name(cur) +
                            ": a fragment lives in the registers of the threads that use it. Give each its own "
                            "fragment and pass values between them through shared memory",
                        span);
      }
      void VisitStmt(const Stmt& s) override {
        if (s && s->span.defined()) span = s->span;
        if (auto* i = As<IfNode>(s)) {
          VisitExpr(i->cond);
          auto [t, e] = self->BranchRegions(i, cur);
          ThreadRegion saved = cur;
          cur = t;
          VisitStmt(i->then_case);
          cur = e;
          if (i->else_case) VisitStmt(i->else_case);
          cur = saved;
          return;
        }
        if (auto* a = As<AttrStmtNode>(s)) {
          ThreadRegion saved = cur;
          cur = self->RegionOf(a, cur);
          IRVisitor::VisitStmt(s);
          cur = saved;
          return;
        }
        if (auto* op = As<TileOpNode>(s))
          for (auto& [r, acc] : op->Regions()) Note(r->buffer);
        IRVisitor::VisitStmt(s);
      }
    } v;
    v.self = this;
    v.cur = {0, kernel_threads_, Span()};
    v.VisitStmt(body);
  }
  int64_t ThreadsOf(const BufferNode* b) const {
    auto it = frag_region_.find(b);
    return it == frag_region_.end() ? kernel_threads_ : it->second.count;
  }

  void Collect(const Stmt& s) {
    if (!s) return;
    switch (s->kind) {
      case StmtKind::kSeq:
        for (auto& x : As<SeqNode>(s)->seq) Collect(x);
        return;
      case StmtKind::kLet: Collect(As<LetNode>(s)->body); return;
      case StmtKind::kAttr: {
        auto* a = As<AttrStmtNode>(s);
        ThreadRegion saved = region_;
        region_ = RegionOf(a, region_);
        Collect(a->body);
        region_ = saved;
        return;
      }
      case StmtKind::kWhile: Collect(As<WhileNode>(s)->body); return;
      case StmtKind::kIf: {
        auto* i = As<IfNode>(s);
        auto [t, e] = BranchRegions(i, region_);
        ThreadRegion saved = region_;
        region_ = t;
        Collect(i->then_case);
        region_ = e;
        Collect(i->else_case);
        region_ = saved;
        return;
      }
      case StmtKind::kTileOp: {
        // an op whose operands constrain fragment layouts has a rule (LayoutRuleRegistrar)
        auto* op = As<TileOpNode>(s);
        if (Rules().count(op->op)) {
          ruled_.push_back(op);
          ruled_threads_.push_back(region_.count);
        }
        return;
      }
      case StmtKind::kFor: {
        auto* f = As<ForNode>(s);
        if (f->for_kind != ForKind::kParallel) {
          Collect(f->body);
          return;
        }
        ParallelNest n;
        n.outer = f;
        n.threads = region_.count;
        Stmt cur = s;
        while (auto* ff = As<ForNode>(cur)) {
          if (ff->for_kind != ForKind::kParallel) break;
          n.vars.push_back(ff->var);
          n.extents.push_back(ConstOr(ff->extent, ff->span, "the extent of a T.Parallel loop"));
          if (!IsConstInt(Simplify(ff->min), 0))
            throw UserError(ErrorKind::kUnsupported, "T.Parallel loops must start at 0", ff->span);
          cur = ff->body;
        }
        n.body = cur;
        PostOrderVisitStmt(cur, [&](const Stmt& x) {
          if (auto* st = As<StoreNode>(x)) {
            n.max_bytes = std::max(n.max_bytes, st->buffer->dtype.bytes());
            if (st->buffer->scope == Scope::kFragment) n.frags.push_back({st->buffer, st->indices, true});
          }
          if (auto* f2 = As<ForNode>(x); f2 && f2->for_kind == ForKind::kParallel)
            throw UserError(ErrorKind::kUnsupported,
                            "a T.Parallel loop nested under other statements of a T.Parallel "
                            "loop is not supported on CUDA; make the loops perfectly nested",
                            f2->span);
        });
        struct LoadV : IRVisitor {
          ParallelNest* n;
          void VisitLoad(const BufferLoadNode* l) override {
            n->max_bytes = std::max(n->max_bytes, l->buffer->dtype.bytes());
            if (l->buffer->scope == Scope::kFragment) n->frags.push_back({l->buffer, l->indices, false});
            IRVisitor::VisitLoad(l);
          }
        } lv;
        lv.n = &n;
        lv.VisitStmt(cur);
        nests_.push_back(std::move(n));
        return;
      }
      default: return;
    }
  }

  bool Assign(const Buffer& b, const Fragment& f, const std::string& why, const Span& sp) override {
    auto it = layout_.find(b.get());
    if (it != layout_.end()) {
      if (it->second.SameAs(f)) return false;
      throw UserError(ErrorKind::kLayout,
                      "layout conflict for fragment '" + b->name + "': " + it->second.origin + " gives it " +
                          it->second.desc + ", but " + why + " (" + Loc(sp) + ") needs " + f.desc +
                          ". Copy the data into a second fragment between the two uses",
                      sp);
    }
    Fragment placed = f;
    placed.origin = why + " at " + Loc(sp);
    layout_[b.get()] = placed;
    return true;
  }

 public:  // the built-in ops' layout rules (registered below)
  bool InferGemm(const GemmNode* g) {
    if (features_.matrix == MatrixUnit::kMfma)
      return InferGemmMfma(*this, g, features_);  // HIP: src/transform/gpu/mfma_rules.cc
    if (g->C.buffer->scope != Scope::kFragment)
      throw UserError(ErrorKind::kUnsupported,
                      "T.gemm on CUDA needs its accumulator C in a fragment (T.alloc_fragment)", g->span);
    auto cd = TileDims(g->C);
    if (cd.size() != 2) throw UserError(ErrorKind::kType, "T.gemm accumulator must be a 2-D tile", g->span);
    int64_t M = ConstOr(g->C.ranges[cd[0]].extent, g->span, "the gemm tile"),
            N = ConstOr(g->C.ranges[cd[1]].extent, g->span, "the gemm tile");
    if (threads_ % 32)
      throw UserError(
          ErrorKind::kLayout,
          "T.gemm needs a whole number of warps; the kernel has " + std::to_string(threads_) + " threads",
          g->span);
    int64_t warps = threads_ / 32;
    if (WgmmaPlan p = PlanWgmma(g, features_, opt_, threads_, &user_shared_);
        p.ok) {  // sm_90a: the wgmma accumulator (and A)
      bool ch =
          Assign(g->C.buffer, WgmmaAccumulator(M, N, p.wgm, p.wgn), "T.gemm accumulator (wgmma)", g->span);
      // A in registers: the accumulator layout over M x K for 16-bit types; for 8-bit ones (k32) the same
      // registers over M x K/2 with each 16-bit slot holding two consecutive bytes along K.
      if (g->A.buffer->scope == Scope::kFragment)
        ch |= Assign(g->A.buffer,
                     g->A.buffer->dtype.bytes() == 1
                         ? ByteSplitFragment(WgmmaAccumulator(M, p.K / 2, p.wgm, 1), 1)
                         : WgmmaAccumulator(M, p.K, p.wgm, 1),
                     "T.gemm register operand A (wgmma)", g->span);
      return ch;
    }
    auto [wm, wn] = WarpGrid(M, N, warps, g);
    bool ch = Assign(g->C.buffer, MmaAccumulator(M, N, wm, wn), "T.gemm accumulator", g->span);
    if (g->A.buffer->scope == Scope::kFragment) {
      auto ad = TileDims(g->A);
      // Warps that split N share their rows of A: each holds a copy (wn replicas, as TileLang lays it out).
      // A stored [K, M] (transpose_A) holds the same registers, indexed the other way round.
      int64_t K = ConstOr(g->A.ranges[g->trans_A ? ad[0] : ad.back()].extent, g->span, "the gemm tile");
      // float32 operands run on mma.sync m16n8k8 .tf32, whose A fragment has its own element placement.
      const bool tf32 = g->A.buffer->dtype == DataType::Float(32) && features_.matrix == MatrixUnit::kMmaSync;
      // 8-bit operands (int8, fp8: mma.sync m16n8k32) hold the bytes of the 16-bit layout of half the K.
      const bool b8 = g->A.buffer->dtype.bits() == 8 && features_.matrix == MatrixUnit::kMmaSync;
      Fragment fa = tf32 ? MmaOperandATf32(M, K, wm, wn)
                    : b8 ? ByteSplitFragment(MmaOperandA(M, K / 2, wm, wn), 1)
                         : MmaOperandA(M, K, wm, wn);
      if (g->trans_A) fa = ReorderFragment(fa, {1, 0});
      ch |= Assign(g->A.buffer, fa, "T.gemm register operand A", g->span);
    }
    if (g->B.buffer->scope == Scope::kFragment) {
      auto bd = TileDims(g->B);
      int64_t K = ConstOr(g->B.ranges[g->trans_B ? bd[1] : bd[0]].extent, g->span, "the gemm tile");
      const bool tf32 = g->B.buffer->dtype == DataType::Float(32) && features_.matrix == MatrixUnit::kMmaSync;
      const bool b8 = g->B.buffer->dtype.bits() == 8 && features_.matrix == MatrixUnit::kMmaSync;
      ch |= Assign(g->B.buffer,
                   tf32 ? MmaOperandBTf32(K, N, wm, wn, g->trans_B)
                   : b8 ? ByteSplitFragment(MmaOperandB(K / 2, N, wn, g->trans_B, wm), g->trans_B ? 1 : 0)
                        : MmaOperandB(K, N, wn, g->trans_B, wm),
                   "T.gemm register operand B", g->span);
    }
    return ch;
  }

  std::pair<int64_t, int64_t> WarpGrid(int64_t M, int64_t N, int64_t warps, const GemmNode* g) {
    try {
      // The split depends on the policy and the tile only (as in TileLang), not on where the operands
      // live: two gemms into one accumulator agree, and a register operand shared by the warps of the
      // other axis is held by each of them (MmaOperandA / MmaOperandB replicas).
      return GemmWarpGrid(M, N, warps, static_cast<int>(g->policy));
    } catch (const UserError& e) {
      throw UserError(ErrorKind::kLayout, e.raw_message(), g->span);
    }
  }

  bool InferReduce(const ReduceNode* r) {
    if (r->src.buffer->scope != Scope::kFragment || r->dst.buffer->scope != Scope::kFragment)
      throw UserError(ErrorKind::kUnsupported, "T.reduce on CUDA reduces a fragment into a fragment",
                      r->span);
    auto it = layout_.find(r->src.buffer.get());
    if (it == layout_.end() || layout_.count(r->dst.buffer.get())) return false;
    const Fragment& s = it->second;
    if (s.kind == "mfma_C" && r->dim == 1)
      return Assign(r->dst.buffer, MfmaRows(s.params[0], s.params[2], s.params[3], s.params[4]),
                    "T.reduce of an MFMA accumulator", r->span);
    if (s.kind == "mma_C" && r->dim == 1)
      return Assign(r->dst.buffer, RowsOfAccumulator(s), "T.reduce of an mma accumulator", r->span);
    // rows held a row a thread (tensor memory read with one column group): row i's value stays on its thread,
    // the reduction within it
    if (s.RowPerThread() && r->dim == 1 && r->dst.buffer->shape.size() == 1 &&
        IsConstInt(r->dst.buffer->shape[0], s.shape[0]) && s.threads == threads_) {
      Fragment f = NewFragment({s.shape[0]}, threads_, 1, 1,
                               "rows(" + std::to_string(s.shape[0]) + ", a thread a row, of '" + r->src.buffer->name + "')");
      f.kind = "rows";
      f.index = {f.tid};
      f.thread = f.idx[0];
      f.local = Int(0);
      return Assign(r->dst.buffer, f, "T.reduce of rows of tensor memory", r->span);
    }
    std::vector<int64_t> shape;
    for (auto& e : r->dst.buffer->shape) shape.push_back(ConstOr(e, r->span, "a reduction's shape"));
    return Assign(r->dst.buffer, Replicated(shape, threads_), "T.reduce", r->span);
  }

 private:
  static bool IsLoopIndex(const std::vector<Expr>& idx, const std::vector<Var>& vars) {
    if (idx.size() != vars.size()) return false;
    for (size_t i = 0; i < idx.size(); ++i)
      if (Simplify(idx[i]).get() != vars[i].get()) return false;
    return true;
  }
  /// Whether `idx` is a permutation of the loop vars (each index one distinct var); perm[d] = the loop
  /// dimension of index d.
  static bool PermIndex(const std::vector<Expr>& idx, const std::vector<Var>& vars, std::vector<int>* perm) {
    if (idx.size() != vars.size()) return false;
    perm->assign(idx.size(), -1);
    std::vector<bool> used(vars.size(), false);
    for (size_t d = 0; d < idx.size(); ++d) {
      Expr e = Simplify(idx[d]);
      for (size_t j = 0; j < vars.size(); ++j)
        if (e.get() == vars[j].get() && !used[j]) {
          (*perm)[d] = static_cast<int>(j);
          used[j] = true;
        }
      if ((*perm)[d] < 0) return false;
    }
    return true;
  }
  /// A fragment indexed by a permutation of the loop vars with the loop's extents in that order (a
  /// transposing nest, `q_t[k, i] = q[i, k]`).
  static bool Transposed(const Access& a, const ParallelNest& n, std::vector<int>* perm) {
    if (!PermIndex(a.indices, n.vars, perm) || IsLoopIndex(a.indices, n.vars)) return false;
    std::vector<int64_t> ext;
    for (int j : *perm) ext.push_back(n.extents[static_cast<size_t>(j)]);
    return ShapeIs(a.buffer, ext);
  }
  static std::string ShapeText(const std::vector<int64_t>& s) {
    std::string r = "(";
    for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
    return r + ")";
  }
  static bool ShapeIs(const Buffer& b, const std::vector<int64_t>& ext) {
    if (b->shape.size() != ext.size()) return false;
    for (size_t i = 0; i < ext.size(); ++i)
      if (!IsConstInt(Simplify(b->shape[i]), ext[i])) return false;
    return true;
  }

  // The layout a nest is partitioned by: that of a fragment indexed by exactly the loop vars.
  /// True when a T.Parallel nest reads fragment `b` other than by the nest's own index over its whole
  /// extent (a broadcast).
  bool BroadcastUse(const BufferNode* b) const {
    // the destination of a reduction waits too: the reduction's rule gives it the layout that fits its source
    for (auto* op : ruled_)
      if (auto* r = As<ReduceNode>(op); r && r->dst.buffer.get() == b) return true;
    for (auto& n : nests_)
      for (auto& a : n.frags)
        if (a.buffer.get() == b && !(IsLoopIndex(a.indices, n.vars) && ShapeIs(a.buffer, n.extents))) return true;
    return false;
  }

  std::optional<Fragment> Driver(const ParallelNest& n) {
    const Fragment* f = nullptr;
    for (auto& a : n.frags) {
      if (!IsLoopIndex(a.indices, n.vars) || !ShapeIs(a.buffer, n.extents)) continue;
      auto it = layout_.find(a.buffer.get());
      if (it != layout_.end() && (!f || f->kind == "replicated")) f = &it->second;
    }
    if (f) return *f;
    // A fragment with a layout read or written transposed: the nest runs its elements where it holds them.
    std::vector<int> perm;
    for (auto& a : n.frags) {
      auto it = layout_.find(a.buffer.get());
      if (it == layout_.end() || it->second.kind == "replicated" || !Transposed(a, n, &perm)) continue;
      std::vector<int> src_of(perm.size());
      for (size_t d = 0; d < perm.size(); ++d) src_of[static_cast<size_t>(perm[d])] = static_cast<int>(d);
      return ReorderFragment(it->second, src_of);
    }
    return std::nullopt;
  }

  bool InferNest(ParallelNest& n) {
    std::optional<Fragment> f = Driver(n);
    if (!f) return false;
    bool ch = false;
    Fragment drv = *f;
    std::vector<int> perm;
    for (auto& a : n.frags) {
      if (layout_.count(a.buffer.get())) continue;
      if (IsLoopIndex(a.indices, n.vars) && ShapeIs(a.buffer, n.extents)) {
        ch |= Assign(a.buffer, drv, "the T.Parallel loop", n.outer->span);
      } else if (drv.kind != "replicated" && Transposed(a, n, &perm)) {
        // written or read transposed: element [.., i, .., k, ..] lives where the loop runs it
        ch |= Assign(a.buffer, ReorderFragment(drv, perm), "the T.Parallel loop (transposed)", n.outer->span);
      } else if (a.indices.size() == 1 && Simplify(a.indices[0]).get() == n.vars[0].get() &&
                 drv.kind == "mma_C" && ShapeIs(a.buffer, {n.extents[0]})) {
        ch |= Assign(a.buffer, RowsOfAccumulator(drv), "the T.Parallel loop (row vector)", n.outer->span);
      } else if (a.indices.size() == 1 && Simplify(a.indices[0]).get() == n.vars[0].get() &&
                 drv.kind == "mfma_C" && ShapeIs(a.buffer, {n.extents[0]})) {
        ch |= Assign(a.buffer, MfmaRows(drv.params[0], drv.params[2], drv.params[3], drv.params[4]),
                     "the T.Parallel loop (row vector)", n.outer->span);
      } else {
        std::vector<int64_t> shape;
        for (auto& e : a.buffer->shape) shape.push_back(ConstOr(e, a.buffer->span, "a fragment's shape"));
        ch |= Assign(a.buffer, Replicated(shape, threads_), "the T.Parallel loop (broadcast)", n.outer->span);
      }
    }
    return ch;
  }

  Fragment LoopLayout(const ParallelNest& n) {
    // A nest that only writes per-thread locals (T.alloc_local / T.alloc_var: each thread has its own
    // copy, e.g. T.clear(acc) on one) runs whole in every thread, as TileLang's T.fill of a local does;
    // split over the threads, each would set only its share of its own copy.
    bool stores = false, only_locals = true;
    PostOrderVisitStmt(n.body, [&](const Stmt& x) {
      if (auto* st = As<StoreNode>(x)) {
        stores = true;
        only_locals &= st->buffer->scope == Scope::kLocal || st->buffer->scope == Scope::kLocalVar;
      }
    });
    if (stores && only_locals) return Replicated(n.extents, threads_);
    // A nest that writes a replicated fragment other than by the nest's own index runs whole in every
    // thread: each thread must update its own copy of every element (e.g. a copy into a (1, N) tile).
    for (auto& a : n.frags) {
      auto it = layout_.find(a.buffer.get());
      if (a.store && it != layout_.end() && it->second.kind == "replicated" &&
          !(IsLoopIndex(a.indices, n.vars) && ShapeIs(a.buffer, n.extents)))
        return Replicated(n.extents, threads_);
    }
    // A nest over the rows of a fragment that gives each row a thread of its own (Fragment::RowPerThread:
    // tensor memory read with one column group), reading or writing it at [row, column]: a column window
    // (`C[:, j * 64:(j
    // + 1) * 64]` in an unrolled loop, the window's start not known here) or a row loop with an inner serial
    // or vectorized column loop (`for i in T.Parallel(M): for j in T.vectorized(N): S[i, j] = ...`): each
    // thread runs its row's iterations.
    auto rows = [&]() -> std::optional<Fragment> {
      if ((n.vars.size() != 1 && n.vars.size() != 2) || n.extents[0] != threads_) return std::nullopt;
      for (auto& a : n.frags) {  // (a replicated fragment written here must stay whole in every thread)
        auto it = layout_.find(a.buffer.get());
        if (a.store && it != layout_.end() && it->second.kind == "replicated") return std::nullopt;
      }
      for (auto& a : n.frags) {
        auto it = layout_.find(a.buffer.get());
        if (it == layout_.end() || !it->second.RowPerThread() || a.indices.size() != 2 ||
            Simplify(a.indices[0]).get() != n.vars[0].get())
          continue;
        const int64_t cols = n.vars.size() == 2 ? n.extents[1] : 1;
        Fragment f = NewFragment(n.extents, threads_, cols, 1,
                                 "rows(" + std::to_string(n.extents[0]) + (n.vars.size() == 2 ? "x" + std::to_string(cols) : "") +
                                     ", a thread a row, as '" + a.buffer->name + "')");
        f.kind = "rows";
        if (n.vars.size() == 2) {
          f.index = {f.tid, f.loc};
          f.local = f.idx[1];
        } else {
          f.index = {f.tid};
          f.local = Int(0);
        }
        f.thread = f.idx[0];
        return f;
      }
      return std::nullopt;
    };
    // (before a replicated driver: a row vector read by the rows, `scores_max[i]`)
    std::optional<Fragment> drv = Driver(n);
    if (drv && drv->kind != "replicated") return *drv;
    if (std::optional<Fragment> r = rows()) return *r;
    if (drv) return *drv;
    // A nest over a 1-D fragment's own row vector indexes it with a prefix of the loop vars.
    for (auto& a : n.frags) {
      auto it = layout_.find(a.buffer.get());
      if (it != layout_.end() && it->second.kind == "replicated" && n.vars.size() == a.indices.size() &&
          IsLoopIndex(a.indices, n.vars))
        return it->second;
    }
    return Striped(n.extents, threads_, VecFor(n.extents.back(), n.max_bytes));
  }

  int64_t threads_ = 0;         // the threads of the op or nest whose rule runs (ThreadRegion)
  int64_t kernel_threads_ = 0;  // the block's
  ThreadRegion region_;         // Collect: the threads of the enclosing region
  std::map<const BufferNode*, ThreadRegion> frag_region_;

 public:
  GpuFeatures features_;
  GpuOptions opt_;

 private:
  std::map<const BufferNode*, Fragment> layout_;
  std::map<const BufferNode*, SharedLayout> user_shared_;  // T.annotate_layout on shared tiles
  std::map<const ForNode*, Fragment> loop_layout_;
  std::vector<Buffer> frags_;
  std::vector<const TileOpNode*> ruled_;  // in program order
  std::vector<int64_t> ruled_threads_;    // the threads each runs on
  std::vector<ParallelNest> nests_;
};

// The rules of gemm and reduce: gemm fixes its accumulator (and register operands) to the matrix unit's
// layouts of its warp grid; a reduction of an accumulator along its rows is a row fragment, other
// reductions are replicated. (T.cumsum's rule is next to its lowering, gpu/lower_cumsum.cc.)
const LayoutRuleRegistrar kGemmRule("gemm", [](LayoutRuleContext& c, const TileOpNode& n) {
  return static_cast<LayoutInferencer&>(c).InferGemm(static_cast<const GemmNode*>(&n));
});
// T.mma_gemm_blockscaled: the accumulator as T.gemm's where the matrix unit has scaled instructions (MFMA:
// CDNA4; mma.sync block_scale: sm_120a); elsewhere no rule (its lowering, absent there, says so).
const LayoutRuleRegistrar kGemmBlockScaledRule("gemm_blockscaled", [](LayoutRuleContext& c,
                                                                      const TileOpNode& n) {
  auto& inf = static_cast<LayoutInferencer&>(c);
  if (inf.features_.matrix == MatrixUnit::kMfma)
    return InferGemmMfma(c, static_cast<const GemmNode*>(&n), inf.features_);
  return inf.features_.block_scale_mma_sync && inf.InferGemm(static_cast<const GemmNode*>(&n));
});
const LayoutRuleRegistrar kReduceRule("reduce", [](LayoutRuleContext& c, const TileOpNode& n) {
  return static_cast<LayoutInferencer&>(c).InferReduce(static_cast<const ReduceNode*>(&n));
});

}  // namespace

void RegisterLayoutRule(const std::string& op, LayoutRule rule) { Rules()[op] = std::move(rule); }

PrimFunc InferLayouts(const PrimFunc& f, const PassContext& ctx) {
  LayoutInferencer inf;
  inf.features_ = ctx.features;
  inf.opt_ = ctx.opt;
  inf.Run(FindKernel(f->body));
  return WithBody(f, inf.Annotate(f->body));
}

}  // namespace tl
