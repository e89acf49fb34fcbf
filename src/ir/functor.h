// Visitor and mutator bases over expressions and statements. A mutator returns the very same
// node when nothing below it changed, so untouched subtrees are shared, never copied.
#pragma once
#include <array>
#include <set>
#include <vector>

#include "ir/function.h"

namespace tl {

class IRVisitor {
 public:
  virtual ~IRVisitor() = default;
  virtual void VisitExpr(const Expr& e);
  virtual void VisitStmt(const Stmt& s);
  virtual void VisitBuffer(const Buffer&) {}
  void VisitRegion(const Region& r);

 protected:
  virtual void VisitVar(const VarNode*) {}
  virtual void VisitBinary(const BinaryNode* n) {
    VisitExpr(n->a);
    VisitExpr(n->b);
  }
  virtual void VisitCall(const CallNode* n) {
    for (auto& a : n->args) VisitExpr(a);
  }
  virtual void VisitLoad(const BufferLoadNode* n);
  virtual void VisitStore(const StoreNode* n);
  virtual void VisitFor(const ForNode* n);
  virtual void VisitWhile(const WhileNode* n) {
    VisitExpr(n->cond);
    VisitStmt(n->body);
  }
  virtual void VisitKernel(const KernelNode* n);
  virtual void VisitLet(const LetNode* n) {
    VisitExpr(n->value);
    VisitStmt(n->body);
  }
  virtual void VisitAttr(const AttrStmtNode* n) {
    if (n->node) VisitBuffer(n->node);
    VisitExpr(n->value);
    VisitStmt(n->body);
  }
  /// Tile ops default to visiting their regions and scalar operands.
  virtual void VisitTileOp(const StmtNode* n);
};

/// A visitor that knows the span of the innermost statement with a source location around what it
/// visits (`span_`), for checks that report at the user's line.
class SpanTrackingVisitor : public IRVisitor {
 public:
  void VisitStmt(const Stmt& s) override {
    if (!s) return;
    Span saved = span_;
    if (s->span.defined()) span_ = s->span;
    IRVisitor::VisitStmt(s);
    span_ = saved;
  }
  Span span_;
};

class IRMutator {
 public:
  virtual ~IRMutator() = default;
  virtual Expr VisitExpr(const Expr& e);
  virtual Stmt VisitStmt(const Stmt& s);
  /// Hook to substitute buffers everywhere they occur (loads, stores, regions, allocations).
  virtual Buffer VisitBuffer(const Buffer& b) { return b; }
  virtual Region VisitRegion(const Region& r);

 protected:
  virtual Expr VisitVar(const Var& v) { return v; }
  virtual Expr VisitBinary(const Expr& e, const BinaryNode* n);
  virtual Expr VisitCall(const Expr& e, const CallNode* n);
  virtual Expr VisitLoad(const Expr& e, const BufferLoadNode* n);
  virtual Stmt VisitStore(const Stmt& s, const StoreNode* n);
  virtual Stmt VisitFor(const Stmt& s, const ForNode* n);
  virtual Stmt VisitIf(const Stmt& s, const IfNode* n);
  virtual Stmt VisitWhile(const Stmt& s, const WhileNode* n);
  virtual Stmt VisitSeq(const Stmt& s, const SeqNode* n);
  virtual Stmt VisitLet(const Stmt& s, const LetNode* n);
  virtual Stmt VisitKernel(const Stmt& s, const KernelNode* n);
  virtual Stmt VisitAttr(const Stmt& s, const AttrStmtNode* n);
  virtual Stmt VisitTileOp(const Stmt& s);
  std::vector<Expr> VisitExprs(const std::vector<Expr>& v, bool* changed);
};

/// Applies `f` to every statement and expression node in pre-order.
void PostOrderVisitStmt(const Stmt& s, const std::function<void(const Stmt&)>& f);

/// `s` with every var bound at most once: a loop or let that binds an already bound var gets a
/// fresh var of the same name and type within its scope.
Stmt UniquifyDefs(const Stmt& s);

/// The vars an expression reads, and whether it reads memory (a load: its value may change where
/// the vars' do not).
struct VarUses {
  std::set<const VarNode*> vars;
  bool loads = false;
};
VarUses VarsOf(const Expr& e);

/// The terms of a sum: `a + b + c` gives {a, b, c} (nested additions flattened, zero terms dropped).
std::vector<Expr> AddTerms(const Expr& e);

/// The blocks per thread-block cluster along x, y, z of the kernel in `s` (T.ClusterKernel's tl.cluster_dims
/// attribute, anywhere in it); {1, 1, 1} when it has none.
std::array<int64_t, 3> ClusterDims(const Stmt& s);

/// Replaces vars by expressions (by identity).
Expr Substitute(const Expr& e, const std::map<const VarNode*, Expr>& vmap);
Stmt Substitute(const Stmt& s, const std::map<const VarNode*, Expr>& vmap);

}  // namespace tl
