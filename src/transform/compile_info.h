// CompileInfo: what a compilation reports to its user (never read back by a pass): the lowering's
// decisions and warnings, the on-chip memory plan, the block size, the layouts, and the toolchain's
// resource report and timings.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tl {

struct CompileInfo {
  std::vector<std::string> warnings;           // copies that missed the fast path, and why
  std::vector<std::string> choices;            // every lowering decision, one line each (verbose mode)
  std::string smem_report;                     // per-buffer footprint table of shared / local memory
  int64_t smem_bytes = 0;                      // dynamic shared / local memory per block
  int64_t threads = 0;                         // threads per block (GPU kinds)
  std::map<std::string, std::string> layouts;  // buffer -> layout description
  std::map<std::string, int64_t> resources;    // the toolchain's report: registers, spills, ...
  std::string compiler;                        // the toolchain that built the binary
  std::string build_log;
  double lower_ms = 0, codegen_ms = 0, build_ms = 0;
};

}  // namespace tl
