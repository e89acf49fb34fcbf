// CUDA kernels: lower, generate, compile with NVRTC (cached on disk), and run — on a GPU through
// the lazily loaded driver, or on the CPU through the emulator.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "runtime/module.h"
#include "target/cuda/nvrtc.h"
#include "transform/lower_cuda.h"

namespace tl {

struct CudaBuildOptions {
  std::string target = "cuda";  // "cuda", "cuda -arch=sm_86", "cuda:sm_90"
  CudaLowerOptions lower;
  std::string include_dir;      // where tl_device/ lives
  bool use_cache = true;
  std::string cache_dir;
  bool compile = true;          // false: stop after code generation (the emulator needs no cubin)
};

class CudaModule {
 public:
  PrimFunc func, lowered;
  std::string source, kernel_name, arch;
  cuda::CompileResult compiled;  // PTX, cubin, ptxas resources
  CudaLowerInfo info;
  std::vector<Var> syms;
  bool from_cache = false;
  double lower_ms = 0, codegen_ms = 0;

  std::vector<int64_t> Check(const std::vector<TensorArg>& args, const std::vector<int>& skip, const std::string& device) const {
    return CheckArguments(func, syms, args, skip, device);
  }
  /// Grid extents for the given symbolic values.
  std::vector<int64_t> Grid(const std::vector<int64_t>& sym_values) const;
  /// The kernel's argument slots, 8 bytes each, in launch order (parameters, then symbolic dims):
  /// tensors as device pointers, scalars packed as the types the kernel declares. Checks `args`.
  std::vector<uint64_t> PackArgs(const std::vector<TensorArg>& args, std::vector<int64_t>* sym_values = nullptr) const;
  /// Runs on the GPU that holds the tensors (needs a CUDA driver).
  void Launch(const std::vector<TensorArg>& args, uintptr_t stream) const;

 private:
  mutable std::shared_ptr<void> loaded_;  // cuda::Module, loaded on first launch
};

std::shared_ptr<CudaModule> BuildCUDA(const PrimFunc& f, const CudaBuildOptions& opt);

}  // namespace tl
