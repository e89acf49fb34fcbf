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

}  // namespace tl
