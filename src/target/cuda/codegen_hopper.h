// CUDA code generation of the Hopper intrinsics of thread-level IR (docs/hopper.md): wgmma
// descriptors, wgmma.mma_async with its register list, fence / commit_group / wait_group.
#pragma once
#include <functional>
#include <string>

#include "ir/expr.h"

namespace tl {

/// When `c` is a Hopper intrinsic, prints it (an expression or an expression-statement) into
/// `*out` and returns true; `print` prints a sub-expression.
/// `shared_addr` prints a shared operand as its 32-bit shared-window address (the CUDA generator's).
bool HopperCallE(const CallNode* c, const std::function<std::string(const Expr&)>& print,
                 const std::function<std::string(const Expr&)>& shared_addr, std::string* out);

}  // namespace tl
