// CUDA code generation of the Hopper intrinsics of thread-level IR (docs/hopper.md): wgmma
// descriptors, wgmma.mma_async with its register list, fence / commit_group / wait_group.
#pragma once
#include <functional>
#include <string>

#include "ir/expr.h"

namespace tl {

/// When `c` is a Hopper intrinsic, prints it (an expression or an expression-statement) into
/// `*out` and returns true; `print` prints a sub-expression.
bool HopperCallE(const CallNode* c, const std::function<std::string(const Expr&)>& print, std::string* out);

}  // namespace tl
