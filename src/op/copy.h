// T.copy(src, dst): moves a tile between any two memory scopes, converting the dtype on the way.
#pragma once
#include "ir/stmt.h"

namespace tl {

struct CopyNode : TileOpNode {
  static constexpr const char kOp[] = "copy";
  CopyNode(Region s, Region d, bool no_tma, Span sp)
      : TileOpNode(kOp, std::move(sp)), src(std::move(s)), dst(std::move(d)), disable_tma(no_tma) {}
  const Region src, dst;
  const bool disable_tma;

  std::vector<std::pair<const Region*, Access>> Regions() const override;
  Stmt WithOperands(std::vector<Region> regions, std::vector<Expr> exprs) const override;
  std::vector<int64_t> Attrs() const override;
  TileOpCall Call() const override;
  void Check() const override;
};

/// T.tma_copy(src, dst, barrier): TileLang's explicit TMA load (sm_90+, global -> shared). One thread adds
/// the tile's bytes to `barrier`'s expected transactions (mbarrier.expect_tx, no arrival) and issues the
/// copy; nothing waits: the program arrives and waits with T.mbarrier_* (docs/hopper.md).
struct TmaCopyNode : TileOpNode {
  static constexpr const char kOp[] = "tma_copy";
  bool SelfContained() const override { return true; }
  TmaCopyNode(Region s, Region d, Expr bar, bool cluster, Span sp, int format = 0)
      : TileOpNode(kOp, std::move(sp)),
        src(std::move(s)),
        dst(std::move(d)),
        barrier(std::move(bar)),
        cluster_barrier(cluster),
        format(format) {}
  const Region src, dst;
  const Expr barrier;  // an element of a T.alloc_barrier buffer
  // the barrier is a T.alloc_cluster_barrier one: TileLang's 2-CTA load (the pair's even block expects both
  // blocks' bytes on its barrier, and both copies complete there; the tcgen05 family)
  const bool cluster_barrier;
  // A sub-byte format (set by PadFp4TilesCUDA; the regions' last ranges are in bytes of each side): src is a
  // tensor of 16-value groups packed in 8 (format 1: float4_e2m1fn, uint8 [..., K / 2]) or 12 bytes (format
  // 2: fp6, uint8 [..., 3 K / 4]) and dst a uint8 tile [..., K] in the tensor cores' padded form
  // (Tcgen05GemmNode::fp4): each group fills the first 8 / 12 of 16 bytes (the TMA formats 16U4_ALIGN16B /
  // 16U6_ALIGN16B). 0: none.
  const int format;
  /// The copy as TMA plans it: with a format, from a view of the source of one byte a value (its slots), the
  /// same shape as the destination; otherwise itself.
  CopyNode PlanCopy() const;

  std::vector<std::pair<const Region*, Access>> Regions() const override;
  std::vector<Expr> Exprs() const override { return {barrier}; }
  Stmt WithOperands(std::vector<Region> regions, std::vector<Expr> exprs) const override;
  std::vector<int64_t> Attrs() const override { return {cluster_barrier, format}; }
  TileOpCall Call() const override;
  void Check() const override;
};

/// T.tma_gather4(src, dst, col, rows, barrier=) / T.tma_scatter4(src, dst, col, rows) (TileLang's, the
/// tcgen05 family: cp.async.bulk.tensor.2d ... tile::gather4 / tile::scatter4): four rows (`rows`, any four
/// indices of the global tensor's rows) of a 2-d global tensor, columns [col, col + K), to or from a
/// row-major [4, K] shared tile. A gather completes `barrier`'s transaction bytes (4 K elements' bytes:
/// T.tma_gather4_bytes); a scatter joins the thread's bulk group (T.tma_store_arrive / T.tma_store_wait). As
/// in TileLang, the op is issued by every thread that reaches it: the program elects one (T.shuffle_elect).
struct Tma4Node : TileOpNode {
  bool SelfContained() const override { return true; }
  Tma4Node(Region g, Region t, Expr col, std::vector<Expr> rows, Expr bar, bool scatter, Span sp)
      : TileOpNode(scatter ? "tma_scatter4" : "tma_gather4", std::move(sp)),
        global(std::move(g)),
        tile(std::move(t)),
        col(std::move(col)),
        rows(std::move(rows)),
        barrier(std::move(bar)),
        scatter(scatter) {}
  const Region global, tile;
  const Expr col;
  const std::vector<Expr> rows;  // four
  const Expr barrier;            // the gather's mbarrier element; null for a scatter
  const bool scatter;
  std::vector<std::pair<const Region*, Access>> Regions() const override {
    if (scatter) return {{&tile, Access::kRead}, {&global, Access::kWrite}};
    return {{&global, Access::kRead}, {&tile, Access::kWrite}};
  }
  std::vector<Expr> Exprs() const override;
  std::vector<int64_t> Attrs() const override { return {scatter}; }
  std::vector<const Region*> RowMajorShared() const override { return {&tile}; }
  Stmt WithOperands(std::vector<Region> regions, std::vector<Expr> exprs) const override;
  TileOpCall Call() const override;
  void Check() const override;
};

}  // namespace tl
