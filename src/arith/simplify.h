// Arithmetic simplifier for index expressions: constant folding, canonical affine sums,
// floordiv/floormod by constants, and bound-based folding of comparisons, min and max.
#pragma once
#include <map>
#include <optional>

#include "ir/function.h"

namespace tl {

/// Closed integer interval; unbounded ends are std::nullopt.
struct Interval {
  std::optional<int64_t> lo, hi;
  bool IsConst() const { return lo && hi && *lo == *hi; }
};

/// Known ranges of vars (loop vars, block indices, thread indices).
using BoundMap = std::map<const VarNode*, Interval>;

/// The interval an integer expression lies in, given the bounds of its vars.
Interval BoundOf(const Expr& e, const BoundMap& bounds);

/// The range of a loop var running over [min, min + extent): min's lower bound up to the smaller of min's and
/// extent's upper bounds added and the bound of min + extent simplified (a loop from `first` to a constant,
/// written `for i in T.serial(first, n)`, has extent n - first: its var is below n whatever `first` is).
Interval LoopVarRange(const Expr& min, const Expr& extent, const BoundMap& bounds);

/// Simplifies an expression. Integer sums come out in a canonical order, so that two
/// expressions equal as affine forms simplify to structurally equal results.
Expr Simplify(const Expr& e, const BoundMap& bounds = {});

/// Simplifies every expression of a statement, using loop ranges as bounds; folds branches on
/// constant conditions and drops empty loops.
Stmt Simplify(const Stmt& s, const BoundMap& bounds = {});
PrimFunc Simplify(const PrimFunc& f);

/// True when `a` and `b` can be proven equal (their difference simplifies to zero).
bool ProveEqual(const Expr& a, const Expr& b, const BoundMap& bounds = {});

}  // namespace tl
