// Thread indices in tile programs (T.get_thread_binding, T.thread_binding) and user barriers
// (T.sync_threads). A statement outside T.Parallel that reads the thread index runs once per thread:
// on GPU targets it is left as is (every thread runs the statements outside T.Parallel; the index
// is threadIdx), and T.sync_threads is a block barrier. The CPU target runs a block as one thread, so
// LowerThreadBindingsCPU gives such a statement a loop over the block's threads; statements that hold
// a T.sync_threads are split at it, so that every thread finishes one phase before the next begins.
//
// Errors (at the user's line): the thread index inside T.Parallel or in a tile op's operands (those
// are the compiler's to partition), T.sync_threads inside T.Parallel or under a condition that
// depends on the thread index (threads would wait at different barriers); on the CPU target, a local
// variable written by per-thread statements and read by others (each GPU thread has its own copy;
// the CPU has one).
#pragma once
#include "ir/function.h"

namespace tl {

/// The checks above, for every target; lets bound to the thread index are inlined (so that every
/// per-thread statement reads tl.thread_idx() itself).
PrimFunc CheckThreadBindings(const PrimFunc& f);

/// Whether `s` reads the thread index (a per-thread statement).
bool ReadsThreadIndex(const Stmt& s);

/// The CPU lowering: per-thread statements in loops over the block's threads, T.sync_threads dropped.
PrimFunc LowerThreadBindingsCPU(const PrimFunc& f);

}  // namespace tl
