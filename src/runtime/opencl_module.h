// OpenCL kernels at run time: a device binary (or, failing that, the OpenCL C source) plus its
// LaunchSpec, built once through the lazily loaded OpenCL runtime (runtime/opencl_runtime.h). The
// kernel takes host tensors: they are copied to the device for the launch and the written ones
// copied back. Built by the OpenCL backend (target/opencl/backend.cc).
#pragma once
#include <memory>
#include <string>

#include "runtime/runtime_module.h"

namespace tl {

std::shared_ptr<RuntimeModule> LoadOpenCLModule(const LaunchSpec& spec, const std::string& binary,
                                                const std::string& source);

}  // namespace tl
