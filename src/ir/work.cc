// WorkOf; see work.h.
#include "ir/work.h"

#include "ir/functor.h"
#include "ir/printer.h"
#include "op/copy.h"
#include "op/gemm.h"

namespace tl {
namespace {

class WorkCounter : public IRVisitor {
 public:
  Work work;

  void VisitKernel(const KernelNode* k) override {
    int64_t saved = scale_, blocks = 1;
    for (auto& g : k->grid) blocks *= Extent(g);
    work.blocks += blocks;
    scale_ *= blocks;
    IRVisitor::VisitKernel(k);
    scale_ = saved;
  }
  void VisitFor(const ForNode* n) override {
    int64_t saved = scale_;
    scale_ *= Extent(n->extent);
    IRVisitor::VisitFor(n);
    scale_ = saved;
  }
  void VisitTileOp(const StmtNode* n) override {
    if (auto* g = As<GemmNode>(n)) {
      int64_t m = Rows(g->C, 0), nn = Rows(g->C, 1);
      int64_t k = Rows(g->A, g->trans_A ? 0 : 1);
      work.flops += 2 * m * nn * k * scale_;
    } else if (auto* c = As<CopyNode>(n)) {
      const Region* r = c->src.buffer->scope == Scope::kGlobal   ? &c->src
                        : c->dst.buffer->scope == Scope::kGlobal ? &c->dst
                                                                 : nullptr;
      if (r) {
        int64_t elems = 1;
        for (auto& rg : r->ranges) elems *= Extent(rg.extent);
        work.global_bytes += elems * r->buffer->dtype.bytes() * scale_;
      }
    }
    IRVisitor::VisitTileOp(n);
  }

 private:
  int64_t Extent(const Expr& e) {
    int64_t v;
    if (AsConstInt(e, &v)) return v;
    if (work.unknown.empty()) work.unknown = PrintExpr(e);
    return 1;
  }
  // The extent of the dim-th of a region's two tile dimensions (extent-1 dims skipped).
  int64_t Rows(const Region& r, int dim) {
    std::vector<int64_t> ext;
    for (auto& rg : r.ranges) {
      int64_t v = Extent(rg.extent);
      if (v != 1) ext.push_back(v);
    }
    while (ext.size() < 2) ext.insert(ext.begin(), 1);
    return ext[ext.size() - 2 + dim];
  }
  int64_t scale_ = 1;
};

}  // namespace

Work WorkOf(const PrimFunc& f) {
  WorkCounter c;
  c.VisitStmt(f->body);
  return c.work;
}

}  // namespace tl
