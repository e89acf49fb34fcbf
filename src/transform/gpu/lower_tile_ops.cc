// LowerTileOpsGPU: tile ops and T.Parallel / T.Pipelined loops -> thread-level IR
// (docs/thread_ir.md). Requires the facts of LegalizeTileOpsGPU and LayoutInference in the IR
// (tl.copy_async, tl.num_stages, tl.layout, tl.loop_layout). Produces thread-level IR with
// tl.tile_op scopes, tl.pipeline_managed loops and tl.shared_tile facts. The mutator's parts are
// one file per concept (see cuda/gpu/tile_lowerer.h); this file holds the entry point, the
// dispatch over ops, and the reading of the earlier passes' facts.
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <set>

#include "arith/simplify.h"
#include "ir/printer.h"
#include "transform/lower_thread_bindings.h"
#include "transform/gpu/hopper_wgmma.h"
#include "ir/structural.h"
#include "transform/gpu/tile_lowerer.h"
#include "transform/gpu/warp_specialize.h"
#include "op/gemm_blockscaled.h"
#include "transform/gpu_util.h"

namespace tl {
namespace gpu_lowering {

using namespace gpu_pass;

static std::set<const BufferNode*> ThreadRegisters(const Stmt& body);  // below

Stmt GpuTileLowerer::VisitKernel(const Stmt& s, const KernelNode* n) {
  tx_ = tx_kernel_ = MakeVar("tx");
  region_ = branch_range_ = {0, KernelThreads(n)};
  kernel_threads_ = KernelThreads(n);
  wgmma_operands_.clear();
  PostOrderVisitStmt(n->body, [&](const Stmt& x) {
    if (auto* g = As<GemmNode>(x))
      for (auto* r : {&g->A, &g->B})
        if (r->buffer->scope == Scope::kShared) wgmma_operands_.insert(r->buffer.get());
  });
  cp_async_wgmma_ = false;  // a T.ptx_cp_async into a gemm's shared operand (VisitStmtAt)
  if (ctx_.features.wgmma)
    PostOrderVisitStmt(n->body, [&](const Stmt& x) {
      auto* ev = As<EvaluateNode>(x);
      auto* c = ev ? As<CallNode>(ev->value) : nullptr;
      auto* dst = c && c->op == "tl.ptx_cp_async" && !c->args.empty() ? As<CallNode>(c->args[0]) : nullptr;
      auto* l = dst && !dst->args.empty() ? As<BufferLoadNode>(dst->args[0]) : nullptr;
      cp_async_wgmma_ |= l && wgmma_operands_.count(l->buffer.get()) > 0;
    });
  div_vars_.clear();
  tx_vars_ = ThreadIndexVars(n->body, &div_vars_);  // tx = T.get_thread_binding()
  uniform_vars_ = BlockUniformVars(n);
  thread_regs_ = ThreadRegisters(n->body);
  thread_vars_.clear();
  kernel_bounds_.clear();
  kernel_bounds_[tx_.get()] = {int64_t(0), KernelThreads(n) - 1};
  for (size_t i = 0; i < n->block_vars.size() && i < n->grid.size(); ++i) {
    int64_t g;
    if (AsConstInt(Simplify(n->grid[i]), &g)) kernel_bounds_[n->block_vars[i].get()] = {int64_t(0), g - 1};
  }
  T_ = KernelThreads(n);
  cluster_ = ClusterDims(n->body);
  block_vars_ = n->block_vars;
  conditional_loops_.clear();
  bound_vars_.clear();
  if (cluster_[0] * cluster_[1] * cluster_[2] > 1) {  // (what automatic multicast needs: clusters only)
    // serial loops under an `if`, a `while` or a loop whose bounds may differ between the blocks of a cluster
    struct V : IRVisitor {
      const GpuTileLowerer* L;
      std::set<const StmtNode*>* out;
      std::set<const VarNode*>* bound;
      int depth = 0;
      void VisitStmt(const Stmt& s) override {
        const bool cond = s && (As<IfNode>(s) || As<WhileNode>(s));
        depth += cond;
        IRVisitor::VisitStmt(s);
        depth -= cond;
      }
      void VisitLet(const LetNode* n) override {
        bound->insert(n->var.get());
        IRVisitor::VisitLet(n);
      }
      void VisitFor(const ForNode* n) override {
        if (depth) out->insert(n);
        // (before its variable is bound: bounds reading an outer loop's variable count as differing)
        const bool differ = !L->SameInCluster(Region{nullptr, {Range{n->min, n->extent}}}, Var());
        bound->insert(n->var.get());
        depth += differ;
        IRVisitor::VisitFor(n);
        depth -= differ;
      }
    } v;
    v.L = this;
    v.out = &conditional_loops_;
    v.bound = &bound_vars_;
    v.VisitStmt(n->body);
  }
  // The facts of the earlier passes: fragment layouts wrap the kernel body; stage counts wrap
  // pipelined loops.
  Stmt kbody = n->body;
  while (auto* a = As<AttrStmtNode>(kbody)) {
    if (a->key != "tl.layout") break;
    layout_[a->node.get()] = &Decode(a->value);
    kbody = a->body;
  }
  user_shared_.clear();
  PostOrderVisitStmt(kbody, [&](const Stmt& x) {
    if (auto* a = As<AttrStmtNode>(x);
        a && a->key == "tl.user_layout" && a->node && a->node->scope == Scope::kShared)
      user_shared_[a->node.get()] = SharedLayoutFromExpr(a->value);
    if (auto* a = As<AttrStmtNode>(x); a && a->key == "tl.num_stages") {
      int64_t k = 1;
      AsConstInt(a->value, &k);
      stages_[a->node.get()] = k;
    }
    // MFMA operands read down columns (rows are k): their LDS tiles take the k-rows swizzle.
    const GemmNode* g = As<GemmNode>(x);
    if (!g) g = As<GemmBlockScaledNode>(x);
    if (g && ctx_.features.matrix == MatrixUnit::kMfma) {
      if (g->trans_A && g->A.buffer->scope == Scope::kShared) k_rows_[g->A.buffer.get()] = true;
      if (!g->trans_B && g->B.buffer->scope == Scope::kShared) k_rows_[g->B.buffer.get()] = true;
    }
  });
  half_swap_.clear();
  plain_shared_ = PlainSharedTiles(kbody);
  tmem_unpacked_.clear();
  PostOrderVisitStmt(kbody, [&](const Stmt& x) {
    if (auto* op = As<TileOpNode>(x))
      for (const Region* r : op->UnpackedTensorMemory()) tmem_unpacked_.insert(r->buffer.get());
  });
  if (ctx_.features.matrix == MatrixUnit::kMfma) ScanMfmaHalfSwapTiles(kbody);  // gpu/mfma_lds.cc
  for (auto& u : user_shared_) {  // a layout from T.annotate_layout replaces the compiler's
    half_swap_.erase(u.first);
    k_rows_.erase(u.first);
  }
  k_transposed_.clear();
  if (ctx_.features.matrix == MatrixUnit::kMfma) ScanMfmaKTransposedTiles(kbody);  // gpu/mfma_lds.cc
  for (auto& [b, kt] : k_transposed_) k_rows_.erase(b);
  ws_done_ = false;
  multicast_used_ = false;
  cluster_tail_ = false;
  ws_reg_alloc_ = true;
  ws_why_.clear();
  PostOrderVisitStmt(kbody, [&](const Stmt& x) {
    if (auto* a = As<AttrStmtNode>(x); a && a->key == "tl.disable_warp_group_reg_alloc")
      ws_reg_alloc_ = false;
  });
  ws_candidate_ = WsCandidate(kbody, &ws_why_);  // gpu/warp_specialize.cc
  std::vector<Buffer> allocs;
  for (auto& b : n->alloc_buffers) allocs.push_back(MapBuffer(b));
  Stmt body = VisitStmt(kbody);
  if (ws_done_) body = WsSplitKernel(body);  // gpu/warp_specialize.cc
  // (a warp-specialised multicast pipeline: no block ends while a peer may still load into it or arrive on
  // it)
  if (cluster_tail_) body = Seq({body, Call0("tl.cluster_sync", {}, n->span)}, n->span);
  for (auto& b : extra_) allocs.push_back(b);
  if (!tma_inits_.empty()) {  // TMA mbarriers (lower_tma.cc); InsertBarriers orders them before any use
    // fence.mbarrier_init: the inits are visible to the async proxy (TMA's complete_tx) before any copy
    tma_inits_.push_back(Call0("tl.fence_barrier_init", {}, n->span));
    // a TMA multicast completes the barriers of other blocks: every block of the cluster initialises its own
    // first
    Stmt cluster = multicast_used_ ? Call0("tl.cluster_sync", {}, n->span) : Stmt();
    body = Seq({If(Eq(tx_, C(0)), Seq(tma_inits_, n->span), nullptr, n->span), cluster, body}, n->span);
  }
  body = Let(tx_, Call(DataType::Int(32), "tl.thread_idx", {}), body, n->span);
  // Tensor memory holding 16-bit values one a 32-bit column (TileOpNode::UnpackedTensorMemory), for the pass
  // that allocates its columns (the CUDA backend's LowerTensorMemoryCUDA reads and drops the attribute).
  for (auto it = n->alloc_buffers.rbegin(); it != n->alloc_buffers.rend(); ++it)
    if (tmem_unpacked_.count(it->get()))
      body = AttrStmt(MapBuffer(*it), "tl.tmem_unpacked", Int(1), body, n->span);
  // The tile shape and stage count of each flattened shared buffer, for the shared-memory table.
  for (auto it = n->alloc_buffers.rbegin(); it != n->alloc_buffers.rend(); ++it) {
    if ((*it)->scope != Scope::kShared) continue;
    std::vector<Expr> tile{Int(Stages(*it))};
    for (auto& d : (*it)->shape) tile.push_back(d);
    body = AttrStmt(MapBuffer(*it), "tl.shared_tile", Call(DataType::Handle(), "list", tile), body, n->span);
  }
  // TMA destinations need their tile on a 128-byte or whole-swizzle-pattern boundary (the table's "align").
  // In allocation order (outermost first), not the map's: it is keyed by address, which differs run to run.
  for (auto x = allocs.rbegin(); x != allocs.rend(); ++x)
    if (auto al = tma_align_.find(x->get()); al != tma_align_.end())
      body = AttrStmt(*x, "tl.shared_align", Int(al->second), body, n->span);
  std::vector<std::pair<Buffer, Expr>> inits;
  for (auto& [b, v] : n->var_inits) inits.push_back({MapBuffer(b), v});
  for (auto& bv : tma_var_inits_) inits.push_back(bv);
  (void)s;
  // A warp-specialised block has one more warp group: the producer; the launch uses the new count.
  if (ws_done_) ctx_.info->threads = T_ + 128;
  return std::make_shared<KernelNode>(n->grid, n->block_vars, std::vector<Expr>{C(ws_done_ ? T_ + 128 : T_)},
                                      allocs, inits, body, n->span);
}

// Inside a region (T.ws block, branch on the thread index) on sm_90a: generic writes of a shared tile that a
// wgmma reads are fenced into the async proxy by the writing threads (fence.proxy.async after the op), since the
// wgmma may be another region's, issued after an mbarrier handoff (the reading side's own fence cannot order
// other threads' writes).
Stmt GpuTileLowerer::FenceRegionWrites(const Stmt& original, const Stmt& lowered) {
  if (!ctx_.features.wgmma || (region_.lo == 0 && region_.hi == kernel_threads_) || wgmma_operands_.empty())
    return lowered;
  bool hit = false;
  PostOrderVisitStmt(original, [&](const Stmt& x) {
    if (auto* st = As<StoreNode>(x)) hit |= wgmma_operands_.count(st->buffer.get()) > 0;
    if (auto* op = As<TileOpNode>(x))
      for (auto& [r, acc] : op->Regions())
        hit |= acc != Access::kRead && wgmma_operands_.count(r->buffer.get()) > 0;
  });
  if (!hit || ctx_.opt.skip_fence_proxy) return lowered;
  return Seq({lowered, Call0("tl.fence_proxy_async", {}, original->span)}, original->span);
}

Stmt GpuTileLowerer::VisitFor(const Stmt& s, const ForNode* n) {
  if (n->for_kind == ForKind::kParallel) return FenceRegionWrites(s, OpScope(LowerParallel(n), n->span));
  if (n->for_kind == ForKind::kPipelined) return LowerPipelined(n);
  ++loop_depth_;
  Stmt r = IRMutator::VisitFor(s, n);
  --loop_depth_;
  return r;
}

Stmt GpuTileLowerer::VisitAttr(const Stmt& s, const AttrStmtNode* n) {
  if (n->key == "tl.num_stages") return VisitStmt(n->body);                    // consumed (see VisitKernel)
  if (n->key == "tl.disable_warp_group_reg_alloc") return VisitStmt(n->body);  // consumed (VisitKernel)
  if (n->key == "tl.user_layout") return VisitStmt(n->body);  // consumed (VisitKernel, LayoutInference)
  if (n->key == "tl.warp_specialized") return LowerWsBlock(s, n);  // a T.ws block (below)
  if (n->key == "tl.copy_multicast") {                             // lower_tma.cc
    TL_ICHECK(AsConstInt(n->value, &multicast_) && multicast_ > 0, "tl.copy_multicast: a positive mask");
    Stmt r = VisitStmt(n->body);
    multicast_ = 0;
    return r;
  }
  if (n->key == "tl.cluster_dims" && !ctx_.features.clusters)
    throw UserError(
        ErrorKind::kUnsupported,
        "T.ClusterKernel launches thread-block clusters, which need CUDA sm_90 or newer; the target is " +
            ctx_.features.label,
        n->span);
  if (n->key == "tl.shared_overwrite")  // PlanSharedMemory's liveness mark, on the flattened buffer
    return AttrStmt(MapBuffer(n->node), n->key, n->value, VisitStmt(n->body), n->span);
  if (n->key == "tl.copy_tma_store" || n->key == "tl.copy_tma_reduce") {  // lower_tma.cc
    auto* c = As<CopyNode>(n->body);
    TL_ICHECK(c, n->key, " must wrap a T.copy");
    return OpScope(TmaStore(c, n->key == "tl.copy_tma_reduce"), s->span);
  }
  if (n->key == "tl.copy_async") {
    auto* c = As<CopyNode>(n->body);
    TL_ICHECK(c, "tl.copy_async must wrap a T.copy");
    if (IsConstInt(n->value, 2)) return OpScope(TmaCopy(c), s->span);  // TMA (lower_tma.cc)
    return OpScope(Seq({AsyncCopy(c), Call0("tl.cp_async_commit", {}, s->span),
                        Call0("tl.cp_async_wait", {C(0)}, s->span)},
                       s->span),
                   s->span);
  }
  return IRMutator::VisitAttr(s, n);
}

// A T.ws block: `if (tx // 128 == g ...) body`, the attribute's value its first thread. Single-thread work in
// it (a T.tma_copy's issue, a scalar store) is that thread's. Tile work (tile ops, T.Parallel loops) is
// lowered for the block's warp groups alone: the thread index rebased to their first thread, their thread
// count, and a named barrier of their own (kWsBlockBarrierKey; WsNamedBarriers turns the __syncthreads that
// InsertBarriers puts in the body into it). The condition itself does not make the body per thread.
Stmt GpuTileLowerer::LowerWsBlock(const Stmt& s, const AttrStmtNode* n) {
  CheckWsBlockOps(n, ctx_.features);  // gpu/warp_specialize.cc
  auto* i = As<IfNode>(n->body);
  TL_ICHECK(i && !i->else_case, "a T.ws block is an if without else");
  const WsBlock wb = WsBlockOf(n);
  Stmt body;
  if (wb.count && FirstTileWork(n->body)) {
    body = InRegion(i->then_case, {wb.base, wb.base + wb.count});
  } else {
    const int64_t saved = ws_leader_;
    AsConstInt(n->value, &ws_leader_);
    body = VisitStmt(i->then_case);  // the body, not the `if`: the warp groups' condition is not per-thread control
    ws_leader_ = saved;
    if (!wb.groups.empty() && ctx_.features.named_barriers)  // InsertBarriers' barriers in it: the groups' own
      body = AttrStmt(Buffer(), kWsBlockBarrierKey,
                      Call(DataType::Handle(), "list",
                           {C(WsBlockBarrierId(wb)), C(128 * static_cast<int64_t>(wb.groups.size()))}),
                      body, n->span);
  }
  (void)s;
  return AttrStmt(n->node, n->key, n->value, If(VisitExpr(i->cond), body, nullptr, i->span), n->span);
}

// Whether `s` holds a tile op or a T.Parallel / T.Pipelined loop (tile work, or single-thread work such as
// a T.tma_copy's issue).
static bool HasTileOp(const Stmt& s) {
  bool hit = false;
  if (s)
    PostOrderVisitStmt(s, [&](const Stmt& x) {
      auto* f = As<ForNode>(x);
      hit |= As<TileOpNode>(x) != nullptr ||
             (f && (f->for_kind == ForKind::kParallel || f->for_kind == ForKind::kPipelined));
    });
  return hit;
}

// Statements run by the threads of region `g` (whole warp groups) only: their tile work is partitioned over
// g's threads (the thread index rebased to g.lo, T_ = its size), single-thread work is its first thread's, and
// the barriers InsertBarriers puts in it are a named barrier of its own (kWsBlockBarrierKey).
Stmt GpuTileLowerer::InRegion(const Stmt& b, ThreadRange g) {
  const Var saved_tx = tx_;
  const int64_t saved_T = T_, saved_leader = ws_leader_;
  const ThreadRange saved_region = region_;
  Var w = MakeVar("tx_ws");
  kernel_bounds_[w.get()] = {int64_t(0), g.hi - g.lo - 1};
  tx_ = w;
  T_ = g.hi - g.lo;
  ws_leader_ = 0;
  region_ = g;
  const ThreadRange saved_branch = branch_range_;
  branch_range_ = g;
  Stmt body = VisitStmt(b);  // (b may be an `elif`: a branch on the thread index of its own)
  tx_ = saved_tx;
  T_ = saved_T;
  ws_leader_ = saved_leader;
  region_ = saved_region;
  branch_range_ = saved_branch;
  // max(., 0): the region's threads are tx >= g.lo, which the simplifier then knows (non-negative indices
  // simplify: floormod -> &, floordiv -> >>).
  Expr rebased = g.lo ? Binary(BinaryOp::kMax, Binary(BinaryOp::kSub, tx_kernel_, C(g.lo)), C(0)) : Expr(tx_kernel_);
  body = Let(w, rebased, body, b->span);
  return AttrStmt(Buffer(), kWsBlockBarrierKey, Call(DataType::Handle(), "list", {C(RegionBarrierId(g.lo)), C(g.hi - g.lo)}),
                  body, b->span);
}

// `if (tx < 128) ... else ...` (a condition on the thread index selecting a range) with tile work in a branch:
// each branch over whole warp groups other than the enclosing region's is lowered for its threads (InRegion).
// The statements under it stay per thread. Marked tl.warp_specialized: the emulator runs a fiber per warp group,
// so that one branch waiting on another's mbarrier arrivals lets it run.
Stmt GpuTileLowerer::LowerBranches(const Stmt& s, const IfNode* i, const BranchThreads& bt) {
  const ThreadRange in = region_;
  auto branch = [&](const Stmt& b, ThreadRange r, ThreadRange g, ThreadRange excluded) -> Stmt {
    if (!b) return b;
    if (!(g == in)) return InRegion(b, g);
    // no tile work to partition: its single-thread work (a T.tma_copy's issue) is its first thread's
    // (nested branches: the threads that reach this one are the enclosing branch's range within r)
    const int64_t saved = ws_leader_;
    const bool saved_known = leader_in_branch_;
    const ThreadRange saved_range = branch_range_, saved_excluded = branch_excluded_;
    ThreadRange now{std::max(r.lo, branch_range_.lo), std::min(r.hi, branch_range_.hi)};
    // an enclosing else branch that is no one range (branch_range_ without branch_excluded_): a range outside
    // the excluded threads is known again
    const bool disjoint =
        branch_excluded_.ok() && (r.hi <= branch_excluded_.lo || r.lo >= branch_excluded_.hi);
    leader_in_branch_ = (saved_known || disjoint) && r.ok() && now.ok();
    branch_excluded_ = ThreadRange{};
    if (leader_in_branch_) {
      ws_leader_ = now.lo - in.lo;
      branch_range_ = now;
    } else if (!r.ok() && excluded.ok() && saved_known) {
      branch_excluded_ = excluded;  // this else branch: branch_range_ minus the then branch's threads
    }
    Stmt out = VisitStmt(b);
    ws_leader_ = saved;
    leader_in_branch_ = saved_known;
    branch_range_ = saved_range;
    branch_excluded_ = saved_excluded;
    return out;
  };
  ++thread_conditions_;
  Stmt then = branch(i->then_case, bt.then_range, bt.then_region, ThreadRange{}),
       els = branch(i->else_case, bt.else_range, bt.else_region, bt.then_range);
  --thread_conditions_;
  // A condition every thread of the region meets (`elif 128 <= tx < 256:` lowered inside the region of those
  // threads): its body is the region's own code, which the barrier pass then orders (an `if` on the thread
  // index would make it one unit, with no barriers inside).
  if (bt.then_range == in && !bt.guarded && !i->else_case) return then;
  Stmt ws =
      AttrStmt(Buffer(), kWarpSpecializedKey, C(0), If(VisitExpr(i->cond), then, els, s->span), s->span);
  // a branch boundary inside a warp group (a TMA warp, an MMA warp): the emulator runs a fiber per warp
  auto inside = [](ThreadRange r) { return r.ok() && (r.lo % 128 || r.hi % 128); };  // 128: a warp group
  if (inside(bt.then_range) || inside(bt.else_range))
    ws = AttrStmt(Buffer(), "tl.fiber_per_warp", C(1), ws, s->span);
  return ws;
}

namespace {
// (backend kind, op) -> lowering; kind "" is the shared lowering.
std::map<std::pair<std::string, std::string>, GpuOpLowering>& Lowerings() {
  static std::map<std::pair<std::string, std::string>, GpuOpLowering> m;
  return m;
}
// (backend kind, op) -> what of the backend the lowering needs (RegisterGpuOpLowering's `where`)
std::map<std::pair<std::string, std::string>, std::string>& LoweringNeeds() {
  static std::map<std::pair<std::string, std::string>, std::string> m;
  return m;
}
}  // namespace

void RegisterGpuOpLowering(const std::string& op, GpuOpLowering f, const std::string& kind,
                           const std::string& where) {
  Lowerings()[{kind, op}] = std::move(f);
  if (!where.empty()) LoweringNeeds()[{kind, op}] = where;
}

std::vector<std::string> GpuOpLoweringKinds(const std::string& op) {
  std::vector<std::string> kinds;
  for (auto& l : Lowerings())
    if (l.first.second == op) kinds.push_back(l.first.first);
  return kinds;  // the map orders them
}

Stmt GpuTileLowerer::LowerTileOp(const Stmt& s) {
  auto* n = As<TileOpNode>(s);
  if (!n) throw InternalError("not a tile op: " + PrintStmt(s));
  if (auto* c = As<CopyNode>(s);
      c && c->src.buffer->scope != Scope::kTensorMemory && c->dst.buffer->scope != Scope::kTensorMemory)
    throw InternalError("T.copy left after legalization: " + PrintStmt(s));
  auto it = Lowerings().find({ctx_.target.kind, n->op});  // the backend's own, else the shared one
  if (it == Lowerings().end()) it = Lowerings().find({std::string(), n->op});
  if (it == Lowerings().end()) {
    std::string where;
    for (const std::string& k : GpuOpLoweringKinds(n->op)) {
      auto need = LoweringNeeds().find({k, n->op});
      where +=
          (where.empty() ? "" : ", ") + k + (need == LoweringNeeds().end() ? "" : " (" + need->second + ")");
    }
    throw UserError(ErrorKind::kUnsupported,
                    std::string("T.") + n->op + " has no lowering for the " + ctx_.features.name +
                        " target (" + ctx_.features.arch + ")" +
                        (where.empty() ? "" : "; it is lowered for: " + where),
                    s->span);
  }
  return it->second(*this, *n);
}

Stmt GpuTileLowerer::LowerShared(const TileOpNode& n) {
  auto it = Lowerings().find({std::string(), n.op});
  if (it == Lowerings().end())
    throw UserError(ErrorKind::kUnsupported,
                    std::string("T.") + n.op + " has no lowering for the " + ctx_.features.name + " target", n.span);
  return it->second(*this, n);
}

Expr GpuTileLowerer::VisitLoad(const Expr& e, const BufferLoadNode* n) {
  bool ch = false;
  auto idx = VisitExprs(n->indices, &ch);
  (void)e;
  return MapLoad(n->buffer, idx);
}

Stmt GpuTileLowerer::VisitStore(const Stmt& s, const StoreNode* n) {
  (void)s;
  if (!cur_loop_) cur_span_ = n->span;
  Expr v = VisitExpr(n->value);
  bool ch = false;
  auto idx = VisitExprs(n->indices, &ch);
  Expr mapped = MapLoad(n->buffer, idx, /*as_value=*/false);
  auto* ml = As<BufferLoadNode>(mapped);
  Stmt st = Store(ml->buffer, v, ml->indices, n->span);
  Scope sc = n->buffer->scope;
  // Outside T.Parallel one thread stores, unless the store is per thread (reads the thread index).
  if ((sc == Scope::kGlobal || sc == Scope::kShared) && !PerThread(s))
    st = GuardOne(st, n->span);
  return st;
}

Expr GpuTileLowerer::VisitCall(const Expr& e, const CallNode* n) {
  if (n->op == "tl.named_barrier_sync" && !ctx_.features.named_barriers)
    throw UserError(ErrorKind::kUnsupported,
                    "T.sync_threads(id, count), a named barrier of part of the block, has no " + ctx_.features.name +
                        " equivalent (its only barrier is the whole block's); restructure so that every thread "
                        "reaches T.sync_threads()",
                    stmt_span_);
  if (IsClusterOp(n->op) && !ctx_.features.clusters)
    throw UserError(ErrorKind::kUnsupported,
                    ClusterOpName(n->op) +
                        " needs thread-block clusters (CUDA sm_90 or newer); the target is " +
                        ctx_.features.label,
                    stmt_span_);
  if (n->op.rfind("tl.clc_", 0) == 0 && !ctx_.features.clc)
    throw UserError(ErrorKind::kUnsupported,
                    ClusterOpName(n->op) + " (clusterlaunchcontrol) needs sm_100 or newer; the target is " +
                        ctx_.features.label,
                    stmt_span_);
  if (n->op == "tl.clc_try_cancel_multicast" && !ctx_.features.clc_multicast)
    throw UserError(
        ErrorKind::kUnsupported,
        "T.clc_try_cancel_multicast (.multicast::cluster::all) needs sm_100a / sm_103a / sm_110a; the "
        "target is " +
            ctx_.features.label + " (T.clc_try_cancel is the form it has)",
        stmt_span_);
  if (n->op == "tl.sync_grid" && !ctx_.features.grid_sync)
    throw UserError(
        ErrorKind::kUnsupported,
        "T.sync_grid, a barrier of the whole grid, needs a cooperative launch (every block resident at "
        "once), which the " +
            ctx_.features.name + " target does not do here (CUDA does)",
        stmt_span_);
  if (n->op == "tl.call_extern" && !ctx_.features.cuda_source)
    throw UserError(
        ErrorKind::kUnsupported,
        "T.call_extern runs user CUDA C++, which the " + ctx_.features.name + " target cannot compile",
        stmt_span_);
  // A warp operation's lane mask and group width are CUDA's 32-lane warp's: on a wider wave (AMD's 64) a
  // partial mask has no meaning and is refused, not ignored.
  if (n->op == "tl.any_sync" || n->op == "tl.all_sync" || n->op == "tl.shfl_sync") {
    const char* what = n->op == "tl.shfl_sync"  ? "T.tvm_warp_shuffle"
                       : n->op == "tl.any_sync" ? "T.any_sync"
                                                : "T.all_sync";
    if (ctx_.features.wave != 32 && !IsConstInt(n->args[0], 0xFFFFFFFFll))
      throw UserError(ErrorKind::kUnsupported,
                      std::string(what) + " with a lane mask other than 0xFFFFFFFF: on " +
                          ctx_.features.name + " a wave of " + std::to_string(ctx_.features.wave) +
                          " lanes operates as a whole",
                      stmt_span_);
    int64_t width = 0;
    if (n->op == "tl.shfl_sync" && AsConstInt(n->args[3], &width) && width > ctx_.features.wave)
      throw UserError(ErrorKind::kUnsupported,
                      std::string(what) + ": a group of " + std::to_string(width) +
                          " lanes is wider than the " + std::to_string(ctx_.features.wave) +
                          "-lane warp of " + ctx_.features.name,
                      stmt_span_);
  }
  if (n->op == "tl.memory_fence" && !ctx_.features.ordered_atomics)
    throw UserError(ErrorKind::kUnsupported,
                    "T.atomic_add with a memory_order other than \"relaxed\": " + ctx_.features.name +
                        " atomics are relaxed; order the accesses with a barrier instead",
                    stmt_span_);
  if (n->op == "tl.atomic_load" || n->op == "tl.atomic_store") {
    // T.atomic_load / T.atomic_store (address_of(element), [value,] memory order): the element as a
    // plain operand, as the atomic adds; where the target's atomics are relaxed only, or 32-bit only, the
    // others are refused.
    auto* addr = As<CallNode>(n->args[0]);
    TL_ICHECK(addr && addr->op == "address_of", n->op, " takes an address");
    const std::string what = "T." + n->op.substr(3);
    int64_t order = 0;
    AsConstInt(n->args.back(), &order);
    const DataType t = addr->args[0]->dtype;
    if (!ctx_.features.ordered_atomics && order != 0)
      throw UserError(ErrorKind::kUnsupported,
                      what + " with memory_order other than \"relaxed\": " + ctx_.features.name +
                          " atomics are relaxed; order the accesses with a barrier instead",
                      stmt_span_);
    if (!ctx_.features.atomics_64 && t.bits() != 32)
      throw UserError(ErrorKind::kUnsupported,
                      what + " on " + ctx_.features.name + " takes 32-bit elements; got " + t.str(),
                      stmt_span_);
    std::vector<Expr> args{VisitExpr(addr->args[0])};
    for (size_t i = 1; i < n->args.size(); ++i) args.push_back(VisitExpr(n->args[i]));
    return Call(n->dtype, n->op, args);
  }
  if (n->op == "tl.ptx_cp_async") {
    // T.ptx_cp_async(dst, src, bytes, predicate): one cp.async of 4, 8 or 16 bytes from a global element
    // to a shared one (its physical place in the tile's layout), zero-filled where the predicate is false.
    if (ctx_.features.async_copy != AsyncCopy::kCpAsync)
      throw UserError(ErrorKind::kUnsupported,
                      "T.ptx_cp_async is CUDA's cp.async (sm_80+); the target is " + ctx_.features.label,
                      stmt_span_);
    auto elem = [&](size_t i) {
      auto* a = As<CallNode>(n->args[i]);
      TL_ICHECK(a && a->op == "address_of", "tl.ptx_cp_async takes addresses");
      return a->args[0];
    };
    return Call(DataType::Void(), "tl.cp_async",
                {VisitExpr(elem(0)), VisitExpr(elem(1)), n->args[2], VisitExpr(n->args[3])});
  }
  if (n->op == "tl.shfl_sync" && n->args.size() == 4) {  // T.tvm_warp_shuffle(mask, value, lane, width)
    if (!ctx_.features.shuffle)
      throw UserError(ErrorKind::kUnsupported,
                      "T.tvm_warp_shuffle is a warp shuffle, which the " + ctx_.features.name +
                          " target cannot do (its work-groups have no fixed-size warps)",
                      stmt_span_);
    std::vector<Expr> args;
    for (auto& a : n->args) args.push_back(VisitExpr(a));
    args.push_back(C(ctx_.features.wave));
    return Call(n->dtype, n->op, args);
  }
  if ((n->op == "tl.any_sync" || n->op == "tl.all_sync") && n->args.size() == 2) {
    // T.any_sync / T.all_sync: a vote over the lanes of a warp (32) or wave (64); the width tells the
    // emulator which. OpenCL's sub-groups have no fixed size, so a lane mask means nothing there.
    if (!ctx_.features.shuffle)
      throw UserError(ErrorKind::kUnsupported,
                      "T." + n->op.substr(3) + " is a warp vote, which the " + ctx_.features.name +
                          " target cannot do (its work-groups have no fixed-size warps)",
                      stmt_span_);
    return Call(n->dtype, n->op, {VisitExpr(n->args[0]), VisitExpr(n->args[1]), C(ctx_.features.wave)});
  }
  if (n->op == "atomic_fetch_add" && n->args.size() == 2) {  // T.atomic_add(..., return_prev=True)
    if (!ctx_.features.fetch_atomics)
      throw UserError(ErrorKind::kUnsupported,
                      "T.atomic_add(..., return_prev=True) returns the previous value on CUDA, HIP and the CPU; the " +
                          ctx_.features.name + " lowering does not implement it",
                      stmt_span_);
    auto* addr = As<CallNode>(n->args[0]);
    TL_ICHECK(addr && addr->op == "address_of", n->op, " takes an address");
    return Call(n->dtype, "tl.atomic_fetch_add", {VisitExpr(addr->args[0]), VisitExpr(n->args[1])});
  }
  if ((n->op == "atomic_add" || n->op == "atomic_max" || n->op == "atomic_min") && n->args.size() == 2) {
    auto* addr = As<CallNode>(n->args[0]);
    TL_ICHECK(addr && addr->op == "address_of", n->op, " takes an address");
    Expr dst = VisitExpr(addr->args[0]);
    return Call(DataType::Void(), "tl." + n->op, {dst, VisitExpr(n->args[1])});
  }
  return IRMutator::VisitCall(e, n);
}

Stmt GpuTileLowerer::VisitStmt(const Stmt& s) {
  Span saved = stmt_span_;
  if (s && s->span.defined()) stmt_span_ = s->span;
  if (auto* i = As<IfNode>(s); i && !cur_loop_ && (HasTileOp(i->then_case) || HasTileOp(i->else_case))) {
    if (BranchThreads bt = SplitBranches(i, region_, tx_vars_, ctx_.features, &uniform_vars_, &div_vars_);
        bt.split) {
      Stmt out = LowerBranches(s, i, bt);
      stmt_span_ = saved;
      return out;
    }
  }
  // Control flow on the thread index (`if tx == 5:`) outside T.Parallel: the statements under it are per thread.
  auto* i = As<IfNode>(s);
  auto* w = As<WhileNode>(s);
  const bool divergent = !cur_loop_ && ((i && ReadsThreadIndex(Evaluate(i->cond, s->span))) ||
                                        (w && ReadsThreadIndex(Evaluate(w->cond, s->span))));
  thread_conditions_ += divergent;
  const bool saved_known = leader_in_branch_;
  if (divergent) leader_in_branch_ = false;  // which threads run it is not a range the lowering knows
  Stmt out = VisitStmtAt(s);
  leader_in_branch_ = saved_known;
  thread_conditions_ -= divergent;
  stmt_span_ = saved;
  return out;
}

// Whether `s` reads one of `vars` or a load of one of `bufs`.
static bool ReadsVars(const Stmt& s, const std::set<const VarNode*>& vars,
                      const std::set<const BufferNode*>& bufs = {}) {
  if (vars.empty() && bufs.empty()) return false;
  bool hit = false;
  struct V : IRVisitor {
    const std::set<const VarNode*>* vars;
    const std::set<const BufferNode*>* bufs;
    bool* hit;
    void VisitVar(const VarNode* v) override { *hit |= vars->count(v) > 0; }
    void VisitLoad(const BufferLoadNode* n) override {
      *hit |= bufs->count(n->buffer.get()) > 0;
      IRVisitor::VisitLoad(n);
    }
  } v;
  v.vars = &vars;
  v.bufs = &bufs;
  v.hit = &hit;
  v.VisitStmt(s);
  return hit;
}

// The registers (T.alloc_var / T.alloc_local) that hold each thread's own value: written, outside T.Parallel,
// from the thread index, a value-returning atomic, a let of those, another such register, or under control
// flow on them. A statement reading one is per thread (PerThread), as on the CPU target: before, `v = tx;
// A[v] = 1` stored from thread 0 only.
static std::set<const BufferNode*> ThreadRegisters(const Stmt& body) {
  std::set<const BufferNode*> regs;
  std::set<const VarNode*> vars;
  auto own = [&](const Stmt& x) { return ReadsThreadIndex(x) || ReadsVars(x, vars, regs); };
  std::function<void(const Stmt&, bool)> walk = [&](const Stmt& s, bool divergent) {
    if (!s) return;
    if (auto* q = As<SeqNode>(s)) {
      for (auto& x : q->seq) walk(x, divergent);
    } else if (auto* l = As<LetNode>(s)) {
      if (own(Evaluate(l->value, s->span))) vars.insert(l->var.get());
      walk(l->body, divergent);
    } else if (auto* a = As<AttrStmtNode>(s)) {
      walk(a->body, divergent);
    } else if (auto* i = As<IfNode>(s)) {
      const bool d = divergent || own(Evaluate(i->cond, s->span));
      walk(i->then_case, d);
      walk(i->else_case, d);
    } else if (auto* w = As<WhileNode>(s)) {
      walk(w->body, divergent || own(Evaluate(w->cond, s->span)));
    } else if (auto* f = As<ForNode>(s)) {
      if (f->for_kind != ForKind::kParallel) walk(f->body, divergent || own(Evaluate(f->extent, s->span)));
    } else if (auto* st = As<StoreNode>(s)) {
      const Scope sc = st->buffer->scope;
      if ((sc == Scope::kLocal || sc == Scope::kLocalVar) && (divergent || own(s))) regs.insert(st->buffer.get());
    }
  };
  for (size_t n = SIZE_MAX; n != regs.size() + vars.size();) {  // to a fixpoint: a register may feed another
    n = regs.size() + vars.size();
    walk(body, false);
  }
  return regs;
}

Stmt GpuTileLowerer::VisitLet(const Stmt& s, const LetNode* n) {
  const Stmt probe = Evaluate(n->value, s->span);
  if (!cur_loop_ && (ReadsThreadIndex(probe) || ReadsVars(probe, thread_vars_, thread_regs_)))
    thread_vars_.insert(n->var.get());
  return IRMutator::VisitLet(s, n);
}

bool GpuTileLowerer::PerThread(const Stmt& s) const {
  return !cur_loop_ && (thread_conditions_ > 0 || ReadsThreadIndex(s) || ReadsVars(s, thread_vars_, thread_regs_));
}

Stmt GpuTileLowerer::VisitStmtAt(const Stmt& s) {
  // T.cp_async_barrier_noinc(bar) after T.ptx_cp_async copies into a tile a wgmma reads (another warp group's,
  // after waiting on bar): cp.async writes through the generic proxy and wgmma reads through the async proxy,
  // so the writer must fence its bytes (fence.proxy.async) once they have landed, which an arrival on
  // completion cannot do. The thread completes its copies (commit, wait_group 0), fences, then arrives: the
  // same one arrival per thread the barrier counts.
  if (auto* ev = As<EvaluateNode>(s))
    if (auto* c = As<CallNode>(ev->value); c && c->op == "tl.mbarrier_cp_async_arrive_noinc" && cp_async_wgmma_) {
      const Span& sp = s->span;
      ctx_.info->choices.push_back(Loc(sp) + ": T.cp_async_barrier_noinc: the thread waits for its cp.async copies, "
                                             "fences them for wgmma (fence.proxy.async) and arrives");
      return Seq({Call0("tl.cp_async_commit", {}, sp), Call0("tl.cp_async_wait", {C(0)}, sp),
                  Call0("tl.fence_proxy_async", {}, sp), Call0("tl.mbarrier_arrive", {VisitExpr(c->args[0])}, sp)},
                 sp);
    }
  // User CUDA code (T.import_source; T.call_extern in VisitCall) needs a compiler of CUDA C++.
  if (auto* a = As<AttrStmtNode>(s); a && a->key == "tl.import_source" && !ctx_.features.cuda_source)
    throw UserError(
        ErrorKind::kUnsupported,
        "T.import_source runs user CUDA C++, which the " + ctx_.features.name + " target cannot compile",
        s->span);
  // T.ptx_commit_group / T.ptx_wait_group (the user's cp.async groups): CUDA's cp.async only.
  if (auto* ev = As<EvaluateNode>(s))
    if (auto* c = As<CallNode>(ev->value); c &&
                                           (c->op == "tl.cp_async_commit" || c->op == "tl.cp_async_wait") &&
                                           ctx_.features.async_copy != AsyncCopy::kCpAsync)
      throw UserError(ErrorKind::kUnsupported,
                      std::string(c->op == "tl.cp_async_commit" ? "T.ptx_commit_group" : "T.ptx_wait_group") +
                          " is CUDA's cp.async (sm_80+); the target is " + ctx_.features.label,
                      s->span);
  // T.print outside a parallel loop runs once per block, like a scalar store.
  if (auto* ev = As<EvaluateNode>(s)) CheckHopperCall(ev->value, ctx_.features, s->span);  // hopper_wgmma.cc
  if (auto* ev = As<EvaluateNode>(s); ev && !cur_loop_)
    if (auto* c = As<CallNode>(ev->value);
        c && (c->op == "print" || c->op == "tl.mbarrier_init" || c->op == "tl.fence_barrier_init" ||
              (c->op == "tl.atomic_store" && !PerThread(s))))  // as a plain store
      return If(Eq(tx_, C(0)), IRMutator::VisitStmt(s), nullptr, s->span);
  return IRMutator::VisitStmt(s);
}

Stmt GpuTileLowerer::VisitSeq(const Stmt& s, const SeqNode* n) {
  (void)s;
  std::vector<Stmt> out;
  for (auto& x : n->seq) out.push_back(VisitStmt(x));
  return Seq(out, n->span);
}

Stmt GpuTileLowerer::OpScope(const Stmt& body, const Span& sp) {
  if (!body) return body;
  return AttrStmt(nullptr, "tl.tile_op", Int(op_count_++), body, sp);
}

const Fragment& GpuTileLowerer::Decode(const Expr& e) {
  uint64_t h = StructuralHash(e, /*map_free_vars=*/false);
  auto range = decoded_.equal_range(h);
  for (auto it = range.first; it != range.second; ++it)
    if (StructuralEqual(it->second.first, e, /*map_free_vars=*/false)) return it->second.second;
  return decoded_.emplace(h, std::make_pair(e, FragmentFromExpr(e)))->second.second;
}

const Fragment& GpuTileLowerer::Layout(const BufferNode* b) {
  auto it = layout_.find(b);
  TL_ICHECK(it != layout_.end(), "fragment without a tl.layout: " + b->name);
  return *it->second;
}

Stmt GpuTileLowerer::GuardOne(const Stmt& st, const Span& sp) {
  if (cur_loop_) {
    if (cur_loop_->replicas > 1) return If(Eq(cur_loop_->ReplicaOf(tx_), C(0)), st, nullptr, sp);
    return st;
  }
  return If(Eq(tx_, C(ws_leader_)), st, nullptr, sp);
}

}  // namespace gpu_lowering

PrimFunc LowerTileOpsGPU(const PrimFunc& f, const PassContext& ctx) {
  // The output binds each var once and is simplified, so that it prints in canonical form and
  // re-parses to an equal function.
  Stmt body = DropWgmmaWaitsWithoutWgmma(gpu_lowering::GpuTileLowerer(ctx).VisitStmt(f->body));
  return Simplify(WithBody(f, UniquifyDefs(body)));
}

}  // namespace tl
