// ExprDepth and CheckExprDepth; see expr_depth.h.
#include "arith/expr_depth.h"

#include <algorithm>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ir/functor.h"

namespace tl {
namespace {

template <typename F>
void ForEachChild(const ExprNode* e, F&& f) {
  switch (e->kind) {
    case ExprKind::kBinary: {
      auto* n = static_cast<const BinaryNode*>(e);
      f(n->a);
      f(n->b);
      break;
    }
    case ExprKind::kNot: f(static_cast<const NotNode*>(e)->a); break;
    case ExprKind::kCast: f(static_cast<const CastNode*>(e)->value); break;
    case ExprKind::kSelect: {
      auto* n = static_cast<const SelectNode*>(e);
      f(n->cond);
      f(n->true_value);
      f(n->false_value);
      break;
    }
    case ExprKind::kCall:
      for (auto& a : static_cast<const CallNode*>(e)->args) f(a);
      break;
    case ExprKind::kBufferLoad:
      for (auto& i : static_cast<const BufferLoadNode*>(e)->indices) f(i);
      break;
    default: break;
  }
}

// Depth of `root`, post-order with an explicit stack: a node is finished once all its children are.
int64_t Depth(const Expr& root, std::unordered_map<const ExprNode*, int64_t>* memo) {
  std::vector<std::pair<const ExprNode*, bool>> stack{{root.get(), false}};
  while (!stack.empty()) {
    auto [n, expanded] = stack.back();
    stack.pop_back();
    if (memo->count(n)) continue;
    if (!expanded) {
      stack.push_back({n, true});
      ForEachChild(n, [&](const Expr& c) {
        if (c && !memo->count(c.get())) stack.push_back({c.get(), false});
      });
      continue;
    }
    int64_t d = 0;
    ForEachChild(n, [&](const Expr& c) {
      if (c) d = std::max(d, memo->at(c.get()));
    });
    (*memo)[n] = d + 1;
  }
  return memo->at(root.get());
}

// Statement walk that measures each expression it meets (without descending into it) and
// remembers the innermost statement with a source location.
class DepthChecker : public SpanTrackingVisitor {
 public:
  void VisitExpr(const Expr& e) override {
    if (!e) return;
    int64_t d = Depth(e, &memo_);
    if (d > kMaxExprDepth)
      TL_USER_ERROR(kSyntax, span_, "an expression here nests ", d,
                    " operations deep; the compiler accepts at most ", kMaxExprDepth,
                    ". Split it with intermediate variables (T.alloc_var / a let) or a loop");
  }
  void VisitBuffer(const Buffer& b) override {
    if (!b) return;
    for (auto& d : b->shape) VisitExpr(d);
  }

 private:
  std::unordered_map<const ExprNode*, int64_t> memo_;
};

}  // namespace

int64_t ExprDepth(const Expr& e) {
  if (!e) return 0;
  std::unordered_map<const ExprNode*, int64_t> memo;
  return Depth(e, &memo);
}

void CheckExprDepth(const PrimFunc& f) {
  DepthChecker c;
  c.span_ = f->span;
  for (auto& p : f->params) {
    if (p.buffer) c.VisitBuffer(p.buffer);
  }
  c.VisitStmt(f->body);
}

}  // namespace tl
