// The tile-op lowering to loop nests (LowerTileOpsCPU, src/transform/cpu/lower_tile_ops_cpu.cc): the CPU
// target's lowering of every tile op, and the loop nests the GPU lowering gives copies, fills and tile
// atomics (TileOpToParallelLoops). A block runs on one core, so a tile op becomes a loop nest over its
// region (T.Parallel-style loops the host compiler vectorises); gemm becomes a call of the register-blocked
// micro-kernel in tl_device/cpu/gemm.h. Each op's lowering is in its own file in this folder and registers
// itself by name (TileOpNode::op) with a CpuOpLoweringRegistrar; the shared helpers are tile_lowerer.cc.
#pragma once
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <string>

#include "arith/simplify.h"
#include "ir/functor.h"
#include "op/reduce_math.h"

namespace tl {
namespace cpu_lowering {

// Indices of the dims of a region whose extent is not 1 (the tile's own axes).
inline std::vector<size_t> TileDims(const Region& r) {
  std::vector<size_t> d;
  for (size_t i = 0; i < r.ranges.size(); ++i)
    if (!IsConstInt(r.ranges[i].extent, 1)) d.push_back(i);
  return d;
}

// A condition that the index lies inside the buffer (only for global buffers, whose tiles may
// overhang the tensor at either end: a tile may start before it, at a negative row or column; on-chip
// buffers are sized by their tiles). The bounds the simplifier proves fold away later.
inline Expr InBounds(const Buffer& b, const std::vector<Expr>& idx) {
  if (b->scope != Scope::kGlobal) return nullptr;
  Expr cond;
  for (size_t i = 0; i < idx.size(); ++i)
    for (Expr c : {Binary(BinaryOp::kGE, idx[i], Int(0)), Binary(BinaryOp::kLT, idx[i], b->shape[i])})
      cond = cond ? Binary(BinaryOp::kAnd, cond, c) : c;
  return cond;
}

inline Expr Zero(DataType t) { return t.is_float() ? FloatImm(t, 0.0) : IntImm(t, 0); }

// Base of the CPU GEMM rewrites' scans: any reference to a buffer that a scan does not recognise
// disqualifies it, and so does being a view (T.reshape, T.view) or viewed by one, since those keep
// their plain storage. Scans visit the regions they recognise with VisitRanges (indices only).
struct TileUseScan : IRVisitor {
  std::set<const BufferNode*> cand, bad;
  void VisitBuffer(const Buffer& b) override {
    for (const BufferNode* v = b.get(); v; v = v->data.get()) bad.insert(v);
  }
  void VisitRanges(const Region& r) {
    for (auto& rg : r.ranges) {
      VisitExpr(rg.min);
      VisitExpr(rg.extent);
    }
  }
  // Candidates: the kernel's on-chip 2-D buffers (`keep` filters them); views among the
  // allocations disqualify what they view.
  void Seed(const KernelNode* n, const std::function<bool(const Buffer&)>& keep) {
    for (auto& b : n->alloc_buffers)
      if (b->scope != Scope::kGlobal && b->shape.size() == 2 && keep(b)) cand.insert(b.get());
    for (auto& b : n->alloc_buffers)
      if (b->data) VisitBuffer(b);
  }
};

// "file:line" of a span, for kernel.choices.
inline std::string SpanLine(const Span& s) {
  return s.defined() ? s.file + ":" + std::to_string(s.line) : "<unknown>";
}

class CpuTileLowerer : public IRMutator {
 public:
  /// split_tiles: a copy whose tile lies inside the tensor at run time takes an unguarded loop
  /// nest (which the host compiler vectorises); only edge tiles pay for per-element guards.
  explicit CpuTileLowerer(bool split_tiles = false) : split_tiles_(split_tiles) {}

  // Each op's lowering is registered by name (RegisterCpuOpLowering); an op without one is an error.
  Stmt VisitTileOp(const Stmt& s) override;

  // ---- what op lowerings use -----------------------------------------------------------------
  // Loop vars over `extents`, innermost last; body gets one index expr per extent.
  Stmt Nest(const std::vector<Expr>& extents, const Span& span,
            const std::function<Stmt(const std::vector<Expr>&)>& body, ForKind kind = ForKind::kParallel);

  // Index into region r for tile coordinates `t` (one per tile dim of r).
  static std::vector<Expr> At(const Region& r, const std::vector<size_t>& dims, const std::vector<Expr>& t);

  static Expr Guarded(const Buffer& b, const std::vector<Expr>& idx, DataType t);
  static Stmt GuardedStore(const Buffer& b, Expr v, const std::vector<Expr>& idx, const Span& sp);

  // ---- B tiles packed by their copies (PackGemmTilesCPU's `tl.cpu_packed_b`) ----------------
  struct PackedB {
    Buffer tile;    // the tile as the program declares it (K x N, or N x K for trans_B)
    Buffer panels;  // its float panels: K x roundup(N, 32) elements
    bool trans;
  };
  Stmt VisitKernel(const Stmt& s, const KernelNode* n) override;
  Stmt VisitAttr(const Stmt& s, const AttrStmtNode* n) override;
  Buffer VisitBuffer(const Buffer& b) override;
  static Expr AddressOf(const Buffer& b, std::vector<Expr> idx);

  // The whole tile of a global region lies inside its tensor (null for on-chip buffers).
  static Expr TileInside(const Region& r);
  // Row stride of the last-but-one tile dim of a region's buffer (buffers are dense row-major).
  static Expr LeadingDim(const Region& r, size_t dim);

  // The built-in ops' lowerings are free functions, one file each in this folder (lower_copy.cc, lower_fill.cc,
  // lower_gemm.cc, lower_reduce.cc, lower_atomic_add.cc, lower_cumsum.cc), registered with
  // CpuOpLoweringRegistrar below; they use the members above.

  bool split_tiles_ = false;
  std::map<const BufferNode*, PackedB> packed_;
  std::map<const BufferNode*, std::pair<Expr, Expr>> cached_;  // tile -> (cache id, slot) where bound
};

using CpuOpLowering = std::function<Stmt(CpuTileLowerer&, const TileOpNode&)>;
void RegisterCpuOpLowering(const std::string& op, CpuOpLowering f);
struct CpuOpLoweringRegistrar {
  CpuOpLoweringRegistrar(const std::string& op, CpuOpLowering f) { RegisterCpuOpLowering(op, std::move(f)); }
};

}  // namespace cpu_lowering
}  // namespace tl
