// StagePrefetchInRegisters (HIP): software pipelining over LDS buffers without an async copy.
// Requires thread-level IR from the CUDA pipeline lowering (LowerTileOpsGPU + Simplify).
//
// CDNA has no cp.async: a global -> LDS copy is a global load and an LDS store, and the store
// waits for the load. In the steady state of a T.Pipelined loop
//
//   wait; barrier; prefetch (copies into stage k + s - 1); commit; compute (stage k)
//
// printing the prefetch's copies as load-then-store makes every iteration wait for global memory
// before it computes. This pass splits each prefetch copy in two: a 16-byte global load into
// registers where the prefetch was, and the LDS store of those registers after the compute, so
// the loads are in flight while the MFMAs run. The store goes into stage k + s - 1, which no thread
// reads in iteration k (every thread passed this iteration's barrier after its last read of it in
// iteration k - 1), and the next iteration's barrier orders it before that stage is read. A copy
// whose load is not valid stores zeros, as the cp.async it replaces. A copy already made of register loads
// and stores (tl.staged_copy: the transposing copy into a k-contiguous MFMA operand tile) is split the same
// way: its loads stay, its stores move after the compute.
#include <map>

#include "arith/simplify.h"
#include "ir/functor.h"
#include "target/hip/passes.h"
#include "transform/gpu_passes.h"
#include "transform/gpu_util.h"

namespace tl {
namespace {

using namespace gpu_pass;

// One prefetch copy site: its register buffer and the unrolled loops it sits in.
struct Site {
  Buffer regs;
  int64_t lanes = 0;
  std::vector<const ForNode*> loops;  // unrolled loops around the copy, outermost first
};

// Rewrites the prefetch's copies: `load` mode puts the global loads into registers, store mode
// the LDS stores of the registers (the same statement structure, so the two stay in step).
class SplitCopies : public IRMutator {
 public:
  SplitCopies(std::map<const CallNode*, Site>* sites, bool load, std::vector<Buffer>* new_regs)
      : sites_(sites), load_(load), new_regs_(new_regs) {}
  bool ok = true;
  int staged_copies = 0;  // tl.staged_copy sites split

 protected:
  Stmt VisitAttr(const Stmt& s, const AttrStmtNode* n) override {
    if (n->key != "tl.staged_copy") return IRMutator::VisitAttr(s, n);
    auto* seq = As<SeqNode>(n->body);  // (loads, stores) into and out of the copy's own registers
    if (!seq || seq->seq.size() != 2 || !loops_.empty()) {
      ok = false;
      return s;
    }
    staged_copies += load_;
    return seq->seq[load_ ? 0 : 1];
  }
  Stmt VisitFor(const Stmt& s, const ForNode* n) override {
    int64_t ext = 0;
    if (n->for_kind != ForKind::kUnrolled || !AsConstInt(n->extent, &ext)) {
      ok = false;
      return s;
    }
    loops_.push_back(n);
    Stmt r = IRMutator::VisitFor(s, n);
    loops_.pop_back();
    return r;
  }
  Expr VisitCall(const Expr& e, const CallNode* n) override {
    if (n->op == "tl.bitwise_xor") return e;
    if (n->op != "tl.cp_async" || n->args.size() != 4) {
      ok = false;
      return e;
    }
    int64_t bytes = 0;
    AsConstInt(n->args[2], &bytes);
    DataType t = n->args[0]->dtype;
    auto it = sites_->find(n);
    if (it == sites_->end()) {
      Site site;
      site.lanes = bytes / t.bytes();
      site.loops = loops_;
      int64_t count = site.lanes;
      for (const ForNode* f : loops_) {
        int64_t ext = 0;
        AsConstInt(f->extent, &ext);
        count *= ext;
      }
      site.regs = MakeBuffer("prefetch_regs", t, {Int(count)}, Scope::kLocal);
      new_regs_->push_back(site.regs);
      it = sites_->emplace(n, site).first;
    }
    const Site& site = it->second;
    // Σ (u - min) * stride over the loops this copy sits in: which registers it uses.
    Expr lin = Int(0);
    int64_t stride = site.lanes;
    for (size_t i = loops_.size(); i-- > 0;) {
      int64_t ext = 0;
      AsConstInt(loops_[i]->extent, &ext);
      lin = lin + (Expr(loops_[i]->var) - loops_[i]->min) * Int(stride);
      stride *= ext;
    }
    lin = Simplify(lin);
    if (load_)
      return Call(DataType::Void(), "tl.vector_load",
                  {Load(site.regs, {lin}), n->args[1], Int(site.lanes), n->args[3]});
    std::vector<Expr> args{n->args[0]};
    for (int64_t l = 0; l < site.lanes; ++l) args.push_back(Load(site.regs, {Simplify(lin + Int(l))}));
    return Call(DataType::Void(), "tl.vector_store", args);
  }

 private:
  std::map<const CallNode*, Site>* sites_;
  bool load_;
  std::vector<Buffer>* new_regs_;
  std::vector<const ForNode*> loops_;
};

bool IsCall(const Stmt& s, const char* op) {
  auto* e = As<EvaluateNode>(s);
  auto* c = e ? As<CallNode>(e->value) : nullptr;
  return c && c->op == op;
}

bool HasCpAsync(const Stmt& s) {  // (or a register-staged copy)
  bool found = false;
  PostOrderVisitStmt(s, [&](const Stmt& x) {
    auto* a = As<AttrStmtNode>(x);
    found = found || IsCall(x, "tl.cp_async") || (a && a->key == "tl.staged_copy");
  });
  return found;
}

class Stager : public IRMutator {
 public:
  std::vector<Buffer> regs;
  int staged = 0;

 protected:
  Stmt VisitKernel(const Stmt& s, const KernelNode* k) override {
    Stmt b = VisitStmt(k->body);
    if (b == k->body) return s;
    std::vector<Buffer> alloc = k->alloc_buffers;
    alloc.insert(alloc.end(), regs.begin(), regs.end());
    return std::make_shared<KernelNode>(k->grid, k->block_vars, k->threads, alloc, k->var_inits, b, k->span);
  }
  Stmt VisitFor(const Stmt& s, const ForNode* n) override {
    auto* seq = As<SeqNode>(n->body);
    // The steady state: it starts with the pipeline's wait and has a commit after its prefetch.
    if (n->for_kind == ForKind::kUnrolled || !seq || seq->seq.empty() ||
        !IsCall(seq->seq[0], "tl.cp_async_wait"))
      return IRMutator::VisitFor(s, n);
    size_t commit = 0;
    while (commit < seq->seq.size() && !IsCall(seq->seq[commit], "tl.cp_async_commit")) ++commit;
    if (commit == seq->seq.size()) return IRMutator::VisitFor(s, n);
    std::vector<Stmt> out, stores;
    std::map<const CallNode*, Site> sites;
    std::vector<Buffer> fresh;
    int staged_copies = 0;
    for (size_t i = 0; i < seq->seq.size(); ++i) {
      const Stmt& st = seq->seq[i];
      if (i > 0 && i < commit && HasCpAsync(st)) {
        SplitCopies loads(&sites, true, &fresh), store(&sites, false, &fresh);
        Stmt l = loads.VisitStmt(st), w = store.VisitStmt(st);
        if (loads.ok && store.ok) {
          staged_copies += loads.staged_copies;
          out.push_back(l);
          stores.push_back(w);
          continue;
        }
        return IRMutator::VisitFor(s, n);  // not only unrolled cp.async copies: leave the loop as it is
      }
      out.push_back(st);
    }
    if (stores.empty()) return IRMutator::VisitFor(s, n);
    out.insert(out.end(), stores.begin(), stores.end());
    regs.insert(regs.end(), fresh.begin(), fresh.end());
    staged += static_cast<int>(sites.size()) + staged_copies;
    return For(n->var, n->min, n->extent, n->for_kind, Seq(out, n->body->span), n->annotations, s->span);
  }
};

}  // namespace

PrimFunc StagePrefetchInRegisters(const PrimFunc& f, const PassContext& ctx) {
  Stager st;
  Stmt body = st.VisitStmt(f->body);
  if (body == f->body) return f;
  if (ctx.info)
    ctx.info->choices.push_back("T.Pipelined on " + ctx.features.name + ": " + std::to_string(st.staged) +
                                " prefetch cop" + (st.staged == 1 ? "y" : "ies") +
                                " load into registers before the compute and store to LDS after it");
  return WithBody(f, UniquifyDefs(body));
}

}  // namespace tl
