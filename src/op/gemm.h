// T.gemm(A, B, C): C += A @ B on tiles (optionally transposed), split over the block's warps by a
// policy.
#pragma once
#include "ir/stmt.h"

namespace tl {

enum class GemmWarpPolicy : uint8_t { kSquare, kFullRow, kFullCol };

struct GemmNode : TileOpNode {
  static constexpr const char kOp[] = "gemm";
  GemmNode(Region a, Region b, Region c, bool ta, bool tb, GemmWarpPolicy p, bool clear, int kp, Span s,
           int wgw = 0, bool need_wgmma = false, const char* op = kOp)
      : TileOpNode(op, std::move(s)),
        A(std::move(a)),
        B(std::move(b)),
        C(std::move(c)),
        trans_A(ta),
        trans_B(tb),
        policy(p),
        clear_accum(clear),
        k_pack(kp),
        wg_wait(wgw),
        require_wgmma(need_wgmma) {}
  const Region A, B, C;
  const bool trans_A, trans_B;
  const GemmWarpPolicy policy;
  const bool clear_accum;
  const int k_pack;
  // wgmma (sm_90a; docs/hopper.md): wait_group argument after the gemm's commit (-1: no wait, the
  // accumulator is ready after a later T.wait_wgmma); T.wgmma_gemm sets require_wgmma (an error,
  // not a fallback, when the gemm cannot use wgmma).
  const int wg_wait;
  const bool require_wgmma;

  std::vector<std::pair<const Region*, Access>> Regions() const override;
  Stmt WithOperands(std::vector<Region> regions, std::vector<Expr> exprs) const override;
  std::vector<int64_t> Attrs() const override;
  TileOpCall Call() const override;
  void Check() const override;
  /// K values an element of operand A (is_b: B) holds: 1, or 2 for the e2m1 codes two a byte that a
  /// block-scaled gemm may take (GemmBlockScaledNode::PackedA / PackedB). K extents count values.
  virtual int64_t ValuesPerElement(bool /*is_b*/) const { return 1; }
};

}  // namespace tl
