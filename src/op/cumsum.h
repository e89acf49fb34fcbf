// T.cumsum(src, dst, dim, reverse): an inclusive scan of a tile along one dim.
#pragma once
#include "ir/stmt.h"

namespace tl {

struct CumsumNode : TileOpNode {
  static constexpr const char kOp[] = "cumsum";
  CumsumNode(Region s, Region d, int dm, bool r, Span sp)
      : TileOpNode(kOp, std::move(sp)), src(std::move(s)), dst(std::move(d)), dim(dm), reverse(r) {}
  const Region src, dst;
  const int dim;
  const bool reverse;

  std::vector<std::pair<const Region*, Access>> Regions() const override;
  Stmt WithOperands(std::vector<Region> regions, std::vector<Expr> exprs) const override;
  std::vector<int64_t> Attrs() const override;
  TileOpCall Call() const override;
  void Check() const override;
  /// Whether the scan runs along the last axis of operands that are whole buffers and has at least two
  /// lines: then a fragment operand is dealt to threads a line each (striped by the line length) and
  /// each thread scans its own lines, instead of every thread holding and scanning the whole tile.
  /// (A one-row tile stays replicated: its copies are partitioned along the row, which a
  /// line-per-thread layout would contradict.)
  bool ScansWholeLastAxisLines(int64_t threads) const;
  /// How many threads own the lines then (0: not scanned by lines): all of them when there are at
  /// least as many lines, else the largest divisor of the block's threads not above the line count;
  /// the other threads hold replicas of the owners' lines (thread t those of t % owners).
  int64_t LineOwners(int64_t threads) const;
};

}  // namespace tl
