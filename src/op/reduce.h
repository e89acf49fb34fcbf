// T.reduce_{sum,max,min,abssum,absmax}(src, dst, dim, clear): a tile reduced along one dim.
#pragma once
#include "ir/stmt.h"

namespace tl {

enum class ReduceKind : uint8_t { kSum, kMax, kMin, kAbsSum, kAbsMax };
const char* ReduceKindName(ReduceKind k);

struct ReduceNode : TileOpNode {
  static constexpr const char kOp[] = "reduce";
  ReduceNode(ReduceKind k, Region s, Region d, int dm, bool c, Span sp)
      : TileOpNode(kOp, std::move(sp)),
        reduce_kind(k),
        src(std::move(s)),
        dst(std::move(d)),
        dim(dm),
        clear(c) {}
  const ReduceKind reduce_kind;
  const Region src, dst;
  const int dim;  // normalised to be non-negative
  const bool clear;

  std::vector<std::pair<const Region*, Access>> Regions() const override;
  Stmt WithOperands(std::vector<Region> regions, std::vector<Expr> exprs) const override;
  std::vector<int64_t> Attrs() const override;
  TileOpCall Call() const override;
  void Check() const override;
};

}  // namespace tl
