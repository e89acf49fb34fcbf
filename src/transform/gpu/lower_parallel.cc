// LowerTileOpsGPU, T.Parallel nests: each nest is partitioned over threads by its loop layout;
// fragment accesses are checked against their owners; global accesses of a thread's chunk become
// one vector access where alignment and guard uniformity are proven.
#include <cmath>
#include <set>

#include "arith/simplify.h"
#include "ir/printer.h"
#include "transform/gpu/tile_lowerer.h"
#include "transform/gpu_util.h"

namespace tl {
namespace gpu_lowering {

using namespace gpu_pass;

Expr GpuTileLowerer::FragmentLocal(const Buffer& b, const std::vector<Expr>& idx) {
  const Fragment& F = Layout(b.get());
  if (!cur_loop_) {
    // Scalar code runs in every thread; a replicated fragment is whole in each of them.
    if (F.kind == "replicated") return F.LocalOf(idx);
    throw UserError(ErrorKind::kUnsupported,
                    "fragment '" + b->name +
                        "' is accessed outside a T.Parallel loop or tile "
                        "op, but it has layout " +
                        F.desc + " (" + F.origin +
                        "), so each thread "
                        "holds only part of it",
                    cur_span_);
  }
  bool same_idx = idx.size() == cur_idx_.size();
  for (size_t i = 0; same_idx && i < idx.size(); ++i) same_idx = ProveEqual(idx[i], cur_idx_[i]);
  if (same_idx && (&F == cur_loop_ || F.SameAs(*cur_loop_)))
    return cur_loc_expr_ ? cur_loc_expr_ : C(cur_loc_);
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
    if (!EvalInt(local, env, &v)) {
      constant = false;
      break;
    }
    if (t == 0)
      first = v;
    else if (v != first)
      constant = false;
  }
  CheckOwner(b, F, idx);
  return constant ? C(first) : local;
}

namespace {
// The thread that holds element `idx` of F where some index is not known here (an outer loop's variable) but
// the layout's thread does not depend on it (a column window `C[:, j * 64 + c]` of rows that each live on one
// thread); false when it does, or F is replicated.
bool ThreadFromKnownIndices(const Fragment& F, const std::vector<Expr>& idx,
                            const std::map<const VarNode*, int64_t>& env, int64_t* thread) {
  if (F.replicas != 1) return false;
  std::map<const VarNode*, Expr> im;
  for (size_t d = 0; d < idx.size() && d < F.idx.size(); ++d) im[F.idx[d].get()] = idx[d];
  im[F.rep.get()] = C(0);
  return EvalInt(Simplify(Substitute(F.thread, im)), env, thread);
}
}  // namespace

void GpuTileLowerer::CheckOwner(const Buffer& b, const Fragment& F, const std::vector<Expr>& idx) {
  if (F.kind == "replicated") return;
  auto& owners = Owners(b, F);
  std::map<const VarNode*, int64_t> env;
  for (int64_t t = 0; t < T_; ++t) {
    env[tx_.get()] = t;
    int64_t valid = 1;
    if (cur_valid_ && (!EvalInt(cur_valid_, env, &valid))) return;
    if (!valid) continue;
    int64_t flat = 0, th = -1;
    bool known = true;
    for (const Expr& x : idx) {
      int64_t v;
      known = known && EvalInt(x, env, &v);
    }
    if (!known && ThreadFromKnownIndices(F, idx, env, &th)) {
      if (th == t) continue;
      std::string where = "(";
      for (size_t d = 0; d < idx.size(); ++d) where += (d ? ", " : "") + PrintExpr(idx[d]);
      throw UserError(ErrorKind::kLayout,
                      "layout conflict in T.Parallel loop: thread " + std::to_string(t) + " runs the iteration that "
                          "touches " + b->name + where + "), held by thread " + std::to_string(th) + " in layout " +
                          F.desc + " (" + F.origin + "); the loop is partitioned by " + cur_loop_->desc,
                      cur_span_);
    }
    for (size_t d = 0; d < idx.size(); ++d) {
      int64_t v;
      if (!EvalInt(idx[d], env, &v)) {
        // The element depends on a value other than the thread (an outer loop's variable): which
        // thread holds it cannot be proven, and a wrong guess reads another thread's register.
        std::string where = "(";
        for (size_t e = 0; e < idx.size(); ++e) where += (e ? ", " : "") + PrintExpr(idx[e]);
        throw UserError(
            ErrorKind::kLayout,
            "fragment '" + b->name + "' is accessed at " + where + ") in a T.Parallel loop partitioned by " +
                cur_loop_->desc + "; with layout " + F.desc +
                " the thread holding that element "
                "depends on a variable other than the loop's own, so it cannot be proven to be the thread "
                "that runs the iteration. Index the fragment by the T.Parallel loop's variables (copy "
                "whole tiles), or use a shared-memory tile for row-by-row access",
            cur_span_);
      }
      if (v < 0 || v >= F.shape[d]) return;  // out of the tile: a guard elsewhere decides
      flat = flat * F.shape[d] + v;
    }
    auto& o = owners[static_cast<size_t>(flat)];
    if (std::find(o.begin(), o.end(), t) == o.end()) {
      std::string where = "(";
      for (size_t d = 0; d < idx.size(); ++d) where += (d ? ", " : "") + PrintExpr(idx[d]);
      throw UserError(ErrorKind::kLayout,
                      "layout conflict in T.Parallel loop: thread " + std::to_string(t) +
                          " runs the iteration that "
                          "touches " +
                          b->name + where + "), but fragment '" + b->name + "' has layout " + F.desc + " (" +
                          F.origin + ") and the loop is partitioned by " + cur_loop_->desc +
                          "; copy the fragment so both sides agree",
                      cur_span_);
    }
  }
}

std::vector<std::vector<int64_t>>& GpuTileLowerer::Owners(const Buffer& b, const Fragment& F) {
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

Stmt GpuTileLowerer::LowerParallel(const ForNode* outer) {
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
  auto staged_before = fragment_stage_;
  StageForeignFragments(body, vars, F, outer->span, &out);
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
  fragment_stage_ = std::move(staged_before);
  return Seq(out, outer->span);
}

void GpuTileLowerer::StageForeignFragments(const Stmt& body, const std::vector<Var>& vars, const Fragment& F,
                                            const Span& sp, std::vector<Stmt>* out) {
  // The fragments the nest reads and writes, with the indices of their reads.
  std::map<const BufferNode*, std::pair<Buffer, std::vector<std::vector<Expr>>>> reads;
  std::set<const BufferNode*> written;
  struct V : IRVisitor {
    std::map<const BufferNode*, std::pair<Buffer, std::vector<std::vector<Expr>>>>* reads;
    std::set<const BufferNode*>* written;
    void VisitLoad(const BufferLoadNode* n) override {
      if (n->buffer->scope == Scope::kFragment) {
        auto& r = (*reads)[n->buffer.get()];
        r.first = n->buffer;
        r.second.push_back(n->indices);
      }
      IRVisitor::VisitLoad(n);
    }
    void VisitStore(const StoreNode* n) override {
      if (n->buffer->scope == Scope::kFragment) written->insert(n->buffer.get());
      IRVisitor::VisitStore(n);
    }
  } v;
  v.reads = &reads;
  v.written = &written;
  v.VisitStmt(body);
  for (auto& [key, rb] : reads) {
    const Buffer& b = rb.first;
    auto lit = layout_.find(key);
    if (written.count(key) || lit == layout_.end() || fragment_stage_.count(key)) continue;
    const Fragment& Fb = *lit->second;
    if (Fb.kind == "replicated" || &Fb == &F) continue;
    // Does the thread running each iteration hold every element the iteration reads?
    auto& owners = Owners(b, Fb);
    bool owned = true;
    std::map<const VarNode*, int64_t> env;
    for (int64_t l = 0; l < F.locals && owned; ++l) {
      std::vector<Expr> at = F.IndexAt(tx_, C(l));
      std::map<const VarNode*, Expr> vm;
      for (size_t d = 0; d < vars.size() && d < at.size(); ++d) vm[vars[d].get()] = at[d];
      Expr ok = F.ValidAt(tx_, C(l));
      for (auto& idx : rb.second) {
        std::vector<Expr> e;
        for (auto& x : idx) e.push_back(Simplify(Substitute(x, vm)));
        for (int64_t t = 0; t < T_ && owned; ++t) {
          env[tx_.get()] = t;
          int64_t valid = 1;
          if (ok && EvalInt(ok, env, &valid) && !valid) continue;
          int64_t flat = 0;
          bool unknown = false;
          for (size_t d = 0; d < e.size(); ++d) {
            int64_t x;
            if (!EvalInt(e[d], env, &x)) unknown = true;  // depends on another loop's variable
            else if (x < 0 || x >= Fb.shape[d]) flat = -1;
            else if (flat >= 0) flat = flat * Fb.shape[d] + x;
          }
          if (unknown) {
            int64_t th = -1;
            owned = ThreadFromKnownIndices(Fb, e, env, &th) && th == t;
            continue;
          }
          if (flat < 0) continue;
          auto& o = owners[static_cast<size_t>(flat)];
          owned = std::find(o.begin(), o.end(), t) != o.end();
        }
        if (!owned) break;
      }
    }
    if (owned) continue;
    // Its owners (replica 0) write it to a shared tile of its shape; the barrier pass orders those writes
    // before the nest's reads (and the nest's reads before the next such writes).
    int64_t n = 1;
    for (int64_t e : Fb.shape) n *= e;
    Buffer st = StageFragment(b, "stage_" + b->name, sp, out);
    fragment_stage_[key] = st;
    ctx_.info->warnings.push_back(Loc(sp) + ": fragment '" + b->name + "' (layout " + Fb.desc +
                                  ") is read in a T.Parallel loop partitioned by " + F.desc +
                                  " whose threads do not hold the elements they read: it is staged through "
                                  "shared memory (" + std::to_string(n * b->dtype.bytes()) +
                                  " bytes) first");
  }
}

Stmt GpuTileLowerer::Vectorized(const Fragment& F, const std::function<Stmt(const Expr&)>& instance,
                                 const Span& sp) {
  int64_t V = F.kind == "mma_C" || F.kind == "mma_A" ? 2
              : F.kind == "mfma_C" ? 4  // 4 consecutive columns of a row (src/layout/mfma_fragment.h)
                                   : (F.kind == "striped" && !F.params.empty() ? F.params[0] : 1);
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
  auto zero = [&](const Expr& e) { return Simplify(Substitute(e, {{v.get(), C(0)}}), bm); };
  auto* st = As<StoreNode>(cur);
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
    return b->op == BinaryOp::kLT && !UsesVar(b->b, v.get()) && AsConstInt(Simplify(b->b), &bound) &&
           bound % V == 0 && unit_stride(b->a);
  };
  // A V-wide, V-aligned access of a global tensor (its rows a multiple of V long).
  auto wide = [&](const Buffer& b, const std::vector<Expr>& idx) {
    int64_t width;
    if (b->scope != Scope::kGlobal || !AsConstInt(Simplify(b->shape.back()), &width) || width % V)
      return false;
    int bytes = b->dtype.bytes() * static_cast<int>(V);
    if (bytes != 4 && bytes != 8 && bytes != 16) return false;
    for (size_t d = 0; d + 1 < idx.size(); ++d)
      if (UsesVar(idx[d], v.get())) return false;
    return unit_stride(idx.back());
  };
  // HIP: a V-wide, V-aligned chunk of an LDS tile (its swizzles keep 16-byte chunks whole) written from
  // registers (an epilogue's fragment -> shared copy)
  // (a shared tile's chunk of V elements stays whole: the compiler's swizzles keep 16-byte chunks, a layout
  // from T.annotate_layout its measured contiguity)
  auto whole = [&](const Buffer& b) {
    auto u = user_shared_.find(b.get());
    return u == user_shared_.end() || u->second.contiguous >= V;
  };
  auto wide_lds = [&](const Buffer& b, const std::vector<Expr>& idx) {
    int bytes = b->dtype.bytes() * static_cast<int>(V);
    if (!(ctx_.features.vector_shared_stores || ctx_.features.vector_register_shared_stores) ||
        b->scope != Scope::kShared || (bytes != 4 && bytes != 8 && bytes != 16) || !whole(b))
      return false;
    for (size_t d = 0; d + 1 < idx.size(); ++d)
      if (UsesVar(idx[d], v.get())) return false;
    return unit_stride(idx.back());
  };
  auto from_registers = [](const Expr& e) {
    struct R : IRVisitor {
      bool ok = true;
      void VisitLoad(const BufferLoadNode* n) override {
        ok = ok && (n->buffer->scope == Scope::kLocal || n->buffer->scope == Scope::kFragment ||
                    n->buffer->scope == Scope::kLocalVar);
        IRVisitor::VisitLoad(n);
      }
    } r;
    r.VisitExpr(e);
    return r.ok;
  };
  // sm_90+: a chunk of float32 atomic adds into a global tensor is one red.global.add.v2/.v4.f32 (each
  // element still added atomically on its own, as the PTX ISA defines vector reductions).
  if (!st) {
    auto* ev = As<EvaluateNode>(cur);
    auto* call = ev ? As<CallNode>(ev->value) : nullptr;
    // (tl.atomic_add(element, value): the element is the address, as LowerScalarAtomicAdd writes it)
    auto* dst = call && call->op == "tl.atomic_add" && call->args.size() == 2 ? As<BufferLoadNode>(call->args[0])
                                                                               : nullptr;
    if (!dst || !ctx_.features.vector_atomic_add || dst->buffer->dtype != DataType::Float(32) ||
        call->args[1]->dtype != DataType::Float(32) || (V != 2 && V != 4) || !wide(dst->buffer, dst->indices))
      return nullptr;
    Expr guard;
    for (auto& c : conds) {
      if (!uniform(c)) return nullptr;
      guard = And(guard, zero(c));
    }
    std::vector<Expr> base_idx;
    for (auto& e : dst->indices) base_idx.push_back(zero(e));
    std::vector<Expr> args{Load(dst->buffer, base_idx)};
    for (int64_t i = 0; i < V; ++i) args.push_back(Simplify(Substitute(call->args[1], {{v.get(), C(i)}}), bm));
    Stmt body = Call0("tl.atomic_add_vec", args, sp);
    if (guard) body = If(guard, body, nullptr, sp);
    ctx_.info->choices.push_back(Loc(sp) + ": " + std::to_string(V) + "-wide vector atomic adds to " +
                                 dst->buffer->name + " (red.global.add.v" + std::to_string(V) + ".f32)");
    return For(lo, C(0), C(F.locals / V), ForKind::kUnrolled, body, {}, sp);
  }
  std::string kind;
  if (wide(st->buffer, st->indices) || (wide_lds(st->buffer, st->indices) && from_registers(st->value))) {
    kind = "tl.vector_store";
  } else if (st->buffer->scope == Scope::kLocal ||
             (ctx_.features.vector_shared_stores && st->buffer->scope == Scope::kShared &&
              whole(st->buffer) && unit_stride(st->indices.back()))) {
    // (HIP, no cp.async: a global -> LDS chunk is one vector load into the tile, whose swizzle keeps
    // 16-byte chunks whole)
    // register <- [cast] global, or <- [cast] select(in_bounds, global, 0) (a guarded tile load)
    Expr x = st->value;
    if (auto* c = As<CastNode>(x)) x = c->value;
    if (auto* sel = As<SelectNode>(x)) {
      int64_t z;
      auto* fz = As<FloatImmNode>(sel->false_value);
      if (!uniform(sel->cond) || !((fz && fz->value == 0.0) || (AsConstInt(sel->false_value, &z) && z == 0)))
        return nullptr;
      x = sel->true_value;
    }
    auto* ld = As<BufferLoadNode>(x);
    // registers <- a whole chunk of a shared tile (CUDA, HIP): one 4/8/16-byte shared read per chunk instead of
    // V narrow ones, which a 16-byte-chunk layout would serve 16/bytes-way bank conflicted
    auto shared_chunk = [&](const BufferLoadNode* l) {
      int bytes = l->buffer->dtype.bytes() * static_cast<int>(V);
      if (st->buffer->scope != Scope::kLocal || l->buffer->scope != Scope::kShared || !whole(l->buffer) ||
          (bytes != 4 && bytes != 8 && bytes != 16) || !ctx_.features.vector_shared_loads ||
          HalfSwappedTile(l->buffer.get()))
        return false;
      for (size_t d = 0; d + 1 < l->indices.size(); ++d)
        if (UsesVar(l->indices[d], v.get())) return false;
      return unit_stride(l->indices.back());
    };
    if (!ld || !(wide(ld->buffer, ld->indices) || shared_chunk(ld))) return nullptr;
    kind = "tl.vector_load";
  } else {
    return nullptr;
  }
  Expr guard;
  for (auto& c : conds) {
    if (!uniform(c)) return nullptr;
    guard = And(guard, zero(c));
  }
  // The chunk as one explicit vector access (docs/thread_ir.md): the code generator prints it as
  // one 4/8/16-byte instruction and the emulator runs its lanes; no loop shape is matched later.
  auto lane = [&](const Expr& e, int64_t i) { return Simplify(Substitute(e, {{v.get(), C(i)}}), bm); };
  std::vector<Expr> base_idx;
  Stmt body;
  if (kind == "tl.vector_store" && conds.empty()) {
    if (Stmt s = StoreMatrices(F, st, lo, v, bm, sp)) return s;
  }
  if (kind == "tl.vector_store") {
    for (auto& e : st->indices) base_idx.push_back(zero(e));
    // HIP: a chunk read from an LDS tile (whose swizzles keep 16-byte chunks whole) is one wide LDS read
    // into registers, not V narrow ones (an epilogue's shared -> global copy)
    auto* sl = As<BufferLoadNode>(st->value);
    // (a half-swapped tile, gpu/mfma_lds.cc: the chunk is whole, its halves swapped in some rows)
    const bool swapped_tile = ctx_.features.vector_shared_stores && sl &&
                              sl->buffer->scope == Scope::kShared && V * sl->buffer->dtype.bytes() == 16 &&
                              HalfSwappedTile(sl->buffer.get());
    bool lds_chunk = ctx_.features.vector_shared_stores && sl && sl->buffer->scope == Scope::kShared &&
                     whole(sl->buffer) && sl->buffer->dtype == st->buffer->dtype &&
                     (swapped_tile || unit_stride(sl->indices.back()));
    for (size_t d = 0; lds_chunk && d + 1 < sl->indices.size(); ++d)
      lds_chunk = !UsesVar(sl->indices[d], v.get());
    std::vector<Expr> args{Load(st->buffer, base_idx)};
    if (lds_chunk) {
      Buffer tmp = Scratch("vec", sl->buffer->dtype, V, Scope::kLocal);
      std::vector<Expr> src_base;
      for (auto& e : sl->indices) src_base.push_back(zero(e));
      // A half-swapped tile: lane 0's element starts the chunk's second half where the row's halves are
      // swapped; read the aligned chunk, then take each lane from the other half there.
      Expr swapped;
      if (swapped_tile) {
        Expr p0 = src_base.back();
        swapped = Simplify(Div(Mod(p0, V), V / 2), bm);
        src_base.back() = Simplify(Div(p0, V) * C(V), bm);
      }
      for (int64_t i = 0; i < V; ++i)
        args.push_back(swapped ? Select(Eq(swapped, C(1)), Load(tmp, {C(i ^ (V / 2))}), Load(tmp, {C(i)}))
                               : Load(tmp, {C(i)}));
      body =
          Seq({Call0("tl.vector_load", {Load(tmp, {C(0)}), Load(sl->buffer, src_base), C(V), Bool(true)}, sp),
               Call0("tl.vector_store", args, sp)},
              sp);
    } else {
      for (int64_t i = 0; i < V; ++i) args.push_back(lane(st->value, i));
      body = Call0("tl.vector_store", args, sp);
    }
  } else {
    Expr x = st->value, valid = Bool(true);
    bool cast = false;
    if (auto* c = As<CastNode>(x)) {
      x = c->value;
      cast = true;
    }
    if (auto* sel = As<SelectNode>(x)) {
      valid = zero(sel->cond);
      x = sel->true_value;
    }
    auto* ld = As<BufferLoadNode>(x);
    for (auto& e : ld->indices) base_idx.push_back(zero(e));
    Expr src = Load(ld->buffer, base_idx);
    std::vector<Expr> dst_base;
    for (auto& e : st->indices) dst_base.push_back(zero(e));
    if (!cast) {
      body = Call0("tl.vector_load", {Load(st->buffer, dst_base), src, C(V), valid}, sp);
    } else {  // load into a register chunk of the source type, then convert lane by lane
      Buffer tmp = Scratch("vec", ld->buffer->dtype, V, Scope::kLocal);
      Var w = MakeVar("v");
      std::vector<Expr> dst_w;
      for (auto& e : st->indices) dst_w.push_back(Simplify(Substitute(e, {{v.get(), Expr(w)}}), bm));
      body = Seq({Call0("tl.vector_load", {Load(tmp, {C(0)}), src, C(V), valid}, sp),
                  For(w, C(0), C(V), ForKind::kUnrolled,
                      Store(st->buffer, Cast(st->value->dtype, Load(tmp, {w})), dst_w, sp), {}, sp)},
                 sp);
    }
  }
  ctx_.info->choices.push_back(
      Loc(sp) + ": " + std::to_string(V) + "-wide vector " +
      (kind == "tl.vector_store" ? "stores to " + st->buffer->name : "loads into " + st->buffer->name));
  if (guard) body = If(guard, body, nullptr, sp);
  return For(lo, C(0), C(F.locals / V), ForKind::kUnrolled, body, {}, sp);
}

// sm_90+: an mma accumulator's pairs written to a 16-bit shared tile as stmatrix .x4 (four 8x8 tiles a warp per
// instruction) where each warp's registers are those tiles. Per the PTX ISA, register q of lane l holds row l/4,
// columns 2*(l%4), 2*(l%4)+1 of matrix q, and lane 8q + r gives the address of row r of matrix q: with the pairs
// of a chunk of 8 locals as the four matrices, that is every lane's pair at its row's address plus 2*(l%4),
// the row's first pair 16-byte aligned. Both are checked on the store's own (physical) indices, for the lanes
// of the first and the last warp, before the form is used.
Stmt GpuTileLowerer::StoreMatrices(const Fragment& F, const StoreNode* st, const Var& lo, const Var& v,
                                    const BoundMap& bm, const Span& sp) {
  if (!ctx_.features.stmatrix || F.kind != "mma_C" || F.valid || F.locals % 8 || T_ % 32 ||
      st->buffer->scope != Scope::kShared || st->buffer->dtype.bytes() != 2 || st->indices.size() != 1)
    return nullptr;
  const Expr& idx = st->indices[0];
  auto at = [&](const Expr& thread, const Expr& pair, int64_t b) {
    return Simplify(Substitute(idx, {{tx_.get(), thread}, {lo.get(), pair}, {v.get(), C(b)}}), bm);
  };
  for (int64_t w : {int64_t(0), T_ / 32 - 1})
    for (int64_t p = 0; p < F.locals / 2; ++p) {
      for (int64_t r = 0; r < 8; ++r) {
        Expr row = at(C(w * 32 + 4 * r), C(p), 0);
        if (!IsConstInt(Simplify(Mod(row, 8), bm), 0)) return nullptr;
        for (int64_t k = 0; k < 4; ++k)
          for (int64_t b = 0; b < 2; ++b)
            if (!IsConstInt(Simplify(at(C(w * 32 + 4 * r + k), C(p), b) - row, bm), 2 * k + b)) return nullptr;
      }
    }
  Buffer tmp = Scratch("stm", st->buffer->dtype, 8, Scope::kLocal);
  Var c = MakeVar("c");
  std::vector<Stmt> body;
  for (int64_t q = 0; q < 4; ++q)
    for (int64_t b = 0; b < 2; ++b)
      body.push_back(Store(tmp,
                           Simplify(Substitute(st->value, {{lo.get(), Expr(c) * C(4) + C(q)}, {v.get(), C(b)}}), bm),
                           {C(2 * q + b)}, sp));
  Expr lane = Mod(tx_, 32);
  Expr addr = Simplify(Substitute(idx, {{tx_.get(), Div(tx_, 32) * C(32) + Mod(lane, 8) * C(4)},
                                        {lo.get(), Expr(c) * C(4) + Div(lane, 8)},
                                        {v.get(), C(0)}}),
                       bm);
  body.push_back(Call0("tl.stmatrix", {C(0), C(4), Load(st->buffer, {addr}), Load(tmp, {C(0)})}, sp));
  ctx_.info->choices.push_back(Loc(sp) + ": stmatrix .x4 stores to " + st->buffer->name + " (" +
                               std::to_string(F.locals / 8) + " per thread)");
  return For(c, C(0), C(F.locals / 8), ForKind::kUnrolled, Seq(body, sp), {}, sp);
}

bool GpuTileLowerer::OnlyOwnFragment(const Stmt& body, const std::vector<Var>& vars, const Fragment& F) {
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
    void VisitLoad(const BufferLoadNode* n) override {
      f(n->buffer, n->indices);
      IRVisitor::VisitLoad(n);
    }
    void VisitStore(const StoreNode* n) override {
      f(n->buffer, n->indices);
      IRVisitor::VisitStore(n);
    }
  } v;
  v.f = check;
  v.VisitStmt(body);
  return ok;
}

}  // namespace gpu_lowering
}  // namespace tl
