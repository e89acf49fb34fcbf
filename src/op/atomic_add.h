// T.atomic_add: dst += src (a tile), or dst[point] += value (a scalar), atomically with respect to
// other blocks.
#pragma once
#include "ir/stmt.h"

namespace tl {

struct AtomicAddNode : TileOpNode {
  static constexpr const char kOp[] = "atomic_add";
  AtomicAddNode(Region d, std::optional<Region> s, Expr v, Span sp)
      : TileOpNode(kOp, std::move(sp)), dst(std::move(d)), src(std::move(s)), value(std::move(v)) {}
  const Region dst;
  const std::optional<Region> src;
  const Expr value;  // set when src is empty

  std::vector<std::pair<const Region*, Access>> Regions() const override;
  std::vector<Expr> Exprs() const override;
  Stmt WithOperands(std::vector<Region> regions, std::vector<Expr> exprs) const override;
  TileOpCall Call() const override;
  void Check() const override;
};

}  // namespace tl
