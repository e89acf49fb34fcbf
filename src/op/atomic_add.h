// T.atomic_add: dst += src (a tile), or dst[point] += value (a scalar), atomically with respect to
// other blocks.
#pragma once
#include "ir/stmt.h"

namespace tl {

/// The combine an atomic applies: T.atomic_add, T.atomic_max, T.atomic_min. All three are this node
/// (op name "atomic_add", so every backend's lowering of it sees them); `kind` tells them apart.
enum class AtomicKind : int { kAdd = 0, kMax = 1, kMin = 2 };
/// "add", "max", "min": the suffix of the DSL name (T.atomic_<suffix>) and of the lowered calls
/// (`atomic_<suffix>` on the CPU, `tl.atomic_<suffix>` on the GPU targets).
const char* AtomicSuffix(AtomicKind k);

struct AtomicAddNode : TileOpNode {
  static constexpr const char kOp[] = "atomic_add";
  bool SelfContained() const override { return true; }
  AtomicAddNode(Region d, std::optional<Region> s, Expr v, Span sp, AtomicKind k = AtomicKind::kAdd,
                bool tma = false)
      : TileOpNode(kOp, std::move(sp)), dst(std::move(d)), src(std::move(s)), value(std::move(v)), kind(k),
        use_tma(tma) {}
  const Region dst;
  const std::optional<Region> src;
  const Expr value;  // set when src is empty
  const AtomicKind kind;
  /// T.atomic_add(dst, src_shared, use_tma=True): a tile of shared memory added into global memory by TMA
  /// reductions (cp.reduce.async.bulk.tensor .add) where the target has TMA; element-wise atomics elsewhere.
  const bool use_tma;
  /// `atomic_<add|max|min>`, the call the lowerings emit (prefixed `tl.` on the GPU targets).
  std::string CallName() const { return std::string("atomic_") + AtomicSuffix(kind); }
  std::vector<int64_t> Attrs() const override { return {static_cast<int64_t>(kind), use_tma}; }

  std::vector<std::pair<const Region*, Access>> Regions() const override;
  std::vector<Expr> Exprs() const override;
  Stmt WithOperands(std::vector<Region> regions, std::vector<Expr> exprs) const override;
  TileOpCall Call() const override;
  void Check() const override;
};

}  // namespace tl
