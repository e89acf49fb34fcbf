// VerifyIR: structural invariants every pass must keep, checked after each pass of a pipeline.
// A violation is a compiler bug (InternalError naming the pass and the offending node), never a
// user error: user programs are checked when their nodes are built.
#pragma once
#include <string>

#include "ir/function.h"

namespace tl {

/// How far a function has been lowered; later stages add invariants.
enum class IRStage : uint8_t {
  kTile,          // tile ops, T.Parallel / T.Pipelined loops, fragments
  kThread,        // thread-level IR (docs/thread_ir.md): none of the above
  kSharedPlanned  // thread-level, and every shared buffer is a view of the kernel's byte buffer
};

/// Throws InternalError("IR verifier after <pass>: ...") when `f` breaks an invariant of `stage`:
/// index arity equals the buffer's rank; every var is bound (parameter, loop, let, block var)
/// at most once; every buffer used is a parameter or allocated in the
/// kernel, and allocated once; no global allocations; at kThread and later no tile ops,
/// T.Parallel/T.Pipelined loops or fragments, one thread extent, flat shared/local buffers; at
/// kSharedPlanned every shared buffer is a 16-byte-aligned view inside the allocated byte buffer.
void VerifyIR(const PrimFunc& f, IRStage stage, const std::string& pass);

}  // namespace tl
