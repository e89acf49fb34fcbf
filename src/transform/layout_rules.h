// Layout rules of tile ops: how an op's operands constrain fragment layouts on the GPU targets.
// LayoutInference runs every registered rule of the ops in a kernel, with the T.Parallel nests, to a
// fixpoint. An op registers its rule by name (TileOpNode::op) from the file that implements it.
#pragma once
#include <functional>
#include <string>

#include "ir/stmt.h"
#include "layout/fragment.h"

namespace tl {

/// What a rule sees of the inference in progress.
class LayoutRuleContext {
 public:
  virtual ~LayoutRuleContext() = default;
  virtual int64_t threads() const = 0;
  /// The layout given to `b` so far, or null.
  virtual const Fragment* LayoutOf(const BufferNode* b) const = 0;
  /// Gives fragment `b` the layout `f`; `why` (at `sp`) names the rule in a conflict error. True when
  /// this is new (the fixpoint goes on), false when `b` already had it.
  virtual bool Assign(const Buffer& b, const Fragment& f, const std::string& why, const Span& sp) = 0;
};

/// A rule: true when it assigned something new.
using LayoutRule = std::function<bool(LayoutRuleContext&, const TileOpNode&)>;
void RegisterLayoutRule(const std::string& op, LayoutRule rule);
struct LayoutRuleRegistrar {
  LayoutRuleRegistrar(const std::string& op, LayoutRule rule) { RegisterLayoutRule(op, std::move(rule)); }
};

}  // namespace tl
