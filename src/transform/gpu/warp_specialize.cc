// Automatic warp specialisation of a TMA pipeline on sm_90a (docs/warp_specialization.md): the block
// gets one extra warp group (threads T .. T+127) that produces (issues the TMA copies of every stage
// after waiting on the stage's "empty" mbarrier) while the T original threads consume (wait on the
// stage's "full" mbarrier, compute, arrive on "empty"). setmaxnreg moves registers from the producer
// to the consumers. The parts:
//  - WsCandidate (before lowering): the one T.Pipelined loop that may be split (at the top level or
//    inside serial loops, e.g. a persistent loop over tiles);
//  - PlanRelease: when the consumers release a stage: after the iteration, or one iteration late when
//    their wgmma group stays in flight across iterations (wgmma.wait_group 1, the default for a GEMM);
//  - GpuTileLowerer::LowerPipelinedWs: the consumers' loop (in place of the pipeline) and the producer's;
//    inside another loop both number iterations across its runs (a register counter) for stage and phase;
//  - GpuTileLowerer::WsSplitKernel: `if (tx < T) { the whole kernel, with the consumers' loop } else
//    { the producer's loop under the loops and lets it needs }`;
//  - WsNamedBarriers (after InsertBarriers): a __syncthreads reached by the consumers only becomes
//    `bar.sync 1, T` (named barrier 1 over the consumer threads).
#include <algorithm>
#include <cstdint>
#include <functional>
#include <tuple>

#include "arith/simplify.h"
#include "ir/functor.h"
#include "layout/hopper_layout.h"
#include "op/copy.h"
#include "op/gemm.h"
#include "op/hopper_ops.h"
#include "transform/gpu/hopper_wgmma.h"
#include "transform/gpu/tile_lowerer.h"
#include "transform/gpu/warp_specialize.h"
#include "transform/gpu_util.h"

namespace tl {

using namespace gpu_pass;

namespace {
constexpr int64_t kWarpGroup = 128;
constexpr int64_t kProducerRegs = 40;
constexpr int64_t kMaxConsumerRegs = 240;
constexpr int64_t kUnknown = INT64_MAX;  // wgmma groups in flight: not bounded by a wait

}  // namespace

// Whether `e` reads memory the producer warp group cannot read as the consumers do: anything but global
// tensors (shared tiles, registers and T.alloc_var values are the consumers').
bool ReadsOnChip(const Expr& e) {
  struct V : IRVisitor {
    bool hit = false;
    void VisitLoad(const BufferLoadNode* n) override {
      hit = hit || n->buffer->scope != Scope::kGlobal;
      IRVisitor::VisitLoad(n);
    }
  } v;
  if (e) v.VisitExpr(e);
  return v.hit;
}

namespace {

// The T.Pipelined loops under `s`, each with why its place forbids the split ("" when only Seq, Let,
// AttrStmt and serial loops whose bounds and values read no on-chip memory are above it).
void FindPipelined(const Stmt& s, const std::string& why,
                   std::vector<std::pair<const ForNode*, std::string>>* out) {
  if (!s) return;
  switch (s->kind) {
    case StmtKind::kSeq:
      for (auto& x : As<SeqNode>(s)->seq) FindPipelined(x, why, out);
      return;
    case StmtKind::kLet: {
      auto* l = As<LetNode>(s);
      bool bad = why.empty() && ReadsOnChip(l->value);
      FindPipelined(l->body,
                    bad ? "a value it uses ('" + l->var->name + "') is read from on-chip memory" : why, out);
      return;
    }
    case StmtKind::kAttr: FindPipelined(As<AttrStmtNode>(s)->body, why, out); return;
    case StmtKind::kIf: {
      // a condition the producer can evaluate by itself (T.Persistent's "this tile exists"): it runs the same
      // `if` around its loop
      auto* i = As<IfNode>(s);
      if (i->else_case) break;
      bool bad = why.empty() && ReadsOnChip(i->cond);
      FindPipelined(i->then_case, bad ? "the condition around it reads on-chip memory" : why, out);
      return;
    }
    case StmtKind::kFor: {
      auto* f = As<ForNode>(s);
      if (f->for_kind == ForKind::kPipelined) {
        out->push_back({f, why});
        return;
      }
      if (f->for_kind == ForKind::kSerial || f->for_kind == ForKind::kUnrolled) {
        bool bad = why.empty() && (ReadsOnChip(f->min) || ReadsOnChip(f->extent));
        FindPipelined(f->body, bad ? "the bounds of the loop around it read on-chip memory" : why, out);
        return;
      }
      break;
    }
    default: break;
  }
  PostOrderVisitStmt(s, [&](const Stmt& x) {
    if (auto* f = As<ForNode>(x); f && f->for_kind == ForKind::kPipelined)
      out->push_back(
          {f, why.empty() ? "the T.Pipelined loop is inside a condition or a parallel loop" : why});
  });
}

// Whether `s` reads or writes buffer `b` (tile-op regions, loads, stores; not the facts attached to it).
bool Touches(const Stmt& s, const BufferNode* b) {
  struct V : IRVisitor {
    const BufferNode* b;
    bool hit = false;
    void VisitBuffer(const Buffer& x) override { hit = hit || x.get() == b; }
    void VisitAttr(const AttrStmtNode* n) override {
      VisitExpr(n->value);
      VisitStmt(n->body);
    }
  } v;
  v.b = b;
  v.VisitStmt(s);
  return v.hit;
}

// The gemm at the top of a consumer statement (under its facts), or null.
const GemmNode* TopGemm(const Stmt& s) {
  Stmt x = s;
  while (auto* a = As<AttrStmtNode>(x)) x = a->body;
  return As<GemmNode>(x);
}

// How the consumers release a stage (docs/warp_specialization.md, "Overlapped consumers").
struct WsRelease {
  int lag = 0;        // 0: stage k is released after iteration k; 1: after iteration k+1's wait
  int64_t wait = -1;  // a wgmma.wait_group appended to each iteration (-1: none)
  const GemmNode* relaxed = nullptr;  // the gemm whose wait_group 0 becomes 1 (the default overlap)
  std::string what;                   // for kernel.choices
};

}  // namespace

const char* const kWarpSpecializedKey = "tl.warp_specialized";
const char* const kWsConsumerKey = "tl.ws_consumer";
const char* const kWsPipelineKey = "tl.ws_pipeline";

namespace gpu_lowering {

namespace {
// Counts the wgmma groups one iteration of the consumers commits (G, one per wgmma gemm) and how many
// may still be in flight at its end (each gemm's wg_wait and each T.wait_wgmma bound them). A stage is
// free once every group that read it completed: with at most G in flight at the end of iteration k,
// those are iteration k's, so stage k - 1 may be released then (lag 1, which needs two stages or the
// producer could never refill the stage the consumers wait on). A GEMM pipeline (one gemm, wg_wait 0,
// its accumulator and operands touched by nothing else in the loop, a constant trip count) gets wg_wait 1
// by default.
WsRelease PlanRelease(GpuTileLowerer& L, const std::vector<Stmt>& body, int64_t s, bool const_trips) {
  auto wgmma = [&](const GemmNode* g) {
    auto it = L.layout_.find(g->C.buffer.get());
    return it != L.layout_.end() && IsWgmmaLayout(*it->second);
  };
  std::vector<const GemmNode*> gemms;
  bool nested = false;
  int64_t pending = kUnknown;
  for (auto& st : body) {
    if (auto* g = TopGemm(st); g && wgmma(g)) {
      gemms.push_back(g);
      if (pending != kUnknown) ++pending;
      if (g->wg_wait >= 0) pending = std::min<int64_t>(pending, g->wg_wait);
      continue;
    }
    if (auto* w = As<WaitWgmmaNode>(st)) {
      pending = std::min(pending, w->n);
      continue;
    }
    PostOrderVisitStmt(st, [&](const Stmt& x) {
      if (auto* g = As<GemmNode>(x); (g && wgmma(g)) || As<WaitWgmmaNode>(x)) nested = true;
    });
  }
  WsRelease r;
  const int64_t G = static_cast<int64_t>(gemms.size());
  if (G == 0 && !nested) return r;  // no wgmma: the body's reads are done when it ends
  const std::string sync = "consumers release a stage once its wgmma completed (wgmma.wait_group 0)";
  if (nested) {
    r.wait = 0;
    r.what = sync + ": a gemm or T.wait_wgmma of the loop is inside a condition or a loop";
    return r;
  }
  std::string why;  // why the default overlap does not apply
  if (G == 1 && gemms[0]->wg_wait == 0) {
    const GemmNode* g = gemms[0];
    WgmmaPlan p = PlanWgmma(g, L.ctx_.features, L.ctx_.opt, L.T_);
    if (s < 2)
      why = "one stage (num_stages=1)";
    else if (!const_trips)  // measured: ptxas then reports C7514 and serialises every wgmma of the kernel
      why = "the loop's trip count is not a constant (ptxas would serialise its overlapped wgmma)";
    else if (g->clear_accum)
      why = "the gemm clears its accumulator (clear_accum=True)";
    else if (g->A.buffer->scope != Scope::kShared)
      why = "A is in registers";
    else if (p.stage_a || p.stage_b)
      why = "an fp8 operand is transposed through shared memory on every call";
    // Nothing else in the loop may touch what the wgmma still reads or writes in the next iteration (the
    // stage buffers are written by the producer only, after the release).
    for (auto& st : body)
      for (const Region* r : {&g->C, &g->A, &g->B})
        if (why.empty() && TopGemm(st) != g && Touches(st, r->buffer.get()))
          why = std::string(r == &g->C ? "the accumulator '" : "the operand '") + r->buffer->name +
                "' is used by other statements of the loop";
    if (why.empty()) {
      r.relaxed = g;
      pending = 1;
    }
  } else if (pending == 0) {
    why = std::to_string(G) + " gemms per iteration, each waiting for its wgmma";
  }
  if (pending == 0) {
    r.what = sync + (why.empty() ? "" : ": " + why);
    return r;
  }
  if (s < 2) {  // the stage may be released only after this iteration's groups completed
    r.wait = 0;
    r.what = sync + ": one stage (num_stages=1)";
    return r;
  }
  if (pending > G) r.wait = G;
  r.lag = 1;
  const int64_t keep = pending > G ? G : pending;
  r.what = "consumers keep " + std::to_string(keep) + " wgmma group(s) in flight across iterations (" +
           (r.relaxed     ? std::string("wgmma.wait_group 1, the default for a GEMM pipeline")
            : r.wait >= 0 ? "wgmma.wait_group " + std::to_string(r.wait) + " added after the loop's body"
                          : std::string("as the loop's wg_wait / T.wait_wgmma leave them")) +
           ") and release stage k after iteration k+1's wait";
  return r;
}
}  // namespace

const ForNode* GpuTileLowerer::WsCandidate(const Stmt& kbody, std::string* why) const {
  if (!ctx_.features.wgmma) return nullptr;  // setmaxnreg and wgmma: sm_90a
  if (ctx_.opt.disable_warp_specialized) {
    *why = "disabled by the pass config tl.disable_warp_specialized";
    return nullptr;
  }
  bool explicit_ws = false;
  PostOrderVisitStmt(kbody, [&](const Stmt& x) {
    if (auto* a = As<AttrStmtNode>(x); a && a->key == kWarpSpecializedKey) explicit_ws = true;
  });
  if (explicit_ws) {
    *why = "the kernel specialises its warp groups itself (T.ws)";
    return nullptr;
  }
  std::vector<std::pair<const ForNode*, std::string>> loops;
  FindPipelined(kbody, "", &loops);
  if (loops.empty()) return nullptr;
  if (loops.size() > 1) {
    *why = "the kernel has more than one T.Pipelined loop";
    return nullptr;
  }
  if (!loops[0].second.empty()) {
    *why = loops[0].second;
    return nullptr;
  }
  if (T_ % kWarpGroup || T_ + kWarpGroup > 1024) {
    *why = "the block (" + std::to_string(T_) + " threads) is not whole warp groups with room for one more";
    return nullptr;
  }
  // The producer computes the pipeline's bounds and the copies' coordinates by itself.
  const ForNode* f = loops[0].first;
  bool on_chip = ReadsOnChip(f->min) || ReadsOnChip(f->extent);
  PostOrderVisitStmt(f->body, [&](const Stmt& x) {
    auto* c = As<CopyNode>(x);
    if (!c || c->src.buffer->scope != Scope::kGlobal) return;
    for (auto& r : c->src.ranges) on_chip = on_chip || ReadsOnChip(r.min) || ReadsOnChip(r.extent);
  });
  if (on_chip) {
    *why = "the T.Pipelined loop's bounds or its copies' coordinates read on-chip memory";
    return nullptr;
  }
  return f;
}

Stmt GpuTileLowerer::LowerPipelinedWs(const ForNode* n, const std::vector<const CopyNode*>& producers,
                                      const std::vector<TmaPlan>& plans, const std::vector<Stmt>& consumers,
                                      int64_t s, int64_t bytes, const std::vector<bool>& multicast) {
  Var ko = n->var;
  Expr mn = VisitExpr(n->min), ext = VisitExpr(n->extent);
  const Span& sp = n->span;
  Buffer full = TmaBarriers(s, sp);
  // "empty": every consumer thread arrives once it no longer reads the stage.
  Buffer empty = Scratch("ws_empty", DataType::UInt(64), s, Scope::kShared);
  // With multicast copies (MulticastCopies, lower_tma.cc): rank 0 of the cluster issues them into every
  // block, so its 'empty' barriers count the consumers of every block (the others arrive remotely as well as
  // on their own); the barriers are initialised across the cluster and a cluster barrier ends the kernel.
  const bool mc = std::find(multicast.begin(), multicast.end(), true) != multicast.end();
  const int64_t csize = cluster_[0] * cluster_[1] * cluster_[2];
  Expr rank = Call(DataType::Int(32), "tl.cluster_ctarank", {});
  Expr empty_count = mc ? C(T_) + Cast(DataType::Int(32), Eq(rank, C(0))) * C(T_ * (csize - 1)) : C(T_);
  for (int64_t i = 0; i < s; ++i)
    tma_inits_.push_back(Call0("tl.mbarrier_init", {Load(empty, {C(i)}), empty_count}, sp));
  if (mc) multicast_used_ = cluster_tail_ = true;
  // A pipeline inside another loop numbers its iterations across runs, so that stages and barrier phases
  // continue: iteration k of a run is g = base + k, base a register counter (the producer thread and each
  // consumer thread advance their own copy by the run's extent).
  Buffer base = loop_depth_ > 0 ? TmaCounter("ws_iters") : Buffer();
  auto global = [&](const Expr& k) { return base ? index_expr::IterationNumber(Load(base, {C(0)}) + k) : k; };
  auto advance = [&]() { return Store(base, Load(base, {C(0)}) + ext, {C(0)}, sp); };
  std::vector<Buffer> managed;
  for (auto* c : producers) {
    stage_[c->dst.buffer.get()] = Mod(global(ko - mn), s);
    managed.push_back(MapBuffer(c->dst.buffer));
  }
  // Producer: thread T waits until stage g % s is free (the consumers' (g / s - 1)-th release of it),
  // then arrives on "full" with the stage's bytes and issues the copies.
  Var kp = MakeVar(ko->name + "_p");
  Expr gp = global(Expr(kp));
  Expr st = Simplify(Mod(gp, s));
  std::vector<Stmt> issue;
  issue.push_back(
      If(Binary(BinaryOp::kGE, gp, C(s)),
         Call0("tl.mbarrier_wait_parity", {Load(empty, {st}), Simplify(Mod(Div(gp, s) + C(1), 2))}, sp),
         nullptr, sp));
  Expr fb = Load(full, {st});
  issue.push_back(Call0("tl.mbarrier_arrive_expect_tx", {fb, C(bytes)}, sp));
  std::vector<Stmt> copies;
  for (size_t i = 0; i < producers.size(); ++i) {
    Stmt cp = TmaIssue(producers[i], plans[i], fb);
    if (multicast[i])
      cp = If(Eq(rank, C(0)), AttrStmt(nullptr, "tl.tma_multicast", Int((int64_t{1} << csize) - 1), cp, sp),
              nullptr, sp);
    copies.push_back(cp);
  }
  // (the loop's lets that the copies' sources use, computed again here: lower_copy_pipeline.cc)
  auto with_lets = [&](Stmt s) {
    for (auto l = ws_lets_.rbegin(); l != ws_lets_.rend(); ++l) s = Let((*l)->var, VisitExpr((*l)->value), s, sp);
    return s;
  };
  issue.push_back(Substitute(with_lets(OpScope(Seq(copies, sp), sp)), {{ko.get(), mn + Expr(kp)}}));
  std::vector<Stmt> prod{For(kp, C(0), ext, ForKind::kSerial, Seq(issue, sp), {}, sp)};
  if (base) prod.push_back(advance());
  // Consumers: wait for the stage's bytes, compute, release the stage (one iteration late when their
  // wgmma overlaps the next iteration's).
  int64_t trips = 0;
  WsRelease rel = PlanRelease(*this, consumers, s, AsConstInt(Simplify(ext), &trips));
  ws_relaxed_gemm_ = rel.relaxed;
  Var k = MakeVar(ko->name);
  // With an outer counter, the consumers' iteration number is a register that ptxas does not see as the
  // same in every lane (a value carried around the enclosing loop), so stages, phases and the wgmma
  // descriptors built from it would stay in vector registers; read once per iteration from lane 0 of the
  // warp (the consumers are whole warp groups), it is warp-uniform and they move to the uniform datapath.
  Var gu = MakeVar("ws_k", DataType::UInt(32));
  if (base)
    for (auto* c : producers) stage_[c->dst.buffer.get()] = Mod(Expr(gu), s);
  std::vector<Stmt> cons;
  for (auto& c : consumers) cons.push_back(VisitStmt(c));
  ws_relaxed_gemm_ = nullptr;
  for (auto* c : producers) stage_.erase(c->dst.buffer.get());
  Expr g = base ? Expr(gu) : global(Expr(k));
  auto release = [&](const Expr& iter) {
    Expr e = Load(empty, {Simplify(Mod(iter, s))});
    Stmt own = Call0("tl.mbarrier_arrive", {e}, sp);
    if (!mc) return own;
    return Seq({own, If(Binary(BinaryOp::kNE, rank, C(0)), Call0("tl.mbarrier_arrive_cluster", {e, C(0)}, sp),
                        nullptr, sp)},
               sp);
  };
  // Test hook: overlapped consumers release the stage while its wgmma may still read it.
  const bool early = rel.lag == 1 && ctx_.opt.test_ws_early_release;
  std::vector<Stmt> steady;
  steady.push_back(
      Call0("tl.mbarrier_wait_parity", {Load(full, {Simplify(Mod(g, s))}), Simplify(Mod(Div(g, s), 2))}, sp));
  steady.push_back(Substitute(with_lets(Seq(cons, sp)), {{ko.get(), mn + Expr(k)}}));
  if (rel.wait >= 0 && !early) steady.push_back(Call0("tl.wgmma_wait", {C(rel.wait)}, sp));
  const bool arrive = !ctx_.opt.test_ws_skip_empty_arrive;
  if (arrive && (rel.lag == 0 || early)) steady.push_back(release(g));
  if (arrive && rel.lag == 1 && !early)
    steady.push_back(If(Binary(BinaryOp::kGE, Expr(k), C(1)), release(g - C(1)), nullptr, sp));
  // A power-of-two stage count: the code generator may unroll the consumer loop by 2 * s (a hint), which
  // makes each copy's stage `g % s` and phase parity `(g / s) % 2` constants (with no outer counter).
  std::map<std::string, Expr> hint;
  if (!base && s >= 1 && (s & (s - 1)) == 0) hint["tl.unroll_by"] = C(2 * s);
  Stmt body = Seq(steady, sp);
  if (base)
    body = Let(gu,
               Call(DataType::UInt(32), "tl.shfl_sync",
                    {IntImm(DataType::UInt(32), 0xffffffff), global(Expr(k)), C(0), C(32), C(32)}),
               body, sp);
  std::vector<Stmt> cside{For(k, C(0), ext, ForKind::kSerial, body, hint, sp)};
  if (rel.lag == 1) {  // the last iteration's groups complete (and its stage is released) after the loop
    // Unconditional: ptxas serialises every wgmma of a kernel whose wgmma.wait_group sits on a divergent
    // path.
    cside.push_back(Call0("tl.wgmma_wait", {C(0)}, sp));
    if (arrive && !early) cside.push_back(If(Lt(C(0), ext), release(global(ext) - C(1)), nullptr, sp));
  }
  if (base) cside.push_back(advance());
  // Register reallocation: the block's register file (64K) at the launch's per-thread count, less the
  // producer's, over the consumers.
  int64_t threads = T_ + kWarpGroup;
  int64_t launch = std::min<int64_t>(255, 65536 / threads) / 8 * 8;
  int64_t cons_regs =
      std::min(kMaxConsumerRegs, (launch * threads - kProducerRegs * kWarpGroup) / T_ / 8 * 8);
  bool realloc = ws_reg_alloc_ && cons_regs > launch;
  ws_consumer_inc_ = ws_producer_dec_ = Stmt();
  if (realloc) {
    ws_producer_dec_ = Call0("tl.set_max_nreg", {C(kProducerRegs), C(0)}, sp);
    ws_consumer_inc_ = Call0("tl.set_max_nreg", {C(cons_regs), C(1)}, sp);
  }
  ws_producer_ = Seq(prod, sp);  // WsSplitKernel puts it in the producer's branch, under the loops around it
  Stmt split = AttrStmt(full, kWsPipelineKey, C(T_), Seq(cside, sp), sp);
  for (auto m = managed.rbegin(); m != managed.rend(); ++m)
    split = AttrStmt(*m, "tl.pipeline_managed", Int(1), split, sp);
  std::string wgs = T_ == kWarpGroup ? "0" : "0.." + std::to_string(T_ / kWarpGroup - 1);
  ctx_.info->choices.push_back(
      Loc(sp) + ": T.Pipelined: " + std::to_string(s) + "-stage TMA pipeline (" +
      std::to_string(producers.size()) + " copies, " + std::to_string(bytes) +
      " bytes per stage; one 'full' mbarrier per stage waited on with phase "
      "parity (k / " +
      std::to_string(s) + ") % 2 and one 'empty' mbarrier per stage the consumers arrive on" +
      (base ? "; k counts the iterations of every run of the enclosing loop)" : ")"));
  ctx_.info->choices.push_back(
      Loc(sp) + ": warp-specialized: producer wg " + std::to_string(T_ / kWarpGroup) +
      (realloc ? " (setmaxnreg " + std::to_string(kProducerRegs) + ")" : " (no setmaxnreg)") +
      ", consumers wg " + wgs + (realloc ? " (" + std::to_string(cons_regs) + ")" : "") + "; " +
      std::to_string(threads) + " threads per block" +
      (realloc         ? ""
       : ws_reg_alloc_ ? " (nothing to gain from register reallocation)"
                       : " (register reallocation off: T.disable_warp_group_reg_alloc)") +
      (rel.what.empty() ? "" : "; " + rel.what));
  ws_done_ = true;
  return split;
}

Stmt GpuTileLowerer::WsSplitKernel(const Stmt& body) {
  // The loops, lets and conditions on the way to the consumers' loop (the pipeline's bounds and the copies'
  // indices may use them) are run again around the producer's loop; UniquifyDefs renames the copies.
  std::vector<const StmtNode*> frames;
  std::function<bool(const Stmt&)> path = [&](const Stmt& s) -> bool {
    if (!s) return false;
    if (auto* q = As<SeqNode>(s)) {
      for (auto& x : q->seq)
        if (path(x)) return true;
      return false;
    }
    Stmt inner;
    if (auto* l = As<LetNode>(s)) inner = l->body;
    if (auto* f = As<ForNode>(s)) inner = f->body;
    if (auto* i = As<IfNode>(s); i && !i->else_case) inner = i->then_case;
    if (inner) {
      frames.push_back(s.get());
      if (path(inner)) return true;
      frames.pop_back();
      return false;
    }
    if (auto* a = As<AttrStmtNode>(s)) return a->key == kWsPipelineKey || path(a->body);
    return false;
  };
  TL_ICHECK(path(body), "the warp-specialised pipeline is not under loops and lets only");
  Stmt prod = ws_producer_;
  for (auto fr = frames.rbegin(); fr != frames.rend(); ++fr) {
    if (auto* l = As<LetNode>(*fr)) prod = Let(l->var, l->value, prod, l->span);
    if (auto* f = As<ForNode>(*fr)) prod = For(f->var, f->min, f->extent, f->for_kind, prod, {}, f->span);
    if (auto* i = As<IfNode>(*fr)) prod = If(i->cond, prod, nullptr, i->span);
  }
  // Only the producer warp group's first thread issues; the others only give up their registers.
  const Span& sp = body->span;
  prod = If(Eq(tx_, C(T_)), prod, nullptr, sp);
  if (ws_producer_dec_) prod = Seq({ws_producer_dec_, prod}, sp);
  // Everything else (the accumulator's clear, the epilogue, copies before the loop) is the consumers':
  // nothing of theirs is live in the producer's branch, which runs in 40 registers.
  Stmt cons = AttrStmt(Buffer(), kWsConsumerKey, C(T_),
                       ws_consumer_inc_ ? Seq({ws_consumer_inc_, body}, sp) : body, sp);
  return AttrStmt(Buffer(), kWarpSpecializedKey, C(T_), If(Lt(tx_, C(T_)), cons, prod, sp), sp);
}

}  // namespace gpu_lowering

const char* const kWsBlockBarrierKey = "tl.ws_block_barrier";

WsBlock WsBlockOf(const AttrStmtNode* a) {
  WsBlock r;
  auto* i = a && a->key == kWarpSpecializedKey ? As<IfNode>(a->body) : nullptr;
  if (!i) return r;
  // The parser's condition: an `||` of `tx // 128 == g` (the automatic split's `tx < T` is none).
  std::function<bool(const Expr&)> walk = [&](const Expr& e) {
    auto* b = As<BinaryNode>(e);
    if (!b) return false;
    if (b->op == BinaryOp::kOr) return walk(b->a) && walk(b->b);
    int64_t g;
    if (b->op != BinaryOp::kEQ || !AsConstInt(b->b, &g)) return false;
    r.groups.push_back(g);
    return true;
  };
  if (!walk(i->cond)) return WsBlock();
  std::sort(r.groups.begin(), r.groups.end());
  r.groups.erase(std::unique(r.groups.begin(), r.groups.end()), r.groups.end());
  bool consecutive = true;
  for (size_t k = 1; k < r.groups.size(); ++k) consecutive &= r.groups[k] == r.groups[k - 1] + 1;
  r.base = kWarpGroup * r.groups.front();
  r.count = consecutive ? kWarpGroup * static_cast<int64_t>(r.groups.size()) : 0;
  return r;
}

namespace {
bool IsThreadIndex(const Expr& e, const std::set<const VarNode*>& vars) {
  if (auto* c = As<CallNode>(e)) return c->op == "tl.thread_idx";
  auto* v = As<VarNode>(e);
  return v && vars.count(v);
}
}  // namespace

std::set<const VarNode*> ThreadIndexVars(const Stmt& body, std::map<const VarNode*, int64_t>* div_vars) {
  std::set<const VarNode*> vars;
  // (pre-order: a let's value names the variables of the lets around it)
  struct V : IRVisitor {
    std::set<const VarNode*>* vars;
    std::map<const VarNode*, int64_t>* div;
    void VisitLet(const LetNode* l) override {
      int64_t d = 0;
      auto* b = As<BinaryNode>(l->value);
      if (IsThreadIndex(l->value, *vars))
        vars->insert(l->var.get());
      else if (div && b && b->op == BinaryOp::kFloorDiv && IsThreadIndex(b->a, *vars) &&
               AsConstInt(b->b, &d) && d > 0)
        (*div)[l->var.get()] = d;
      IRVisitor::VisitLet(l);
    }
  } v;
  v.vars = &vars;
  v.div = div_vars;
  v.VisitStmt(body);
  return vars;
}

// Whether every thread of a block evaluates `e` alike: it reads no memory, not the thread index, and only
// variables of `vars`.
bool UniformExpr(const Expr& e, const std::set<const VarNode*>& vars) {
  if (gpu_pass::ReadsMemory(e) || gpu_pass::ThreadDependent(e, {})) return false;
  struct V : IRVisitor {
    const std::set<const VarNode*>* vars;
    bool ok = true;
    void VisitVar(const VarNode* v) override { ok = ok && vars->count(v); }
  } v;
  v.vars = &vars;
  v.VisitExpr(e);
  return v.ok;
}

std::set<const VarNode*> BlockUniformVars(const KernelNode* k) {
  struct V : IRVisitor {
    std::set<const VarNode*> vars;
    void VisitLet(const LetNode* n) override {
      if (UniformExpr(n->value, vars)) vars.insert(n->var.get());
      IRVisitor::VisitLet(n);
    }
  } v;
  for (const Var& b : k->block_vars) v.vars.insert(b.get());
  v.VisitStmt(k->body);
  return v.vars;
}

ThreadRange ThreadRangeWhere(const Expr& cond, ThreadRange in, const std::function<bool(const Expr&)>& is_tx,
                             const std::function<bool(const Expr&)>& is_uniform, bool* guarded,
                             const std::map<const VarNode*, int64_t>* div_vars) {
  auto* b = As<BinaryNode>(cond);
  if (!b) return {};
  if (b->op == BinaryOp::kAnd) {
    for (auto [u, rest] : {std::pair{b->a, b->b}, std::pair{b->b, b->a}})
      if (is_uniform && is_uniform(u)) {
        ThreadRange r = ThreadRangeWhere(rest, in, is_tx, is_uniform, guarded, div_vars);
        if (r.ok() && guarded) *guarded = true;
        return r;
      }
    ThreadRange x = ThreadRangeWhere(b->a, in, is_tx, is_uniform, guarded, div_vars);
    return x.ok() ? ThreadRangeWhere(b->b, x, is_tx, is_uniform, guarded, div_vars) : ThreadRange{};
  }
  // d: the side is the thread index divided by d (a warp index: `tx // 32`, or a variable bound to it); 1:
  // the thread index; 0: neither
  auto divisor = [&](const Expr& e) -> int64_t {
    if (is_tx(e)) return 1;
    int64_t d = 0;
    if (auto* q = As<BinaryNode>(e);
        q && q->op == BinaryOp::kFloorDiv && is_tx(q->a) && AsConstInt(q->b, &d) && d > 0)
      return d;
    if (auto* v = As<VarNode>(e); v && div_vars)
      if (auto it = div_vars->find(v); it != div_vars->end()) return it->second;
    return 0;
  };
  int64_t c, d = 0;
  BinaryOp op = b->op;
  if ((d = divisor(b->a)) && AsConstInt(b->b, &c)) {
  } else if ((d = divisor(b->b)) && AsConstInt(b->a, &c)) {  // `128 <= tx`: mirrored
    op = op == BinaryOp::kLT ? BinaryOp::kGT : op == BinaryOp::kGT ? BinaryOp::kLT
       : op == BinaryOp::kLE ? BinaryOp::kGE : op == BinaryOp::kGE ? BinaryOp::kLE : op;
  } else {
    return {};
  }
  // tx / d < c: tx < c d; tx / d <= c: tx < (c + 1) d; tx / d == c: c d <= tx < (c + 1) d (d = 1: tx itself)
  ThreadRange r = in;
  switch (op) {
    case BinaryOp::kLT: r.hi = std::min(r.hi, c * d); break;
    case BinaryOp::kLE: r.hi = std::min(r.hi, (c + 1) * d); break;
    case BinaryOp::kGT: r.lo = std::max(r.lo, (c + 1) * d); break;
    case BinaryOp::kGE: r.lo = std::max(r.lo, c * d); break;
    case BinaryOp::kEQ:
      if (d == 1) return {};
      r.lo = std::max(r.lo, c * d);
      r.hi = std::min(r.hi, (c + 1) * d);
      break;
    default: return {};
  }
  return r.ok() ? r : ThreadRange{};
}

ThreadRange ThreadRangeElse(ThreadRange then, ThreadRange in) {
  if (then.lo == in.lo && then.hi < in.hi) return {then.hi, in.hi};
  if (then.hi == in.hi && then.lo > in.lo) return {in.lo, then.lo};
  return {};
}

BranchThreads SplitBranches(const IfNode* i, ThreadRange in, const std::set<const VarNode*>& tx_vars,
                            const GpuFeatures& features, const std::set<const VarNode*>* uniform_vars,
                            const std::map<const VarNode*, int64_t>* div_vars) {
  BranchThreads r;
  r.then_region = r.else_region = in;
  std::function<bool(const Expr&)> uniform;
  if (uniform_vars) uniform = [&](const Expr& e) { return UniformExpr(e, *uniform_vars); };
  auto region = [&](const Stmt& b, ThreadRange range) {
    const StmtNode* work = b ? FirstTileWork(b) : nullptr;
    if (!work || range == in) return in;
    if (!range.ok())
      throw UserError(ErrorKind::kUnsupported,
                      "tile ops in the else branch of a condition on the thread index: the threads it runs on are "
                      "not one range; write the branches as conditions of their own (`if tx >= 128:`)",
                      work->span);
    if (!features.named_barriers)
      throw UserError(ErrorKind::kUnsupported,
                      "tile ops under a condition on the thread index synchronise the threads it selects with a "
                      "named barrier, which the " + features.label + " target does not have",
                      work->span);
    if (range.lo % 32 || range.hi % 32)
      throw UserError(ErrorKind::kUnsupported,
                      "tile ops under a condition on the thread index are lowered for the threads it selects, which "
                      "must be whole warps (multiples of 32); this branch runs on threads " +
                          std::to_string(range.lo) + ".." + std::to_string(range.hi - 1),
                      work->span);
    return range;
  };
  bool guarded = false;
  const std::function<bool(const Expr&)> is_tx = [&](const Expr& e) { return IsThreadIndex(e, tx_vars); };
  r.then_range = ThreadRangeWhere(i->cond, in, is_tx, uniform, &guarded, div_vars);
  if (!r.then_range.ok()) return r;
  r.split = true;
  r.guarded = guarded;
  // With a block-uniform conjunct, in the blocks where it fails the else branch runs on every thread of `in`,
  // else on the others: no one range (its single-thread work has no known issuer), as an else on both sides
  // of the then range. Such an else is lowered for `in` when each piece of its tile work sits in a nested
  // branch on threads outside the then branch's range (TileLang's `elif cta_id == 0 and tx < 64: ... elif 64
  // <= tx < 96:
  // ... elif 128 <= tx < 256: <tile work>`).
  r.else_range = guarded ? ThreadRange{} : ThreadRangeElse(r.then_range, in);
  r.then_region = region(i->then_case, r.then_range);
  if (r.else_range.ok()) {
    r.else_region = region(i->else_case, r.else_range);
    return r;
  }
  if (i->else_case) {
    struct Exposed : IRVisitor {
      ThreadRange then, in;
      const std::function<bool(const Expr&)>* is_tx = nullptr;
      const std::map<const VarNode*, int64_t>* div = nullptr;
      const StmtNode* found = nullptr;
      void VisitStmt(const Stmt& x) override {
        if (found || !x) return;
        if (auto* n = As<IfNode>(x)) {
          const ThreadRange t = ThreadRangeWhere(n->cond, in, *is_tx, nullptr, nullptr, div);
          if (t.ok() && (t.hi <= then.lo || t.lo >= then.hi)) {  // disjoint from the then branch's threads
            VisitStmt(n->else_case);
            return;
          }
        } else if (FirstTileWork(x) == x.get()) {
          found = x.get();
          return;
        }
        IRVisitor::VisitStmt(x);
      }
    } ex;
    ex.then = r.then_range;
    ex.in = in;
    ex.is_tx = &is_tx;
    ex.div = div_vars;
    ex.VisitStmt(i->else_case);
    if (ex.found && guarded)
      throw UserError(
          ErrorKind::kUnsupported,
          "tile ops in the else branch of a condition with a block-uniform part (`cta_id == 0 and tx < "
          "64`): in some blocks the then branch's threads skip them; put them under a condition on "
          "threads outside that range (`elif tx >= 128:`)",
          ex.found->span);
    if (ex.found)
      throw UserError(
          ErrorKind::kUnsupported,
          "tile ops in the else branch of a condition on the thread index: the threads it runs on are "
          "not one range; write the branches as conditions of their own (`if tx >= 128:`)",
          ex.found->span);
  }
  return r;
}

const StmtNode* FirstTileWork(const Stmt& body) {
  const StmtNode* first = nullptr;
  PostOrderVisitStmt(body, [&](const Stmt& x) {
    auto* f = As<ForNode>(x);
    auto* op = As<TileOpNode>(x);
    // (a T.atomic_add left after legalization is a scalar one: per thread; TileOpNode::SelfContained)
    if (!first && ((f && (f->for_kind == ForKind::kParallel || f->for_kind == ForKind::kPipelined)) ||
                   (op && !op->SelfContained())))
      first = x.get();
  });
  return first;
}

namespace {
std::string WsText(const WsBlock& b) {
  std::string r = "T.ws(";
  for (size_t k = 0; k < b.groups.size(); ++k) r += (k ? ", " : "") + std::to_string(b.groups[k]);
  return r + ")";
}

std::string WorkName(const StmtNode* x) {
  if (auto* op = As<TileOpNode>(x)) return std::string("T.") + op->op;
  auto* f = As<ForNode>(x);
  return f && f->for_kind == ForKind::kPipelined ? "T.Pipelined"
                                                  : "a T.Parallel loop (or a T.fill / T.clear made into one)";
}
}  // namespace

void CheckWsBlockOps(const AttrStmtNode* ws, const GpuFeatures& features) {
  const StmtNode* x = FirstTileWork(ws->body);
  if (!x) return;
  const WsBlock b = WsBlockOf(ws);
  const std::string what = WorkName(x) + " inside " + WsText(b) + " is not supported: ";
  if (!b.count)
    throw UserError(ErrorKind::kUnsupported,
                    what + "tile ops are lowered for the threads of consecutive warp groups, and these are not; "
                           "write one T.ws block per run of consecutive warp groups",
                    x->span);
  if (!features.named_barriers)
    throw UserError(ErrorKind::kUnsupported,
                    what + "tile ops in a T.ws block synchronise the block's warp groups with a named barrier, "
                           "which the " + features.label + " target does not have",
                    x->span);
}

namespace {
class NamedBarriers : public IRMutator {
 public:
  NamedBarriers(int64_t id, int64_t threads) : id_(id), threads_(threads) {}
  Stmt VisitAttr(const Stmt& s, const AttrStmtNode* n) override {
    int64_t t = 0;
    if (n->key != kWsConsumerKey || !AsConstInt(n->value, &t)) return IRMutator::VisitAttr(s, n);
    auto saved = std::make_pair(threads_, id_);
    threads_ = t;
    id_ = 1;
    Stmt r = IRMutator::VisitAttr(s, n);
    std::tie(threads_, id_) = saved;
    return r;
  }
  Expr VisitCall(const Expr& e, const CallNode* n) override {
    if (threads_ && n->op == "tl.syncthreads")
      return Call(n->dtype, "tl.named_barrier_sync", {Int(id_), Int(threads_)});
    return IRMutator::VisitCall(e, n);
  }

 private:
  int64_t id_ = 1;
  int64_t threads_ = 0;  // inside a consumers-only region (or a T.ws block) of this many threads
};
}  // namespace

Stmt SyncThreadsToNamedBarrier(const Stmt& s, int64_t id, int64_t threads) {
  return NamedBarriers(id, threads).VisitStmt(s);
}

PrimFunc WsNamedBarriers(const PrimFunc& f, const PassContext&) {
  int64_t T = 0;
  PostOrderVisitStmt(f->body, [&](const Stmt& x) {
    int64_t v = 0;  // the automatic split's consumer count (a branch on the thread index marks itself with 0)
    if (auto* a = As<AttrStmtNode>(x); a && a->key == kWarpSpecializedKey && AsConstInt(a->value, &v) && v) T = v;
  });
  if (!T) return f;
  return WithBody(f, NamedBarriers(1, 0).VisitStmt(f->body));
}

}  // namespace tl
