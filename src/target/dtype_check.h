// The dtype check of the targets that lack some dtypes (Metal, Ascend): every buffer a statement names
// (allocations, parameters, loads, stores, tile ops) and every cast is offered to the target's `why`; a
// non-empty answer is a UserError at the first statement that uses the dtype (the user's file:line:col):
//   "<what> has dtype <why>; the <target> target cannot run it".
#pragma once
#include <functional>
#include <set>
#include <string>

#include "ir/functor.h"
#include "support/error.h"

namespace tl {

class DtypeCheck : public SpanTrackingVisitor {
 public:
  /// "" when the target has `t`, else "<dtype> (<the reason>)".
  using Why = std::function<std::string(DataType t)>;
  DtypeCheck(std::string target, Why why) : target_(std::move(target)), why_(std::move(why)) {}

  void Check(DataType t, const std::string& what, const Span& sp) {
    const std::string why = why_(t);
    if (!why.empty())
      throw UserError(ErrorKind::kUnsupported,
                      what + " has dtype " + why + "; the " + target_ + " target cannot run it",
                      sp.defined() ? sp : span_);
  }
  /// The whole function: its statements, then its scalar and tensor parameters (a tensor no statement uses is
  /// still part of the kernel's signature).
  void Run(const PrimFunc& f) {
    for (auto& p : f->params)
      if (!p.buffer) Check(p.var->dtype, "scalar parameter '" + p.var->name + "'", f->span);
    VisitStmt(f->body);
    for (auto& p : f->params)
      if (p.buffer) VisitBuffer(p.buffer);
  }
  void VisitBuffer(const Buffer& b) override {
    if (seen_.insert(b.get()).second) Check(b->dtype, "buffer '" + b->name + "'", span_);
  }
  void VisitExpr(const Expr& e) override {
    if (e && e->kind == ExprKind::kCast) Check(e->dtype, "a cast", span_);
    SpanTrackingVisitor::VisitExpr(e);
  }

 protected:
  void VisitKernel(const KernelNode* n) override {
    for (auto& b : n->alloc_buffers)
      if (seen_.insert(b.get()).second) Check(b->dtype, "buffer '" + b->name + "'", b->span);
    SpanTrackingVisitor::VisitKernel(n);
  }

 private:
  std::string target_;
  Why why_;
  std::set<const BufferNode*> seen_;
};

}  // namespace tl
