// CUDA C++ -> PTX + cubin for one GPU architecture, in process through NVRTC (loaded at run time
// with dlopen, never linked) or, when NVRTC cannot be loaded, through an `nvcc` + `ptxas`
// subprocess. Resource usage (registers, static shared memory, spills, stack frame) is taken
// from ptxas' own report (`-Xptxas=-v`), which NVRTC writes into the program log.
//
// Requires nothing of the machine at build time: no CUDA headers, no libnvrtc to link against.
#pragma once
#include <string>
#include <vector>

namespace tl::cuda {

/// What ptxas reports for one `__global__` function. -1 when it did not say.
struct KernelResources {
  std::string name;
  int registers = -1;
  int shared_bytes = -1;  // static shared memory only; dynamic shared memory is a launch parameter
  int spill_stores = -1, spill_loads = -1;
  int stack_bytes = -1;  // local memory frame per thread
};

struct CompileResult {
  std::string ptx;
  std::string cubin;  // an ELF image for exactly `arch`
  std::string log;    // compiler warnings plus ptxas' resource report
  // Resource usage of the kernel; with several kernels in one source, the largest of each.
  int registers = -1;
  int shared_bytes = -1;
  int spill_stores = -1, spill_loads = -1;
  int stack_bytes = -1;                  // local memory frame
  std::vector<KernelResources> kernels;  // per kernel, in the order ptxas reports them
  double ms = 0;                         // wall time of the compilation (program creation to cubin in hand)
  std::string compiler;                  // "nvrtc 13.0" or "nvcc"
};

/// Compiles `source` for `arch` ("sm_80", "sm_86", "sm_89", "sm_90", "sm_90a", ...).
/// The toolkit's include dir is appended to `include_dirs` (NVRTC has no default include path).
/// Throws UserError(kCompile) carrying the compiler log when the source does not compile,
/// UserError(kArgument) for a malformed arch, UserError(kUnsupported) when neither NVRTC nor
/// nvcc is present. Set TL_CUDA_COMPILER=nvcc in the environment to force the subprocess path.
CompileResult Compile(const std::string& source, const std::string& arch,
                      const std::vector<std::string>& include_dirs,
                      const std::vector<std::string>& extra_options);

/// The compiler that Compile would use and its version, e.g. "nvrtc 13.0"; part of cache keys.
std::string ToolchainVersion();
/// Identifies the toolchain for cache keys without loading it (path, size and mtime of NVRTC).
std::string ToolchainFingerprint();

/// The CUDA toolkit's include dir (holding cuda_fp16.h), or "" when none is found.
std::string CudaIncludeDir();

/// Fills the resource fields of `r` from a ptxas `-v` report. Exposed for tests.
void ParsePtxasReport(const std::string& log, CompileResult* r);

}  // namespace tl::cuda
