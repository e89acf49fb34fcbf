// LowerTileOpsGPU on MFMA targets (HIP): which LDS tiles take the half-swapped chunk layout
// (MfmaHalfSwapOffset, src/layout/mfma_fragment.h), and the register fix-up of their 16-byte reads.
#include "arith/simplify.h"
#include "layout/mfma_fragment.h"
#include "transform/gpu/tile_lowerer.h"
#include "transform/gpu_util.h"

namespace tl {
namespace gpu_lowering {

using namespace gpu_pass;

// An epilogue tile (FlashAttention's O_shared) is eligible when every use of it is a copy into it from an
// mfma_C accumulator (8-byte writes, 4 columns a lane) or a copy out of it to global memory (16-byte chunk
// reads, lower_parallel.cc); by now both are T.Parallel nests of one store (LegalizeTileOpsGPU). Those
// are the only accesses that need to know the layout beyond SharedIndex, and both do. Any other use (a
// gemm operand, another T.Parallel nest, a pipelined tile) keeps the tile on the plain chunk swizzle.
void GpuTileLowerer::ScanMfmaHalfSwapTiles(const Stmt& body) {
  struct Scan : IRVisitor {
    GpuTileLowerer* self;
    std::map<const BufferNode*, int> copies, others;
    void VisitBuffer(const Buffer& b) override {
      if (b->scope == Scope::kShared) ++others[b.get()];
    }
    static const BufferLoadNode* Loaded(Expr e) {
      if (auto* c = As<CastNode>(e)) e = c->value;
      if (auto* s = As<SelectNode>(e)) e = s->true_value;  // a guarded load
      if (auto* c = As<CastNode>(e)) e = c->value;
      return As<BufferLoadNode>(e);
    }
    // The shared tile a copy nest writes from an accumulator or reads into global memory, else null.
    const BufferNode* CopyTile(const ForNode* n) {
      Stmt cur = n->body;
      for (;;) {
        if (auto* f = As<ForNode>(cur); f && f->for_kind == ForKind::kParallel) {
          cur = f->body;
        } else if (auto* i = As<IfNode>(cur); i && !i->else_case) {
          cur = i->then_case;
        } else {
          break;
        }
      }
      auto* st = As<StoreNode>(cur);
      const BufferLoadNode* ld = st ? Loaded(st->value) : nullptr;
      if (!ld) return nullptr;
      if (st->buffer->scope == Scope::kShared && ld->buffer->scope == Scope::kFragment) {
        auto lt = self->layout_.find(ld->buffer.get());
        return lt != self->layout_.end() && lt->second->kind == "mfma_C" ? st->buffer.get() : nullptr;
      }
      // the 16-byte chunks of the read must be whole chunks of the tile: its column is the innermost loop's
      // var (plus a multiple of 8), that loop a multiple of 8 long
      auto* inner = As<ForNode>(n->body) ? As<ForNode>(n->body) : n;
      while (auto* f = As<ForNode>(inner->body)) inner = f;
      Expr col = ld->indices.empty() ? nullptr : Simplify(ld->indices.back() - Expr(inner->var));
      int64_t off, ext;
      if (st->buffer->scope == Scope::kGlobal && ld->buffer->scope == Scope::kShared && col &&
          AsConstInt(col, &off) && off % 8 == 0 && IsConstInt(inner->min, 0) &&
          AsConstInt(inner->extent, &ext) && ext % 8 == 0)
        return ld->buffer.get();
      others[ld->buffer.get()] += ld->buffer->scope == Scope::kShared;
      return nullptr;
    }
    void VisitFor(const ForNode* n) override {
      if (n->for_kind == ForKind::kParallel) {
        if (const BufferNode* b = CopyTile(n)) {
          ++copies[b];
          return;
        }
      }
      IRVisitor::VisitFor(n);
    }
  } scan;
  scan.self = this;
  scan.VisitStmt(body);
  for (auto& [b, n] : scan.copies) {
    if (scan.others.count(b) || b->shape.size() < 2) continue;
    int64_t cols;
    if (!AsConstInt(b->shape.back(), &cols) || !MfmaHalfSwapFits(cols, b->dtype.bytes())) continue;
    half_swap_.insert(b);
  }
}

bool GpuTileLowerer::HalfSwappedTile(const BufferNode* b) const {
  if (half_swap_.count(b)) return true;
  for (auto& [orig, mapped] : bmap_)
    if (mapped.get() == b) return half_swap_.count(orig) > 0;
  return false;
}

}  // namespace gpu_lowering
}  // namespace tl
