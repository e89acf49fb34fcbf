// CodegenCPU: prints a lowered function as one C++17 translation unit for the host compiler.
//
// Requires: tile ops already lowered (LowerTileOpsCPU). The entry point is
//   extern "C" int tl_entry(void** args, const int64_t* syms, char* err, int errlen)
// args[i] points at parameter i's data (tensors) or its value (scalars, as int64 / double);
// syms holds the values of the symbolic dims in the order of SymbolicVars(f).
#pragma once
#include <string>
#include <vector>

#include "ir/function.h"
#include "target/target.h"

namespace tl {
/// The generated source defines TL_CPU_ISA (isa.level) before including the device headers, so the
/// micro-kernel family follows the target, not whatever the compiler flags happen to enable.
std::string CodegenCPU(const PrimFunc& f, const Target& target);
}  // namespace tl
