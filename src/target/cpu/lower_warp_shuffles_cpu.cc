// LowerWarpShufflesCPU; see lower_warp_shuffles_cpu.h.
#include "target/cpu/lower_warp_shuffles_cpu.h"

#include <set>

#include "arith/simplify.h"
#include "ir/functor.h"
#include "support/error.h"
#include "transform/gpu_util.h"

namespace tl {
namespace {

struct Stager : IRMutator {
  int64_t slots = 0;                   // staging slots: the block's threads rounded up to whole warps
  std::vector<Buffer> stages;          // one per shuffle, allocated in the kernel
  std::vector<Stmt> pre;               // stores of the statement being rewritten, to run before it
  int divergent = 0;                   // inside control flow whose condition threads may evaluate differently
  int parallel = 0;                    // inside T.Parallel (run once per block on the CPU, not per thread)
  std::set<const VarNode*> dependent;  // let-bound vars threads may hold different values of
  Span span;
  // whether threads may evaluate `e` differently: the thread index, memory, or a var let-bound to either
  bool Dependent(const Expr& e) const {
    return gpu_pass::ThreadDependent(e, dependent) || gpu_pass::ReadsMemory(e);
  }

  [[noreturn]] void Refuse(const std::string& why) const {
    throw UserError(ErrorKind::kUnsupported,
                    "T.tvm_warp_shuffle " + why +
                        ": the CPU target runs a block's threads one after another and stages a shuffle's "
                        "values through shared memory, which needs every thread of the block to reach it",
                    span);
  }

  Expr VisitCall(const Expr& e, const CallNode* n) override {
    if (n->op != "tl.shfl_sync") return IRMutator::VisitCall(e, n);
    if (n->args.size() != 4) throw InternalError("tl.shfl_sync expects (mask, value, lane, width)");
    auto* w = As<IntImmNode>(n->args[3]);
    if (!w || w->value <= 0 || w->value > 32 || (w->value & (w->value - 1)))
      throw InternalError("tl.shfl_sync: the width is a constant power of two up to 32");
    if (parallel) Refuse("inside T.Parallel");
    if (divergent) Refuse("under a condition on the thread index or on memory");
    Expr value = VisitExpr(n->args[1]);
    Expr lane = VisitExpr(n->args[2]);
    Buffer st = MakeBuffer("shfl_stage" + std::to_string(stages.size()), n->dtype, {Int(slots)},
                           Scope::kShared, span);
    stages.push_back(st);
    Expr tid = Call(DataType::Int(32), "tl.thread_idx", {});
    pre.push_back(Store(st, value, {tid}, span));
    // lane l of the thread's group of `width` lanes (shfl.sync.idx with c = width - 1 ... as CUDA's
    // __shfl_sync)
    Expr group = Binary(BinaryOp::kBitAnd, tid, Int(~(w->value - 1)));
    Expr src = Binary(BinaryOp::kBitOr, group, Binary(BinaryOp::kBitAnd, lane, Int(w->value - 1)));
    return Load(st, {src});
  }

  Stmt VisitStmt(const Stmt& s) override {
    if (!s) return s;
    std::vector<Stmt> saved = std::move(pre);
    pre.clear();
    Span saved_span = span;
    if (s->span.defined()) span = s->span;
    Stmt out;
    if (auto* l = As<LetNode>(s)) {
      if (Dependent(l->value)) dependent.insert(l->var.get());
      out = IRMutator::VisitStmt(s);
    } else if (auto* f = As<ForNode>(s)) {
      const bool d = Dependent(f->extent) || Dependent(f->min);
      divergent += d;
      if (f->for_kind == ForKind::kParallel) ++parallel;
      out = IRMutator::VisitStmt(s);
      if (f->for_kind == ForKind::kParallel) --parallel;
      divergent -= d;
      if (!pre.empty()) Refuse("in a loop bound");
    } else if (auto* i = As<IfNode>(s)) {
      const bool d = Dependent(i->cond);
      divergent += d;
      out = IRMutator::VisitStmt(s);
      divergent -= d;
    } else if (As<WhileNode>(s)) {
      ++divergent;  // a while loop's trip count is decided at run time
      out = IRMutator::VisitStmt(s);
      --divergent;
    } else {
      out = IRMutator::VisitStmt(s);
    }
    if (!pre.empty()) {  // this statement's own shuffles (nested statements placed theirs)
      pre.push_back(out);
      out = Seq(std::move(pre), s->span);
    }
    pre = std::move(saved);
    span = saved_span;
    return out;
  }

  Stmt VisitKernel(const Stmt& s, const KernelNode* k) override {
    int64_t threads = 1;
    for (auto& t : k->threads) {
      auto v = BoundOf(t, {}).hi;
      if (!v) return s;  // left to the refusal of the GPU-only calls
      threads *= *v;
    }
    Stager inner;
    inner.slots = (threads + 31) / 32 * 32;
    inner.span = span;
    Stmt body = inner.VisitStmt(k->body);
    if (inner.stages.empty()) return s;
    std::vector<Buffer> allocs = k->alloc_buffers;
    allocs.insert(allocs.end(), inner.stages.begin(), inner.stages.end());
    return std::make_shared<KernelNode>(k->grid, k->block_vars, k->threads, allocs, k->var_inits, body,
                                        k->span);
  }
};

}  // namespace

PrimFunc LowerWarpShufflesCPU(const PrimFunc& f) {
  Stager s;
  Stmt body = s.VisitStmt(f->body);
  return body == f->body ? f : WithBody(f, body);
}

}  // namespace tl
