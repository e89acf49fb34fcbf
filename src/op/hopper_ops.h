// Hopper tile ops (docs/hopper.md). T.wait_wgmma(n): waits until at most n of the warp group's
// committed wgmma groups are pending (wgmma.wait_group n). Pairs with T.gemm(..., wg_wait=-1) /
// T.wgmma_gemm, whose accumulator is not ready before the wait. Targets whose gemm is synchronous
// lower it to nothing.
#pragma once
#include "ir/stmt.h"

namespace tl {

struct WaitWgmmaNode : TileOpNode {
  static constexpr const char kOp[] = "wait_wgmma";
  bool SelfContained() const override { return true; }
  WaitWgmmaNode(int64_t pending, Span s) : TileOpNode(kOp, std::move(s)), n(pending) {}
  const int64_t n;

  std::vector<std::pair<const Region*, Access>> Regions() const override { return {}; }
  Stmt WithOperands(std::vector<Region>, std::vector<Expr>) const override {
    return std::make_shared<WaitWgmmaNode>(n, span);
  }
  std::vector<int64_t> Attrs() const override { return {n}; }
  TileOpCall Call() const override;
  void Check() const override;
};

}  // namespace tl
