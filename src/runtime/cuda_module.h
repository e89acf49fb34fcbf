// CUDA kernels at run time: a cubin plus its LaunchSpec, loaded once per device (under a lock)
// through the lazily opened driver. Built by the CUDA backend (target/cuda/backend.cc).
#pragma once
#include <memory>
#include <string>

#include "runtime/runtime_module.h"

namespace tl {

/// `cubin` is the ELF image; `device_type` the argument device ("cuda").
std::shared_ptr<RuntimeModule> LoadCudaModule(const LaunchSpec& spec, const std::string& cubin);

}  // namespace tl
