// Layouts a program gives with T.annotate_layout: a T.Layout for a shared tile (logical index ->
// physical index) and a T.Fragment for a register tile (element -> thread, local). The front end
// traces the user's Python functions into expressions over placeholder vars; this file checks
// them by enumerating the (small, constant) tile and builds what the lowering needs: the flat
// physical offset of a shared element, and a Fragment with its inverse map (thread, local) ->
// element, found by fitting mixed-radix digit expressions to the enumerated table.
#pragma once
#include <string>
#include <vector>

#include "layout/fragment.h"
#include "support/error.h"

namespace tl {

/// A user's shared-memory layout: logical index -> physical index (any rank), flattened row-major
/// over the physical extents (each the largest value it takes + 1).
struct SharedLayout {
  std::vector<int64_t> shape;       // the logical tile
  std::vector<Var> vars;            // placeholders, one per logical dim
  std::vector<Expr> phys;           // the physical index, over vars
  std::vector<int64_t> phys_shape;  // extents of the physical dims
  int64_t size = 0;                 // elements the tile occupies (product of phys_shape)
  /// The largest power of two v such that every v-aligned run of v elements along the last logical
  /// dim is v adjacent, v-aligned physical elements (what vector copies and ldmatrix rows need).
  int64_t contiguous = 1;
  std::string desc;

  bool defined() const { return !shape.empty(); }
  /// The flat physical offset of element `idx`.
  Expr Offset(const std::vector<Expr>& idx) const;
};

/// Checks the layout over its tile (every element lands at a distinct, non-negative physical index)
/// and measures it; throws UserError(kLayout) at `sp` naming `buffer` otherwise.
SharedLayout MakeSharedLayout(const std::string& buffer, const std::vector<int64_t>& shape,
                              const std::vector<Var>& vars, const std::vector<Expr>& phys, const Span& sp);
/// The IR value of a shared layout, `T.shared_layout(desc, T.list(shape), T.list(vars), T.list(phys))`
/// (the attr "tl.user_layout" of a shared buffer), and back.
Expr SharedLayoutToExpr(const SharedLayout& l);
SharedLayout SharedLayoutFromExpr(const Expr& e);

/// A user's fragment layout: element `vars` held by thread `thread` (over vars and, when
/// `replicate` > 1, `rep` in [0, replicate)) at register `local` (over vars; null: the thread's
/// elements numbered densely in row-major order). Kind "user". Throws UserError(kLayout) at `sp`
/// when two elements share a (thread, register) slot, threads hold different numbers of elements,
/// or the inverse map is not a sum of mixed-radix digits of the thread and register indices.
Fragment MakeUserFragment(const std::string& buffer, const std::vector<int64_t>& shape,
                          const std::vector<Var>& vars, const Var& rep, int64_t replicate, const Expr& thread,
                          const Expr& local, const Span& sp);

/// `f` spread over a block of `threads` threads: f itself when it uses that many; when it uses a
/// divisor of them, each further group of f.threads threads holds another copy (more replicas).
/// Throws UserError(kLayout) at `sp` when f needs more threads than the block has, or a non-divisor.
Fragment FragmentOverThreads(const Fragment& f, int64_t threads, const std::string& buffer, const Span& sp);

/// Fits g(x) = g(0) + sum over input dims d and their digits k of ((x_d / R_dk) % r_dk) * delta_dk to
/// the table of g over [0, ext_0) x ... (row-major, `outs` values per point). On success `out` holds
/// one expression per output over `in`; false when the table is not of that form.
bool FitMixedRadix(const std::vector<int64_t>& ext, const std::vector<std::vector<int64_t>>& table,
                   size_t outs, const std::vector<Expr>& in, std::vector<Expr>* out);

}  // namespace tl
