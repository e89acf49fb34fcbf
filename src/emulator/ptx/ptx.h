// The PTX-level emulator: runs the PTX that NVRTC made of a kernel's generated CUDA C++ (what ptxas
// would assemble), not the thread-level IR. Its instruction semantics are written from NVIDIA's PTX ISA
// (data movement, integer and float arithmetic with rounding modes, predicates and divergent branches,
// cp.async groups, ldmatrix, mma.sync, shfl.sync, barriers, atomics), independently of the compiler's own
// layout code, so that code-generator bugs, undefined behaviour NVRTC exploits and wrong inline-PTX
// operand orders show up as wrong numbers or as reports. See docs/emulator.md ("The PTX emulator").
//
// Execution: blocks one after another; in a block, warps one at a time until each reaches a barrier or
// exits. A warp runs warp-wide: every instruction is decoded once and executed for all its active lanes.
// Divergence: each lane has its own program counter and the warp executes the instruction at the lowest
// program counter among its live lanes, with exactly the lanes that are there (they reconverge where
// their paths meet again).
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "emulator/emulator.h"

namespace tl::emu::ptx {

/// A global-memory buffer the kernel may touch: accesses outside every one of them are reported
/// (out_of_bounds) and not performed.
struct Region {
  uint64_t base = 0;
  uint64_t bytes = 0;
  std::string name;
};

struct Launch {
  std::string entry;                 // the .entry to run
  std::array<int64_t, 3> grid{1, 1, 1};
  std::array<int64_t, 3> block{1, 1, 1};
  int64_t dynamic_smem = 0;          // bytes of the `.extern .shared` array
  std::vector<uint64_t> params;      // one 8-byte slot a .param, in order (pointers, scalars as declared)
  /// Parameters wider than 8 bytes (a TMA tensor map: the 128-byte image of emulator/tensor_map_image.h), by
  /// parameter index; their slot in `params` is ignored.
  std::map<size_t, std::vector<uint8_t>> blobs;
  std::vector<Region> regions;       // global buffers, for the bounds checks
};

struct Module;  // parsed PTX (ptx_parse.cc)

/// Parses PTX text; malformed or unsupported PTX is a UserError(kUnsupported) naming the line and the
/// instruction.
std::shared_ptr<const Module> Parse(const std::string& text);

/// Runs `launch.entry` of `m` over its grid. Reports as the thread-level emulator's (race,
/// uninitialized_read, out_of_bounds, misaligned, barrier_divergence, inactive_lanes, deadlock), each naming
/// block, thread and the PTX line (and the CUDA line where the PTX has .loc lines).
Result Run(const Module& m, const Launch& launch, const Options& opt = Options());

/// Instructions the parser knows, for the docs and the error text ("ld", "mma", ...).
std::vector<std::string> SupportedOpcodes();

}  // namespace tl::emu::ptx
