// LowerTileOpsGPU on MFMA targets (HIP): which LDS tiles take the half-swapped chunk layout
// (MfmaHalfSwapOffset, src/layout/mfma_fragment.h), and the register fix-up of their 16-byte reads; which
// operand tiles read down their columns are stored transposed (k_transposed_).
#include "arith/simplify.h"
#include "layout/mfma_fragment.h"
#include "op/copy.h"
#include "op/gemm_blockscaled.h"
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

// A K x N B (a K x M A) read by an MFMA needs a lane's consecutive k of one column: in a row-major tile that
// is one 1- or 2-byte LDS read a value (8 to 32 reads an MFMA). Stored transposed ([N, K], the 16-byte-chunk
// XOR swizzle of its rows) it is one 8- or 16-byte read, as for an N x K B. The cost moves to the copies that
// fill the tile: they transpose q x c blocks in registers (TransposedCopy). A tile takes this layout when
// every use is such a gemm operand or the destination of a whole-tile chunked copy (tl.copy_async 1: 16-byte
// aligned rows, checked by the legalization) from a row-major global tensor whose last axis is the tile's N,
// and a block shape divides the tile among the threads exactly.
void GpuTileLowerer::ScanMfmaKTransposedTiles(const Stmt& body) {
  struct Scan : IRVisitor {
    std::map<const BufferNode*, std::vector<const CopyNode*>> copies;
    std::set<const BufferNode*> bad;
    void VisitAttr(const AttrStmtNode* n) override {
      if (n->key == "tl.copy_async" && IsConstInt(n->value, 1))
        if (auto* c = As<CopyNode>(n->body)) {
          copies[c->dst.buffer.get()].push_back(c);
          bad.insert(c->src.buffer.get());  // (a global tensor, never a candidate)
          return;
        }
      IRVisitor::VisitAttr(n);
    }
    void VisitTileOp(const StmtNode* s) override {
      auto* op = As<TileOpNode>(s);
      if (!op) return;
      const GemmNode* g = As<GemmNode>(s);
      if (!g) g = As<GemmBlockScaledNode>(s);
      for (auto& [r, access] : op->Regions()) {
        if (g && ((r == &g->A && g->trans_A) || (r == &g->B && !g->trans_B))) continue;
        bad.insert(r->buffer.get());
      }
      IRVisitor::VisitTileOp(s);
    }
    void VisitLoad(const BufferLoadNode* n) override {
      bad.insert(n->buffer.get());
      IRVisitor::VisitLoad(n);
    }
    void VisitStore(const StoreNode* n) override {
      bad.insert(n->buffer.get());
      IRVisitor::VisitStore(n);
    }
  } scan;
  scan.VisitStmt(body);
  for (auto& [b, kr] : k_rows_) {
    auto cp = scan.copies.find(b);
    int64_t K = 0, N = 0;
    const int64_t e = b->dtype.bytes();
    if (scan.bad.count(b) || cp == scan.copies.end() || b->shape.size() != 2 || (e != 1 && e != 2) ||
        !AsConstInt(b->shape[0], &K) || !AsConstInt(b->shape[1], &N))
      continue;
    bool ok = true;
    for (const CopyNode* c : cp->second) {
      auto sd = TileDims(c->src), dd = TileDims(c->dst);
      ok = ok && c->src.buffer->scope == Scope::kGlobal && sd.size() == 2 &&
           sd[1] == c->src.ranges.size() - 1 && dd == std::vector<size_t>{0, 1} &&
           IsConstInt(Simplify(c->dst.ranges[0].min), 0) && IsConstInt(Simplify(c->dst.ranges[1].min), 0) &&
           IsConstInt(Simplify(c->dst.ranges[0].extent), K) &&
           IsConstInt(Simplify(c->dst.ranges[1].extent), N);
    }
    // rows of k (N of them, K e bytes each) that share 128-byte lines two or four to a line, or fill whole
    // ones: else neither the XOR swizzle nor KTransposedOffset keeps the reads conflict-free
    const int64_t row = K * e;
    if (!ok || row < 32 || (row < 128 && 128 % row) || (row >= 128 && row % 128)) continue;
    // The block shape: c columns a global load (8 or 16 bytes), q k a store (4, 8 or 16 bytes); the blocks of
    // the tile a multiple of the threads (no guard), the fewest instructions a value ((q + c) / (q c)), then
    // the wider loads.
    KTransposed best;
    for (int64_t cb : {16, 8})
      for (int64_t qb : {16, 8, 4}) {
        const int64_t c = cb / e, q = qb / e;
        if (K % q || N % c || (K / q) * (N / c) % T_) continue;
        if (!best.c || (q + c) * best.q * best.c < (best.q + best.c) * q * c) best = {c, q};
      }
    if (best.c) k_transposed_[b] = best;
  }
}

// The tile is [N, K] with the 16-byte-chunk XOR swizzle of its rows (SwizzledOffset), which keeps the MFMA's
// 16-byte reads (8 lanes a pass: 8 consecutive rows n, the same k chunk) on distinct banks. Where rows are
// shorter than a 128-byte line (L = 2 or 4 a line), a copy's store pass (lanes of one column index, blocks of
// consecutive k first, then the next column block: rows c apart, c a multiple of 4) would put its rows in the
// same part of their lines: row n is stored at n ^ ((n / c) % L), which gives rows c apart distinct parts of
// the line and, the xor being under 4, maps each aligned group of 8 rows onto itself (the reads' rows stay the
// same set).
Expr GpuTileLowerer::KTransposedOffset(const Expr& k, const Expr& n, int64_t K, int elem_bytes, int64_t c) {
  const int64_t L = K * elem_bytes < 128 ? 128 / (K * elem_bytes) : 1;
  Expr row = n;
  if (L > 1) {
    Expr x = Simplify(Mod(Div(n, c), L));
    int64_t nv, xv;
    row = AsConstInt(Simplify(n), &nv) && AsConstInt(x, &xv)
              ? C(nv ^ xv)
              : Call(DataType::Int(32), "tl.bitwise_xor", {n, x});
  }
  return SwizzledOffset(row, k, K, elem_bytes);
}

bool GpuTileLowerer::HalfSwappedTile(const BufferNode* b) const {
  if (half_swap_.count(b)) return true;
  for (auto& [orig, mapped] : bmap_)
    if (mapped.get() == b) return half_swap_.count(orig) > 0;
  return false;
}

}  // namespace gpu_lowering
}  // namespace tl
