// Target: what the compiler builds for, as one value parsed once (here) and passed everywhere:
// the backend kind, its architecture, features and the limits the passes check against.
// Accepted spellings (TileLang's and ours): "cpu" (also "c", "llvm", "host"), "cpu -mcpu=x86-64
// -mattr=+avx2,+fma", "cuda", "cuda -arch=sm_90a", "cuda:sm_80", "sm_86", "hip", "hip -arch=gfx942",
// "metal", "metal -mattr=+metal4", "opencl", "opencl -mattr=+subgroups" (or -subgroups: the device's
// sub-group support is used / ignored); a dict {"kind": ..., "arch": ...} is turned into the first form by
// the Python wrapper. "auto" is resolved by the front end (a CUDA device when one is present).
#pragma once
#include <string>
#include <vector>

namespace tl {

struct Target {
  std::string kind;                   // "cpu", "cuda", "hip", "metal", "opencl"
  std::string arch;                   // "sm_80", "gfx90a", a CPU name; "" = the default of the kind
  bool arch_given = false;            // the spec named the arch (else the device's may be used)
  std::vector<std::string> features;  // sorted: "avx2", "fma", "avx512f", ... / "cp_async", "tma", "wgmma"
                                      // / "subgroups" (OpenCL cl_khr_subgroups) / "metal4" (MSL 4.0)
  bool features_given = false;        // OpenCL: the spec said -mattr (else the device's extensions decide)
  int64_t smem_limit = 0;             // bytes of shared / local / threadgroup memory per block
  int64_t max_threads = 0;            // threads per block
  int64_t max_registers = 0;          // registers per thread
  int64_t warp_size = 0;              // SIMD width the lowering groups threads by

  bool Has(const std::string& feature) const;
  /// Canonical spelling: ParseTarget(t.str()) == t.
  std::string str() const;
  bool operator==(const Target& o) const { return str() == o.str(); }
};

/// Parses a target spec; a UserError names what is wrong and lists what is accepted.
Target ParseTarget(const std::string& spec);

}  // namespace tl
