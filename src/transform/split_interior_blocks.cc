// SplitInteriorBlocks: a fast path, selected once per block, for the blocks whose tiles lie inside
// the tensors (issue 14). Requires thread-level IR (after LowerTileOpsGPU and Simplify).
//
// Bound checks that InjectBoundGuards and the tile-op lowerings leave in a kernel whose sizes do
// not divide the tiles (or are only known at run time) have the form `c * bv + rest < b`: a block
// index bv times a positive constant, plus terms of thread indices and loop vars whose range is
// known ([lo, hi]), against a bound b that does not change within the kernel (a constant or a
// symbolic size). Every such check holds in a block where `c * bv + hi < b`. The pass gathers the
// checks, groups them by (bv, c, b) keeping the largest hi, and turns the kernel body into
//
//   if (c1 * bv1 + hi1 < b1 && ...) { body with those checks replaced by true } else { body }
//
// The condition is uniform over the block, so barriers inside either branch stay legal, and the
// emulator executes both branches (its out-of-bounds check proves the removed checks redundant).
// Checks along a loop var (the last K tile of a ragged GEMM) are not block-uniform and stay.
#include <map>
#include <set>

#include "arith/simplify.h"
#include "ir/functor.h"
#include "ir/printer.h"
#include "ir/structural.h"
#include "transform/gpu_passes.h"
#include "transform/gpu_util.h"

namespace tl {
namespace {

using namespace gpu_pass;

struct Group {
  const VarNode* bv;
  Var bv_ref;
  int64_t c;
  Expr bound;
  int64_t hi;
};

// Finds the block-uniform bound checks of one kernel body.
class Collector : public IRVisitor {
 public:
  Collector(const KernelNode* k, int64_t threads) {
    for (auto& v : k->block_vars) block_[v.get()] = v;
    threads_ = threads;
  }
  std::vector<Group> groups;
  std::map<const BinaryNode*, size_t> covered;  // check -> its group

 protected:
  void VisitFor(const ForNode* n) override {
    VisitExpr(n->min);
    VisitExpr(n->extent);
    int64_t mn = 0, ext = 0;
    inner_.insert(n->var.get());
    if (AsConstInt(n->min, &mn) && AsConstInt(n->extent, &ext) && ext > 0)
      bounds_[n->var.get()] = Interval{mn, mn + ext - 1};
    VisitStmt(n->body);
    bounds_.erase(n->var.get());
  }
  void VisitLet(const LetNode* n) override {
    VisitExpr(n->value);
    inner_.insert(n->var.get());
    auto* c = As<CallNode>(n->value);
    if (c && c->op == "tl.thread_idx")
      bounds_[n->var.get()] = Interval{int64_t(0), threads_ - 1};
    else if (n->var->dtype.is_integer())
      bounds_[n->var.get()] = BoundOf(n->value, bounds_);
    VisitStmt(n->body);
    bounds_.erase(n->var.get());
  }
  void VisitBinary(const BinaryNode* n) override {
    if (n->op == BinaryOp::kLT && n->a->dtype.is_integer()) Check(n);
    IRVisitor::VisitBinary(n);
  }

 private:
  void Check(const BinaryNode* n) {
    VarUses in_bound = VarsOf(n->b);
    if (in_bound.loads) return;
    for (const VarNode* v : in_bound.vars)
      if (block_.count(v) || inner_.count(v)) return;  // not a kernel-wide bound
    std::vector<Expr> terms = AddTerms(n->a), rest;
    const VarNode* bv = nullptr;
    int64_t c = 0;
    for (auto& t : terms) {
      VarUses vs = VarsOf(t);
      bool has_block = false;
      for (const VarNode* v : vs.vars) has_block = has_block || block_.count(v);
      if (!has_block) {
        if (vs.loads) return;
        rest.push_back(t);
        continue;
      }
      if (bv) return;  // two block-var terms
      int64_t k = 0;
      auto* mul = As<BinaryNode>(t);
      if (auto* v = As<VarNode>(t)) {
        bv = v;
        k = 1;
      } else if (mul && mul->op == BinaryOp::kMul && As<VarNode>(mul->a) && AsConstInt(mul->b, &k)) {
        bv = As<VarNode>(mul->a);
      } else {
        return;
      }
      if (!block_.count(bv) || k <= 0) return;
      c = k;
    }
    if (!bv) return;
    int64_t hi = 0;
    if (!rest.empty()) {
      Expr r = rest[0];
      for (size_t i = 1; i < rest.size(); ++i) r = r + rest[i];
      Interval iv = BoundOf(r, bounds_);
      if (!iv.hi || !iv.lo) return;
      hi = *iv.hi;
    }
    for (auto& g : groups)
      if (g.bv == bv && g.c == c && StructuralEqual(g.bound, n->b)) {
        g.hi = std::max(g.hi, hi);
        covered[n] = static_cast<size_t>(&g - groups.data());
        return;
      }
    groups.push_back(Group{bv, block_.at(bv), c, n->b, hi});
    covered[n] = groups.size() - 1;
  }

  std::map<const VarNode*, Var> block_;
  std::set<const VarNode*> inner_;
  BoundMap bounds_;
  int64_t threads_ = 1;
};

// The body with the covered checks replaced by true.
class DropChecks : public IRMutator {
 public:
  DropChecks(const std::map<const BinaryNode*, size_t>& covered, const std::vector<bool>& drop)
      : covered_(covered), drop_(drop) {}

 protected:
  Expr VisitBinary(const Expr& e, const BinaryNode* n) override {
    auto it = covered_.find(n);
    if (it != covered_.end() && drop_[it->second]) return Bool(true);
    return IRMutator::VisitBinary(e, n);
  }

 private:
  const std::map<const BinaryNode*, size_t>& covered_;
  const std::vector<bool>& drop_;
};

// Splits each statement of the kernel's top-level sequence on its own (the prologue copies, the
// epilogue): a region without block-uniform checks is not duplicated, and the two versions of one
// region never compete for registers with the rest of the kernel.
class Splitter : public IRMutator {
 public:
  explicit Splitter(const PassContext& ctx) : ctx_(ctx) {}

 protected:
  Stmt VisitKernel(const Stmt& s, const KernelNode* k) override {
    int64_t threads = 0;
    if (k->threads.empty() || !AsConstInt(k->threads[0], &threads) || threads <= 0) return s;
    kernel_ = k;
    threads_ = threads;
    last_.clear();
    for (size_t i = 0; i < k->block_vars.size() && i < k->grid.size(); ++i) {
      int64_t g = 0;
      if (AsConstInt(k->grid[i], &g) && g > 0) last_[k->block_vars[i].get()] = g - 1;
    }
    Stmt body = Top(k->body);
    kernel_ = nullptr;
    if (body == k->body) return s;
    return std::make_shared<KernelNode>(k->grid, k->block_vars, k->threads, k->alloc_buffers, k->var_inits,
                                        UniquifyDefs(body), k->span);  // the copies bind fresh vars
  }

 private:
  // Descends through the kernel's leading lets and attributes to its statement sequence.
  Stmt Top(const Stmt& s) {
    if (auto* l = As<LetNode>(s)) {
      lets_.push_back(l);
      Stmt b = Top(l->body);
      lets_.pop_back();
      return b == l->body ? s : Let(l->var, l->value, b, s->span);
    }
    if (auto* a = As<AttrStmtNode>(s)) {
      Stmt b = Top(a->body);
      return b == a->body ? s : AttrStmt(a->node, a->key, a->value, b, s->span);
    }
    if (auto* q = As<SeqNode>(s)) {
      std::vector<Stmt> out;
      bool changed = false;
      for (auto& x : q->seq) {
        out.push_back(Split(x));
        changed = changed || out.back() != x;
      }
      return changed ? Seq(out, s->span) : s;
    }
    return Split(s);
  }

  Stmt Split(const Stmt& s) {
    // A loop that is not unrolled (the pipelined main loop) keeps one copy: its block-uniform
    // checks are loop-invariant and cost nothing per iteration once the CUDA compiler hoists them,
    // while a second copy of the loop costs code size and worse register allocation. Its checks that
    // hold in every block are still dropped.
    // The cp.async copies of a pipeline's prologue keep one copy too: measured on the ragged GEMM
    // (benchmarks/bench_cuda_sass.py), two versions of them raised the kernel from 166 to 204
    // registers, while two versions of the epilogue cost none.
    bool has_loop = false;
    PostOrderVisitStmt(s, [&](const Stmt& x) {
      if (auto* f = As<ForNode>(x)) has_loop = has_loop || f->for_kind != ForKind::kUnrolled;
      if (As<WhileNode>(x)) has_loop = true;
      auto* e = As<EvaluateNode>(x);
      auto* c = e ? As<CallNode>(e->value) : nullptr;
      if (c && c->op == "tl.cp_async") has_loop = true;
    });
    Collector col(kernel_, threads_);
    // The enclosing lets (the thread index) bound what the statement's checks add to the block term.
    Stmt wrapped = s;
    for (auto it = lets_.rbegin(); it != lets_.rend(); ++it)
      wrapped = Let((*it)->var, (*it)->value, wrapped, {});
    col.VisitStmt(wrapped);
    if (col.groups.empty()) return s;
    // Checks that hold in every block (the grid never reaches past the bound) go from both paths;
    // the others select the fast path.
    std::vector<bool> always(col.groups.size(), false), all(col.groups.size(), true);
    Expr cond;
    size_t split = 0;
    for (size_t i = 0; i < col.groups.size(); ++i) {
      const Group& g = col.groups[i];
      int64_t b = 0;
      auto it = last_.find(g.bv);
      always[i] = it != last_.end() && AsConstInt(g.bound, &b) && g.c * it->second + g.hi < b;
      if (!always[i])
        cond = And(cond, Lt(Expr(g.bv_ref) * Int(g.c) + IntImm(g.bv_ref->dtype, g.hi), g.bound));
    }
    for (auto& [n, gi] : col.covered) split += always[gi] ? 0 : 1;
    Stmt slow = split < col.covered.size() ? Simplify(DropChecks(col.covered, always).VisitStmt(s)) : s;
    if (!cond || has_loop) return slow;
    Stmt fast = Simplify(DropChecks(col.covered, all).VisitStmt(s));
    if (ctx_.info)
      ctx_.info->choices.push_back(Loc(s->span) + ": interior blocks (" + PrintExpr(cond) + ") run without " +
                                   std::to_string(split) + " bound check(s)");
    return If(cond, fast, slow, s->span);
  }

  const PassContext& ctx_;
  const KernelNode* kernel_ = nullptr;
  int64_t threads_ = 1;
  std::map<const VarNode*, int64_t> last_;
  std::vector<const LetNode*> lets_;
};

}  // namespace

PrimFunc SplitInteriorBlocks(const PrimFunc& f, const PassContext& ctx) {
  return WithBody(f, Splitter(ctx).VisitStmt(f->body));
}

}  // namespace tl
