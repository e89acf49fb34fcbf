// PackGemmTilesCPU; see pack_gemm_tiles_cpu.h.
#include "target/cpu/pack_gemm_tiles_cpu.h"

#include <map>
#include <set>

#include "ir/functor.h"
#include "op/copy.h"
#include "op/gemm.h"
#include "transform/cpu/tile_lowerer.h"

namespace tl {
namespace {

bool PackableType(DataType t) {
  using C = DataType::Code;
  return t.lanes() == 1 &&
         ((t.code() == C::kFloat && (t.bits() == 32 || t.bits() == 16)) || t.code() == C::kBFloat ||
          t.code() == C::kFloat8E4M3 || t.code() == C::kFloat8E5M2);
}

// A copy that can pack: global source of the tile's dtype, its two tile dims the tile's two dims
// in order, the inner one the source's contiguous last dim.
bool CopyPacks(const CopyNode& c) {
  const Buffer& s = c.src.buffer;
  const Buffer& d = c.dst.buffer;
  if (s->scope != Scope::kGlobal || s->dtype != d->dtype || d->shape.size() != 2 || !c.dst.IsWhole())
    return false;
  auto sd = cpu_lowering::TileDims(c.src);
  if (sd.size() != 2 || sd[1] + 1 != c.src.ranges.size()) return false;
  for (size_t i = 0; i < 2; ++i) {
    int64_t e = 0, dim = 0;
    if (!AsConstInt(c.src.ranges[sd[i]].extent, &e) || !AsConstInt(d->shape[i], &dim) || e != dim)
      return false;
  }
  return true;
}

bool GemmReadsPacked(const GemmNode& g) {
  const DataType a = g.A.buffer->dtype, b = g.B.buffer->dtype;
  return g.B.IsWhole() && g.B.buffer->shape.size() == 2 && g.C.buffer->dtype == DataType::Float(32) &&
         PackableType(a) && !(a == DataType::BFloat16() && b == DataType::BFloat16());
}

// Which on-chip tiles of a kernel body qualify; any reference other than the recognised copies
// and gemm operands disqualifies a tile.
struct Scan : cpu_lowering::TileUseScan {
  std::map<const BufferNode*, int> copies, gemms;
  std::map<const BufferNode*, bool> trans;
  std::map<const BufferNode*, const GemmNode*> first_gemm;

  void VisitAttr(const AttrStmtNode* n) override {
    // CacheGemmTilesCPU's attrs name the tile only to say where it lives, which packing keeps.
    if (n->key == "tl.cpu_cached_tile" || n->key == "tl.cpu_tile_cache") {
      VisitExpr(n->value);
      VisitStmt(n->body);
      return;
    }
    IRVisitor::VisitAttr(n);
  }
  void VisitTileOp(const StmtNode* s) override {
    if (auto* c = dynamic_cast<const CopyNode*>(s)) {
      const BufferNode* d = c->dst.buffer.get();
      if (cand.count(d) && CopyPacks(*c)) {
        ++copies[d];
        VisitRegion(c->src);
        VisitRanges(c->dst);
        return;
      }
    }
    if (auto* g = As<GemmNode>(s)) {  // by name: T.mma_gemm_blockscaled (a GemmNode too) is not one
      const BufferNode* b = g->B.buffer.get();
      if (cand.count(b) && GemmReadsPacked(*g)) {
        if (gemms[b]++ == 0) {
          trans[b] = g->trans_B;
          first_gemm[b] = g;
        } else if (trans[b] != g->trans_B) {
          bad.insert(b);
        }
        VisitRegion(g->A);
        VisitRegion(g->C);
        VisitRanges(g->B);
        return;
      }
    }
    IRVisitor::VisitTileOp(s);
  }
};

class Packer : public IRMutator {
 public:
  explicit Packer(std::vector<std::string>* choices) : choices_(choices) {}

  Stmt VisitKernel(const Stmt& s, const KernelNode* n) override {
    Scan scan;
    scan.Seed(n, [](const Buffer& b) { return PackableType(b->dtype); });
    scan.VisitStmt(n->body);
    Stmt body = n->body;
    for (auto& buf : n->alloc_buffers) {
      const BufferNode* b = buf.get();
      if (!scan.cand.count(b) || scan.bad.count(b) || !scan.copies.count(b) || !scan.gemms.count(b)) continue;
      const bool tb = scan.trans[b];
      body = AttrStmt(buf, "tl.cpu_packed_b", Int(tb ? 1 : 0), body, n->span);
      if (choices_)
        choices_->push_back(cpu_lowering::SpanLine(scan.first_gemm[b]->span) + ": T.gemm B tile " + b->name +
                            " is packed into NR-column float panels by its copy" +
                            (b->dtype != DataType::Float(32) ? " (widened there, once per copy)" : "") +
                            (tb ? " (transposed there)" : "") + "; the gemm reads the panels as they are");
    }
    if (body == n->body) return s;
    return std::make_shared<KernelNode>(n->grid, n->block_vars, n->threads, n->alloc_buffers, n->var_inits,
                                        body, n->span);
  }

 private:
  std::vector<std::string>* choices_;
};

}  // namespace

PrimFunc PackGemmTilesCPU(const PrimFunc& f, std::vector<std::string>* choices) {
  Stmt body = Packer(choices).VisitStmt(f->body);
  return body == f->body ? f : WithBody(f, body);
}

}  // namespace tl
