// T.tcgen05_gemm (TileLang's explicit Blackwell gemm): C (tensor memory, T.alloc_tmem) = A @ B (+ C), A and B
// shared tiles, issued by one thread as tcgen05.mma and asynchronous; `mbar` (an mbarrier element, or none)
// receives one arrival when it completes. Lowered on the tcgen05 family only
// (src/target/cuda/lower_tcgen05.cc).
#pragma once
#include "ir/stmt.h"

namespace tl {

struct Tcgen05GemmNode : TileOpNode {
  static constexpr const char kOp[] = "tcgen05_gemm";
  Tcgen05GemmNode(Region a, Region b, Region c, bool ta, bool tb, Expr mbar, Expr clear, bool two_cta, Span s)
      : TileOpNode(kOp, std::move(s)),
        A(std::move(a)),
        B(std::move(b)),
        C(std::move(c)),
        trans_A(ta),
        trans_B(tb),
        mbar(std::move(mbar)),
        clear_accum(std::move(clear)),
        use_2cta(two_cta) {}
  const Region A, B, C;
  const bool trans_A, trans_B;
  const Expr mbar;         // the mbarrier element the commit arrives on; null: no commit
  const Expr clear_accum;  // bool: overwrite C instead of accumulating (a kernel expression, e.g. k == 0)
  // cta_group::2: a CTA pair computes a 256 x N tile (each block 128 rows of A and C, N / 2 columns of B);
  // the pair's even block issues
  const bool use_2cta;

  std::vector<std::pair<const Region*, Access>> Regions() const override {
    return {{&A, Access::kRead}, {&B, Access::kRead}, {&C, Access::kReadWrite}};
  }
  std::vector<Expr> Exprs() const override {
    std::vector<Expr> e{clear_accum};
    if (mbar) e.push_back(mbar);
    return e;
  }
  Stmt WithOperands(std::vector<Region> regions, std::vector<Expr> exprs) const override;
  std::vector<int64_t> Attrs() const override { return {trans_A, trans_B, mbar != nullptr, use_2cta}; }
  TileOpCall Call() const override;
  void Check() const override;
};

/// T.tcgen05_mma_arrive(mbar): one thread (the one that issues single-thread work where the call stands: the
/// first of its branch's threads) commits its earlier tcgen05.mma to the mbarrier, which receives one arrival
/// when they complete (tcgen05.commit). TileLang's warp-specialised Blackwell kernels signal the epilogue
/// with it. arrive_2cta: the commit of 2-CTA MMAs, by the pair's even block, arriving in both blocks.
struct Tcgen05MmaArriveNode : TileOpNode {
  static constexpr const char kOp[] = "tcgen05_mma_arrive";
  Tcgen05MmaArriveNode(Expr mbar, bool two_cta, Span s)
      : TileOpNode(kOp, std::move(s)), mbar(std::move(mbar)), arrive_2cta(two_cta) {}
  const Expr mbar;
  const bool arrive_2cta;
  std::vector<int64_t> Attrs() const override { return {arrive_2cta}; }
  std::vector<std::pair<const Region*, Access>> Regions() const override { return {}; }
  std::vector<Expr> Exprs() const override { return {mbar}; }
  Stmt WithOperands(std::vector<Region>, std::vector<Expr> exprs) const override {
    return std::make_shared<Tcgen05MmaArriveNode>(exprs.at(0), arrive_2cta, span);
  }
  TileOpCall Call() const override {
    TileOpCall c{"tcgen05_mma_arrive", {{TileOpArg::kExpr, nullptr, mbar}}, {}};
    if (arrive_2cta) c.keywords.emplace_back("arrive_2cta", "True");
    return c;
  }
  void Check() const override;
};

}  // namespace tl
