// The compiler side of LaunchSpec (runtime/launch_spec.h): the signature, the symbolic dims and
// the grid of a function, turned into the small description a runtime module launches from.
#pragma once
#include <string>

#include "ir/function.h"
#include "runtime/launch_spec.h"

namespace tl {

/// Which parameters the kernel may write (stores and tile-op destinations), by position.
std::vector<bool> WrittenParams(const PrimFunc& f);

/// An integer expression over `syms` as a program; a var that is not a symbol (a scalar
/// parameter) or an expression form the runtime cannot evaluate makes it not computable.
IntProgram CompileIntProgram(const Expr& e, const std::vector<Var>& syms);

/// The launch description of `f` (the user's function). `lowered` (thread-level IR, may be null
/// for the CPU) gives the grid; `threads` and `dynamic_smem` come from the lowering.
LaunchSpec MakeLaunchSpec(const PrimFunc& f, const PrimFunc& lowered, const std::string& entry,
                          int64_t threads, int64_t dynamic_smem);

}  // namespace tl
