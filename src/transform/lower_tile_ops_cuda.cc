// LowerTileOpsCUDA: tile ops and T.Parallel / T.Pipelined loops -> thread-level IR
// (docs/thread_ir.md). See lower_cuda.h for what each part does.
#include <cmath>
#include <set>

#include "arith/simplify.h"
#include "ir/functor.h"
#include "ir/printer.h"
#include "ir/structural.h"
#include "layout/fragment.h"
#include "transform/cuda_passes.h"
#include "transform/cuda_util.h"

namespace tl {
namespace {

using namespace cuda_pass;

class Lowerer : public IRMutator {
 public:
  explicit Lowerer(const CudaPassContext& ctx) : ctx_(ctx) {}

  Stmt VisitKernel(const Stmt& s, const KernelNode* n) override {
    tx_ = MakeVar("tx");
    T_ = KernelThreads(n);
    // The facts of the earlier passes: fragment layouts wrap the kernel body; stage counts wrap
    // pipelined loops.
    Stmt kbody = n->body;
    while (auto* a = As<AttrStmtNode>(kbody)) {
      if (a->key != "tl.layout") break;
      layout_[a->node.get()] = &Decode(a->value);
      kbody = a->body;
    }
    PostOrderVisitStmt(kbody, [&](const Stmt& x) {
      if (auto* a = As<AttrStmtNode>(x); a && a->key == "tl.num_stages") {
        int64_t k = 1;
        AsConstInt(a->value, &k);
        stages_[a->node.get()] = k;
      }
    });
    std::vector<Buffer> allocs;
    for (auto& b : n->alloc_buffers) allocs.push_back(MapBuffer(b));
    Stmt body = VisitStmt(kbody);
    for (auto& b : extra_) allocs.push_back(b);
    body = Let(tx_, Call(DataType::Int(32), "tl.thread_idx", {}), body, n->span);
    // The tile shape and stage count of each flattened shared buffer, for the shared-memory table.
    for (auto it = n->alloc_buffers.rbegin(); it != n->alloc_buffers.rend(); ++it) {
      if ((*it)->scope != Scope::kShared) continue;
      std::vector<Expr> tile{Int(Stages(*it))};
      for (auto& d : (*it)->shape) tile.push_back(d);
      body = AttrStmt(MapBuffer(*it), "tl.shared_tile", Call(DataType::Handle(), "list", tile), body, n->span);
    }
    std::vector<std::pair<Buffer, Expr>> inits;
    for (auto& [b, v] : n->var_inits) inits.push_back({MapBuffer(b), v});
    (void)s;
    return std::make_shared<KernelNode>(n->grid, n->block_vars, std::vector<Expr>{C(T_)}, allocs, inits, body, n->span);
  }

  Stmt VisitFor(const Stmt& s, const ForNode* n) override {
    if (n->for_kind == ForKind::kParallel) return OpScope(LowerParallel(n), n->span);
    if (n->for_kind == ForKind::kPipelined) return LowerPipelined(n);
    return IRMutator::VisitFor(s, n);
  }

  Stmt VisitAttr(const Stmt& s, const AttrStmtNode* n) override {
    if (n->key == "tl.num_stages") return VisitStmt(n->body);  // consumed (see VisitKernel)
    if (n->key == "tl.copy_async") {
      auto* c = As<CopyNode>(n->body);
      TL_ICHECK(c, "tl.copy_async must wrap a T.copy");
      return OpScope(Seq({AsyncCopy(c), Call0("tl.cp_async_commit", {}, s->span),
                          Call0("tl.cp_async_wait", {C(0)}, s->span)}, s->span), s->span);
    }
    return IRMutator::VisitAttr(s, n);
  }

  Stmt VisitTileOp(const Stmt& s) override { return OpScope(LowerTileOp(s), s->span); }

  Stmt LowerTileOp(const Stmt& s) {
    switch (s->kind) {
      case StmtKind::kCopy:
        throw InternalError("T.copy left after legalization: " + PrintStmt(s));
      case StmtKind::kGemm: return LowerGemm(As<GemmNode>(s));
      case StmtKind::kReduce: return LowerReduce(As<ReduceNode>(s));
      case StmtKind::kCumsum: return LowerCumsum(As<CumsumNode>(s));
      case StmtKind::kAtomicAdd: {
        auto* a = As<AtomicAddNode>(s);
        std::vector<Expr> di;
        for (auto& rg : a->dst.ranges) di.push_back(VisitExpr(rg.min));
        Expr v = VisitExpr(a->value);
        if (v->dtype != a->dst.buffer->dtype) v = Cast(a->dst.buffer->dtype, v);
        Stmt st = Call0("tl.atomic_add", {MapLoad(a->dst.buffer, di), v}, s->span);
        return GuardOne(st, s->span);
      }
      default:
        throw InternalError("tile op left after legalization: " + PrintStmt(s));
    }
  }

  Expr VisitLoad(const Expr& e, const BufferLoadNode* n) override {
    bool ch = false;
    auto idx = VisitExprs(n->indices, &ch);
    (void)e;
    return MapLoad(n->buffer, idx);
  }

  Stmt VisitStore(const Stmt& s, const StoreNode* n) override {
    (void)s;
    if (!cur_loop_) cur_span_ = n->span;
    Expr v = VisitExpr(n->value);
    bool ch = false;
    auto idx = VisitExprs(n->indices, &ch);
    Expr mapped = MapLoad(n->buffer, idx, /*as_value=*/false);
    auto* ml = As<BufferLoadNode>(mapped);
    Stmt st = Store(ml->buffer, v, ml->indices, n->span);
    Scope sc = n->buffer->scope;
    if (sc == Scope::kGlobal || sc == Scope::kShared) st = GuardOne(st, n->span);
    return st;
  }

  Expr VisitCall(const Expr& e, const CallNode* n) override {
    if (n->op == "atomic_add" && n->args.size() == 2) {
      auto* addr = As<CallNode>(n->args[0]);
      TL_ICHECK(addr && addr->op == "address_of", "atomic_add takes an address");
      Expr dst = VisitExpr(addr->args[0]);
      return Call(DataType::Void(), "tl.atomic_add", {dst, VisitExpr(n->args[1])});
    }
    return IRMutator::VisitCall(e, n);
  }

  Stmt VisitStmt(const Stmt& s) override {
    // T.print outside a parallel loop runs once per block, like a scalar store.
    if (auto* ev = As<EvaluateNode>(s); ev && !cur_loop_)
      if (auto* c = As<CallNode>(ev->value); c && c->op == "print")
        return If(Eq(tx_, C(0)), IRMutator::VisitStmt(s), nullptr, s->span);
    return IRMutator::VisitStmt(s);
  }

  Stmt VisitSeq(const Stmt& s, const SeqNode* n) override {
    (void)s;
    std::vector<Stmt> out;
    for (auto& x : n->seq) out.push_back(VisitStmt(x));
    return Seq(out, n->span);
  }

 private:
  // The thread-level statements of one tile op (or T.Parallel nest), marked as one op for the
  // barrier analysis: writes of one op come from one thread partition.
  Stmt OpScope(const Stmt& body, const Span& sp) {
    if (!body) return body;
    return AttrStmt(nullptr, "tl.tile_op", Int(op_count_++), body, sp);
  }

  // Layouts decoded once per distinct value, so equal layouts are one Fragment object.
  const Fragment& Decode(const Expr& e) {
    uint64_t h = StructuralHash(e, /*map_free_vars=*/false);
    auto range = decoded_.equal_range(h);
    for (auto it = range.first; it != range.second; ++it)
      if (StructuralEqual(it->second.first, e, /*map_free_vars=*/false)) return it->second.second;
    return decoded_.emplace(h, std::make_pair(e, FragmentFromExpr(e)))->second.second;
  }
  const Fragment& Layout(const BufferNode* b) {
    auto it = layout_.find(b);
    TL_ICHECK(it != layout_.end(), "fragment without a tl.layout: " + b->name);
    return *it->second;
  }

  // Statements outside T.Parallel that write global/shared memory run on thread 0 only;
  // in a replicated T.Parallel instance, on replica 0 only.
  Stmt GuardOne(const Stmt& st, const Span& sp) {
    if (cur_loop_) {
      if (cur_loop_->replicas > 1) return If(Eq(cur_loop_->ReplicaOf(tx_), C(0)), st, nullptr, sp);
      return st;
    }
    return If(Eq(tx_, C(0)), st, nullptr, sp);
  }

  Buffer MapBuffer(const Buffer& b) {
    auto it = bmap_.find(b.get());
    if (it != bmap_.end()) return it->second;
    Buffer nb = b;
    if (b->scope == Scope::kShared) {
      int64_t n = 1;
      for (auto& e : b->shape) n *= ConstOr(e, b->span, "the shape of shared buffer '" + b->name + "'");
      int64_t st = Stages(b);
      nb = MakeBuffer(b->name, b->dtype, {C(n * st)}, Scope::kShared, b->span);
    } else if (b->scope == Scope::kFragment) {
      const Fragment& lt = Layout(b.get());
      nb = MakeBuffer(b->name, b->dtype, {C(lt.locals)}, Scope::kLocal, b->span);
      ctx_.info->layouts[b->name] = lt.desc;
    } else if (b->scope == Scope::kLocal) {
      int64_t n = 1;
      for (auto& e : b->shape) n *= ConstOr(e, b->span, "the shape of local buffer '" + b->name + "'");
      nb = MakeBuffer(b->name, b->dtype, {C(n)}, Scope::kLocal, b->span);
    }
    bmap_[b.get()] = nb;
    return nb;
  }
  int64_t Stages(const Buffer& b) const {
    auto it = stages_.find(b.get());
    return it == stages_.end() ? 1 : it->second;
  }

  // Physical index of a shared element: stage offset + swizzled (row, col) of its tile.
  Expr SharedIndex(const Buffer& b, const std::vector<Expr>& idx) {
    std::vector<int64_t> shape;
    for (auto& e : b->shape) shape.push_back(ConstOr(e, b->span, "a shared buffer's shape"));
    int64_t size = 1;
    for (auto s : shape) size *= s;
    Expr off;
    if (shape.size() == 1) {
      off = idx[0];
    } else {
      Expr row = C(0);
      for (size_t d = 0; d + 1 < shape.size(); ++d) row = row * C(shape[d]) + idx[d];
      off = SwizzledOffset(Simplify(row), Simplify(idx.back()), shape.back(), b->dtype.bytes());
    }
    auto st = stage_.find(b.get());
    if (st != stage_.end()) off = st->second * C(size) + off;
    return Simplify(off);
  }

  // `as_value`: the access is read (a thread-dependent index into a small register array may then
  // become a select chain); a store target must stay a plain indexed access.
  Expr MapLoad(const Buffer& b, const std::vector<Expr>& idx, bool as_value = true) {
    switch (b->scope) {
      case Scope::kGlobal: return Load(b, idx);
      case Scope::kShared: return Load(MapBuffer(b), {SharedIndex(b, idx)});
      case Scope::kLocalVar: return Load(MapBuffer(b), idx);
      case Scope::kLocal: {
        Expr flat = C(0);
        for (size_t d = 0; d < idx.size(); ++d) flat = flat * b->shape[d] + idx[d];
        return Load(MapBuffer(b), {Simplify(flat)});
      }
      case Scope::kFragment: {
        Expr local = FragmentLocal(b, idx);
        Buffer nb = MapBuffer(b);
        int64_t c, n = 0;
        AsConstInt(nb->shape[0], &n);
        if (!as_value || AsConstInt(local, &c) || n > 16) return Load(nb, {local});
        // A thread-dependent register index into a small array: a select chain over constant
        // indices keeps the array in registers.
        Expr v = Load(nb, {C(n - 1)});
        for (int64_t i = n - 2; i >= 0; --i) v = Select(Eq(local, C(i)), Load(nb, {C(i)}), v);
        return v;
      }
    }
    return nullptr;
  }

  // The register index of fragment element `idx` in the current T.Parallel instance, with a check
  // (by enumerating threads) that the executing thread holds that element.
  Expr FragmentLocal(const Buffer& b, const std::vector<Expr>& idx) {
    if (!cur_loop_)
      throw UserError(ErrorKind::kUnsupported, "fragment '" + b->name + "' is accessed outside a T.Parallel loop or tile "
                                               "op; on CUDA each thread holds only part of it", cur_span_);
    const Fragment& F = Layout(b.get());
    bool same_idx = idx.size() == cur_idx_.size();
    for (size_t i = 0; same_idx && i < idx.size(); ++i) same_idx = ProveEqual(idx[i], cur_idx_[i]);
    if (same_idx && (&F == cur_loop_ || F.SameAs(*cur_loop_))) return cur_loc_expr_ ? cur_loc_expr_ : C(cur_loc_);
    Expr local = F.LocalOf(idx);
    int64_t lv;
    if (AsConstInt(local, &lv)) {
      CheckOwner(b, F, idx);
      return local;
    }
    // Constant across threads? Evaluate for each thread.
    std::map<const VarNode*, int64_t> env;
    int64_t first = 0;
    bool constant = true;
    for (int64_t t = 0; t < T_ && constant; ++t) {
      env[tx_.get()] = t;
      int64_t v;
      if (!EvalInt(local, env, &v)) { constant = false; break; }
      if (t == 0) first = v; else if (v != first) constant = false;
    }
    CheckOwner(b, F, idx);
    return constant ? C(first) : local;
  }

  void CheckOwner(const Buffer& b, const Fragment& F, const std::vector<Expr>& idx) {
    if (F.kind == "replicated") return;
    auto& owners = Owners(b, F);
    std::map<const VarNode*, int64_t> env;
    for (int64_t t = 0; t < T_; ++t) {
      env[tx_.get()] = t;
      int64_t valid = 1;
      if (cur_valid_ && (!EvalInt(cur_valid_, env, &valid))) return;
      if (!valid) continue;
      int64_t flat = 0;
      for (size_t d = 0; d < idx.size(); ++d) {
        int64_t v;
        if (!EvalInt(idx[d], env, &v)) return;  // depends on other vars: cannot check statically
        if (v < 0 || v >= F.shape[d]) return;   // out of the tile: a guard elsewhere decides
        flat = flat * F.shape[d] + v;
      }
      auto& o = owners[static_cast<size_t>(flat)];
      if (std::find(o.begin(), o.end(), t) == o.end()) {
        std::string where = "(";
        for (size_t d = 0; d < idx.size(); ++d) where += (d ? ", " : "") + PrintExpr(idx[d]);
        throw UserError(ErrorKind::kLayout,
                        "layout conflict in T.Parallel loop: thread " + std::to_string(t) + " runs the iteration that "
                        "touches " + b->name + where + "), but fragment '" + b->name + "' has layout " + F.desc + " (" +
                        F.origin + ") and the loop is partitioned by " + cur_loop_->desc +
                        "; copy the fragment so both sides agree",
                        cur_span_);
      }
    }
  }

  std::vector<std::vector<int64_t>>& Owners(const Buffer& b, const Fragment& F) {
    auto it = owners_.find(b.get());
    if (it != owners_.end()) return it->second;
    int64_t total = 1;
    for (auto s : F.shape) total *= s;
    std::vector<std::vector<int64_t>> o(static_cast<size_t>(total));
    std::map<const VarNode*, int64_t> env;
    for (int64_t t = 0; t < F.threads; ++t) {
      env[F.tid.get()] = t;
      for (int64_t l = 0; l < F.locals; ++l) {
        env[F.loc.get()] = l;
        int64_t ok = 1;
        if (F.valid && (!EvalInt(F.valid, env, &ok) || !ok)) continue;
        int64_t flat = 0;
        for (size_t d = 0; d < F.index.size(); ++d) {
          int64_t v = 0;
          EvalInt(F.index[d], env, &v);
          flat = flat * F.shape[d] + v;
        }
        if (flat >= 0 && flat < total) o[static_cast<size_t>(flat)].push_back(t);
      }
    }
    return owners_[b.get()] = std::move(o);
  }

  // ---- T.Parallel --------------------------------------------------------------------------
  Stmt LowerParallel(const ForNode* outer) {
    auto it = outer->annotations.find("tl.loop_layout");
    TL_ICHECK(it != outer->annotations.end(), "T.Parallel nest without a tl.loop_layout");
    const Fragment& F = Decode(it->second);
    ctx_.info->choices.push_back(Loc(outer->span) + ": parallel loop nest partitioned by " + F.desc + ", " +
                                  std::to_string(F.locals) + " element(s) per thread");
    std::vector<Var> vars;
    Stmt body = outer->body;
    vars.push_back(outer->var);
    while (auto* f = As<ForNode>(body)) {
      if (f->for_kind != ForKind::kParallel) break;
      vars.push_back(f->var);
      body = f->body;
    }
    std::vector<Stmt> out;
    const Fragment* saved = cur_loop_;
    Span saved_span = cur_span_;
    cur_loop_ = &F;
    cur_span_ = outer->span;
    auto instance = [&](const Expr& l) {
      std::vector<Expr> idx = F.IndexAt(tx_, l);
      if (ctx_.opt.corrupt_mma_layout && F.kind == "mma_C")  // test hook: swap the two columns of each pair
        idx[1] = Simplify(idx[1] + C(1) - Mod(idx[1], 2) * C(2));
      std::map<const VarNode*, Expr> vm;
      for (size_t d = 0; d < vars.size(); ++d) vm[vars[d].get()] = idx[d];
      cur_idx_ = idx;
      cur_valid_ = F.ValidAt(tx_, l);
      Stmt inst = VisitStmt(Substitute(body, vm));
      if (cur_valid_) inst = If(cur_valid_, inst, nullptr, outer->span);
      return inst;
    };
    if (OnlyOwnFragment(body, vars, F)) {
      // Every fragment access is the partitioning fragment at the loop's own index: one loop over
      // the thread's registers, unrolled by the CUDA compiler (small source, fast NVRTC).
      Stmt vec = Vectorized(F, instance, outer->span);
      if (vec) {
        out.push_back(vec);
      } else {
        Var l = MakeVar("l");
        cur_loc_expr_ = l;
        out.push_back(For(l, C(0), C(F.locals), ForKind::kUnrolled, instance(l), {}, outer->span));
      }
      cur_loc_expr_ = nullptr;
    } else {
      for (int64_t l = 0; l < F.locals; ++l) {
        cur_loc_ = l;
        out.push_back(instance(C(l)));
      }
    }
    cur_loop_ = saved;
    cur_span_ = saved_span;
    cur_valid_ = nullptr;
    return Seq(out, outer->span);
  }

  // Registers l = lo*V + v (v < V) of a thread hold V consecutive elements of the tile's last axis
  // (pairs in an mma accumulator, vec-wide chunks in a striped layout). When the loop body is one
  // (guarded) global store whose guard is the same for the whole chunk and whose address is
  // V-aligned, the chunk becomes one `kVectorized` loop under the guard, printed as a single wide
  // store. Returns null when that cannot be proven.
  Stmt Vectorized(const Fragment& F, const std::function<Stmt(const Expr&)>& instance, const Span& sp) {
    int64_t V = F.kind == "mma_C" ? 2 : (F.kind == "striped" && !F.params.empty() ? F.params[0] : 1);
    if (V < 2 || F.locals % V || F.valid) return nullptr;
    Var lo = MakeVar("l"), v = MakeVar("v");
    cur_loc_expr_ = Expr(lo) * C(V) + Expr(v);
    Stmt inst = instance(cur_loc_expr_);
    BoundMap bm{{lo.get(), {0, F.locals / V - 1}}, {v.get(), {0, V - 1}}, {tx_.get(), {0, T_ - 1}}};
    inst = Simplify(inst, bm);
    std::vector<Expr> conds;
    Stmt cur = inst;
    while (auto* i = As<IfNode>(cur)) {
      if (i->else_case) return nullptr;
      conds.push_back(i->cond);
      cur = i->then_case;
    }
    auto* st = As<StoreNode>(cur);
    if (!st) return nullptr;
    auto zero = [&](const Expr& e) { return Simplify(Substitute(e, {{v.get(), C(0)}}), bm); };
    auto unit_stride = [&](const Expr& e) {  // e = e0 + v with e0 a multiple of V
      Expr e0 = zero(e);
      return IsConstInt(Simplify(e - e0 - Expr(v), bm), 0) && IsConstInt(Simplify(Mod(e0, V), bm), 0);
    };
    // Every guard must hold for all lanes of the chunk or for none.
    std::function<bool(const Expr&)> uniform = [&](const Expr& c) -> bool {
      if (!UsesVar(c, v.get())) return true;
      auto* b = As<BinaryNode>(c);
      if (!b) return false;
      if (b->op == BinaryOp::kAnd) return uniform(b->a) && uniform(b->b);
      int64_t bound;
      return b->op == BinaryOp::kLT && !UsesVar(b->b, v.get()) && AsConstInt(Simplify(b->b), &bound) && bound % V == 0 &&
             unit_stride(b->a);
    };
    // A V-wide, V-aligned access of a global tensor (its rows a multiple of V long).
    auto wide = [&](const Buffer& b, const std::vector<Expr>& idx) {
      int64_t width;
      if (b->scope != Scope::kGlobal || !AsConstInt(Simplify(b->shape.back()), &width) || width % V) return false;
      int bytes = b->dtype.bytes() * static_cast<int>(V);
      if (bytes != 4 && bytes != 8 && bytes != 16) return false;
      for (size_t d = 0; d + 1 < idx.size(); ++d)
        if (UsesVar(idx[d], v.get())) return false;
      return unit_stride(idx.back());
    };
    std::string kind;
    if (wide(st->buffer, st->indices)) {
      kind = "tl.vector_store";
    } else if (st->buffer->scope == Scope::kLocal) {
      // register <- [cast] global, or <- [cast] select(in_bounds, global, 0) (a guarded tile load)
      Expr x = st->value;
      if (auto* c = As<CastNode>(x)) x = c->value;
      if (auto* sel = As<SelectNode>(x)) {
        int64_t z;
        auto* fz = As<FloatImmNode>(sel->false_value);
        if (!uniform(sel->cond) || !((fz && fz->value == 0.0) || (AsConstInt(sel->false_value, &z) && z == 0))) return nullptr;
        x = sel->true_value;
      }
      auto* ld = As<BufferLoadNode>(x);
      if (!ld || !wide(ld->buffer, ld->indices)) return nullptr;
      kind = "tl.vector_load";
    } else {
      return nullptr;
    }
    Expr guard;
    for (auto& c : conds) {
      if (!uniform(c)) return nullptr;
      guard = And(guard, zero(c));
    }
    Stmt body = For(v, C(0), C(V), ForKind::kVectorized, cur, {{kind, C(V)}}, sp);
    ctx_.info->choices.push_back(Loc(sp) + ": " + std::to_string(V) + "-wide vector " +
                                  (kind == "tl.vector_store" ? "stores to " + st->buffer->name : "loads into " + st->buffer->name));
    if (guard) body = If(guard, body, nullptr, sp);
    return For(lo, C(0), C(F.locals / V), ForKind::kUnrolled, body, {}, sp);
  }

  bool OnlyOwnFragment(const Stmt& body, const std::vector<Var>& vars, const Fragment& F) {
    bool ok = true;
    auto check = [&](const Buffer& b, const std::vector<Expr>& idx) {
      if (b->scope != Scope::kFragment) return;
      auto it = layout_.find(b.get());
      if (it == layout_.end() || !(it->second == &F || it->second->SameAs(F)) || idx.size() != vars.size()) {
        ok = false;
        return;
      }
      for (size_t d = 0; d < idx.size(); ++d)
        if (Simplify(idx[d]).get() != vars[d].get()) ok = false;
    };
    struct V : IRVisitor {
      std::function<void(const Buffer&, const std::vector<Expr>&)> f;
      void VisitLoad(const BufferLoadNode* n) override { f(n->buffer, n->indices); IRVisitor::VisitLoad(n); }
      void VisitStore(const StoreNode* n) override { f(n->buffer, n->indices); IRVisitor::VisitStore(n); }
    } v;
    v.f = check;
    v.VisitStmt(body);
    return ok;
  }

  // ---- copies --------------------------------------------------------------------------------
  Stmt AsyncCopy(const CopyNode* n) {
    const Buffer& g = n->src.buffer;
    const Buffer& s = n->dst.buffer;
    int64_t vec = 16 / g->dtype.bytes();
    auto sd = TileDims(n->src), dd = TileDims(n->dst);
    std::vector<int64_t> ext;
    for (size_t d : dd) ext.push_back(ConstOr(n->dst.ranges[d].extent, n->span, "a copy's tile"));
    TL_ICHECK(sd.size() == dd.size(), "copy tile ranks differ");
    int64_t total = 1;
    for (auto e : ext) total *= e;
    int64_t chunks = total / vec;
    int64_t iters = (chunks + T_ - 1) / T_;
    std::vector<Expr> gmin, smin;
    for (auto& r : n->src.ranges) gmin.push_back(VisitExpr(r.min));
    for (auto& r : n->dst.ranges) smin.push_back(VisitExpr(r.min));
    std::vector<Stmt> out;
    Var itv = MakeVar("it");
    {
      Expr c = Expr(itv) * C(T_) + tx_;
      Expr e = c * C(vec);  // first element of the chunk, row-major over the tile
      std::vector<Expr> t(ext.size());
      Expr rest = e;
      for (size_t d = ext.size(); d-- > 0;) {
        t[d] = d == 0 ? rest : Mod(rest, ext[d]);
        rest = Div(rest, ext[d]);
      }
      auto gi = gmin, si = smin;
      for (size_t d = 0; d < sd.size(); ++d) {
        gi[sd[d]] = Simplify(gi[sd[d]] + t[d]);
        si[dd[d]] = Simplify(si[dd[d]] + t[d]);
      }
      Expr ok;
      for (size_t d = 0; d < gi.size(); ++d) ok = And(ok, Lt(gi[d], g->shape[d]));
      ok = ok ? Simplify(ok) : Bool(true);
      Stmt st = Call0("tl.cp_async", {Load(MapBuffer(s), {SharedIndex(s, si)}), Load(g, gi), C(16), ok}, n->span);
      if (iters * T_ > chunks) st = If(Lt(c, C(chunks)), st, nullptr, n->span);
      out.push_back(iters == 1 ? Substitute(st, {{itv.get(), C(0)}}) : For(itv, C(0), C(iters), ForKind::kUnrolled, st, {}, n->span));
    }
    return Seq(out, n->span);
  }

  // ---- T.Pipelined -------------------------------------------------------------------------
  Stmt LowerPipelined(const ForNode* n) {
    int64_t s = 1;
    auto a = n->annotations.find("num_stages");
    if (a != n->annotations.end()) AsConstInt(a->second, &s);
    std::vector<Stmt> body;
    if (auto* sq = As<SeqNode>(n->body)) body = sq->seq; else body.push_back(n->body);
    std::vector<const CopyNode*> producers;
    std::vector<Stmt> consumers;
    for (auto& st : body) {
      auto* a = As<AttrStmtNode>(st);
      auto* c = a && a->key == "tl.copy_async" ? As<CopyNode>(a->body) : nullptr;
      if (c && Stages(c->dst.buffer) == s && s >= 2) producers.push_back(c);
      else consumers.push_back(st);
    }
    Var ko = n->var;
    Expr mn = VisitExpr(n->min), ext = VisitExpr(n->extent);
    if (producers.empty()) {
      Stmt b = VisitStmt(n->body);
      return For(ko, mn, ext, ForKind::kSerial, b, {}, n->span);
    }
    std::vector<Buffer> managed;
    ctx_.info->choices.push_back(Loc(n->span) + ": T.Pipelined: " + std::to_string(s) + "-stage cp.async pipeline (" +
                                  std::to_string(producers.size()) + " copies prefetched " + std::to_string(s - 1) +
                                  " iteration(s) ahead, one barrier per iteration)");
    for (auto* c : producers) {
      stage_[c->dst.buffer.get()] = Mod(ko - mn, s);
      managed.push_back(MapBuffer(c->dst.buffer));
    }
    std::vector<Stmt> prod;
    for (auto* c : producers) prod.push_back(OpScope(AsyncCopy(c), c->span));
    Stmt producer = Seq(prod, n->span);
    std::vector<Stmt> cons;
    for (auto& st : consumers) cons.push_back(VisitStmt(st));
    for (auto* c : producers) stage_.erase(c->dst.buffer.get());
    auto at = [&](const Expr& iter) { return Substitute(producer, {{ko.get(), mn + iter}}); };
    std::vector<Stmt> out;
    Stmt commit = Call0("tl.cp_async_commit", {}, n->span);
    for (int64_t p = 0; p + 1 < s; ++p) {
      out.push_back(If(Lt(C(p), ext), at(C(p)), nullptr, n->span));
      out.push_back(commit);
    }
    // Steady state: wait for this iteration's stage, one barrier (which also retires the
    // previous iteration's reads of the stage about to be refilled), prefetch, compute.
    Var k = MakeVar(ko->name);
    std::vector<Stmt> steady;
    steady.push_back(Call0("tl.cp_async_wait", {C(s - 2)}, n->span));
    if (!ctx_.opt.disable_barriers) steady.push_back(Call0("tl.syncthreads", {}, n->span));
    steady.push_back(If(Lt(Expr(k) + C(s - 1), ext), at(Expr(k) + C(s - 1)), nullptr, n->span));
    steady.push_back(commit);
    steady.push_back(Substitute(Seq(cons, n->span), {{ko.get(), mn + Expr(k)}}));
    // The steady state's waits and barrier order the stage buffers: the barrier pass leaves them.
    Stmt loop = For(k, C(0), ext, ForKind::kSerial, Seq(steady, n->span), {}, n->span);
    for (auto m = managed.rbegin(); m != managed.rend(); ++m) loop = AttrStmt(*m, "tl.pipeline_managed", Int(1), loop, n->span);
    out.push_back(loop);
    out.push_back(Call0("tl.cp_async_wait", {C(0)}, n->span));
    return Seq(out, n->span);
  }

  // ---- T.gemm ------------------------------------------------------------------------------
  Buffer Scratch(const std::string& base, DataType t, int64_t n, Scope sc) {
    std::string name = base + "_" + std::to_string(extra_.size());
    Buffer b = MakeBuffer(name, t, {C(n)}, sc);
    extra_.push_back(b);
    return b;
  }

  Stmt LowerGemm(const GemmNode* g) {
    const Fragment& CF = Layout(g->C.buffer.get());
    int64_t M = CF.params[0], N = CF.params[1], wm = CF.params[2], wn = CF.params[3];
    DataType at = g->A.buffer->dtype, bt = g->B.buffer->dtype;
    bool f16 = at == DataType::Float(16) && bt == DataType::Float(16);
    bool b16 = at == DataType::BFloat16() && bt == DataType::BFloat16();
    if ((!f16 && !b16) || g->C.buffer->dtype != DataType::Float(32))
      throw UserError(ErrorKind::kUnsupported,
                      "T.gemm on CUDA (mma.sync m16n8k16) takes float16 or bfloat16 A and B with a float32 accumulator; "
                      "got A " + at.str() + ", B " + bt.str() + ", C " + g->C.buffer->dtype.str(), g->span);
    auto ad = TileDims(g->A), bd = TileDims(g->B);
    if (ad.size() != 2 || bd.size() != 2) throw UserError(ErrorKind::kType, "T.gemm operands must be 2-D tiles", g->span);
    int64_t K = ConstOr(g->trans_A ? g->A.ranges[ad[0]].extent : g->A.ranges[ad[1]].extent, g->span, "the gemm K");
    int64_t Kb = ConstOr(g->trans_B ? g->B.ranges[bd[1]].extent : g->B.ranges[bd[0]].extent, g->span, "the gemm K");
    if (K != Kb) throw UserError(ErrorKind::kType, "T.gemm: A and B disagree on K", g->span);
    if (K % 16)
      throw UserError(ErrorKind::kLayout, "T.gemm on CUDA needs K to be a multiple of 16 (mma.sync m16n8k16); K = " +
                                              std::to_string(K), g->span);
    int64_t wM = M / wm, wN = N / wn, mt = wM / 16, nt = wN / 8;
    Span sp = g->span;
    ctx_.info->choices.push_back(
        Loc(sp) + ": T.gemm: mma.sync m16n8k16 " + (f16 ? "f16" : "bf16") + ", warps " + std::to_string(wm) + "x" +
        std::to_string(wn) + ", " + std::to_string(wM) + "x" + std::to_string(wN) + " per warp (" + std::to_string(mt) + "x" +
        std::to_string(nt) + " mma tiles per k16 step); A " +
        (g->A.buffer->scope == Scope::kFragment ? "in registers" : std::string("by ldmatrix.x4") + (g->trans_A ? ".trans" : "")) +
        ", B " + (g->B.buffer->scope == Scope::kFragment ? "in registers" : std::string("by ldmatrix") + (g->trans_B ? "" : ".trans")));
    Expr warp = Div(tx_, 32), lane = Mod(tx_, 32);
    Expr wmi = Mod(warp, wm), wnj = Div(warp, wm);
    Buffer cl = MapBuffer(g->C.buffer);
    std::vector<Stmt> out;
    if (g->clear_accum) {
      Var i = MakeVar("i");
      out.push_back(For(i, C(0), C(CF.locals), ForKind::kUnrolled, Store(cl, FloatImm(DataType::Float(32), 0.0), {i}, sp), {}, sp));
    }
    bool a_reg = g->A.buffer->scope == Scope::kFragment;
    bool b_reg = g->B.buffer->scope == Scope::kFragment;
    Buffer afrag = a_reg ? MapBuffer(g->A.buffer) : Scratch("A_frag", at, mt * 8, Scope::kLocal);
    Buffer bfrag = b_reg ? MapBuffer(g->B.buffer) : Scratch("B_frag", bt, nt * 4, Scope::kLocal);
    std::string ab = f16 ? "f16" : "bf16";
    auto shared_at = [&](const Region& r, const std::vector<size_t>& dims, const Expr& row, const Expr& col) {
      std::vector<Expr> idx;
      for (auto& rg : r.ranges) idx.push_back(VisitExpr(rg.min));
      idx[dims[0]] = Simplify(idx[dims[0]] + row);
      idx[dims[1]] = Simplify(idx[dims[1]] + col);
      return Load(MapBuffer(r.buffer), {SharedIndex(r.buffer, idx)});
    };
    Var kk = MakeVar("kk"), i = MakeVar("i"), j = MakeVar("j");
    std::vector<Stmt> step;
    if (!a_reg) {
      Expr q = Div(lane, 8), r8 = Mod(lane, 8);
      Expr row, col;  // stored coordinates this lane points at
      if (!g->trans_A) {  // stored [M, K]: matrices (m0-7,k0-7) (m8-15,k0-7) (m0-7,k8-15) (m8-15,k8-15)
        row = wmi * C(wM) + Expr(i) * C(16) + Mod(q, 2) * C(8) + r8;
        col = Expr(kk) * C(16) + Div(q, 2) * C(8);
      } else {            // stored [K, M], loaded transposed
        row = Expr(kk) * C(16) + Div(q, 2) * C(8) + r8;
        col = wmi * C(wM) + Expr(i) * C(16) + Mod(q, 2) * C(8);
      }
      step.push_back(For(i, C(0), C(mt), ForKind::kUnrolled,
                         Call0("tl.ldmatrix", {C(g->trans_A ? 1 : 0), C(4), Load(afrag, {Expr(i) * C(8)}),
                                               shared_at(g->A, ad, Simplify(row), Simplify(col))}, sp), {}, sp));
    }
    // B: x4 loads cover two n8 tiles (k0-7, k8-15 of tile j, then of tile j+1); an odd last tile uses x2.
    auto bload = [&](const Expr& j0, int num) {
      Expr q = Div(lane, 8), r8 = Mod(lane, 8);
      if (num == 2) q = Mod(q, 2);
      Expr row, col;
      if (!g->trans_B) {  // stored [K, N], loaded transposed
        row = Expr(kk) * C(16) + Mod(q, 2) * C(8) + r8;
        col = wnj * C(wN) + (j0 + Div(q, 2)) * C(8);
      } else {            // stored [N, K]
        row = wnj * C(wN) + (j0 + Div(q, 2)) * C(8) + r8;
        col = Expr(kk) * C(16) + Mod(q, 2) * C(8);
      }
      return Call0("tl.ldmatrix", {C(g->trans_B ? 0 : 1), C(num), Load(bfrag, {Simplify(j0 * C(4))}),
                                   shared_at(g->B, bd, Simplify(row), Simplify(col))}, sp);
    };
    if (!b_reg && nt / 2 > 0) step.push_back(For(j, C(0), C(nt / 2), ForKind::kUnrolled, bload(Expr(j) * C(2), 4), {}, sp));
    if (!b_reg && nt % 2) step.push_back(bload(C(nt - 1), 2));
    Expr a_off = a_reg ? (Expr(i) * C(K / 16) + Expr(kk)) * C(8) : Expr(i) * C(8);
    Expr b_off = b_reg ? (Expr(kk) * C(nt) + Expr(j)) * C(4) : Expr(j) * C(4);
    Stmt mma = Call0("tl.mma_sync", {StringImm("m16n8k16"), StringImm(ab), Load(afrag, {Simplify(a_off)}),
                                     Load(bfrag, {Simplify(b_off)}), Load(cl, {(Expr(i) * C(nt) + Expr(j)) * C(4)})}, sp);
    step.push_back(For(i, C(0), C(mt), ForKind::kUnrolled, For(j, C(0), C(nt), ForKind::kUnrolled, mma, {}, sp), {}, sp));
    out.push_back(For(kk, C(0), C(K / 16), ForKind::kUnrolled, Seq(step, sp), {}, sp));
    return Seq(out, sp);
  }

  // ---- reductions --------------------------------------------------------------------------
  static Expr Identity(ReduceKind k, DataType t) {
    switch (k) {
      case ReduceKind::kSum: case ReduceKind::kAbsSum: case ReduceKind::kAbsMax:
        return t.is_float() ? FloatImm(t, 0.0) : IntImm(t, 0);
      case ReduceKind::kMax: return t.is_float() ? FloatImm(t, -INFINITY) : Call(t, "min_value", {});
      case ReduceKind::kMin: return t.is_float() ? FloatImm(t, INFINITY) : Call(t, "max_value", {});
    }
    return nullptr;
  }
  static Expr Combine(ReduceKind k, const Expr& a, const Expr& b) {
    switch (k) {
      case ReduceKind::kSum: case ReduceKind::kAbsSum: return Binary(BinaryOp::kAdd, a, b);
      case ReduceKind::kMax: case ReduceKind::kAbsMax: return Binary(BinaryOp::kMax, a, b);
      case ReduceKind::kMin: return Binary(BinaryOp::kMin, a, b);
    }
    return nullptr;
  }
  static Expr Elem(ReduceKind k, Expr v, DataType t) {
    if (v->dtype != t) v = Cast(t, v);
    if (k == ReduceKind::kAbsSum || k == ReduceKind::kAbsMax) v = Call(t, "abs", {v});
    return v;
  }

  Stmt LowerReduce(const ReduceNode* r) {
    const Fragment& S = Layout(r->src.buffer.get());
    const Fragment& D = Layout(r->dst.buffer.get());
    DataType t = r->dst.buffer->dtype;
    Buffer src = MapBuffer(r->src.buffer), dst = MapBuffer(r->dst.buffer);
    Span sp = r->span;
    ReduceKind k = r->reduce_kind;
    std::vector<Stmt> out;
    if (S.kind == "mma_C" && D.kind == "mma_rows" && r->dim == 1 && D.params[0] == S.params[0] &&
        D.params[2] == S.params[2] && D.params[3] == S.params[3]) {
      int64_t M = S.params[0], N = S.params[1], wm = S.params[2], wn = S.params[3];
      int64_t mt = M / wm / 16, nt = N / wn / 8;
      ctx_.info->choices.push_back(Loc(sp) + ": T.reduce of an mma accumulator: in-thread, 2 quad shuffles" +
                                    (wn > 1 ? ", then across " + std::to_string(wn) + " warps through shared memory" : ""));
      Buffer part = Scratch("red", t, mt * 2, Scope::kLocal);
      Buffer xs = wn > 1 ? Scratch("red_smem", t, wn * M, Scope::kShared) : nullptr;
      std::vector<std::pair<int64_t, Expr>> cross;  // (register, row) of the partials exchanged across warps
      Expr warp = Div(tx_, 32), lane = Mod(tx_, 32);
      for (int64_t d = 0; d < mt * 2; ++d) {
        int64_t ti = d / 2, rh = d % 2;
        Var tj = MakeVar("tj");
        Expr base = (C(ti * nt) + Expr(tj)) * C(4) + C(rh * 2);
        Expr both = Combine(k, Elem(k, Load(src, {base}), t), Elem(k, Load(src, {Simplify(base + C(1))}), t));
        out.push_back(Store(part, Identity(k, t), {C(d)}, sp));
        out.push_back(For(tj, C(0), C(nt), ForKind::kUnrolled, Store(part, Combine(k, Load(part, {C(d)}), both), {C(d)}, sp), {}, sp));
        for (int m : {1, 2})
          out.push_back(Store(part, Combine(k, Load(part, {C(d)}), Call(t, "tl.shfl_xor", {Load(part, {C(d)}), C(m)})), {C(d)}, sp));
        if (xs) {
          Expr row = Simplify(Mod(warp, wm) * C(M / wm) + C(ti * 16 + rh * 8) + Div(lane, 4));
          out.push_back(If(Eq(Mod(lane, 4), C(0)), Store(xs, Load(part, {C(d)}), {Simplify(Div(warp, wm) * C(M) + row)}, sp), nullptr, sp));
          cross.push_back({d, row});
        }
      }
      if (xs) {
        // (the barrier pass puts a __syncthreads between the writes above and these reads)
        for (auto& [d, row] : cross) {
          Var w = MakeVar("w");
          out.push_back(Store(part, Identity(k, t), {C(d)}, sp));
          out.push_back(For(w, C(0), C(wn), ForKind::kUnrolled,
                            Store(part, Combine(k, Load(part, {C(d)}), Load(xs, {Simplify(Expr(w) * C(M) + row)})), {C(d)}, sp), {}, sp));
        }
      }
      for (int64_t d = 0; d < mt * 2; ++d) {
        Expr v = Load(part, {C(d)});
        out.push_back(Store(dst, r->clear ? v : Combine(k, Load(dst, {C(d)}), v), {C(d)}, sp));
      }
      return Seq(out, sp);
    }
    if (D.kind != "replicated")
      throw UserError(ErrorKind::kLayout, "T.reduce: the destination '" + r->dst.buffer->name + "' has layout " + D.desc +
                                              ", which this reduction of " + S.desc + " along dim " + std::to_string(r->dim) +
                                              " cannot produce", sp);
    // Generic: per-thread partials over the thread's own elements, a butterfly over the warp,
    // then one partial per warp through shared memory.
    ctx_.info->choices.push_back(Loc(sp) + ": T.reduce of " + S.desc + ": per-thread partials, 5-step warp butterfly, " +
                                  "then per-warp partials through shared memory");
    int64_t nd = 1;
    for (auto& e : r->dst.buffer->shape) nd *= ConstOr(e, sp, "a reduction's shape");
    Buffer part = Scratch("red", t, nd, Scope::kLocal);
    Var d = MakeVar("d");
    out.push_back(For(d, C(0), C(nd), ForKind::kUnrolled, Store(part, Identity(k, t), {d}, sp), {}, sp));
    for (int64_t l = 0; l < S.locals; ++l) {
      auto idx = S.IndexAt(tx_, C(l));
      Expr flat = C(0);
      for (size_t a = 0; a < idx.size(); ++a)
        if (static_cast<int>(a) != r->dim) flat = flat * C(S.shape[a]) + idx[a];
      flat = Simplify(flat);
      Stmt st;
      int64_t fc;
      if (AsConstInt(flat, &fc) || nd > 32) {
        st = Store(part, Combine(k, Load(part, {flat}), Elem(k, Load(src, {C(l)}), t)), {flat}, sp);
      } else {
        // The destination slot depends on the thread: select it among the (few) slots with constant
        // register indices rather than indexing the register array at run time (local memory).
        Var e = MakeVar("e");
        Expr upd = Select(Eq(flat, Expr(e)), Combine(k, Load(part, {e}), Elem(k, Load(src, {C(l)}), t)), Load(part, {e}));
        st = For(e, C(0), C(nd), ForKind::kUnrolled, Store(part, upd, {e}, sp), {}, sp);
      }
      Expr g = S.ValidAt(tx_, C(l));
      if (S.replicas > 1) g = And(g, Eq(S.ReplicaOf(tx_), C(0)));
      out.push_back(g ? If(g, st, nullptr, sp) : st);
    }
    std::vector<Stmt> bf;
    for (int m : {16, 8, 4, 2, 1})
      bf.push_back(Store(part, Combine(k, Load(part, {d}), Call(t, "tl.shfl_xor", {Load(part, {d}), C(m)})), {d}, sp));
    out.push_back(For(d, C(0), C(nd), ForKind::kSerial, Seq(bf, sp), {}, sp));
    int64_t warps = (T_ + 31) / 32;
    if (warps > 1) {
      Buffer xs = Scratch("red_smem", t, warps * nd, Scope::kShared);
      Expr warp = Div(tx_, 32), lane = Mod(tx_, 32);
      out.push_back(If(Eq(lane, C(0)), For(d, C(0), C(nd), ForKind::kSerial,
                                           Store(xs, Load(part, {d}), {Simplify(warp * C(nd) + Expr(d))}, sp), {}, sp),
                       nullptr, sp));
      Var w = MakeVar("w");
      out.push_back(For(d, C(0), C(nd), ForKind::kSerial,
                        Seq({Store(part, Identity(k, t), {d}, sp),
                             For(w, C(0), C(warps), ForKind::kSerial,
                                 Store(part, Combine(k, Load(part, {d}), Load(xs, {Expr(w) * C(nd) + Expr(d)})), {d}, sp), {}, sp)},
                            sp), {}, sp));
    }
    Expr v = Load(part, {d});
    out.push_back(For(d, C(0), C(nd), ForKind::kUnrolled, Store(dst, r->clear ? v : Combine(k, Load(dst, {d}), v), {d}, sp), {}, sp));
    return Seq(out, sp);
  }

  // ---- cumsum over shared tiles: a thread per scanned line ----------------------------------
  Stmt LowerCumsum(const CumsumNode* n) {
    size_t ax = n->dim;
    std::vector<size_t> other;
    std::vector<int64_t> ext;
    for (size_t d = 0; d < n->src.ranges.size(); ++d)
      if (d != ax) { other.push_back(d); ext.push_back(ConstOr(n->src.ranges[d].extent, n->span, "a cumsum tile")); }
    int64_t lines = 1;
    for (auto e : ext) lines *= e;
    int64_t len = ConstOr(n->src.ranges[ax].extent, n->span, "a cumsum tile");
    DataType t = n->dst.buffer->dtype;
    Buffer acc = Scratch("scan", t, 1, Scope::kLocal);
    std::vector<Stmt> out;
    Span sp = n->span;
    bool replicated = n->src.buffer->scope == Scope::kFragment || n->dst.buffer->scope == Scope::kFragment;
    Var lv = MakeVar("line");
    int64_t per_thread = replicated ? 1 : (lines + T_ - 1) / T_;
    auto load = [&](const Buffer& b, const std::vector<Expr>& idx) {
      if (b->scope != Scope::kFragment) return MapLoad(b, idx);
      Expr flat = C(0);
      for (size_t d = 0; d < idx.size(); ++d) flat = flat * b->shape[d] + idx[d];
      return Load(MapBuffer(b), {Simplify(flat)});
    };
    for (int64_t it = 0; it < per_thread; ++it) {
      Expr line = replicated ? Expr(lv) : C(it * T_) + tx_;
      std::vector<Expr> ti(other.size());
      Expr rest = line;
      for (size_t d = other.size(); d-- > 0;) {
        ti[d] = d == 0 ? rest : Mod(rest, ext[d]);
        rest = Div(rest, ext[d]);
      }
      Var r = MakeVar("r");
      Expr pos = n->reverse ? C(len - 1) - Expr(r) : Expr(r);
      auto index = [&](const Region& rg) {
        std::vector<Expr> idx;
        for (auto& x : rg.ranges) idx.push_back(VisitExpr(x.min));
        for (size_t i = 0; i < other.size(); ++i) idx[other[i]] = Simplify(idx[other[i]] + ti[i]);
        idx[ax] = idx[ax] + pos;
        return idx;
      };
      Expr x = load(n->src.buffer, index(n->src));
      if (x->dtype != t) x = Cast(t, x);
      Expr dmapped = load(n->dst.buffer, index(n->dst));
      auto* dl = As<BufferLoadNode>(dmapped);
      Stmt body = Seq({Store(acc, Binary(BinaryOp::kAdd, Load(acc, {C(0)}), x), {C(0)}, sp),
                       Store(dl->buffer, Load(acc, {C(0)}), dl->indices, sp)}, sp);
      Stmt st = Seq({Store(acc, t.is_float() ? FloatImm(t, 0.0) : IntImm(t, 0), {C(0)}, sp),
                     For(r, C(0), C(len), ForKind::kSerial, body, {}, sp)}, sp);
      if (replicated) st = For(lv, C(0), C(lines), ForKind::kSerial, st, {}, sp);
      else if ((it + 1) * T_ > lines) st = If(Lt(line, C(lines)), st, nullptr, sp);
      out.push_back(st);
    }
    return Seq(out, sp);
  }

  const CudaPassContext& ctx_;
  std::multimap<uint64_t, std::pair<Expr, Fragment>> decoded_;
  std::map<const BufferNode*, const Fragment*> layout_;
  std::map<const BufferNode*, int64_t> stages_;
  int64_t op_count_ = 0;
  Var tx_;
  int64_t T_ = 0;
  std::map<const BufferNode*, Buffer> bmap_;
  std::vector<Buffer> extra_;
  std::map<const BufferNode*, Expr> stage_;
  std::map<const BufferNode*, std::vector<std::vector<int64_t>>> owners_;
  const Fragment* cur_loop_ = nullptr;
  std::vector<Expr> cur_idx_;
  int64_t cur_loc_ = 0;
  Expr cur_loc_expr_;  // the loop var when the instance is emitted as one unrolled loop
  Expr cur_valid_;
  Span cur_span_;
};

}  // namespace

PrimFunc LowerTileOpsCUDA(const PrimFunc& f, const CudaPassContext& ctx) {
  // The output binds each var once and is simplified, so that it prints in canonical form and
  // re-parses to an equal function.
  return Simplify(WithBody(f, UniquifyDefs(Lowerer(ctx).VisitStmt(f->body))));
}

}  // namespace tl
