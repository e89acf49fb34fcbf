// CheckStaticIndices; see index_check.h.
#include "arith/index_check.h"

#include "arith/simplify.h"
#include "ir/functor.h"
#include "ir/printer.h"

namespace tl {
namespace {

class IndexChecker : public SpanTrackingVisitor {
 public:
 protected:
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
    VisitStmt(n->body);
    bounds_ = saved;
  }
  void VisitKernel(const KernelNode* n) override {
    auto saved = bounds_;
    for (size_t i = 0; i < n->block_vars.size() && i < n->grid.size(); ++i) {
      Interval g = BoundOf(n->grid[i], bounds_);
      bounds_[n->block_vars[i].get()] = {int64_t(0), g.hi ? std::optional<int64_t>(*g.hi - 1) : std::nullopt};
    }
    IRVisitor::VisitKernel(n);
    bounds_ = saved;
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
  }
  BoundMap bounds_;
};

}  // namespace

void CheckStaticIndices(const PrimFunc& f) {
  IndexChecker c;
  c.VisitStmt(f->body);
}

}  // namespace tl
