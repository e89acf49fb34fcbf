// Automatic warp specialisation of a TMA pipeline on sm_90a (docs/warp_specialization.md): the block
// gets one extra warp group (threads T .. T+127) that produces (issues the TMA copies of every stage
// after waiting on the stage's "empty" mbarrier) while the T original threads consume (wait on the
// stage's "full" mbarrier, compute, arrive on "empty"). setmaxnreg moves registers from the producer
// to the consumers. The parts:
//  - WsCandidate (before lowering): the one T.Pipelined loop that may be split;
//  - CudaTileLowerer::LowerPipelinedWs: the consumers' loop (in place of the pipeline) and the producer's;
//  - CudaTileLowerer::WsSplitKernel: `if (tx < T) { the whole kernel, with the consumers' loop } else
//    { the producer's loop under the lets it needs }`;
//  - WsNamedBarriers (after InsertBarriers): a __syncthreads reached by the consumers only becomes
//    `bar.sync 1, T` (named barrier 1 over the consumer threads).
#include <functional>

#include "arith/simplify.h"
#include "ir/functor.h"
#include "transform/cuda/lower_tile_ops_cuda_impl.h"
#include "transform/cuda/warp_specialize.h"
#include "transform/cuda_util.h"

namespace tl {

using namespace cuda_pass;

namespace {
constexpr int64_t kWarpGroup = 128;
constexpr int64_t kProducerRegs = 40;
constexpr int64_t kMaxConsumerRegs = 240;

// The T.Pipelined loops under `s`, each with whether it is at the kernel's top level (only Seq, Let and
// AttrStmt above it: no loop or condition).
void FindPipelined(const Stmt& s, bool top, std::vector<std::pair<const ForNode*, bool>>* out) {
  if (!s) return;
  switch (s->kind) {
    case StmtKind::kSeq:
      for (auto& x : As<SeqNode>(s)->seq) FindPipelined(x, top, out);
      return;
    case StmtKind::kLet: FindPipelined(As<LetNode>(s)->body, top, out); return;
    case StmtKind::kAttr: FindPipelined(As<AttrStmtNode>(s)->body, top, out); return;
    default: break;
  }
  PostOrderVisitStmt(s, [&](const Stmt& x) {
    if (auto* f = As<ForNode>(x); f && f->for_kind == ForKind::kPipelined) out->push_back({f, top && x == s});
  });
}

}  // namespace

const char* const kWarpSpecializedKey = "tl.warp_specialized";
const char* const kWsConsumerKey = "tl.ws_consumer";
const char* const kWsPipelineKey = "tl.ws_pipeline";

namespace cuda_lowering {

const ForNode* CudaTileLowerer::WsCandidate(const Stmt& kbody, std::string* why) const {
  if (ctx_.target.arch != "sm_90a") return nullptr;  // setmaxnreg and wgmma: sm_90a
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
  std::vector<std::pair<const ForNode*, bool>> loops;
  FindPipelined(kbody, true, &loops);
  if (loops.empty()) return nullptr;
  if (loops.size() > 1) {
    *why = "the kernel has more than one T.Pipelined loop";
    return nullptr;
  }
  if (!loops[0].second) {
    *why = "the T.Pipelined loop is inside another loop or a condition";
    return nullptr;
  }
  if (T_ % kWarpGroup || T_ + kWarpGroup > 1024) {
    *why = "the block (" + std::to_string(T_) + " threads) is not whole warp groups with room for one more";
    return nullptr;
  }
  return loops[0].first;
}

Stmt CudaTileLowerer::LowerPipelinedWs(const ForNode* n, const std::vector<const CopyNode*>& producers,
                                       const std::vector<TmaPlan>& plans, const std::vector<Stmt>& consumers,
                                       int64_t s, int64_t bytes) {
  Var ko = n->var;
  Expr mn = VisitExpr(n->min), ext = VisitExpr(n->extent);
  const Span& sp = n->span;
  Buffer full = TmaBarriers(s, sp);
  // "empty": every consumer thread arrives once it no longer reads the stage.
  Buffer empty = Scratch("ws_empty", DataType::UInt(64), s, Scope::kShared);
  for (int64_t i = 0; i < s; ++i)
    tma_inits_.push_back(Call0("tl.mbarrier_init", {Load(empty, {C(i)}), C(T_)}, sp));
  std::vector<Buffer> managed;
  for (auto* c : producers) {
    stage_[c->dst.buffer.get()] = Mod(ko - mn, s);
    managed.push_back(MapBuffer(c->dst.buffer));
  }
  // Producer: thread T waits until stage k % s is free (the consumers' (k / s - 1)-th release of it),
  // then arrives on "full" with the stage's bytes and issues the copies.
  Var kp = MakeVar(ko->name + "_p");
  Expr st = Mod(Expr(kp), s);
  std::vector<Stmt> issue;
  issue.push_back(
      If(Binary(BinaryOp::kGE, Expr(kp), C(s)),
         Call0("tl.mbarrier_wait_parity", {Load(empty, {st}), Mod(Div(Expr(kp), s) + C(1), 2)}, sp), nullptr,
         sp));
  Expr fb = Load(full, {st});
  issue.push_back(Call0("tl.mbarrier_arrive_expect_tx", {fb, C(bytes)}, sp));
  std::vector<Stmt> copies;
  for (size_t i = 0; i < producers.size(); ++i) copies.push_back(TmaIssue(producers[i], plans[i], fb));
  issue.push_back(Substitute(OpScope(Seq(copies, sp), sp), {{ko.get(), mn + Expr(kp)}}));
  Stmt prod_loop = For(kp, C(0), ext, ForKind::kSerial, Seq(issue, sp), {}, sp);
  // Consumers: wait for the stage's bytes, compute, release the stage.
  std::vector<Stmt> cons;
  for (auto& c : consumers) cons.push_back(VisitStmt(c));
  for (auto* c : producers) stage_.erase(c->dst.buffer.get());
  Var k = MakeVar(ko->name);
  Expr sk = Mod(Expr(k), s);
  std::vector<Stmt> steady;
  steady.push_back(Call0("tl.mbarrier_wait_parity", {Load(full, {sk}), Mod(Div(Expr(k), s), 2)}, sp));
  steady.push_back(Substitute(Seq(cons, sp), {{ko.get(), mn + Expr(k)}}));
  // Asynchronous wgmma reading the stage must have completed before it is released.
  bool has_wgmma = false;
  for (auto& c : cons)
    PostOrderVisitStmt(c, [&](const Stmt& x) {
      auto* ev = As<EvaluateNode>(x);
      auto* call = ev ? As<CallNode>(ev->value) : nullptr;
      if (call && (call->op == "tl.wgmma" || call->op == "tl.wgmma_rs")) has_wgmma = true;
    });
  if (has_wgmma) steady.push_back(Call0("tl.wgmma_wait", {C(0)}, sp));
  if (!ctx_.opt.test_ws_skip_empty_arrive)
    steady.push_back(Call0("tl.mbarrier_arrive", {Load(empty, {sk})}, sp));
  Stmt cons_loop = For(k, C(0), ext, ForKind::kSerial, Seq(steady, sp), {}, sp);
  // Register reallocation: the block's register file (64K) at the launch's per-thread count, less the
  // producer's, over the consumers.
  int64_t threads = T_ + kWarpGroup;
  int64_t launch = std::min<int64_t>(255, 65536 / threads) / 8 * 8;
  int64_t cons_regs =
      std::min(kMaxConsumerRegs, (launch * threads - kProducerRegs * kWarpGroup) / T_ / 8 * 8);
  bool realloc = ws_reg_alloc_ && cons_regs > launch;
  std::vector<Stmt> pside, cside;
  ws_consumer_inc_ = Stmt();
  if (realloc) {
    pside.push_back(Call0("tl.set_max_nreg", {C(kProducerRegs), C(0)}, sp));
    ws_consumer_inc_ = Call0("tl.set_max_nreg", {C(cons_regs), C(1)}, sp);
  }
  pside.push_back(If(Eq(tx_, C(T_)), prod_loop, nullptr, sp));
  ws_producer_ = Seq(pside, sp);  // WsSplitKernel puts it in the producer's branch
  cside.push_back(cons_loop);
  Stmt split = AttrStmt(full, kWsPipelineKey, C(T_), Seq(cside, sp), sp);
  for (auto m = managed.rbegin(); m != managed.rend(); ++m)
    split = AttrStmt(*m, "tl.pipeline_managed", Int(1), split, sp);
  std::string wgs = T_ == kWarpGroup ? "0" : "0.." + std::to_string(T_ / kWarpGroup - 1);
  ctx_.info->choices.push_back(Loc(sp) + ": T.Pipelined: " + std::to_string(s) + "-stage TMA pipeline (" +
                               std::to_string(producers.size()) + " copies, " + std::to_string(bytes) +
                               " bytes per stage; one 'full' mbarrier per stage waited on with phase "
                               "parity (k / " +
                               std::to_string(s) +
                               ") % 2 and one 'empty' mbarrier per stage the consumers arrive on)");
  ctx_.info->choices.push_back(
      Loc(sp) + ": warp-specialized: producer wg " + std::to_string(T_ / kWarpGroup) +
      (realloc ? " (setmaxnreg " + std::to_string(kProducerRegs) + ")" : " (no setmaxnreg)") +
      ", consumers wg " + wgs + (realloc ? " (" + std::to_string(cons_regs) + ")" : "") + "; " +
      std::to_string(threads) + " threads per block" +
      (realloc         ? ""
       : ws_reg_alloc_ ? " (nothing to gain from register reallocation)"
                       : " (register reallocation off: T.disable_warp_group_reg_alloc)"));
  ws_done_ = true;
  return split;
}

Stmt CudaTileLowerer::WsSplitKernel(const Stmt& body) {
  // The lets on the way to the consumers' loop (the pipeline's bounds and the copies' indices may use
  // them) are bound again around the producer's loop; UniquifyDefs renames the copies.
  std::vector<const LetNode*> lets;
  std::function<bool(const Stmt&)> path = [&](const Stmt& s) -> bool {
    if (!s) return false;
    if (auto* q = As<SeqNode>(s)) {
      for (auto& x : q->seq)
        if (path(x)) return true;
      return false;
    }
    if (auto* l = As<LetNode>(s)) {
      lets.push_back(l);
      if (path(l->body)) return true;
      lets.pop_back();
      return false;
    }
    if (auto* a = As<AttrStmtNode>(s)) return a->key == kWsPipelineKey || path(a->body);
    return false;
  };
  TL_ICHECK(path(body), "the warp-specialised pipeline is not at the kernel's top level");
  Stmt prod = ws_producer_;
  for (auto l = lets.rbegin(); l != lets.rend(); ++l) prod = Let((*l)->var, (*l)->value, prod, (*l)->span);
  // Everything else (the accumulator's clear, the epilogue, copies before the loop) is the consumers':
  // nothing of theirs is live in the producer's branch, which runs in 40 registers.
  const Span& sp = body->span;
  Stmt cons = AttrStmt(Buffer(), kWsConsumerKey, C(T_),
                       ws_consumer_inc_ ? Seq({ws_consumer_inc_, body}, sp) : body, sp);
  return AttrStmt(Buffer(), kWarpSpecializedKey, C(T_), If(Lt(tx_, C(T_)), cons, prod, sp), sp);
}

}  // namespace cuda_lowering

namespace {
class NamedBarriers : public IRMutator {
 public:
  Stmt VisitAttr(const Stmt& s, const AttrStmtNode* n) override {
    int64_t t = 0;
    if (n->key != kWsConsumerKey || !AsConstInt(n->value, &t)) return IRMutator::VisitAttr(s, n);
    int64_t saved = threads_;
    threads_ = t;
    Stmt r = IRMutator::VisitAttr(s, n);
    threads_ = saved;
    return r;
  }
  Expr VisitCall(const Expr& e, const CallNode* n) override {
    if (threads_ && n->op == "tl.syncthreads")
      return Call(n->dtype, "tl.named_barrier_sync", {Int(1), Int(threads_)});
    return IRMutator::VisitCall(e, n);
  }

 private:
  int64_t threads_ = 0;  // inside a consumers-only region of this many threads
};
}  // namespace

PrimFunc WsNamedBarriers(const PrimFunc& f, const CudaPassContext&) {
  int64_t T = 0;
  PostOrderVisitStmt(f->body, [&](const Stmt& x) {
    if (auto* a = As<AttrStmtNode>(x); a && a->key == kWarpSpecializedKey) AsConstInt(a->value, &T);
  });
  if (!T) return f;
  return WithBody(f, NamedBarriers().VisitStmt(f->body));
}

}  // namespace tl
