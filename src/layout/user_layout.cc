// User layouts from T.annotate_layout; see user_layout.h.
#include "layout/user_layout.h"

#include <algorithm>

#include "arith/eval.h"
#include "arith/simplify.h"
#include "ir/functor.h"
#include "ir/index_expr.h"
#include "ir/printer.h"
#include "layout/ir_value.h"

namespace tl {
namespace {

using namespace index_expr;

std::string Point(const std::vector<int64_t>& p) {
  std::string r = "[";
  for (size_t i = 0; i < p.size(); ++i) r += (i ? ", " : "") + std::to_string(p[i]);
  return r + "]";
}
int64_t Product(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (auto v : s) n *= v;
  return n;
}
// Calls fn(point) for every point of [0, ext_0) x ... in row-major order.
template <typename Fn>
void ForEachPoint(const std::vector<int64_t>& ext, Fn fn) {
  int64_t n = Product(ext);
  std::vector<int64_t> p(ext.size(), 0);
  for (int64_t flat = 0; flat < n; ++flat) {
    int64_t rest = flat;
    for (size_t d = ext.size(); d-- > 0;) {
      p[d] = rest % ext[d];
      rest /= ext[d];
    }
    fn(p);
  }
}
// The value of a layout expression at element p; it must be a non-negative integer.
int64_t Eval(const Expr& e, const std::map<const VarNode*, int64_t>& env, const std::string& what,
             const std::string& buffer, const std::vector<int64_t>& p, const Span& sp) {
  int64_t v;
  if (!EvalInt(e, env, &v))
    throw UserError(ErrorKind::kLayout,
                    "T.annotate_layout: the " + what + " of '" + buffer + "' (" + PrintExpr(e) +
                        ") is not an integer function of the element's index",
                    sp);
  if (v < 0)
    throw UserError(ErrorKind::kLayout,
                    "T.annotate_layout: the layout of '" + buffer + "' maps element " + Point(p) +
                        " to a negative " + what + " " + std::to_string(v),
                    sp);
  return v;
}
using namespace ir_value;
constexpr const char* kWhat = "T.shared_layout";

}  // namespace

bool FitMixedRadix(const std::vector<int64_t>& ext, const std::vector<std::vector<int64_t>>& table,
                   size_t outs, const std::vector<Expr>& in, std::vector<Expr>* out) {
  struct Digit {
    size_t dim;
    int64_t R, r;
    std::vector<int64_t> delta;
  };
  size_t nd = ext.size();
  if (table.empty() || static_cast<int64_t>(table.size()) != Product(ext)) return false;
  std::vector<int64_t> stride(nd, 1);
  for (size_t d = nd; d-- > 1;) stride[d - 1] = stride[d] * ext[d];
  const auto& base = table[0];
  auto along = [&](size_t d, int64_t x) -> const std::vector<int64_t>& {
    return table[static_cast<size_t>(x * stride[d])];
  };
  std::vector<Digit> digits;
  for (size_t d = 0; d < nd; ++d) {
    int64_t R = 1;
    while (R < ext[d]) {
      Digit g{d, R, 2, std::vector<int64_t>(outs)};
      for (size_t o = 0; o < outs; ++o) g.delta[o] = along(d, R)[o] - base[o];
      for (;; ++g.r) {
        if (g.r * R >= ext[d]) break;
        bool same = true;
        for (size_t o = 0; o < outs && same; ++o) same = along(d, g.r * R)[o] == base[o] + g.r * g.delta[o];
        if (!same) break;
      }
      digits.push_back(g);
      R *= g.r;
    }
  }
  bool ok = true;
  int64_t flat = 0;
  ForEachPoint(ext, [&](const std::vector<int64_t>& p) {
    if (!ok) return;
    const auto& want = table[static_cast<size_t>(flat++)];
    for (size_t o = 0; o < outs && ok; ++o) {
      int64_t v = base[o];
      for (auto& g : digits) v += (p[g.dim] / g.R) % g.r * g.delta[o];
      ok = v == want[o];
    }
  });
  if (!ok) return false;
  out->assign(outs, nullptr);
  for (size_t o = 0; o < outs; ++o) {
    Expr e = C(base[o]);
    for (auto& g : digits) {
      if (g.delta[o] == 0) continue;
      Expr digit = g.R == 1 ? in[g.dim] : Div(in[g.dim], g.R);
      if (g.R * g.r < ext[g.dim]) digit = Mod(digit, g.r);
      e = e + digit * C(g.delta[o]);
    }
    (*out)[o] = Simplify(e);
  }
  return true;
}

// ---- shared layouts ------------------------------------------------------------------------------

Expr SharedLayout::Offset(const std::vector<Expr>& idx) const {
  std::map<const VarNode*, Expr> m;
  for (size_t d = 0; d < vars.size(); ++d) m[vars[d].get()] = idx[d];
  Expr off = C(0);
  for (size_t k = 0; k < phys.size(); ++k) off = off * C(phys_shape[k]) + Substitute(phys[k], m);
  return Simplify(off);
}

SharedLayout MakeSharedLayout(const std::string& buffer, const std::vector<int64_t>& shape,
                              const std::vector<Var>& vars, const std::vector<Expr>& phys, const Span& sp) {
  if (shape.size() != vars.size() || phys.empty())
    throw UserError(ErrorKind::kLayout,
                    "T.annotate_layout: the layout of '" + buffer + "' must map each of its " +
                        std::to_string(shape.size()) + " indices to a physical index",
                    sp);
  SharedLayout l;
  l.shape = shape;
  l.vars = vars;
  for (auto& e : phys) l.phys.push_back(Simplify(e));
  int64_t n = Product(shape);
  std::vector<std::vector<int64_t>> at;
  at.reserve(static_cast<size_t>(n));
  l.phys_shape.assign(phys.size(), 1);
  std::map<const VarNode*, int64_t> env;
  ForEachPoint(shape, [&](const std::vector<int64_t>& p) {
    for (size_t d = 0; d < p.size(); ++d) env[vars[d].get()] = p[d];
    std::vector<int64_t> q;
    for (auto& e : l.phys) {
      q.push_back(Eval(e, env, "physical index", buffer, p, sp));
    }
    for (size_t k = 0; k < q.size(); ++k) l.phys_shape[k] = std::max(l.phys_shape[k], q[k] + 1);
    at.push_back(std::move(q));
  });
  l.size = Product(l.phys_shape);
  if (l.size > 4 * n)
    throw UserError(ErrorKind::kLayout,
                    "T.annotate_layout: the layout of '" + buffer + "' spreads its " + std::to_string(n) +
                        " elements over " + std::to_string(l.size) +
                        " physical slots (more than 4x); a padded layout may add at most 3 slots per element",
                    sp);
  std::vector<int64_t> flat(static_cast<size_t>(n));
  std::vector<int64_t> owner(static_cast<size_t>(l.size), -1);
  for (int64_t e = 0; e < n; ++e) {
    int64_t off = 0;
    for (size_t k = 0; k < at[e].size(); ++k) off = off * l.phys_shape[k] + at[e][k];
    flat[static_cast<size_t>(e)] = off;
    if (owner[static_cast<size_t>(off)] >= 0) {
      std::vector<int64_t> a(shape.size()), b(shape.size());
      int64_t ra = owner[static_cast<size_t>(off)], rb = e;
      for (size_t d = shape.size(); d-- > 0;) {
        a[d] = ra % shape[d], ra /= shape[d];
        b[d] = rb % shape[d], rb /= shape[d];
      }
      throw UserError(ErrorKind::kLayout,
                      "T.annotate_layout: the layout of '" + buffer + "' puts elements " + Point(a) +
                          " and " + Point(b) + " at the same physical index " + Point(at[e]),
                      sp);
    }
    owner[static_cast<size_t>(off)] = e;
  }
  int64_t last = shape.back();
  l.contiguous = 1;
  for (int64_t v = 2; v <= last && last % v == 0; v *= 2) {
    bool ok = true;
    for (int64_t e = 0; e < n && ok; e += v) {
      int64_t o = flat[static_cast<size_t>(e)];
      ok = o % v == 0;
      for (int64_t k = 1; k < v && ok; ++k) ok = flat[static_cast<size_t>(e + k)] == o + k;
    }
    if (!ok) break;
    l.contiguous = v;
  }
  l.desc = "user layout(" + Dims(shape) + " -> " + Dims(l.phys_shape) + ")";
  return l;
}

Expr SharedLayoutToExpr(const SharedLayout& l) {
  std::vector<Expr> vars(l.vars.begin(), l.vars.end());
  return Call(DataType::Handle(), "shared_layout",
              {StringImm(l.desc), List(Ints(l.shape)), List(vars), List(l.phys), List(Ints(l.phys_shape)),
               IntImm(DataType::Int(64), l.contiguous)});
}

SharedLayout SharedLayoutFromExpr(const Expr& e) {
  auto* c = As<CallNode>(e);
  TL_ICHECK(c && c->op == "shared_layout" && c->args.size() == 6, "malformed T.shared_layout value");
  SharedLayout l;
  l.desc = StrArg(c->args[0], kWhat);
  for (auto& x : ListArgs(c->args[1], kWhat)) l.shape.push_back(IntArg(x, kWhat));
  for (auto& x : ListArgs(c->args[2], kWhat)) l.vars.push_back(VarArg(x, kWhat));
  l.phys = ListArgs(c->args[3], kWhat);
  for (auto& x : ListArgs(c->args[4], kWhat)) l.phys_shape.push_back(IntArg(x, kWhat));
  l.size = Product(l.phys_shape);
  l.contiguous = IntArg(c->args[5], kWhat);
  return l;
}

// ---- fragments -----------------------------------------------------------------------------------

Fragment MakeUserFragment(const std::string& buffer, const std::vector<int64_t>& shape,
                          const std::vector<Var>& vars, const Var& rep, int64_t replicate, const Expr& thread,
                          const Expr& local, const Span& sp) {
  if (shape.size() != vars.size() || !thread || replicate < 1)
    throw UserError(ErrorKind::kLayout, "T.annotate_layout: malformed T.Fragment for '" + buffer + "'", sp);
  int64_t n = Product(shape);
  // (thread, local) of every (element, replica), row-major over the elements.
  std::vector<int64_t> th(static_cast<size_t>(n * replicate)), lo(static_cast<size_t>(n));
  std::map<const VarNode*, int64_t> env;
  int64_t threads = 0, e = 0;
  ForEachPoint(shape, [&](const std::vector<int64_t>& p) {
    for (size_t d = 0; d < p.size(); ++d) env[vars[d].get()] = p[d];
    for (int64_t r = 0; r < replicate; ++r) {
      if (rep) env[rep.get()] = r;
      int64_t t = Eval(thread, env, "thread", buffer, p, sp);
      th[static_cast<size_t>(e * replicate + r)] = t;
      threads = std::max(threads, t + 1);
    }
    if (local) lo[static_cast<size_t>(e)] = Eval(local, env, "register index", buffer, p, sp);
    ++e;
  });
  if (!local) {  // the thread's elements in row-major order (replica 0 decides)
    std::vector<int64_t> count(static_cast<size_t>(threads), 0);
    for (int64_t i = 0; i < n; ++i)
      lo[static_cast<size_t>(i)] = count[static_cast<size_t>(th[i * replicate])]++;
  }
  int64_t locals = 0;
  for (auto v : lo) locals = std::max(locals, v + 1);
  // Every (thread, register) slot holds exactly one (element, replica).
  std::vector<int64_t> slot(static_cast<size_t>(threads * locals), -1);
  auto point = [&](int64_t flat) {
    std::vector<int64_t> p(shape.size());
    for (size_t d = shape.size(); d-- > 0;) p[d] = flat % shape[d], flat /= shape[d];
    return p;
  };
  for (int64_t i = 0; i < n; ++i)
    for (int64_t r = 0; r < replicate; ++r) {
      int64_t t = th[static_cast<size_t>(i * replicate + r)], l = lo[static_cast<size_t>(i)];
      int64_t& s = slot[static_cast<size_t>(t * locals + l)];
      if (s >= 0)
        throw UserError(ErrorKind::kLayout,
                        "T.annotate_layout: the fragment of '" + buffer + "' puts elements " +
                            Point(point(s / replicate)) + " and " + Point(point(i)) + " in thread " +
                            std::to_string(t) + "'s register " + std::to_string(l) +
                            (replicate > 1 ? " (or one element twice in a thread across replicas)" : ""),
                        sp);
      s = i * replicate + r;
    }
  for (int64_t t = 0; t < threads; ++t)
    for (int64_t l = 0; l < locals; ++l)
      if (slot[static_cast<size_t>(t * locals + l)] < 0)
        throw UserError(ErrorKind::kLayout,
                        "T.annotate_layout: the fragment of '" + buffer + "' leaves register " +
                            std::to_string(l) + " of thread " + std::to_string(t) +
                            " empty; every thread of the layout (0.." + std::to_string(threads - 1) +
                            ") must hold the same number of elements (" + std::to_string(locals) + ")",
                        sp);
  Fragment f = NewFragment(shape, threads, locals, replicate,
                           "user fragment(" + Dims(shape) + ", " + std::to_string(threads) + " threads, " +
                               std::to_string(locals) + " per thread" +
                               (replicate > 1 ? ", " + std::to_string(replicate) + " replicas" : "") + ")");
  f.kind = "user";
  std::map<const VarNode*, Expr> rename;
  for (size_t d = 0; d < vars.size(); ++d) rename[vars[d].get()] = f.idx[d];
  if (rep) rename[rep.get()] = f.rep;
  f.thread = Simplify(Substitute(thread, rename));
  // The inverse: (thread, register) -> (element..., replica), fitted to the slot table.
  std::vector<std::vector<int64_t>> inv;
  inv.reserve(slot.size());
  for (auto s : slot) {
    auto p = point(s / replicate);
    p.push_back(s % replicate);
    inv.push_back(std::move(p));
  }
  for (int64_t t = 0; t < threads; ++t)
    for (int64_t l = 1; l < locals; ++l)
      if (inv[static_cast<size_t>(t * locals + l)].back() != inv[static_cast<size_t>(t * locals)].back())
        throw UserError(ErrorKind::kLayout,
                        "T.annotate_layout: the fragment of '" + buffer + "' gives thread " +
                            std::to_string(t) +
                            " elements of different replicas; a thread must hold one replica of the tile",
                        sp);
  std::vector<Expr> fitted;
  if (!FitMixedRadix({threads, locals}, inv, shape.size() + 1, {f.tid, f.loc}, &fitted))
    throw UserError(ErrorKind::kLayout,
                    "T.annotate_layout: the fragment of '" + buffer +
                        "' has no closed-form inverse ((thread, register) -> element as a sum of mixed-radix "
                        "digits of the thread and register indices), which this compiler needs to partition "
                        "loops over it; use a layout whose thread and register indices are digit "
                        "permutations of the element's index",
                    sp);
  f.index.assign(fitted.begin(), fitted.end() - 1);
  f.replica = replicate > 1 ? fitted.back() : C(0);
  if (local) {
    f.local = Simplify(Substitute(local, rename));
  } else {
    std::vector<std::vector<int64_t>> fwd;
    for (auto v : lo) fwd.push_back({v});
    std::vector<Expr> lf;
    if (!FitMixedRadix(shape, fwd, 1, std::vector<Expr>(f.idx.begin(), f.idx.end()), &lf))
      throw UserError(ErrorKind::kLayout,
                      "T.annotate_layout: the fragment of '" + buffer +
                          "' gives no forward_index_fn and its register numbering (the thread's elements in "
                          "row-major order) has no closed form; pass forward_index_fn",
                      sp);
    f.local = lf[0];
  }
  return f;
}

Fragment FragmentOverThreads(const Fragment& f, int64_t threads, const std::string& buffer, const Span& sp) {
  if (f.threads == threads) return f;
  if (f.threads > threads || threads % f.threads)
    throw UserError(ErrorKind::kLayout,
                    "T.annotate_layout: the fragment of '" + buffer + "' uses " + std::to_string(f.threads) +
                        " threads, but the kernel has " + std::to_string(threads) +
                        (f.threads > threads ? "" : ", which is not a multiple of them"),
                    sp);
  int64_t copies = threads / f.threads, ft = f.threads, fr = f.replicas;
  Fragment g = NewFragment(f.shape, threads, f.locals, fr * copies,
                           f.desc + " x" + std::to_string(copies) + " thread groups");
  g.kind = f.kind;
  g.params = f.params;
  g.origin = f.origin;
  // Thread group q = tid / ft holds copy q: replica r of g is replica r % fr of f in group r / fr.
  std::map<const VarNode*, Expr> inner{{f.tid.get(), Mod(g.tid, ft)}, {f.loc.get(), g.loc}};
  for (auto& e : f.index) g.index.push_back(Simplify(Substitute(e, inner)));
  if (f.valid) g.valid = Simplify(Substitute(f.valid, inner));
  g.replica = Simplify(Substitute(f.replica, inner) + Div(g.tid, ft) * C(fr));
  std::map<const VarNode*, Expr> fwd{{f.rep.get(), Mod(g.rep, fr)}};
  for (size_t d = 0; d < f.idx.size(); ++d) fwd[f.idx[d].get()] = g.idx[d];
  g.thread = Simplify(Substitute(f.thread, fwd) + Div(g.rep, fr) * C(ft));
  std::map<const VarNode*, Expr> li;
  for (size_t d = 0; d < f.idx.size(); ++d) li[f.idx[d].get()] = g.idx[d];
  g.local = Simplify(Substitute(f.local, li));
  return g;
}

}  // namespace tl
