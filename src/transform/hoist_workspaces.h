// HoistWorkspaces: `W = T.alloc_global(shape, dtype)` inside a kernel declares global memory shared by
// all of the kernel's blocks for one launch (a workspace, as TVM's global allocations). The compile
// entry point moves each such buffer out of the kernel's allocations into a trailing tensor parameter
// of the function; the runtime side (the JIT, python/tilelang/jit/kernel.py) allocates those
// parameters, zero-filled, for every call and does not return them. Sizes may use the function's
// symbolic sizes. Every pass after this sees an ordinary tensor parameter.
#pragma once
#include "ir/function.h"

namespace tl {

PrimFunc HoistWorkspaces(const PrimFunc& f);

}  // namespace tl
