// T.fill(dst, value) / T.clear(dst): every element of a tile set to one value.
#pragma once
#include "ir/stmt.h"

namespace tl {

struct FillNode : TileOpNode {
  static constexpr const char kOp[] = "fill";
  FillNode(Region d, Expr v, Span s)
      : TileOpNode(kOp, std::move(s)), dst(std::move(d)), value(std::move(v)) {}
  const Region dst;
  const Expr value;

  std::vector<std::pair<const Region*, Access>> Regions() const override;
  std::vector<Expr> Exprs() const override { return {value}; }
  Stmt WithOperands(std::vector<Region> regions, std::vector<Expr> exprs) const override;
  TileOpCall Call() const override;
};

}  // namespace tl
