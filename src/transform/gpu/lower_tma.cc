// TMA copies and mbarrier pipelines on sm_90 / sm_90a (see lower_tma.h and docs/hopper.md, "TMA"):
//  - TmaBlocker: whether a global->shared T.copy can be cp.async.bulk.tensor copies, and the plan;
//  - GpuTileLowerer::TmaIssue / TmaCopy: the copies of one tile (one per 128-byte panel), issued by
//    thread 0 after `mbarrier.arrive.expect_tx` of the tile's bytes, and a wait on the barrier's phase;
//  - GpuTileLowerer::LowerPipelinedTma: T.Pipelined over TMA copies with one "full" mbarrier per
//    stage; iteration k waits on stage k % s for phase parity (k / s) % 2, and a __syncthreads at the
//    top of each iteration retires the previous iteration's reads before its stage is refilled.
#include "transform/gpu/lower_tma.h"

#include <algorithm>

#include "arith/simplify.h"
#include "ir/printer.h"
#include "op/copy.h"
#include "transform/gpu/tile_lowerer.h"
#include "transform/gpu_util.h"

namespace tl {

using namespace gpu_pass;

std::set<const BufferNode*> PlainSharedTiles(const Stmt& body) {
  std::set<const BufferNode*> r;
  PostOrderVisitStmt(body, [&](const Stmt& x) {
    if (auto* op = As<TileOpNode>(x))
      for (const Region* g : op->RowMajorShared()) r.insert(g->buffer.get());
  });
  return r;
}

std::string TmaBlocker(const CopyNode* n, const PassContext& ctx, TmaPlan* plan,
                       const std::set<const BufferNode*>& plain) {
  const bool load = n->src.buffer->scope == Scope::kGlobal;  // else a store: shared -> global
  const Region& G = load ? n->src : n->dst;
  const Region& S = load ? n->dst : n->src;
  const Buffer& g = G.buffer;
  const Buffer& s = S.buffer;
  if (n->disable_tma) return "T.copy(..., disable_tma=True)";
  if (ctx.opt.disable_tma) return "TMA is disabled by the pass config tl.disable_tma_lower";
  if (g->dtype != s->dtype)
    return "source and destination dtypes differ (" + n->src.buffer->dtype.str() + " -> " +
           n->dst.buffer->dtype.str() + ")";
  const int eb = g->dtype.bytes();
  if (g->dtype.bits() % 8 || (eb != 1 && eb != 2 && eb != 4 && eb != 8))
    return "TMA copies elements of 1, 2, 4 or 8 bytes, not " + g->dtype.str();
  const size_t R = g->shape.size();
  if (R > 5) return "'" + g->name + "' has " + std::to_string(R) + " dimensions; TMA addresses at most 5";
  // Every stride but the innermost (one element) must be a multiple of 16 bytes, below 2^40. Once a stride
  // is a multiple of 16, so is every outer one, whatever the (symbolic) dimensions in between; their bound
  // is then checked where the tensor map is encoded, at launch.
  int64_t stride = eb;
  for (size_t d = R; d-- > 1;) {
    int64_t dim = 0;
    if (!AsConstInt(Simplify(g->shape[d]), &dim)) {
      if (stride % 16 == 0 && stride > eb) break;
      return "dimension " + std::to_string(d) + " of '" + g->name +
             "' is symbolic, so the 16-byte alignment of its strides that TMA needs cannot be proven";
    }
    stride *= dim;
    if (stride % 16)
      return "the stride of dimension " + std::to_string(d - 1) + " of '" + g->name + "' (" +
             std::to_string(stride) + " bytes) is not a multiple of 16 bytes";
    if (stride >= (int64_t{1} << 40)) return "a stride of '" + g->name + "' is 2^40 bytes or more";
  }
  for (auto& e : g->shape)
    if (int64_t v; AsConstInt(Simplify(e), &v) && v > 0x7FFFFFFF)
      return "a dimension of '" + g->name + "' exceeds TMA's 32-bit coordinates";
  auto sd = TileDims(G);
  if (sd.empty()) return "the tile is a single element";
  if (sd.back() != R - 1) return "the innermost tile axis is not the tensor's contiguous axis";
  // The destination is a whole shared buffer, or one index of its leading dimensions and the whole of the
  // rest (a stage of a multi-stage buffer, `S[k % 2, :, :]`); the tile's non-unit extents are that shape. Its
  // last dimension may be whole 128-byte panels of a buffer whose rows are laid out in panels
  // (`S[:, 64:128]` of fp16 rows of 256 elements): each panel is then a column of the tile's rows.
  std::vector<int64_t> dshape, dnon1, snon1, box;
  size_t lead = s->shape.size();  // the first dimension from which the copy covers the buffer whole
  int64_t col_extent = 0;         // the last dimension's extent where it is a range of panels
  for (size_t d = s->shape.size(); d-- > 0;) {
    int64_t v = 0, e = 0, m = 0;
    if (!AsConstInt(Simplify(s->shape[d]), &v))
      return "the shape of shared buffer '" + s->name + "' is symbolic";
    const bool whole_extent = AsConstInt(Simplify(S.ranges[d].extent), &e);
    if (lead == d + 1 && IsConstInt(Simplify(S.ranges[d].min), 0) && whole_extent && e == v)
      lead = d;
    else if (d + 1 == s->shape.size() && whole_extent && v * eb > 128 && (v * eb) % 128 == 0 &&
             (e * eb) % 128 == 0 && e > 0 &&  // the corner on a panel boundary (`j * 64` in an unrolled loop too)
             (AsConstInt(Simplify(S.ranges[d].min), &m) ? (m * eb) % 128 == 0 && m + e <= v
                                                          : IsConstInt(Simplify(Mod(S.ranges[d].min, 128 / eb)), 0)))
      lead = d, col_extent = e;
    else if (!IsConstInt(Simplify(S.ranges[d].extent), 1))
      return "the copy covers a part of shared buffer '" + s->name + "', not all of it (nor one index of its "
             "leading dimensions and the whole of the others)";
  }
  for (size_t d = lead; d < s->shape.size(); ++d) {
    int64_t v = 0;
    AsConstInt(Simplify(s->shape[d]), &v);
    if (d + 1 == s->shape.size() && col_extent) v = col_extent;
    dshape.push_back(v);
    if (v != 1) dnon1.push_back(v);
  }
  if (dshape.empty()) return "the tile is a single element";
  for (size_t d = 0; d < R; ++d) {
    int64_t e = 0;
    if (!AsConstInt(Simplify(G.ranges[d].extent), &e))
      return "the tile's extent along dimension " + std::to_string(d) + " is not constant";
    box.push_back(e);
    if (e != 1) snon1.push_back(e);
  }
  if (snon1 != dnon1)
    return "the tile's shape (" + Dims(snon1) + ") differs from shared buffer '" + s->name + "' (" +
           Dims(dnon1) + ")";
  const int64_t cols = dshape.back();
  int64_t total = 1;
  for (auto v : dshape) total *= v;
  const int64_t rows = total / cols, rb = cols * eb;
  if (rb % 16) return "the tile's rows are " + std::to_string(rb) + " bytes, not a multiple of 16";
  // The layout of the shared tile (HopperSharedOffset): 128-byte panels, a 32/64/128B swizzle, or plain.
  TmaPlan p;
  if (plain.count(s.get())) {  // row-major (PlainSharedTiles): one box, no swizzle
  } else if (rb > 128 && rb % 128 == 0) {
    p.swizzle = 128;
    p.panels = rb / 128;
  } else if (rb == 128 || rb == 64 || rb == 32) {
    p.swizzle = static_cast<int>(rb);
  }
  p.panel_cols = cols / p.panels;
  box.back() = p.panel_cols;
  for (size_t d = 0; d < R; ++d)
    if (box[d] > 256)
      return "the box extent " + std::to_string(box[d]) + " along dimension " + std::to_string(d) +
             " exceeds TMA's limit of 256 elements";
  if (p.swizzle && rows % 8)
    return "the tile has " + std::to_string(rows) + " rows, not a multiple of the 8 rows of a " +
           std::to_string(p.swizzle) + "B swizzle pattern";
  if (!p.swizzle && (rows * rb) % 128)
    return "the tile is " + std::to_string(rows * rb) + " bytes, not a multiple of TMA's 128-byte alignment";
  p.box = box;
  p.bytes = total * eb;
  p.align = std::max<int64_t>(128, 8 * p.swizzle);  // a whole swizzle pattern: 256, 512 or 1024 bytes
  // One stage of several: each panel of it starts `rows` rows of its panel into the buffer's (the layout's
  // rows run through the leading dimensions), aligned when a stage is a whole number of swizzle patterns.
  if (lead > 0 && (rows * p.panel_cols * eb) % p.align)
    return "one index of the leading dimensions of shared buffer '" + s->name + "' is " +
           std::to_string(rows * p.panel_cols * eb) + " bytes per panel, not a multiple of the " +
           std::to_string(p.align) + "-byte alignment TMA needs";
  if (plan) *plan = p;
  return "";
}

std::string TmaCopyBlocker(const TmaCopyNode& t, const PassContext& ctx, TmaPlan* plan,
                           const std::set<const BufferNode*>& plain) {
  CopyNode c = t.PlanCopy();
  std::string why = TmaBlocker(&c, ctx, plan, plain);
  if (!why.empty() || !t.format) return why;
  // the driver's rules for 16U4_ALIGN16B / 16U6_ALIGN16B (cuTensorMapEncodeTiled): boxDim[0] 128, swizzle
  // none or 128B
  const std::string name = t.format == 1 ? "16U4_ALIGN16B" : "16U6_ALIGN16B";
  if (plan->box.back() != 128 || (plan->swizzle != 0 && plan->swizzle != 128))
    return std::string(t.format == 1 ? "an fp4" : "an fp6") +
           " tile in the tensor cores' form is filled 128 values of a row a copy (TMA format " + name +
           ": a box 128 wide, no swizzle or the 128-byte one); this tile's rows are " +
           std::to_string(plan->box.back()) + " values (make K a multiple of 128)";
  plan->map_tensor = t.src.buffer;
  plan->format = t.format;
  // the transaction counts the packed bytes read (8 or 12 of each 16-byte group), not the groups written
  plan->bytes = t.format == 1 ? plan->bytes / 2 : plan->bytes * 3 / 4;
  return "";
}

namespace gpu_lowering {

namespace {
// The `tl.tensor_map(&g[0, ...], T.list(box...), swizzle)` operand of a plan (with a TMA format: the
// format's tensor, and the format as a fourth operand).
Expr TensorMapOperand(const Buffer& copied, const TmaPlan& p) {
  const Buffer& g = p.map_tensor ? p.map_tensor : copied;
  std::vector<Expr> zeros(g->shape.size(), C(0)), box;
  for (auto b : p.box) box.push_back(C(b));
  std::vector<Expr> args{Load(g, zeros), Call(DataType::Handle(), "list", box), C(p.swizzle)};
  if (p.format) args.push_back(C(p.format));
  return Call(DataType::Handle(), "tl.tensor_map", args);
}
// The coordinates (outermost first) of panel q's box: the tile's corner, q panels along the innermost axis.
std::vector<Expr> PanelCoords(const std::vector<Expr>& corner, const TmaPlan& p, int64_t q) {
  std::vector<Expr> c = corner;
  c.back() = Simplify(c.back() + C(q * p.panel_cols));
  return c;
}
}  // namespace

Expr GpuTileLowerer::TmaPanel(const Region& r, const TmaPlan& p, int64_t q) {
  const Buffer& s = r.buffer;
  int64_t& al = tma_align_[MapBuffer(s).get()];
  al = std::max(al, p.align);
  std::vector<Expr> sidx;  // the region's corner (a stage's index in leading dimensions), q panels along
  for (auto& rg : r.ranges) sidx.push_back(VisitExpr(rg.min));
  sidx.back() = Simplify(sidx.back() + C(q * p.panel_cols));
  return Load(MapBuffer(s), {SharedIndex(s, sidx)});
}

Stmt GpuTileLowerer::TmaIssue(const CopyNode* n, const TmaPlan& p, const Expr& bar, const std::string& op) {
  Expr map = TensorMapOperand(n->src.buffer, p);
  std::vector<Expr> corner;
  for (auto& r : n->src.ranges) corner.push_back(VisitExpr(r.min));
  std::vector<Stmt> out;
  for (int64_t q = 0; q < p.panels; ++q) {
    std::vector<Expr> args{TmaPanel(n->dst, p, q), bar, map};
    for (auto& c : PanelCoords(corner, p, q)) args.push_back(c);
    out.push_back(Call0(op, args, n->span));
  }
  return Seq(out, n->span);
}

Stmt GpuTileLowerer::TmaStore(const CopyNode* n, bool reduce_add) {
  TmaPlan p;
  std::string why = TmaBlocker(n, ctx_, &p, plain_shared_);
  TL_ICHECK(why.empty(), "tl.copy_tma_store marks a copy TMA cannot do: " + why);
  Expr map = TensorMapOperand(n->dst.buffer, p);
  std::vector<Expr> corner;
  for (auto& r : n->dst.ranges) corner.push_back(VisitExpr(r.min));
  std::vector<Stmt> issue;
  for (int64_t q = 0; q < p.panels; ++q) {
    std::vector<Expr> args{TmaPanel(n->src, p, q), map};
    for (auto& c : PanelCoords(corner, p, q)) args.push_back(c);
    issue.push_back(Call0(reduce_add ? "tl.tma_reduce_add" : "tl.tma_store", args, n->span));
  }
  issue.push_back(Call0("tl.tma_store_commit", {}, n->span));
  // Complete (global writes done, the tile read) before anything may rewrite the tile or read the output.
  issue.push_back(Call0("tl.tma_store_wait", {}, n->span));
  // Every thread orders its generic-proxy writes of the tile before the async-proxy read; InsertBarriers
  // then puts a __syncthreads between the writes and thread 0's store.
  Stmt store = If(Eq(tx_, C(0)), Seq(issue, n->span), nullptr, n->span);
  if (ctx_.opt.skip_fence_proxy) return store;  // test hook (tl.test_skip_fence_proxy_async)
  // Where the program places its own barriers (tl.user_sync_shared: TileLang's
  // TL_DISABLE_THREAD_STORAGE_SYNC) none of them can stand between this fence and the store: the store's
  // barrier is the compiler's (the region's named barrier inside a warp-group region).
  if (ctx_.opt.user_sync_shared)
    return Seq({Call0("tl.fence_proxy_async", {}, n->span), Call0("tl.syncthreads", {}, n->span), store},
               n->span);
  return Seq({Call0("tl.fence_proxy_async", {}, n->span), store}, n->span);
}

Buffer GpuTileLowerer::TmaBarriers(int64_t count, const Span& sp) {
  Buffer bars = Scratch("tma_bar", DataType::UInt(64), count, Scope::kShared);
  for (int64_t i = 0; i < count; ++i)
    tma_inits_.push_back(Call0("tl.mbarrier_init", {Load(bars, {C(i)}), C(1)}, sp));
  return bars;
}

Buffer GpuTileLowerer::TmaCounter(const std::string& base) {
  Buffer v = Scratch(base, DataType::Int(32), 1, Scope::kLocalVar);
  tma_var_inits_.push_back({v, C(0)});
  return v;
}

Stmt GpuTileLowerer::TmaCopy(const CopyNode* n) {
  TmaPlan p;
  std::string why = TmaBlocker(n, ctx_, &p, plain_shared_);
  TL_ICHECK(why.empty(), "tl.copy_async marks a copy TMA cannot do: " + why);
  Expr bar = Load(TmaBarriers(1, n->span), {C(0)});
  Buffer phase = TmaCounter("tma_phase");  // the barrier's phase parity, flipped after each wait
  Stmt copies = TmaIssue(n, p, bar);
  if (multicast_) {
    // TMA multicast (TileLang's T.copy_cluster(..., cluster_mask=)): the mask's lowest rank issues the copies
    // with .multicast::cluster (the box lands at the same shared offset in every block of the mask and
    // completes each one's barrier at the same offset); the mask's other blocks only expect the bytes; blocks
    // outside the mask copy for themselves.
    int64_t low = 0;
    while (!(multicast_ >> low & 1)) ++low;
    Expr rank = Call(DataType::Int(32), "tl.cluster_ctarank", {});
    Stmt mc = AttrStmt(nullptr, "tl.tma_multicast", Int(multicast_), copies, n->span);
    Expr outside = Eq(Binary(BinaryOp::kBitAnd, Binary(BinaryOp::kShr, Int(multicast_), rank), C(1)), C(0));
    copies = If(Eq(rank, C(low)), mc, If(outside, copies, nullptr, n->span), n->span);
    multicast_used_ = true;
  }
  Stmt issue = If(Eq(tx_, C(0)),
                  Seq({Call0("tl.mbarrier_arrive_expect_tx", {bar, C(p.bytes)}, n->span), copies}, n->span),
                  nullptr, n->span);
  Expr ph = Load(phase, {C(0)});
  return Seq(
      {issue, Call0("tl.mbarrier_wait_parity", {bar, ph}, n->span), Store(phase, C(1) - ph, {C(0)}, n->span)},
      n->span);
}

bool GpuTileLowerer::SameInCluster(const Region& r, const Var& loop_var) const {
  struct V : IRVisitor {
    const GpuTileLowerer* L;
    const VarNode* loop;
    bool same = true;
    void VisitVar(const VarNode* v) override {
      // the loop's variable, a block variable of an axis the cluster does not span, a symbol of the kernel
      bool ok = v == loop || (!L->bound_vars_.count(v) && !L->tx_vars_.count(v) && v != L->tx_.get());
      for (size_t i = 0; i < L->block_vars_.size() && i < 3; ++i)
        if (v == L->block_vars_[i].get()) ok = L->cluster_[i] == 1;
      same &= ok;
    }
    // (a value read, a cluster rank: may differ between the blocks)
    void VisitCall(const CallNode*) override { same = false; }
    void VisitLoad(const BufferLoadNode*) override { same = false; }
  } v;
  v.L = this;
  v.loop = loop_var.get();
  for (const Range& rg : r.ranges) {
    v.VisitExpr(rg.min);
    v.VisitExpr(rg.extent);
  }
  return v.same;
}

std::vector<bool> GpuTileLowerer::MulticastCopies(const ForNode* n,
                                                  const std::vector<const CopyNode*>& producers) {
  // Automatic TMA multicast: in a cluster (at most 16 blocks, every one of them running this loop the same
  // number of times: not under an `if`, its bounds the same in every block), a tile every block of the
  // cluster copies alike (SameInCluster) is loaded once, by rank 0, into all of them (.multicast::cluster,
  // each block's barrier at the same offset completing); each block still expects all the stage's bytes. A
  // stage is then refilled only after every block of the cluster is done with it: the iteration's block
  // barrier becomes a cluster barrier, and one more follows the loop.
  const int64_t csize = cluster_[0] * cluster_[1] * cluster_[2];
  const bool uniform = SameInCluster(Region{nullptr, {Range{n->min, n->extent}}}, Var());
  const bool may_multicast = csize > 1 && csize <= 16 && ctx_.features.clusters &&
                             !ctx_.opt.disable_barriers && !conditional_loops_.count(n) &&
                             thread_conditions_ == 0 && uniform;
  const bool ws = ws_candidate_ && n->var.get() == ws_candidate_->var.get();
  std::vector<bool> mcast;
  for (auto* c : producers) mcast.push_back(may_multicast && SameInCluster(c->src, n->var));
  for (size_t i = 0; i < producers.size(); ++i)
    if (mcast[i])
      ctx_.info->choices.push_back(
          Loc(producers[i]->span) + ": T.copy " + producers[i]->src.buffer->name + " -> " +
          producers[i]->dst.buffer->name + ": TMA multicast to the cluster's " + std::to_string(csize) +
          " blocks (every block copies the same tile: its indices read no block index the cluster spans); "
          "rank 0 issues it with .multicast::cluster, " +
          (ws ? "refilling a stage once the consumers of every block have released it (their remote arrivals "
                "on rank 0's 'empty' barrier)"
              : "each stage is refilled after a cluster barrier"));
  return mcast;
}

Stmt GpuTileLowerer::LowerPipelinedTma(const ForNode* n, const std::vector<const CopyNode*>& producers,
                                        const std::vector<Stmt>& consumers, int64_t s) {
  if (ws_candidate_ &&
      n->var.get() == ws_candidate_->var.get()) {  // warp-specialised (gpu/warp_specialize.cc)
    std::vector<TmaPlan> plans(producers.size());
    int64_t bytes = 0;
    for (size_t i = 0; i < producers.size(); ++i) {
      std::string why = TmaBlocker(producers[i], ctx_, &plans[i], plain_shared_);
      TL_ICHECK(why.empty(), "tl.copy_async marks a copy TMA cannot do: " + why);
      bytes += plans[i].bytes;
    }
    return LowerPipelinedWs(n, producers, plans, consumers, s, bytes, MulticastCopies(n, producers));
  }
  Var ko = n->var;
  Expr mn = VisitExpr(n->min), ext = VisitExpr(n->extent);
  const Span& sp = n->span;
  if (!ws_why_.empty()) ctx_.info->choices.push_back(Loc(sp) + ": not warp-specialized: " + ws_why_);
  Buffer bars = TmaBarriers(s, sp);
  // A pipeline that runs more than once (inside another loop) numbers its iterations across runs, so
  // that stage and phase stay consistent: g = (iterations of earlier runs) + k.
  Buffer base = loop_depth_ > 0 ? TmaCounter("tma_iters") : Buffer();
  auto global = [&](const Expr& k) { return base ? index_expr::IterationNumber(Load(base, {C(0)}) + k) : k; };
  std::vector<Buffer> managed;
  std::vector<TmaPlan> plans;
  int64_t bytes = 0;
  std::string what;
  for (auto* c : producers) {
    TmaPlan p;
    std::string why = TmaBlocker(c, ctx_, &p, plain_shared_);
    TL_ICHECK(why.empty(), "tl.copy_async marks a copy TMA cannot do: " + why);
    plans.push_back(p);
    bytes += p.bytes;
    stage_[c->dst.buffer.get()] = Mod(global(ko - mn), s);
    managed.push_back(MapBuffer(c->dst.buffer));
  }
  const std::vector<bool> mcast = MulticastCopies(n, producers);
  const bool any_mcast = std::find(mcast.begin(), mcast.end(), true) != mcast.end();
  const int64_t csize = cluster_[0] * cluster_[1] * cluster_[2];
  ctx_.info->choices.push_back(Loc(sp) + ": T.Pipelined: " + std::to_string(s) + "-stage TMA pipeline (" +
                               std::to_string(producers.size()) + " copies, " + std::to_string(bytes) +
                               " bytes per stage, prefetched " + std::to_string(s - 1) +
                               " iteration(s) ahead by one thread; one 'full' mbarrier per stage waited on "
                               "with phase parity (k / " +
                               std::to_string(s) +
                               ") % 2; a __syncthreads per iteration before a stage is refilled)");
  Expr bar = Load(bars, {Mod(global(ko - mn), s)});
  std::vector<Stmt> issue{Call0("tl.mbarrier_arrive_expect_tx", {bar, C(bytes)}, sp)};
  for (size_t i = 0; i < producers.size(); ++i) {
    Stmt cp = TmaIssue(producers[i], plans[i], bar);
    if (mcast[i]) {
      cp = If(Eq(Call(DataType::Int(32), "tl.cluster_ctarank", {}), C(0)),
              AttrStmt(nullptr, "tl.tma_multicast", Int((int64_t{1} << csize) - 1), cp, sp), nullptr, sp);
      multicast_used_ = true;  // the barriers are initialised across the cluster
    }
    issue.push_back(cp);
  }
  Stmt producer = OpScope(If(Eq(tx_, C(0)), Seq(issue, sp), nullptr, sp), sp);
  std::vector<Stmt> cons;
  for (auto& st : consumers) cons.push_back(VisitStmt(st));
  for (auto* c : producers) stage_.erase(c->dst.buffer.get());
  auto at = [&](const Expr& iter) { return Substitute(producer, {{ko.get(), mn + iter}}); };
  std::vector<Stmt> out;
  for (int64_t p = 0; p + 1 < s; ++p) out.push_back(If(Lt(C(p), ext), at(C(p)), nullptr, sp));
  Var k = MakeVar(ko->name);
  std::vector<Stmt> steady;
  if (!ctx_.opt.disable_barriers)
    steady.push_back(Call0(any_mcast ? "tl.cluster_sync" : "tl.syncthreads", {}, sp));
  steady.push_back(If(Lt(Expr(k) + C(s - 1), ext), at(Expr(k) + C(s - 1)), nullptr, sp));
  Expr gk = global(Expr(k));
  steady.push_back(Call0("tl.mbarrier_wait_parity",
                         {Load(bars, {Simplify(Mod(gk, s))}), Simplify(Mod(Div(gk, s), 2))}, sp));
  steady.push_back(Substitute(Seq(cons, sp), {{ko.get(), mn + Expr(k)}}));
  Stmt loop = For(k, C(0), ext, ForKind::kSerial, Seq(steady, sp), {}, sp);
  for (auto m = managed.rbegin(); m != managed.rend(); ++m)
    loop = AttrStmt(*m, "tl.pipeline_managed", Int(1), loop, sp);
  out.push_back(loop);
  if (any_mcast)
    out.push_back(Call0("tl.cluster_sync", {}, sp));  // no block ends while a peer may load into it
  if (base) out.push_back(Store(base, Load(base, {C(0)}) + ext, {C(0)}, sp));
  return Seq(out, sp);
}

Stmt GpuTileLowerer::TmaCopyProducer(const TmaCopyNode& t, const std::string& load_op, const Expr& expect,
                                     int64_t expect_scale) {
  CopyNode c = t.PlanCopy();
  PassContext ctx = ctx_;
  ctx.opt.disable_tma = false;
  TmaPlan p;
  std::string why = TmaCopyBlocker(t, ctx, &p, plain_shared_);
  TL_ICHECK(why.empty(), "T.tma_copy passed legalization but is not a TMA copy: " + why);
  Expr bar = VisitExpr(t.barrier);
  Stmt arm = Call0("tl.mbarrier_expect_tx", {bar, C(p.bytes * expect_scale)}, t.span);
  if (expect) arm = If(expect, arm, nullptr, t.span);
  return If(Eq(tx_, C(ws_leader_)),  // thread 0, or the first thread of the enclosing T.ws block
            Seq({arm, TmaIssue(&c, p, bar, load_op)}, t.span), nullptr, t.span);
}

namespace {
// T.tma_copy(src, dst, barrier): the producer half only, as in TileLang: thread 0 (or the first of the T.ws
// block) adds the copy's bytes to the barrier's expected transactions (mbarrier.expect_tx, no arrival) and
// issues the copies. The program arrives (T.mbarrier_arrive) and waits itself. A cluster barrier's form (the
// 2-CTA load) belongs to the backends that have it (CUDA's tcgen05 family: src/target/cuda/lower_tcgen05.cc).
const GpuOpLoweringRegistrar kTmaCopy("tma_copy", [](GpuTileLowerer& L, const TileOpNode& n) -> Stmt {
  auto& t = static_cast<const TmaCopyNode&>(n);
  if (t.cluster_barrier)
    throw UserError(
        ErrorKind::kUnsupported,
        "T.tma_copy into a barrier from T.alloc_cluster_barrier is TileLang's 2-CTA load (both blocks "
        "of a CTA pair complete the even block's barrier), which needs the tcgen05 family (cuda "
        "-arch=sm_100a / sm_103a / sm_110a); the target is " +
            L.ctx_.features.label + ". Use a T.alloc_barrier barrier for a block's own loads",
        t.span);
  return L.TmaCopyProducer(t, "tl.tma_load", nullptr, 1);
});
}  // namespace

}  // namespace gpu_lowering
}  // namespace tl
