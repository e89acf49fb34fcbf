// CheckStaticIndices; see index_check.h.
#include "arith/index_check.h"

#include <map>
#include <set>

#include "arith/simplify.h"
#include "ir/functor.h"
#include "ir/printer.h"

namespace tl {
namespace {

class IndexChecker : public SpanTrackingVisitor {
 public:
  void VisitFor(const ForNode* n) override {
    VisitExpr(n->min);
    VisitExpr(n->extent);
    Interval lo = BoundOf(n->min, bounds_), len = BoundOf(n->extent, bounds_);
    auto saved = bounds_;
    if (lo.lo && lo.hi && len.hi && *len.hi <= 0) {
      bounds_ = saved;  // an empty loop: its body never runs
      return;
    }
    bounds_[n->var.get()] = LoopVarRange(n->min, n->extent, bounds_);
    auto saved_exact = exact_;
    int64_t mn, ext;
    if (AsConstInt(Simplify(n->min), &mn) && AsConstInt(Simplify(n->extent), &ext))
      exact_.insert(n->var.get());
    VisitStmt(n->body);
    bounds_ = saved;
    exact_ = saved_exact;
  }
  void VisitKernel(const KernelNode* n) override {
    auto saved = bounds_;
    auto saved_exact = exact_;
    for (size_t i = 0; i < n->block_vars.size() && i < n->grid.size(); ++i) {
      Interval g = BoundOf(n->grid[i], bounds_);
      bounds_[n->block_vars[i].get()] = {int64_t(0), g.hi ? std::optional<int64_t>(*g.hi - 1) : std::nullopt};
      if (g.IsConst()) exact_.insert(n->block_vars[i].get());
    }
    IRVisitor::VisitKernel(n);
    bounds_ = saved;
    exact_ = saved_exact;
  }
  void VisitStmt(const Stmt& s) override {           // (public, as IRVisitor's)
    if (s && (As<IfNode>(s) || As<WhileNode>(s))) {  // guarded: the condition may keep an index in range
      ++guarded_;
      SpanTrackingVisitor::VisitStmt(s);
      --guarded_;
      return;
    }
    SpanTrackingVisitor::VisitStmt(s);
  }
  void VisitExpr(const Expr& e) override {
    auto* c = e ? As<CallNode>(e) : nullptr;
    if (e && (As<SelectNode>(e) || (c && c->op == "tl.if_then_else"))) {  // a chosen operand
      ++guarded_;
      SpanTrackingVisitor::VisitExpr(e);
      --guarded_;
      return;
    }
    SpanTrackingVisitor::VisitExpr(e);
  }
  void VisitLoad(const BufferLoadNode* n) override {
    Check(n->buffer, n->indices);
    IRVisitor::VisitLoad(n);
  }
  void VisitStore(const StoreNode* n) override {
    Check(n->buffer, n->indices);
    IRVisitor::VisitStore(n);
  }

 private:
  void Check(const Buffer& b, const std::vector<Expr>& idx) {
    if (idx.size() != b->shape.size()) return;  // arity is the front end's check
    if (b->scope == Scope::kGlobal) return;     // InjectBoundGuards reports (and guards) tensor accesses
    for (size_t d = 0; d < idx.size(); ++d) {
      int64_t ext;
      if (!AsConstInt(b->shape[d], &ext) || !idx[d]->dtype.is_integer()) continue;
      Interval r = BoundOf(Simplify(idx[d], bounds_), bounds_);
      bool below = r.hi && *r.hi < 0, above = r.lo && *r.lo >= ext;
      if (!below && !above) continue;
      std::string range = r.IsConst() ? "is " + std::to_string(*r.lo)
                                      : "lies in [" + (r.lo ? std::to_string(*r.lo) : std::string("-inf")) +
                                            ", " + (r.hi ? std::to_string(*r.hi) : std::string("inf")) + "]";
      int64_t c;
      std::string shown = AsConstInt(idx[d], &c) ? "" : " (" + PrintExpr(idx[d]) + ")";
      TL_USER_ERROR(kType, span_, "index ", d, " of '", b->name, "'", shown, " ", range,
                    ", always outside the buffer's extent ", ext, " in that dimension");
    }
    if (!guarded_) CheckCorners(b, idx);
  }

  // An index outside the shape at some iteration: the loops' (and block indices') first and last values are
  // iterations that run, so an index of loop vars and constants evaluated there is a witness. Accesses under
  // a condition, or indexed by anything else (a let, a load, the thread index), are not judged. TileLang
  // sizes a fragment from the loops that use it; here the declared shape is the buffer (the CPU target wrote
  // past it silently; the emulator reported it only when run).
  void CheckCorners(const Buffer& b, const std::vector<Expr>& idx) {
    if (b->data) return;  // a view: its owner's storage (ResolveBufferViews checks the fit)
    for (size_t d = 0; d < idx.size(); ++d) {
      int64_t ext;
      if (!AsConstInt(b->shape[d], &ext) || !idx[d]->dtype.is_integer()) continue;
      VarUses u = VarsOf(idx[d]);
      struct Calls : IRVisitor {
        bool found = false;
        void VisitCall(const CallNode*) override { found = true; }
      } calls;
      calls.VisitExpr(idx[d]);
      if (u.loads || calls.found || u.vars.size() > 6) continue;
      std::vector<std::pair<const VarNode*, Interval>> used;
      for (const VarNode* v : u.vars) {
        auto it = bounds_.find(v);
        if (!exact_.count(v) || it == bounds_.end() || !it->second.lo || !it->second.hi ||
            *it->second.lo > *it->second.hi)
          break;
        used.push_back(*it);
      }
      if (used.size() != u.vars.size()) continue;
      for (size_t c = 0; c < (size_t{1} << used.size()); ++c) {
        std::map<const VarNode*, Expr> at;
        std::string where;
        for (size_t j = 0; j < used.size(); ++j) {
          int64_t v = (c >> j) & 1 ? *used[j].second.hi : *used[j].second.lo;
          at[used[j].first] = Int(v);
          where += (where.empty() ? "" : ", ") + used[j].first->name + " = " + std::to_string(v);
        }
        int64_t value;
        if (!AsConstInt(Simplify(Substitute(idx[d], at)), &value) || (value >= 0 && value < ext)) continue;
        TL_USER_ERROR(
            kType, span_, "index ", d, " of '", b->name, "' (", PrintExpr(idx[d]), ") is ", value, " at ",
            where, ", outside the buffer's extent ", ext,
            " in that dimension: an on-chip buffer holds exactly its declared shape (TileLang sizes a "
            "fragment from the loops that use it); declare it as large as the loop that indexes it");
      }
    }
  }
  BoundMap bounds_;
  // loop vars (and block indices) with constant ranges: their first and last values are iterations that run
  // (a bound of a run-time extent is only an upper bound, not a witness)
  std::set<const VarNode*> exact_;
  int guarded_ = 0;
};

}  // namespace

void CheckStaticIndices(const PrimFunc& f) {
  IndexChecker c;
  c.VisitStmt(f->body);
}

}  // namespace tl
