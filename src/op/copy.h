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
  TmaCopyNode(Region s, Region d, Expr bar, bool cluster, Span sp, bool fp4 = false)
      : TileOpNode(kOp, std::move(sp)),
        src(std::move(s)),
        dst(std::move(d)),
        barrier(std::move(bar)),
        cluster_barrier(cluster),
        fp4_padded(fp4) {}
  const Region src, dst;
  const Expr barrier;  // an element of a T.alloc_barrier buffer
  // the barrier is a T.alloc_cluster_barrier one: TileLang's 2-CTA load (the pair's even block expects both
  // blocks' bytes on its barrier, and both copies complete there; the tcgen05 family)
  const bool cluster_barrier;
  // src is a float4_e2m1fn tensor stored two values a byte (uint8 [..., K / 2]) and dst a uint8 tile [..., K]
  // in the tensor cores' padded form (Tcgen05GemmNode::fp4): each 8 bytes of the source fill the first 8 of
  // 16 (the TMA format 16U4_ALIGN16B). Set by PadFp4TilesCUDA; the regions' last ranges are in bytes of each.
  const bool fp4_padded;
  /// The copy as TMA plans it: for fp4_padded, from a view of the source of one byte a value (its slots),
  /// the same shape as the destination; otherwise itself.
  CopyNode PlanCopy() const;

  std::vector<std::pair<const Region*, Access>> Regions() const override;
  std::vector<Expr> Exprs() const override { return {barrier}; }
  Stmt WithOperands(std::vector<Region> regions, std::vector<Expr> exprs) const override;
  std::vector<int64_t> Attrs() const override { return {cluster_barrier, fp4_padded}; }
  TileOpCall Call() const override;
  void Check() const override;
};

}  // namespace tl
