// GemmToTcgen05CUDA: on the tcgen05 family, a T.gemm whose accumulator lives across a loop is rewritten into
// TileLang's explicit tcgen05 form (docs/blackwell.md), which the CUDA backend lowers (lower_tcgen05.cc):
//
//   T.clear(C)                                   T.clear(C)
//   for k in T.Pipelined(n):                     for k in T.Pipelined(n):
//       ...copies...                      ->         ...copies...
//       T.gemm(A_s, B_s, C)                          T.tcgen05_gemm(A_s, B_s, C_tmem, clear_accum=k == 0, mbar=bar)
//                                                    T.mbarrier_wait_parity(bar, phase % 2); phase += 1
//   (C read after the loop)                      T.copy(C_tmem, C)   (then C is read as before)
//
// A T.gemm whose accumulator C is itself tensor memory (TileLang's Blackwell form without an mbarrier) is issued
// with a barrier of its own and waited on where it stands (VisitTileOp below).
//
// C_tmem, the mbarrier and the phase counter are new allocations of the kernel. Where the pattern does not hold
// (C touched inside the loop by anything but the gemm, not cleared before it, shapes tcgen05.mma kind::f16 cannot
// take with M = 128 or 64, fragment operands), the gemm stays on mma.sync and a performance warning says why.
#include "ir/functor.h"
#include "ir/printer.h"
#include "layout/hopper_layout.h"
#include "target/cuda/passes.h"
#include "transform/gpu_util.h"

namespace tl {
namespace {

using namespace gpu_pass;

bool IsZero(const Expr& v) {
  if (auto* f = As<FloatImmNode>(v)) return f->value == 0.0;
  if (auto* i = As<IntImmNode>(v)) return i->value == 0;
  return false;
}

int Uses(const Stmt& s, const BufferNode* b) {
  int n = 0;
  struct V : IRVisitor {
    const BufferNode* b;
    int* n;
    void VisitBuffer(const Buffer& x) override { *n += x.get() == b; }
  } v;
  v.b = b;
  v.n = &n;
  v.VisitStmt(s);
  return n;
}

// The gemm of a loop body that accumulates into a fragment (a statement of the body's top-level sequence).
const GemmNode* LoopGemm(const Stmt& body, size_t* at) {
  std::vector<Stmt> seq{body};
  if (auto* q = As<SeqNode>(body)) seq = q->seq;
  const GemmNode* found = nullptr;
  for (size_t i = 0; i < seq.size(); ++i)
    if (auto* g = As<GemmNode>(seq[i]); g && g->C.buffer->scope == Scope::kFragment) {
      if (found) return nullptr;  // two gemms: left as they are
      found = g;
      *at = i;
    }
  return found;
}

struct Rewriter : IRMutator {
  const PassContext& ctx;
  int64_t threads = 0;
  std::vector<Buffer> new_allocs;
  std::vector<std::pair<Buffer, Expr>> new_inits;
  std::vector<Stmt> prologue;
  explicit Rewriter(const PassContext& c) : ctx(c) {}

  void NoTcgen05(const GemmNode* g, const std::string& why) {
    ctx.info->warnings.push_back(Loc(g->span) + ": T.gemm uses mma.sync on " + ctx.features.arch +
                                 ", not tcgen05.mma: " + why);
  }

  // Why gemm g (in loop `loop`, cleared before it or not) cannot run on tcgen05, or "".
  std::string Blocker(const GemmNode* g, const ForNode* loop, bool cleared) {
    const Buffer &a = g->A.buffer, &b = g->B.buffer, &c = g->C.buffer;
    if (a->scope != Scope::kShared || b->scope != Scope::kShared)
      return "tcgen05.mma takes A and B from shared memory here ('" + a->name + "', '" + b->name + "')";
    const bool f16 = a->dtype == b->dtype && (a->dtype == DataType::Float(16) || a->dtype == DataType::BFloat16());
    auto int8 = [](DataType t) { return (t.is_int() || t.is_uint()) && t.bits() == 8; };
    const bool i8 = int8(a->dtype) && int8(b->dtype) && c->dtype == DataType::Int(32);
    if (i8 && !ctx.features.tcgen05_i8) return ctx.features.arch + " has no 8-bit integer tcgen05.mma (kind::i8)";
    const bool float_acc = c->dtype == DataType::Float(32) || c->dtype == DataType::Float(16);
    if (!i8 && ((!f16 && !(IsFp8(a->dtype) && IsFp8(b->dtype))) || !float_acc))
      return "only float16 / bfloat16 (kind::f16) and fp8 (kind::f8f6f4) A and B with a float32 or float16 "
             "accumulator, and int8 / uint8 with an int32 one (kind::i8), are lowered to tcgen05";
    int64_t m = 0, n = 0;
    if (c->shape.size() != 2 || !AsConstInt(c->shape[0], &m) || !AsConstInt(c->shape[1], &n) || !g->C.IsWhole())
      return "the accumulator must be a whole 2-d fragment";
    if (m != 128 && m != 64)
      return "the accumulator has " + std::to_string(m) + " rows, tcgen05.mma here takes 128 or 64";
    if (m == 128 ? (n % 16 || n > 256) : (n % 8 || n > 256))
      return "N = " + std::to_string(n) + " is not " + (m == 128 ? "16, 32, ..., 256" : "8, 16, ..., 256");
    // (M = 64, layout F: each warp's lanes read two column halves, so 2 G divides N)
    const int64_t G = threads / 128;
    if (threads % 128 || n % (m == 64 ? 2 * G : G))
      return "the block's " + std::to_string(threads) + " threads do not read the " + std::to_string(m) + " x " +
             std::to_string(n) + " accumulator out of tensor memory in whole warp groups";
    if (Uses(loop->body, c.get()) != 1)
      return "the loop uses the accumulator '" + c->name + "' besides the gemm (it would have to leave tensor "
             "memory every iteration)";
    if (!cleared && !g->clear_accum)
      return "the accumulator is not cleared (T.clear) before the loop";
    for (auto* r : {&g->A, &g->B}) {
      int64_t rows = 0, cols = 0;
      const auto& sh = r->buffer->shape;
      if (sh.size() < 2 || !AsConstInt(sh[sh.size() - 2], &rows) || !AsConstInt(sh.back(), &cols) ||
          !HopperSwizzleBytes(rows, cols, r->buffer->dtype.bytes()))
        return "an operand tile has no 32/64/128-byte swizzle layout";
    }
    return "";
  }

  // T.gemm into tensor memory (Tcgen05GemmNode::wait): issued with a barrier of its own, waited on at once.
  Stmt VisitTileOp(const Stmt& s) override {
    auto* g = As<Tcgen05GemmNode>(s);
    if (!g || !g->wait) return IRMutator::VisitTileOp(s);
    const Span sp = g->span;
    const std::string base = g->C.buffer->name + "_gemm" + std::to_string(waits_++);
    Buffer bar = MakeBuffer(base + "_bar", DataType::UInt(64), {C(1)}, Scope::kShared, sp);
    Buffer phase = MakeBuffer(base + "_phase", DataType::Int(32), {C(1)}, Scope::kLocalVar, sp);
    new_allocs.insert(new_allocs.end(), {bar, phase});
    new_inits.emplace_back(phase, C(0));
    prologue.push_back(Evaluate(Call(DataType::Void(), "tl.mbarrier_init", {Load(bar, {C(0)}), C(1)}), sp));
    Expr ph = Load(phase, {C(0)});
    ctx.info->choices.push_back(Loc(sp) + ": T.gemm into tensor memory '" + g->C.buffer->name +
                                "': tcgen05.mma committed to a barrier of its own ('" + bar->name +
                                "'), which its threads wait on before going on");
    return Seq({std::make_shared<Tcgen05GemmNode>(g->A, g->B, g->C, g->trans_A, g->trans_B, Load(bar, {C(0)}),
                                                  g->clear_accum, g->use_2cta, sp),
                Evaluate(Call(DataType::Void(), "tl.mbarrier_wait_parity",
                              {Load(bar, {C(0)}), Binary(BinaryOp::kFloorMod, ph, C(2))}),
                         sp),
                Store(phase, ph + C(1), {C(0)}, sp)},
               sp);
  }
  int waits_ = 0;

  Stmt VisitSeq(const Stmt& s, const SeqNode* q) override {
    std::vector<Stmt> seq;
    bool changed = false;
    for (const Stmt& x0 : q->seq) {
      Stmt x = VisitStmt(x0);
      changed |= x.get() != x0.get();
      auto* loop = As<ForNode>(x);
      size_t at = 0;
      const GemmNode* g = !ctx.opt.disable_tcgen05 && loop &&
                                  (loop->for_kind == ForKind::kPipelined || loop->for_kind == ForKind::kSerial)
                              ? LoopGemm(loop->body, &at)
                              : nullptr;
      if (!g) {
        seq.push_back(x);
        continue;
      }
      const Buffer& c = g->C.buffer;
      bool cleared = false;  // the latest statement before the loop that touches C clears it
      for (size_t j = seq.size(); j-- > 0;) {
        if (!Uses(seq[j], c.get())) continue;
        auto* fl = As<FillNode>(seq[j]);
        cleared = fl && fl->dst.buffer == c && fl->dst.IsWhole() && IsZero(fl->value);
        break;
      }
      std::string why = Blocker(g, loop, cleared);
      if (!why.empty()) {
        NoTcgen05(g, why);
        seq.push_back(x);
        continue;
      }
      const Span sp = g->span;
      Buffer tmem = MakeBuffer(c->name + "_tmem", c->dtype, c->shape, Scope::kTensorMemory, sp);
      Buffer bar = MakeBuffer(c->name + "_mma_bar", DataType::UInt(64), {C(1)}, Scope::kShared, sp);
      Buffer phase = MakeBuffer(c->name + "_mma_phase", DataType::Int(32), {C(1)}, Scope::kLocalVar, sp);
      new_allocs.insert(new_allocs.end(), {tmem, bar, phase});
      new_inits.emplace_back(phase, C(0));
      prologue.push_back(Evaluate(Call(DataType::Void(), "tl.mbarrier_init", {Load(bar, {C(0)}), C(1)}), sp));
      Expr clear = g->clear_accum ? IntImm(DataType::Bool(), 1) : Binary(BinaryOp::kEQ, loop->var, loop->min);
      Expr ph = Load(phase, {C(0)});
      std::vector<Stmt> body{
          std::make_shared<Tcgen05GemmNode>(g->A, g->B, Region::Full(tmem), g->trans_A, g->trans_B,
                                            Load(bar, {C(0)}), clear, false, sp),
          Evaluate(Call(DataType::Void(), "tl.mbarrier_wait_parity",
                        {Load(bar, {C(0)}), Binary(BinaryOp::kFloorMod, ph, C(2))}),
                   sp),
          Store(phase, ph + C(1), {C(0)}, sp)};
      std::vector<Stmt> lb{loop->body};
      if (auto* lq = As<SeqNode>(loop->body)) lb = lq->seq;
      lb[at] = Seq(body, sp);
      seq.push_back(std::make_shared<ForNode>(loop->var, loop->min, loop->extent, loop->for_kind, Seq(lb, sp),
                                              loop->annotations, loop->span));
      seq.push_back(std::make_shared<CopyNode>(Region::Full(tmem), Region::Full(c), false, sp));
      ctx.info->choices.push_back(Loc(sp) + ": T.gemm: tcgen05.mma into tensor memory '" + tmem->name +
                                  "' across the loop at " + Loc(loop->span) + ", one mbarrier wait per iteration; '" +
                                  c->name + "' is read out of tensor memory after the loop");
      changed = true;
    }
    return changed ? Seq(seq, s->span) : s;
  }
};

}  // namespace

PrimFunc GemmToTcgen05CUDA(const PrimFunc& f, const PassContext& ctx) {
  const KernelNode* k = FindKernel(f->body);
  if (!k || !ctx.features.tcgen05) return f;
  Rewriter rw(ctx);
  if (k->threads.size() != 1 || !AsConstInt(k->threads[0], &rw.threads)) return f;
  struct Outer : IRMutator {
    Rewriter* rw;
    Stmt VisitKernel(const Stmt& s, const KernelNode* n) override {
      Stmt body = rw->VisitStmt(n->body);
      if (rw->new_allocs.empty()) return s;
      std::vector<Buffer> allocs = n->alloc_buffers;
      allocs.insert(allocs.end(), rw->new_allocs.begin(), rw->new_allocs.end());
      auto inits = n->var_inits;
      inits.insert(inits.end(), rw->new_inits.begin(), rw->new_inits.end());
      std::vector<Stmt> b = rw->prologue;
      b.push_back(body);
      return std::make_shared<KernelNode>(n->grid, n->block_vars, n->threads, allocs, inits, Seq(b, n->span),
                                          n->span);
    }
  } outer;
  outer.rw = &rw;
  return WithBody(f, outer.VisitStmt(f->body));
}

}  // namespace tl
