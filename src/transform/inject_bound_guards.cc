// InjectBoundGuards; see inject_bound_guards.h.
#include "transform/inject_bound_guards.h"

#include <vector>

#include "arith/simplify.h"
#include "ir/functor.h"
#include "ir/printer.h"
#include "ir/structural.h"
#include "support/error.h"

namespace tl {
namespace {

class Guarder : public IRMutator {
 public:
  Stmt VisitKernel(const Stmt& s, const KernelNode* n) override {
    for (size_t i = 0; i < n->block_vars.size() && i < n->grid.size(); ++i) {
      Interval g = BoundOf(Simplify(n->grid[i]), bounds_);
      bounds_[n->block_vars[i].get()] = {int64_t(0), g.hi ? std::optional<int64_t>(*g.hi - 1) : std::nullopt};
    }
    return IRMutator::VisitKernel(s, n);
  }
  Stmt VisitFor(const Stmt& s, const ForNode* n) override {
    Interval range = LoopVarRange(Simplify(n->min, bounds_), Simplify(n->extent, bounds_), bounds_);
    auto saved = bounds_;
    bounds_[n->var.get()] = range;
    Stmt r = IRMutator::VisitFor(s, n);
    bounds_ = saved;
    return r;
  }
  Stmt VisitIf(const Stmt& s, const IfNode* n) override {
    Expr c = VisitExpr(n->cond);
    size_t mark = facts_.size();
    AddFacts(c);
    Stmt t = VisitStmt(n->then_case);
    facts_.resize(mark);
    Stmt e = n->else_case ? VisitStmt(n->else_case) : nullptr;
    if (c == n->cond && t == n->then_case && e == n->else_case) return s;
    return If(c, t, e, n->span);
  }
  Stmt VisitStmt(const Stmt& s) override {
    if (s) span_ = s->span;
    if (auto* ev = s ? As<EvaluateNode>(s) : nullptr)
      if (auto* c = As<CallNode>(ev->value); c && c->op == "tl.ptx_cp_async") {
        // T.ptx_cp_async from a global element outside the tensor zero-fills instead (cp.async's src-size 0).
        Expr guard;
        Expr e = ElementOperandsCall(c, 1, &guard);
        if (!guard) return Evaluate(e, s->span);
        auto* call = As<CallNode>(e);
        std::vector<Expr> args = call->args;
        args[3] = Binary(BinaryOp::kAnd, args[3], guard);
        return Evaluate(Call(call->dtype, call->op, args), s->span);
      }
    if (auto* ev = s ? As<EvaluateNode>(s) : nullptr)
      if (auto* c = As<CallNode>(ev->value); c && c->op == "tl.atomic_store") {
        // T.atomic_store to a global element: the store happens only inside the tensor.
        Expr guard;
        Expr call = ElementOperandsCall(c, 0, &guard);
        Stmt r = Evaluate(call, s->span);
        return guard ? If(guard, r, nullptr, s->span) : r;
      }
    return IRMutator::VisitStmt(s);
  }
  Expr VisitCall(const Expr& e, const CallNode* n) override {
    if (n->op != "tl.atomic_load") return IRMutator::VisitCall(e, n);
    // T.atomic_load of a global element outside the tensor reads 0, as a plain load does.
    Expr guard;
    Expr call = ElementOperandsCall(n, 0, &guard);
    if (!guard) return call;
    Expr zero = n->dtype.is_float() ? FloatImm(n->dtype, 0.0) : IntImm(n->dtype, 0);
    return Select(guard, call, zero);
  }
  // A call whose operands 0..`elems` are address_of(element) keeps them addresses: their indices are
  // visited, and the guard of the global ones is returned apart.
  Expr ElementOperandsCall(const CallNode* n, size_t elems, Expr* guard) {
    std::vector<Expr> args;
    for (size_t i = 0; i < n->args.size(); ++i) {
      if (i > elems) {
        args.push_back(VisitExpr(n->args[i]));
        continue;
      }
      auto* addr = As<CallNode>(n->args[i]);
      auto* l = addr && addr->op == "address_of" ? As<BufferLoadNode>(addr->args[0]) : nullptr;
      TL_ICHECK(l, n->op, " takes the address of an element");
      bool changed = false;
      std::vector<Expr> idx = VisitExprs(l->indices, &changed);
      args.push_back(Call(addr->dtype, "address_of", {Load(l->buffer, idx)}));
      if (l->buffer->scope != Scope::kGlobal) continue;
      if (Expr g = Guard(l->buffer, idx, span_)) *guard = *guard ? Binary(BinaryOp::kAnd, *guard, g) : g;
    }
    return Call(n->dtype, n->op, args);
  }
  Stmt VisitStore(const Stmt& s, const StoreNode* n) override {
    Stmt r = IRMutator::VisitStore(s, n);
    if (n->buffer->scope != Scope::kGlobal) return r;
    Expr guard = Guard(n->buffer, As<StoreNode>(r)->indices, n->span);
    return guard ? If(guard, r, nullptr, n->span) : r;
  }
  // Tile ops guard their own accesses, at both ends of the tensor; a region of a global tensor that
  // starts at a constant negative index is a mistake at its line, not a tile to clip.
  Stmt VisitTileOp(const Stmt& s) override {
    auto* op = As<TileOpNode>(s);
    for (auto& [r, access] : op->Regions()) {
      (void)access;
      if (r->buffer->scope != Scope::kGlobal) continue;
      for (size_t d = 0; d < r->ranges.size(); ++d) {
        int64_t v = 0;
        if (AsConstInt(Simplify(r->ranges[d].min, bounds_), &v) && v < 0)
          throw UserError(ErrorKind::kType,
                          std::string("T.") + op->op + ": the region of '" + r->buffer->name +
                              "' starts at " + std::to_string(v) + " in dimension " + std::to_string(d) +
                              ", before the start of the tensor; a tile's start must be 0 or more",
                          s->span);
      }
    }
    return IRMutator::VisitTileOp(s);
  }
  Expr VisitLoad(const Expr& e, const BufferLoadNode* n) override {
    Expr r = IRMutator::VisitLoad(e, n);
    if (n->buffer->scope != Scope::kGlobal) return r;
    Expr guard = Guard(n->buffer, As<BufferLoadNode>(r)->indices, span_);
    if (!guard) return r;
    Expr zero = r->dtype.is_float() ? FloatImm(r->dtype, 0.0) : IntImm(r->dtype, 0);
    return Select(guard, r, zero);
  }

 private:
  // Conjuncts of a condition known to hold.
  void AddFacts(const Expr& c) {
    if (auto* b = As<BinaryNode>(c); b && b->op == BinaryOp::kAnd) {
      AddFacts(b->a);
      AddFacts(b->b);
      return;
    }
    facts_.push_back(Simplify(c, bounds_));
  }
  bool Known(const Expr& c) const {
    for (auto& f : facts_)
      if (StructuralEqual(f, c, /*map_free_vars=*/false)) return true;
    return false;
  }
  // The condition under which the access is inside the tensor, without the parts that are
  // proven; null when all of it is proven.
  Expr Guard(const Buffer& b, const std::vector<Expr>& idx, const Span& sp) {
    Expr guard;
    for (size_t d = 0; d < idx.size() && d < b->shape.size(); ++d) {
      Expr i = Simplify(idx[d], bounds_);
      Expr n = Simplify(b->shape[d], bounds_);
      Interval ii = BoundOf(i, bounds_), in = BoundOf(n, bounds_);
      if ((ii.hi && *ii.hi < 0) || (ii.lo && in.hi && *ii.lo >= *in.hi))
        throw UserError(ErrorKind::kType,
                        "index " + PrintExpr(idx[d]) + " of dimension " + std::to_string(d) + " of '" +
                            b->name + "' is always outside the tensor (extent " + PrintExpr(b->shape[d]) +
                            ")",
                        sp);
      for (Expr c : {Binary(BinaryOp::kGE, i, Int(0)), Binary(BinaryOp::kLT, i, n)}) {
        c = Simplify(c, bounds_);
        int64_t v;
        if ((AsConstInt(c, &v) && v) || Known(c)) continue;
        guard = guard ? Binary(BinaryOp::kAnd, guard, c) : c;
      }
    }
    return guard;
  }

  BoundMap bounds_;
  std::vector<Expr> facts_;
  Span span_;
};

}  // namespace

PrimFunc InjectBoundGuards(const PrimFunc& f) { return WithBody(f, Guarder().VisitStmt(f->body)); }

}  // namespace tl
