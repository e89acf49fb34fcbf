// LowerTileOpsGPU, async copies and software pipelining: global->shared copies as 16-byte
// cp.async chunks; T.Pipelined as prologue, steady state (wait, barrier, prefetch, compute), drain.
#include <algorithm>
#include <cmath>
#include <set>

#include "arith/simplify.h"
#include "ir/printer.h"
#include "transform/gpu/tile_lowerer.h"
#include "transform/gpu_util.h"

namespace tl {
namespace gpu_lowering {

using namespace gpu_pass;

namespace {

// The steady state's prefetch `if (k + s - 1 < n) { cp.async ... }` as cp.async copies that are
// issued every iteration with the condition folded into their `valid` operand: a copy past the
// last iteration zero-fills a stage that no later iteration reads (it is the stage of iteration
// k + s - 1 >= n), and the loop body has no branch (issue 14). Null when the prefetch holds
// anything but unconditionally valid cp.async calls under loops, lets, attributes and per-thread
// conditions.
class FoldPrefetchGuard : public IRMutator {
 public:
  /// `check`: fail unless every copy's own `valid` is the constant true (run on the prefetch
  /// simplified under the guard); otherwise replace them all (run on the prefetch simplified for
  /// every iteration of the loop, since the copies now run in all of them).
  FoldPrefetchGuard(Expr guard, bool check) : guard_(std::move(guard)), check_(check) {}
  Stmt Run(const Stmt& s) {
    Stmt r = VisitStmt(s);
    return ok_ ? r : Stmt();
  }

 protected:
  Stmt VisitStore(const Stmt& s, const StoreNode* n) override {
    ok_ = false;
    return IRMutator::VisitStore(s, n);
  }
  Stmt VisitTileOp(const Stmt& s) override {
    ok_ = false;
    return s;
  }
  Stmt VisitAttr(const Stmt& s, const AttrStmtNode* n) override {
    const bool saved = staged_;
    staged_ = staged_ || n->key == "tl.staged_copy";
    Stmt r = IRMutator::VisitAttr(s, n);
    staged_ = saved;
    return r;
  }
  Expr VisitCall(const Expr& e, const CallNode* n) override {
    if (n->op == "tl.bitwise_xor" || n->op == "tl.thread_idx") return e;  // pure, inside indices
    // a transposing copy (TransposedCopy): its register stores into the stage write what its loads
    // fetched (zeros past the last iteration, as a cp.async's)
    if (n->op == "tl.vector_store" && staged_) return e;
    const bool load = n->op == "tl.vector_load" && staged_ && n->args.size() == 4;
    if (!load && (n->op != "tl.cp_async" || n->args.size() != 4)) {
      ok_ = false;
      return e;
    }
    // Only copies with no bounds check of their own: the guard becomes their one predicate (ANDed
    // into per-copy checks it would cost an extra compare per copy and iteration).
    int64_t valid = 0;
    if (check_ && (!AsConstInt(n->args[3], &valid) || !valid)) {
      ok_ = false;
      return e;
    }
    std::vector<Expr> args = n->args;
    args[3] = guard_;
    return Call(n->dtype, n->op, args);
  }

 private:
  Expr guard_;
  bool check_;
  bool ok_ = true;
  bool staged_ = false;  // inside a tl.staged_copy
};

// Whether element `idx` of global tensor g is inside it at both ends (a tile may start before it); the lower
// bounds that `bm` (the thread and block indices, the copy's loops) proves are left out.
Expr InsideTensor(const Buffer& g, const std::vector<Expr>& idx, const BoundMap& bm) {
  Expr ok;
  for (size_t d = 0; d < idx.size(); ++d) {
    Expr ge = Simplify(Binary(BinaryOp::kGE, idx[d], C(0)), bm);
    if (!IsConstInt(ge, 1)) ok = And(ok, ge);
    ok = And(ok, Lt(idx[d], g->shape[d]));
  }
  return ok ? Simplify(ok) : Bool(true);
}

}  // namespace

Stmt GpuTileLowerer::AsyncCopy(const CopyNode* n) {
  const Buffer& g = n->src.buffer;
  const Buffer& s = n->dst.buffer;
  if (auto kt = k_transposed_.find(s.get()); kt != k_transposed_.end()) return TransposedCopy(n, kt->second);
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
    BoundMap bm = kernel_bounds_;
    bm[itv.get()] = {int64_t(0), iters - 1};
    Expr ok = InsideTensor(g, gi, bm);
    Stmt st =
        Call0("tl.cp_async", {Load(MapBuffer(s), {SharedIndex(s, si)}), Load(g, gi), C(16), ok}, n->span);
    if (iters * T_ > chunks) st = If(Lt(c, C(chunks)), st, nullptr, n->span);
    out.push_back(iters == 1 ? Substitute(st, {{itv.get(), C(0)}})
                             : For(itv, C(0), C(iters), ForKind::kUnrolled, st, {}, n->span));
  }
  return Seq(out, n->span);
}

// A copy into a tile stored k contiguous (k_transposed_, gpu/mfma_lds.cc): block b = it * threads + tid of
// the [K / q, N / c] blocks (k blocks fastest: 16 lanes of 8-byte stores fill a 128-byte row) loads its q
// rows of c columns from global memory, one c-element load each (zeros outside the tensor), and stores its c
// columns of q k each, one q-element store, into the transposed tile. Marked tl.staged_copy (loads, then
// stores, through registers of their own): StagePrefetchInRegisters (HIP) moves the stores of a prefetch
// after the compute.
Stmt GpuTileLowerer::TransposedCopy(const CopyNode* n, const KTransposed& kt) {
  const Buffer& g = n->src.buffer;
  const Buffer& s = n->dst.buffer;
  const int64_t K = ConstOr(s->shape[0], n->span, "a shared tile"),
                N = ConstOr(s->shape[1], n->span, "a shared tile");
  const int64_t c = kt.c, q = kt.q, kb = K / q, iters = kb * (N / c) / T_;
  auto sd = TileDims(n->src);
  std::vector<Expr> gmin;
  for (auto& r : n->src.ranges) gmin.push_back(VisitExpr(r.min));
  Buffer regs = Scratch("transpose_regs", s->dtype, iters * q * c, Scope::kLocal);
  Var itv = MakeVar("it"), r = MakeVar("r"), j = MakeVar("j");
  Expr blk = Expr(itv) * C(T_) + tx_;
  Expr k0 = Simplify(Mod(blk, kb) * C(q)), n0 = Simplify(Div(blk, kb) * C(c));
  BoundMap bm = kernel_bounds_;
  bm[itv.get()] = {int64_t(0), iters - 1};
  bm[r.get()] = {int64_t(0), q - 1};
  std::vector<Expr> gi = gmin;
  gi[sd[0]] = Simplify(gi[sd[0]] + k0 + Expr(r));
  gi[sd[1]] = Simplify(gi[sd[1]] + n0);
  Expr ok = InsideTensor(g, gi, bm);
  Stmt load =
      Call0("tl.vector_load",
            {Load(regs, {Simplify((Expr(itv) * C(q) + Expr(r)) * C(c))}), Load(g, gi), C(c), ok}, n->span);
  std::vector<Expr> args{Load(MapBuffer(s), {SharedIndex(s, std::vector<Expr>{k0, Simplify(n0 + Expr(j))})})};
  for (int64_t v = 0; v < q; ++v)
    args.push_back(Load(regs, {Simplify((Expr(itv) * C(q) + C(v)) * C(c) + Expr(j))}));
  Stmt store = Call0("tl.vector_store", args, n->span);
  auto loop = [&](const Var& v, int64_t ext, Stmt b) {
    return For(v, C(0), C(ext), ForKind::kUnrolled, b, {}, n->span);
  };
  Stmt loads = loop(itv, iters, loop(r, q, load)), stores = loop(itv, iters, loop(j, c, store));
  // (this replaces what the legalization said of the copy: it did not know the tile's layout)
  const std::string head = Loc(n->span) + ": T.copy " + g->name + " -> " + s->name + ": ";
  auto& ch = ctx_.info->choices;
  ch.erase(std::remove_if(ch.begin(), ch.end(), [&](const std::string& x) { return x.rfind(head, 0) == 0; }),
           ch.end());
  ch.push_back(head + "into a tile stored k contiguous ([" + std::to_string(N) + ", " + std::to_string(K) +
               "], for the MFMA's vector reads), " + std::to_string(q) + " x " + std::to_string(c) +
               " blocks: " + std::to_string(c * g->dtype.bytes()) + "-byte loads, transposed in registers, " +
               std::to_string(q * g->dtype.bytes()) + "-byte LDS stores");
  return AttrStmt(nullptr, "tl.staged_copy", Int(1), Seq({loads, stores}, n->span), n->span);
}

Stmt GpuTileLowerer::LowerPipelined(const ForNode* n) {
  int64_t s = 1;
  auto a = n->annotations.find("num_stages");
  if (a != n->annotations.end()) AsConstInt(a->second, &s);
  // A one-stage loop is a pipeline only where it is warp-specialised (the producer warp group issues the
  // TMA copies of iteration k + 1 once the consumers released the stage); elsewhere its copies stay
  // synchronous (issue, wait) in the loop.
  const bool ws_one_stage = s == 1 && ws_candidate_ && n->var.get() == ws_candidate_->var.get();
  // There, lets at the top of the body that read no on-chip memory (`page = Table[b, t]`, the source of the
  // copies) are the producer's too: it computes them again around its copies.
  std::vector<const LetNode*> lets;
  Stmt inner = n->body;
  while (auto* l = ws_one_stage ? As<LetNode>(inner) : nullptr) {
    if (ReadsOnChip(l->value)) break;
    lets.push_back(l);
    inner = l->body;
  }
  std::vector<const CopyNode*> producers;
  std::vector<Stmt> consumers;
  bool tma = true;  // every producer is a TMA copy (LegalizeTileOpsGPU never mixes the two kinds)
  auto split = [&](const Stmt& b) {
    producers.clear();
    consumers.clear();
    tma = true;
    auto* sq = As<SeqNode>(b);
    for (auto& st : sq ? sq->seq : std::vector<Stmt>{b}) {
      auto* a = As<AttrStmtNode>(st);
      auto* c = a && a->key == "tl.copy_async" ? As<CopyNode>(a->body) : nullptr;
      bool fixed = c != nullptr;  // as for staged copies: a source region that reads no memory
      for (size_t d = 0; c && d < c->src.ranges.size(); ++d)
        fixed = fixed && !ReadsMemory(c->src.ranges[d].min) && !ReadsMemory(c->src.ranges[d].extent);
      const bool one_stage_tma = ws_one_stage && fixed && IsConstInt(a->value, 2);
      if (c && ((Stages(c->dst.buffer) == s && s >= 2) || one_stage_tma)) {
        producers.push_back(c);
        tma = tma && IsConstInt(a->value, 2);
      } else {
        consumers.push_back(st);
      }
    }
  };
  split(inner);
  if (!lets.empty() && (producers.empty() || !tma)) {  // the lets bought nothing: the body as it is
    lets.clear();
    split(n->body);
  }
  if (!producers.empty() && tma) {
    ws_lets_ = lets;
    Stmt r = LowerPipelinedTma(n, producers, consumers, s);  // lower_tma.cc
    ws_lets_.clear();
    return r;
  }
  Var ko = n->var;
  Expr mn = VisitExpr(n->min), ext = VisitExpr(n->extent);
  if (producers.empty()) {
    Stmt b = VisitStmt(n->body);
    return For(ko, mn, ext, ForKind::kSerial, b, {}, n->span);
  }
  std::vector<Buffer> managed;
  ctx_.info->choices.push_back(Loc(n->span) + ": T.Pipelined: " + std::to_string(s) +
                               (ctx_.features.async_copy == AsyncCopy::kSynchronous
                                    ? "-stage LDS pipeline ("
                                    : "-stage cp.async pipeline (") +
                               std::to_string(producers.size()) + " copies prefetched " +
                               std::to_string(s - 1) + " iteration(s) ahead, one barrier per iteration)");
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
  // The prefetch runs only while k + s - 1 < ext: with that bound on k its guards (the copy's
  // bounds checks along the pipelined axis) fold away where the sizes allow.
  Stmt prefetch = at(Expr(k) + C(s - 1));
  Expr guard = Lt(Expr(k) + C(s - 1), ext);
  Stmt folded;
  int64_t e;
  if (AsConstInt(Simplify(ext), &e) && e >= s) {
    BoundMap bm = kernel_bounds_;
    bm[k.get()] = {int64_t(0), e - 1};
    Stmt every = Simplify(prefetch, bm);
    bm[k.get()] = {int64_t(0), e - s};
    prefetch = Simplify(prefetch, bm);
    if (FoldPrefetchGuard(guard, true).Run(prefetch)) folded = FoldPrefetchGuard(guard, false).Run(every);
  }
  steady.push_back(folded ? folded : If(guard, prefetch, nullptr, n->span));
  steady.push_back(commit);
  steady.push_back(Substitute(Seq(cons, n->span), {{ko.get(), mn + Expr(k)}}));
  // The steady state's waits and barrier order the stage buffers: the barrier pass leaves them.
  // A power-of-two stage count: the code generator may unroll the loop by it (a hint), which makes each
  // copy's stage index `k % s` a constant.
  std::map<std::string, Expr> hint;
  if (s >= 2 && (s & (s - 1)) == 0) hint["tl.unroll_by"] = C(s);
  Stmt loop = For(k, C(0), ext, ForKind::kSerial, Seq(steady, n->span), hint, n->span);
  for (auto m = managed.rbegin(); m != managed.rend(); ++m)
    loop = AttrStmt(*m, "tl.pipeline_managed", Int(1), loop, n->span);
  out.push_back(loop);
  out.push_back(Call0("tl.cp_async_wait", {C(0)}, n->span));
  return Seq(out, n->span);
}

}  // namespace gpu_lowering
}  // namespace tl
