// T.mma_gemm_blockscaled (TileLang's block-scaled gemm): C (+)= (A * sa) @ (B * sb) on tiles, where every
// `sf_a_granularity_k` consecutive K elements of a row of A share one scale from SFA (and likewise B's
// columns from SFB): the microscaling (MX) formats' E8M0 scales, stored as uint8 (2^(s - 127); 255 is NaN).
// The scale of A[m][k] (k within the tile) is SFA[m][j] with j = k / g when SFA holds the tile's K / g
// groups, else j = (k_start + k) / g (SFA spans the whole K). SFB is indexed by B's columns the same way:
// SFB[n][j]. A gemm of its own op name, so that no lowering of T.gemm takes it and drops the scales: lowered
// on AMD CDNA4 (the scaled MFMAs, src/target/hip/lower_gemm_mfma.cc) and on the CPU
// (src/transform/cpu/lower_gemm_blockscaled.cc); elsewhere it has no lowering and says so.
#pragma once
#include "op/gemm.h"

namespace tl {

struct GemmBlockScaledNode : GemmNode {
  static constexpr const char kOp[] = "gemm_blockscaled";
  GemmBlockScaledNode(Region a, Region b, Region c, Region sfa, Region sfb, bool ta, bool tb,
                      GemmWarpPolicy p, bool clear, int gran_a, int gran_b, Expr k_start, Span s)
      : GemmNode(std::move(a), std::move(b), std::move(c), ta, tb, p, clear, 1, std::move(s), 0, false, kOp),
        SFA(std::move(sfa)),
        SFB(std::move(sfb)),
        gran_a(gran_a),
        gran_b(gran_b),
        k_start(std::move(k_start)) {}
  const Region SFA, SFB;
  const int gran_a, gran_b;  // K elements per scale
  const Expr k_start;        // the tile's first K index (int32)

  /// The column of SFA (is_b: SFB) holding the scale of tile-local K index `k`.
  Expr ScaleColumn(bool is_b, const Expr& k) const;

  std::vector<std::pair<const Region*, Access>> Regions() const override;
  std::vector<Expr> Exprs() const override { return {k_start}; }
  Stmt WithOperands(std::vector<Region> regions, std::vector<Expr> exprs) const override;
  std::vector<int64_t> Attrs() const override;
  TileOpCall Call() const override;
  void Check() const override;
};

}  // namespace tl
