// The simplifier. Integer expressions are normalised through a sum-of-terms form
// (constant + sum of coeff * product-of-atoms); atoms are vars and anything the form cannot see
// through (loads, floordiv of non-divisible sums, calls). Terms are ordered by their printed form;
// atoms that print alike (two vars both named "i") are told apart by the order in which the
// simplified statement first mentions their vars and buffers -- never by node address, so the
// same program gives the same result in every process.
#include "arith/simplify.h"

#include "arith/eval.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <unordered_map>

#include "ir/functor.h"
#include "ir/printer.h"
#include "ir/structural.h"

namespace tl {
namespace {

// Two's-complement value of the low `bits` bits (sign-extended for signed types).
int64_t Wrap(DataType t, uint64_t v) {
  int bits = t.bits();
  if (bits >= 64) return static_cast<int64_t>(v);
  uint64_t mask = (uint64_t{1} << bits) - 1;
  v &= mask;
  if (t.is_int() && (v >> (bits - 1)) & 1) v |= ~mask;
  return static_cast<int64_t>(v);
}

int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
int64_t FloorMod(int64_t a, int64_t b) { return a - FloorDiv(a, b) * b; }

// The value an integer constant takes when cast to the integer type t (two's complement wrap).
int64_t WrapToType(int64_t v, DataType t) {
  if (t.bits() >= 64) return v;
  uint64_t mask = (uint64_t(1) << t.bits()) - 1;
  uint64_t u = static_cast<uint64_t>(v) & mask;
  if (t.is_int() && ((u >> (t.bits() - 1)) & 1)) u |= ~mask;
  return static_cast<int64_t>(u);
}

// ---------------------------------------------------------------- sum-of-terms form
struct Term {
  int64_t coeff;
  std::vector<Expr> atoms;  // sorted by key
  std::string key;          // printed atoms joined, used for ordering and merging
};
struct SumForm {
  int64_t constant = 0;
  std::vector<Term> terms;
};

// Numbers vars and buffers in the order they are first met while simplifying one statement or
// expression; the innermost Simplify call in progress on this thread owns the numbering.
class IdentityOrder : public IRVisitor {
 public:
  uint64_t Id(const void* p) { return ids_.emplace(p, ids_.size()).first->second; }
  void VisitBuffer(const Buffer& b) override { Id(b.get()); }

 protected:
  void VisitVar(const VarNode* v) override { Id(v); }

 private:
  std::unordered_map<const void*, uint64_t> ids_;
};
thread_local IdentityOrder* g_order = nullptr;

struct OrderScope {
  IdentityOrder own, *prev;
  OrderScope() : prev(g_order) {
    if (!prev) g_order = &own;
  }
  ~OrderScope() { g_order = prev; }
};

// The identities an atom refers to, in the order it mentions them (numbered by g_order).
class AtomIdentities : public IRVisitor {
 public:
  std::string out;
  void VisitBuffer(const Buffer& b) override { Add(b.get()); }

 protected:
  void VisitVar(const VarNode* v) override { Add(v); }

 private:
  void Add(const void* p) { out += std::to_string(g_order ? g_order->Id(p) : 0) + ","; }
};

std::string AtomKey(const Expr& e) {
  // Printed form, then an address-free structural hash (dtypes the printer may not show), then
  // which vars and buffers it is about.
  AtomIdentities ids;
  ids.VisitExpr(e);
  return PrintExpr(e) + "#" + std::to_string(StructuralHash(e, /*map_free=*/true)) + "#" + ids.out;
}

void AddTerm(SumForm* s, Term t) {
  if (t.coeff == 0) return;
  for (auto& x : s->terms) {
    if (x.key == t.key) {
      x.coeff += t.coeff;
      return;
    }
  }
  s->terms.push_back(std::move(t));
}

SumForm ToSum(const Expr& e);

SumForm Mul(const SumForm& a, const SumForm& b) {
  SumForm r;
  r.constant = a.constant * b.constant;
  for (auto& t : a.terms) AddTerm(&r, {t.coeff * b.constant, t.atoms, t.key});
  for (auto& t : b.terms) AddTerm(&r, {t.coeff * a.constant, t.atoms, t.key});
  for (auto& x : a.terms) {
    for (auto& y : b.terms) {
      Term t{x.coeff * y.coeff, x.atoms, ""};
      t.atoms.insert(t.atoms.end(), y.atoms.begin(), y.atoms.end());
      std::sort(t.atoms.begin(), t.atoms.end(),
                [](const Expr& p, const Expr& q) { return AtomKey(p) < AtomKey(q); });
      for (auto& at : t.atoms) t.key += AtomKey(at) + "*";
      AddTerm(&r, std::move(t));
    }
  }
  return r;
}

SumForm Atom(const Expr& e) {
  SumForm s;
  s.terms.push_back({1, {e}, AtomKey(e) + "*"});
  return s;
}

SumForm ToSum(const Expr& e) {
  int64_t c;
  if (AsConstInt(e, &c)) {
    SumForm s;
    s.constant = c;
    return s;
  }
  if (auto* b = As<BinaryNode>(e)) {
    if (b->op == BinaryOp::kAdd || b->op == BinaryOp::kSub) {
      SumForm x = ToSum(b->a), y = ToSum(b->b);
      int64_t sign = b->op == BinaryOp::kAdd ? 1 : -1;
      x.constant += sign * y.constant;
      for (auto& t : y.terms) AddTerm(&x, {sign * t.coeff, t.atoms, t.key});
      return x;
    }
    if (b->op == BinaryOp::kMul) return Mul(ToSum(b->a), ToSum(b->b));
  }
  return Atom(e);
}

// floordiv(x, c) * (k * c) + floormod(x, c) * k == x * k: recombines what div/mod (or shifts and
// masks) split, e.g. (i >> 2) * 4 + (i & 3) == i.
void CombineDivMod(SumForm* s) {
  for (size_t i = 0; i < s->terms.size(); ++i) {
    if (s->terms[i].coeff == 0 || s->terms[i].atoms.size() != 1) continue;
    auto* mod = As<BinaryNode>(s->terms[i].atoms[0]);
    int64_t c;
    if (!mod || mod->op != BinaryOp::kFloorMod || !AsConstInt(mod->b, &c) || c <= 0) continue;
    const int64_t k = s->terms[i].coeff;
    const std::string xk = AtomKey(mod->a);
    for (size_t j = 0; j < s->terms.size(); ++j) {
      const Term& d = s->terms[j];
      if (j == i || d.coeff != k * c || d.atoms.size() != 1) continue;
      auto* div = As<BinaryNode>(d.atoms[0]);
      int64_t c2;
      if (!div || div->op != BinaryOp::kFloorDiv || !AsConstInt(div->b, &c2) || c2 != c ||
          AtomKey(div->a) != xk)
        continue;
      s->terms[i].coeff = 0;
      s->terms[j].coeff = 0;
      SumForm x = ToSum(mod->a);
      s->constant += k * x.constant;
      for (auto& t : x.terms) AddTerm(s, {k * t.coeff, t.atoms, t.key});
      break;
    }
  }
}

Expr FromSum(SumForm s, DataType t) {
  CombineDivMod(&s);
  s.terms.erase(std::remove_if(s.terms.begin(), s.terms.end(), [](const Term& x) { return x.coeff == 0; }),
                s.terms.end());
  std::sort(s.terms.begin(), s.terms.end(), [](const Term& a, const Term& b) {
    if (a.atoms.size() != b.atoms.size()) return a.atoms.size() > b.atoms.size();
    return a.key < b.key;
  });
  Expr acc;
  for (auto& term : s.terms) {
    Expr prod;
    for (auto& a : term.atoms) prod = prod ? std::make_shared<BinaryNode>(t, BinaryOp::kMul, prod, a) : a;
    if (!acc) {
      acc = term.coeff == 1 ? prod
                            : std::make_shared<BinaryNode>(t, BinaryOp::kMul, prod, IntImm(t, term.coeff));
      continue;
    }
    int64_t mag = term.coeff < 0 ? -term.coeff : term.coeff;
    if (mag != 1) prod = std::make_shared<BinaryNode>(t, BinaryOp::kMul, prod, IntImm(t, mag));
    acc = std::make_shared<BinaryNode>(t, term.coeff < 0 ? BinaryOp::kSub : BinaryOp::kAdd, acc, prod);
  }
  if (!acc) return IntImm(t, s.constant);
  if (s.constant > 0) acc = std::make_shared<BinaryNode>(t, BinaryOp::kAdd, acc, IntImm(t, s.constant));
  if (s.constant < 0) acc = std::make_shared<BinaryNode>(t, BinaryOp::kSub, acc, IntImm(t, -s.constant));
  return acc;
}

}  // namespace

namespace {

class Simplifier : public IRMutator {
 public:
  explicit Simplifier(BoundMap bounds) : bounds_(std::move(bounds)) {}

  Expr VisitBinary(const Expr& e, const BinaryNode* n) override {
    Expr a = VisitExpr(n->a), b = VisitExpr(n->b);
    return Fold(e, n->op, a, b);
  }

  Expr VisitExpr(const Expr& e) override {
    Expr r = IRMutator::VisitExpr(e);
    if (auto* nt = As<NotNode>(r)) {
      int64_t c;
      if (AsConstInt(nt->a, &c)) return Bool(!c);
      if (auto* inner = As<NotNode>(nt->a)) return inner->a;
    }
    if (auto* s = As<SelectNode>(r)) {
      int64_t c;
      if (AsConstInt(s->cond, &c)) return c ? s->true_value : s->false_value;
      if (StructuralEqual(s->true_value, s->false_value)) return s->true_value;
    }
    if (auto* cast = As<CastNode>(r)) {
      int64_t c;
      if (AsConstInt(cast->value, &c)) {
        if (cast->dtype.is_float()) return FloatImm(cast->dtype, static_cast<double>(c));
        if (cast->dtype.is_integer()) return IntImm(cast->dtype, WrapToType(c, cast->dtype));
        if (cast->dtype.is_bool()) return IntImm(cast->dtype, c);
      }
      if (auto* f = As<FloatImmNode>(cast->value)) {
        if (cast->dtype.is_float()) return FloatImm(cast->dtype, f->value);
      }
    }
    return r;
  }

  Stmt VisitFor(const Stmt& s, const ForNode* n) override {
    Expr mn = VisitExpr(n->min), ext = VisitExpr(n->extent);
    int64_t e;
    if (AsConstInt(ext, &e) && e <= 0) return nullptr;
    Interval range = LoopVarRange(mn, ext, bounds_);
    auto saved = bounds_;
    bounds_[n->var.get()] = range;
    Stmt body = VisitStmt(n->body);
    bounds_ = saved;
    if (!body) return nullptr;
    if (mn == n->min && ext == n->extent && body == n->body) return s;
    return For(n->var, mn, ext, n->for_kind, body, n->annotations, n->span);
  }

  Stmt VisitKernel(const Stmt& s, const KernelNode* n) override {
    auto saved = bounds_;
    for (size_t i = 0; i < n->block_vars.size() && i < n->grid.size(); ++i) {
      Interval g = BoundOf(n->grid[i], bounds_);
      bounds_[n->block_vars[i].get()] = {int64_t(0), g.hi ? std::optional<int64_t>(*g.hi - 1) : std::nullopt};
    }
    Stmt r = IRMutator::VisitKernel(s, n);
    bounds_ = saved;
    // A kernel whose body was removed entirely does nothing, like an empty loop.
    auto* k = As<KernelNode>(r);
    return k && !k->body ? nullptr : r;
  }

  Stmt VisitLet(const Stmt& s, const LetNode* n) override {
    // A let binds its var once: the value's bounds hold in the whole body.
    Expr v = VisitExpr(n->value);
    auto saved = bounds_;
    if (v->dtype.is_integer()) {
      Interval b = BoundOf(v, bounds_);
      if (b.lo || b.hi) bounds_[n->var.get()] = b;
    }
    Stmt body = VisitStmt(n->body);
    bounds_ = saved;
    if (!body) return nullptr;
    if (v == n->value && body == n->body) return s;
    return Let(n->var, v, body, n->span);
  }

  Stmt VisitIf(const Stmt& s, const IfNode* n) override {
    Expr c = VisitExpr(n->cond);
    int64_t v;
    if (AsConstInt(c, &v))
      return v ? VisitStmt(n->then_case) : (n->else_case ? VisitStmt(n->else_case) : nullptr);
    Stmt t = VisitStmt(n->then_case);
    Stmt e = n->else_case ? VisitStmt(n->else_case) : nullptr;
    if (!t && !e) return nullptr;
    if (!t) return If(Not(c), e, nullptr, n->span);
    if (c == n->cond && t == n->then_case && e == n->else_case) return s;
    return If(c, t, e, n->span);
  }

  Stmt VisitSeq(const Stmt& s, const SeqNode* n) override {
    std::vector<Stmt> v;
    bool changed = false;
    for (auto& x : n->seq) {
      Stmt y = VisitStmt(x);
      changed |= y != x;
      if (y) v.push_back(y);
    }
    if (!changed) return s;
    if (v.empty()) return nullptr;
    return Seq(std::move(v), n->span);
  }

  Expr Fold(const Expr& orig, BinaryOp op, const Expr& a, const Expr& b) {
    auto rebuild = [&]() -> Expr {
      auto* o = static_cast<const BinaryNode*>(orig.get());
      if (a == o->a && b == o->b) return orig;
      return std::make_shared<BinaryNode>(orig->dtype, op, a, b);
    };
    DataType t = a->dtype;
    int64_t x, y;
    bool ca = AsConstInt(a, &x), cb = AsConstInt(b, &y);
    auto* fa = As<FloatImmNode>(a);
    auto* fb = As<FloatImmNode>(b);

    // Floats: fold constants and identities only; reassociation would change results.
    if (t.is_float()) {
      if (fa && fb) {
        double p = fa->value, q = fb->value;
        switch (op) {
          case BinaryOp::kAdd: return FloatImm(t, p + q);
          case BinaryOp::kSub: return FloatImm(t, p - q);
          case BinaryOp::kMul: return FloatImm(t, p * q);
          case BinaryOp::kDiv: return FloatImm(t, p / q);
          case BinaryOp::kMin: return FloatImm(t, std::min(p, q));
          case BinaryOp::kMax: return FloatImm(t, std::max(p, q));
          case BinaryOp::kLT: return Bool(p < q);
          case BinaryOp::kLE: return Bool(p <= q);
          case BinaryOp::kGT: return Bool(p > q);
          case BinaryOp::kGE: return Bool(p >= q);
          case BinaryOp::kEQ: return Bool(p == q);
          case BinaryOp::kNE: return Bool(p != q);
          default: break;
        }
      }
      if (op == BinaryOp::kAdd && fb && fb->value == 0) return a;
      if (op == BinaryOp::kAdd && fa && fa->value == 0) return b;
      if (op == BinaryOp::kSub && fb && fb->value == 0) return a;
      if (op == BinaryOp::kMul && fb && fb->value == 1) return a;
      if (op == BinaryOp::kMul && fa && fa->value == 1) return b;
      if (op == BinaryOp::kDiv && fb && fb->value == 1) return a;
      return rebuild();
    }

    if (op == BinaryOp::kAnd || op == BinaryOp::kOr) {
      bool is_and = op == BinaryOp::kAnd;
      if (ca) return (x != 0) == is_and ? b : Bool(!is_and);
      if (cb) return (y != 0) == is_and ? a : Bool(!is_and);
      return rebuild();
    }

    if (IsComparison(op)) {
      if (!t.is_integer()) return rebuild();
      // Compare through the difference, whose bounds often decide the comparison.
      Expr d = FromSum(ToSum(Binary(BinaryOp::kSub, a, b)), t);
      d = SimplifyDivMod(d);
      Interval r = BoundOf(d, bounds_);
      switch (op) {
        case BinaryOp::kLT:
          if (r.hi && *r.hi < 0) return Bool(true);
          if (r.lo && *r.lo >= 0) return Bool(false);
          break;
        case BinaryOp::kLE:
          if (r.hi && *r.hi <= 0) return Bool(true);
          if (r.lo && *r.lo > 0) return Bool(false);
          break;
        case BinaryOp::kGT:
          if (r.lo && *r.lo > 0) return Bool(true);
          if (r.hi && *r.hi <= 0) return Bool(false);
          break;
        case BinaryOp::kGE:
          if (r.lo && *r.lo >= 0) return Bool(true);
          if (r.hi && *r.hi < 0) return Bool(false);
          break;
        case BinaryOp::kEQ:
          if (r.IsConst()) return Bool(*r.lo == 0);
          if ((r.lo && *r.lo > 0) || (r.hi && *r.hi < 0)) return Bool(false);
          break;
        case BinaryOp::kNE:
          if (r.IsConst()) return Bool(*r.lo != 0);
          if ((r.lo && *r.lo > 0) || (r.hi && *r.hi < 0)) return Bool(true);
          break;
        default: break;
      }
      return rebuild();
    }

    if (!t.is_integer()) return rebuild();

    if (IsBitwise(op)) {
      if (ca && cb) return IntImm(t, EvalBitwise(op, t, x, y));
      Expr r = SimplifyBitwise(op, t, a, b);
      return r ? r : rebuild();
    }

    if (ca && cb) {
      switch (op) {  // + - * wrap around at the type's width, as the hardware does
        case BinaryOp::kAdd: return IntImm(t, Wrap(t, static_cast<uint64_t>(x) + static_cast<uint64_t>(y)));
        case BinaryOp::kSub: return IntImm(t, Wrap(t, static_cast<uint64_t>(x) - static_cast<uint64_t>(y)));
        case BinaryOp::kMul: return IntImm(t, Wrap(t, static_cast<uint64_t>(x) * static_cast<uint64_t>(y)));
        case BinaryOp::kDiv:
          if (y != 0) return IntImm(t, x / y);
          break;
        case BinaryOp::kMod:
          if (y != 0) return IntImm(t, x % y);
          break;
        case BinaryOp::kFloorDiv:
          if (y != 0) return IntImm(t, FloorDiv(x, y));
          break;
        case BinaryOp::kFloorMod:
          if (y != 0) return IntImm(t, FloorMod(x, y));
          break;
        case BinaryOp::kMin: return IntImm(t, std::min(x, y));
        case BinaryOp::kMax: return IntImm(t, std::max(x, y));
        default: break;
      }
      return rebuild();
    }

    switch (op) {
      case BinaryOp::kAdd:
      case BinaryOp::kSub:
      case BinaryOp::kMul: {
        Expr r = FromSum(ToSum(std::make_shared<BinaryNode>(t, op, a, b)), t);
        return r;
      }
      case BinaryOp::kFloorDiv:
      case BinaryOp::kFloorMod:
      case BinaryOp::kDiv:
      case BinaryOp::kMod: {
        if (cb && y == 1) return op == BinaryOp::kFloorDiv || op == BinaryOp::kDiv ? a : IntImm(t, 0);
        Expr r = SimplifyDivMod(std::make_shared<BinaryNode>(t, op, a, b));
        return r;
      }
      case BinaryOp::kMin:
      case BinaryOp::kMax: {
        Expr d = FromSum(ToSum(Binary(BinaryOp::kSub, a, b)), t);
        Interval r = BoundOf(SimplifyDivMod(d), bounds_);
        bool a_le_b = r.hi && *r.hi <= 0, a_ge_b = r.lo && *r.lo >= 0;
        if (op == BinaryOp::kMin) {
          if (a_le_b) return a;
          if (a_ge_b) return b;
        } else {
          if (a_ge_b) return a;
          if (a_le_b) return b;
        }
        return rebuild();
      }
      default: return rebuild();
    }
  }

  // Known low zero bits of an integer expression (a lower bound on its trailing zeros).
  static int LowZeroBits(const Expr& e) {
    int64_t c;
    if (AsConstInt(e, &c)) {
      if (c == 0) return 64;
      int k = 0;
      while (!((c >> k) & 1)) ++k;
      return k;
    }
    if (auto* cast = As<CastNode>(e)) {  // an integer conversion keeps the low bits of the value
      const DataType& from = cast->value->dtype;
      if (!(from.is_int() || from.is_uint()) || !(cast->dtype.is_int() || cast->dtype.is_uint())) return 0;
      const int k = LowZeroBits(cast->value);
      return k >= cast->dtype.bits() ? 64 : k;
    }
    auto* n = As<BinaryNode>(e);
    if (!n) return 0;
    switch (n->op) {
      case BinaryOp::kMul: return std::min(64, LowZeroBits(n->a) + LowZeroBits(n->b));
      case BinaryOp::kAdd:
      case BinaryOp::kSub:
      case BinaryOp::kBitOr:
      case BinaryOp::kBitXor: return std::min(LowZeroBits(n->a), LowZeroBits(n->b));
      case BinaryOp::kBitAnd: return std::max(LowZeroBits(n->a), LowZeroBits(n->b));
      case BinaryOp::kShl:
        if (AsConstInt(n->b, &c) && c >= 0 && c < n->dtype.bits())
          return std::min<int>(64, LowZeroBits(n->a) + int(c));
        return 0;
      default: return 0;
    }
  }

  static int KnownZeroBits(const Term& term) {
    int k = term.coeff == 0 ? 64 : __builtin_ctzll(static_cast<uint64_t>(term.coeff));
    for (auto& a : term.atoms) k = std::min(64, k + LowZeroBits(a));
    return k;
  }

  // & | ^ << >> with at least one non-constant operand (docs/semantics.md). Identities, masks
  // and shifts become arithmetic only where the two are provably equal for every value in the
  // operands' bounds, so that index expressions written with shifts fold with the rest; returns
  // null when nothing applies.
  Expr SimplifyBitwise(BinaryOp op, DataType t, Expr a, Expr b) {
    int64_t y;
    const bool commutative = op == BinaryOp::kBitAnd || op == BinaryOp::kBitOr || op == BinaryOp::kBitXor;
    if (commutative && AsConstInt(a, &y) && !AsConstInt(b, &y)) std::swap(a, b);
    const bool cb = AsConstInt(b, &y);
    const int64_t ones = static_cast<const IntImmNode*>(AllOnes(t).get())->value;
    Interval ia = BoundOf(a, bounds_), ib = BoundOf(b, bounds_);
    const bool an = ia.lo && *ia.lo >= 0, bn = ib.lo && *ib.lo >= 0;
    const bool fits64 = t.bits() < 64;  // int64 slots hold every value of the narrower types
    switch (op) {
      case BinaryOp::kBitAnd:
        if (cb && y == 0) return IntImm(t, 0);
        if (cb && y == ones) return a;
        if (cb && y > 0 && (y & (y + 1)) == 0 && an && (fits64 || t.is_int())) {  // a mask 2^k - 1
          if (ia.hi && *ia.hi <= y) return a;
          return SimplifyDivMod(std::make_shared<BinaryNode>(t, BinaryOp::kFloorMod, a, IntImm(t, y + 1)));
        }
        return nullptr;
      case BinaryOp::kBitOr:
      case BinaryOp::kBitXor: {
        if (cb && y == 0) return a;
        if (op == BinaryOp::kBitOr && cb && y == ones) return b;
        // Disjoint bits: a's low k bits are zero and 0 <= b < 2^k (or the other way round).
        auto disjoint = [&](const Expr& hi, const Expr& lo, const Interval& il) {
          int k = LowZeroBits(hi);
          return il.lo && *il.lo >= 0 && il.hi && k < 63 && *il.hi < (int64_t(1) << k);
        };
        if (an && bn && (disjoint(a, b, ib) || disjoint(b, a, ia)))
          return Fold(std::make_shared<BinaryNode>(t, BinaryOp::kAdd, a, b), BinaryOp::kAdd, a, b);
        return nullptr;
      }
      case BinaryOp::kShl:
        if (!cb) return nullptr;
        if (y < 0 || y >= t.bits()) return IntImm(t, 0);
        if (y == 0) return a;
        // a << y == a * 2^y where no value of a overflows.
        if (BitwiseFits(a, t, y)) {
          Expr m = IntImm(t, int64_t(1) << y);
          return Fold(std::make_shared<BinaryNode>(t, BinaryOp::kMul, a, m), BinaryOp::kMul, a, m);
        }
        return nullptr;
      case BinaryOp::kShr:
        if (!cb) return nullptr;
        if (y == 0) return a;
        if ((y < 0 || y >= t.bits()) && (t.is_uint() || an)) return IntImm(t, 0);
        // a >> y == floordiv(a, 2^y) for non-negative a (and y in range).
        if (y > 0 && y < t.bits() && y < 63 && an)
          return SimplifyDivMod(
              std::make_shared<BinaryNode>(t, BinaryOp::kFloorDiv, a, IntImm(t, int64_t(1) << y)));
        return nullptr;
      default: return nullptr;
    }
  }

  bool BitwiseFits(const Expr& a, DataType t, int64_t y) {
    Interval ia = BoundOf(a, bounds_);
    if (!ia.lo || !ia.hi || y >= 62) return false;
    const int64_t lim = t.bits() >= 64 ? (int64_t(1) << 62)
                        : t.is_int()   ? (int64_t(1) << (t.bits() - 1))
                                       : (int64_t(1) << t.bits());
    const int64_t lo_lim = t.is_int() ? -lim : 0;
    return *ia.lo >= lo_lim / (int64_t(1) << y) && *ia.hi < lim / (int64_t(1) << y);
  }

  // floordiv / floormod (and trunc forms over provably non-negative operands) by a positive
  // constant: pull out the multiples of the divisor, then decide the remainder by its bounds.
  Expr SimplifyDivMod(const Expr& e) {
    auto* n = As<BinaryNode>(e);
    if (!n) return e;
    BinaryOp op = n->op;
    if (op != BinaryOp::kFloorDiv && op != BinaryOp::kFloorMod && op != BinaryOp::kDiv &&
        op != BinaryOp::kMod)
      return e;
    int64_t c;
    if (!AsConstInt(n->b, &c) || c <= 0) return e;
    DataType t = e->dtype;
    // Narrow integers wrap at every step (docs/semantics.md): what follows reasons about the dividend's exact
    // value, which is the wrapped one only where it cannot leave the type's range ((b + b) // 16 is not b //
    // 8 for an int8 b = 67: 134 wraps to -122 first). 32- and 64-bit index arithmetic is taken not to
    // overflow.
    if (t.is_integer() && t.bits() < 32) {
      const int w = t.bits();
      const int64_t lo = t.is_int() ? -(int64_t(1) << (w - 1)) : 0;
      const int64_t hi = t.is_int() ? (int64_t(1) << (w - 1)) - 1 : (int64_t(1) << w) - 1;
      Interval ia = BoundOf(n->a, bounds_);
      if (!(ia.lo && ia.hi && *ia.lo >= lo && *ia.hi <= hi)) return e;
    }
    bool trunc = op == BinaryOp::kDiv || op == BinaryOp::kMod;
    if (trunc) {
      Interval ia = BoundOf(n->a, bounds_);
      if (!(ia.lo && *ia.lo >= 0)) return e;
      op = op == BinaryOp::kDiv ? BinaryOp::kFloorDiv : BinaryOp::kFloorMod;
    }
    bool is_div = op == BinaryOp::kFloorDiv;
    // floordiv(floordiv(x, a), b) == floordiv(x, a*b) for positive a, b.
    if (auto* inner = As<BinaryNode>(n->a)) {
      int64_t c2;
      if (is_div && inner->op == BinaryOp::kFloorDiv && AsConstInt(inner->b, &c2) && c2 > 0)
        return SimplifyDivMod(
            std::make_shared<BinaryNode>(t, BinaryOp::kFloorDiv, inner->a, IntImm(t, c * c2)));
      // floormod(floormod(x, a), b) == floormod(x, b) when b divides a.
      if (!is_div && inner->op == BinaryOp::kFloorMod && AsConstInt(inner->b, &c2) && c2 > 0 && c2 % c == 0)
        return SimplifyDivMod(std::make_shared<BinaryNode>(t, BinaryOp::kFloorMod, inner->a, n->b));
    }
    SumForm s = ToSum(n->a);
    SumForm quotient, rest;
    quotient.constant = FloorDiv(s.constant, c);
    rest.constant = FloorMod(s.constant, c);
    // A term whose known low zero bits make it a multiple of a power-of-two c leaves floormod unchanged
    // (e.g. a stage offset cast from an unsigned mask product: (int)((u & 1) * 4096) % 16 == 0).
    const int log2c = (c & (c - 1)) == 0 ? __builtin_ctzll(static_cast<uint64_t>(c)) : -1;
    for (auto& term : s.terms) {
      if (term.coeff % c == 0) {
        AddTerm(&quotient, {term.coeff / c, term.atoms, term.key});
      } else if (!is_div && log2c > 0 && KnownZeroBits(term) >= log2c) {
        continue;
      } else {
        AddTerm(&rest, term);
      }
    }
    Expr r = FromSum(rest, t);
    Interval ir = BoundOf(r, bounds_);
    bool in_range = ir.lo && ir.hi && *ir.lo >= 0 && *ir.hi < c;
    if (!in_range && !rest.terms.empty()) {
      // rest = g*X + small with g | c and 0 <= small < g:
      //   floordiv(rest, c) = floordiv(X, c/g),  floormod(rest, c) = floormod(X, c/g)*g + small.
      // (e.g. (l*2 + v) // 4 -> l // 2 and (l*2 + v) % 4 -> l % 2 * 2 + v for v in [0, 2).)
      // Only divisors of c that divide the coefficients of some subset of the terms can work, and
      // the largest working one is gcd(c, those coefficients): try those, largest first, instead
      // of every g below c (which loops 2^40 times for a divisor of 2^41).
      std::vector<int64_t> cands;
      for (auto& term : rest.terms) {
        int64_t g0 = std::gcd(c, term.coeff < 0 ? -term.coeff : term.coeff);
        size_t n0 = cands.size();
        if (std::find(cands.begin(), cands.end(), g0) == cands.end()) cands.push_back(g0);
        for (size_t k = 0; k < n0; ++k) {
          int64_t g1 = std::gcd(cands[k], g0);
          if (std::find(cands.begin(), cands.end(), g1) == cands.end()) cands.push_back(g1);
        }
      }
      std::sort(cands.rbegin(), cands.rend());
      for (int64_t g : cands) {
        if (g < 2 || g > c / 2 || c % g) continue;
        SumForm big, small;
        big.constant = FloorDiv(rest.constant, g);
        small.constant = FloorMod(rest.constant, g);
        for (auto& term : rest.terms) {
          if (term.coeff % g == 0)
            AddTerm(&big, {term.coeff / g, term.atoms, term.key});
          else
            AddTerm(&small, term);
        }
        if (big.terms.empty()) continue;
        Expr sm = FromSum(small, t);
        Interval is = BoundOf(sm, bounds_);
        if (!(is.lo && is.hi && *is.lo >= 0 && *is.hi < g)) continue;
        Expr X = FromSum(big, t);
        if (is_div) {
          Expr d = SimplifyDivMod(std::make_shared<BinaryNode>(t, BinaryOp::kFloorDiv, X, IntImm(t, c / g)));
          SumForm out = quotient, ds = ToSum(d);
          out.constant += ds.constant;
          for (auto& term : ds.terms) AddTerm(&out, term);
          return FromSum(out, t);
        }
        Expr m = SimplifyDivMod(std::make_shared<BinaryNode>(t, BinaryOp::kFloorMod, X, IntImm(t, c / g)));
        SumForm out = ToSum(m), ss = small;
        for (auto& term : out.terms) term.coeff *= g;
        out.constant *= g;
        out.constant += ss.constant;
        for (auto& term : ss.terms) AddTerm(&out, term);
        return FromSum(out, t);
      }
    }
    if (is_div) {
      SumForm out = quotient;
      if (!in_range) {
        // Keep the remainder's constant inside the floordiv only if we could not drop it.
        Expr d = std::make_shared<BinaryNode>(t, BinaryOp::kFloorDiv, r, IntImm(t, c));
        if (rest.terms.empty()) d = IntImm(t, FloorDiv(rest.constant, c));
        // The remainder may itself be a floordiv (e.g. of (k*4 + x//2) // 4): merge as above.
        if (auto* inner = As<BinaryNode>(r); inner && inner->op == BinaryOp::kFloorDiv) {
          int64_t c2;
          if (AsConstInt(inner->b, &c2) && c2 > 0)
            d = SimplifyDivMod(
                std::make_shared<BinaryNode>(t, BinaryOp::kFloorDiv, inner->a, IntImm(t, c * c2)));
        }
        SumForm ds = ToSum(d);
        out.constant += ds.constant;
        for (auto& term : ds.terms) AddTerm(&out, term);
      }
      return FromSum(out, t);
    }
    if (in_range) return r;
    if (rest.terms.empty()) return IntImm(t, FloorMod(rest.constant, c));
    // The remainder may itself be a floormod (e.g. of (k*4 + x%8) % 4): merge as above.
    if (auto* inner = As<BinaryNode>(r); inner && inner->op == BinaryOp::kFloorMod) {
      int64_t c2;
      if (AsConstInt(inner->b, &c2) && c2 > 0 && c2 % c == 0)
        return SimplifyDivMod(std::make_shared<BinaryNode>(t, BinaryOp::kFloorMod, inner->a, n->b));
    }
    return std::make_shared<BinaryNode>(t, BinaryOp::kFloorMod, r, IntImm(t, c));
  }

  BoundMap bounds_;
};

}  // namespace

Expr Simplify(const Expr& e, const BoundMap& bounds) {
  OrderScope order;
  return Simplifier(bounds).VisitExpr(e);
}
Stmt Simplify(const Stmt& s, const BoundMap& bounds) {
  OrderScope order;
  if (g_order == &order.own && s) g_order->VisitStmt(s);  // number identities in program order
  return Simplifier(bounds).VisitStmt(s);
}
PrimFunc Simplify(const PrimFunc& f) {
  OrderScope order;
  if (g_order == &order.own) {
    for (auto& p : f->params) {
      if (p.var) g_order->VisitExpr(p.var);
      if (p.buffer) g_order->VisitBuffer(p.buffer);
    }
  }
  Stmt b = Simplify(f->body);
  if (!b) b = Seq({});
  return WithBody(f, b);
}
bool ProveEqual(const Expr& a, const Expr& b, const BoundMap& bounds) {
  int64_t v;
  return AsConstInt(Simplify(Binary(BinaryOp::kSub, a, b), bounds), &v) && v == 0;
}

}  // namespace tl
