// HoistBranchBarriers; see passes.h.
//
// SplitInteriorBlocks turns a tile op into `if (interior) fast else slow` on a block-uniform
// condition, and InsertBarriers then puts the barrier the op needs at the head of each branch. That
// is legal OpenCL (every work-item of the group takes the same branch), but PoCL 3.1 (Debian's, the
// OpenCL we test on) corrupts its heap running such kernels: the fuzzer's ragged `views` programs
// crashed the process in pocl_release_dlhandle_cache. One barrier before the `if` orders the same
// accesses, so it replaces the two.
#include "ir/functor.h"
#include "target/opencl/passes.h"
#include "transform/gpu_passes.h"
#include "transform/gpu_util.h"

namespace tl {
namespace {

using gpu_pass::IsBarrier;

// `s` without the barrier it starts with, looking through attrs, seqs and lets that read no memory
// (a barrier may move before those, not before a load); sets *found, else returns `s` unchanged.
Stmt DropLeadingBarrier(const Stmt& s, bool* found) {
  if (!s) return s;
  if (IsBarrier(s)) {
    *found = true;
    return Seq({}, s->span);
  }
  if (auto* a = As<AttrStmtNode>(s)) {
    Stmt b = DropLeadingBarrier(a->body, found);
    return *found ? AttrStmt(a->node, a->key, a->value, b, s->span) : s;
  }
  if (auto* l = As<LetNode>(s)) {
    if (gpu_pass::ReadsMemory(l->value)) return s;
    Stmt b = DropLeadingBarrier(l->body, found);
    return *found ? Let(l->var, l->value, b, s->span) : s;
  }
  if (auto* q = As<SeqNode>(s)) {
    if (q->seq.empty()) return s;
    Stmt first = DropLeadingBarrier(q->seq[0], found);
    if (!*found) return s;
    std::vector<Stmt> rest;
    if (!(As<SeqNode>(first) && As<SeqNode>(first)->seq.empty())) rest.push_back(first);
    rest.insert(rest.end(), q->seq.begin() + 1, q->seq.end());
    return Seq(rest, s->span);
  }
  return s;
}

// Nothing left to run (so a branch that held only the barrier keeps it, and the IR stays printable).
bool IsEmpty(const Stmt& s) {
  if (auto* q = As<SeqNode>(s)) {
    for (auto& x : q->seq)
      if (!IsEmpty(x)) return false;
    return true;
  }
  if (auto* a = As<AttrStmtNode>(s)) return IsEmpty(a->body);
  if (auto* l = As<LetNode>(s)) return IsEmpty(l->body);
  return false;
}

class Hoister : public IRMutator {
 public:
  Stmt VisitIf(const Stmt& s, const IfNode* n) override {
    Stmt r = IRMutator::VisitIf(s, n);
    auto* i = As<IfNode>(r);
    if (!i || !i->else_case || gpu_pass::ReadsMemory(i->cond)) return r;
    bool in_then = false, in_else = false;
    Stmt t = DropLeadingBarrier(i->then_case, &in_then);
    Stmt e = DropLeadingBarrier(i->else_case, &in_else);
    if (!in_then || !in_else || IsEmpty(t) || IsEmpty(e)) return r;
    return Seq({Evaluate(Call(DataType::Void(), "tl.syncthreads", {}), i->span), If(i->cond, t, e, i->span)},
               i->span);
  }
};

}  // namespace

PrimFunc HoistBranchBarriers(const PrimFunc& f, const PassContext&) {
  return WithBody(f, Hoister().VisitStmt(f->body));
}

}  // namespace tl
