// OpenCL kernels: lower (the GPU pipeline with OpenCL's switches), generate OpenCL C, build it
// through the OpenCL runtime (the device's binary cached on disk), check arguments and launch.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "runtime/module.h"
#include "runtime/opencl_runtime.h"
#include "target/opencl/codegen_opencl.h"
#include "target/opencl/target.h"

namespace tl {

struct OpenCLBuildOptions {
  CudaLowerOptions lower;
  bool use_cache = true;
  std::string cache_dir;
  bool compile = true;  // false: stop after code generation (no OpenCL runtime needed)
};

class OpenCLModule {
 public:
  PrimFunc func, lowered;
  OpenCLSource src;
  CudaLowerInfo info;
  OpenCLLimits limits;
  std::vector<Var> syms;
  std::string build_log, device;
  bool from_cache = false;
  double lower_ms = 0, codegen_ms = 0, compile_ms = 0;
  mutable double last_kernel_ms = 0;  // device time of the last launch (OpenCL profiling events)

  std::vector<int64_t> Check(const std::vector<TensorArg>& args) const {
    return CheckArguments(func, syms, args, {}, "cpu");
  }
  /// Copies the host tensors to the device, runs, copies written tensors back; returns the
  /// kernel's device time in milliseconds.
  double Launch(const std::vector<TensorArg>& args) const;

  std::shared_ptr<opencl::Program> program;
};

std::shared_ptr<OpenCLModule> BuildOpenCL(const PrimFunc& f, const OpenCLBuildOptions& opt);

}  // namespace tl
