// RuntimeModule: a loaded kernel. It launches from its binary and its LaunchSpec and knows nothing
// of the IR (compilation lives in the compiler, target/backend.h).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/launch_spec.h"
#include "runtime/module.h"

namespace tl {

class RuntimeModule {
 public:
  explicit RuntimeModule(LaunchSpec spec) : spec_(std::move(spec)) {}
  virtual ~RuntimeModule() = default;
  RuntimeModule(const RuntimeModule&) = delete;
  RuntimeModule& operator=(const RuntimeModule&) = delete;

  const LaunchSpec& spec() const { return spec_; }
  /// The device type its tensors live on ("cpu", "cuda").
  virtual std::string device() const = 0;
  /// Checks the arguments and runs the kernel; `stream` is the backend's queue handle (0: default).
  virtual void Launch(const std::vector<TensorArg>& args, uintptr_t stream) const = 0;
  /// The device's own time of the last launch in milliseconds (e.g. OpenCL profiling events), or
  /// a negative value when the backend does not measure it (the profiler then times the call).
  virtual double last_launch_ms() const { return -1; }

 protected:
  LaunchSpec spec_;
};

/// A host kernel: dlopen()s the library at `path` (a verified disk-cache entry), or, when there is
/// none, maps `binary` through a scratch file that is removed once loaded.
std::shared_ptr<RuntimeModule> LoadCpuModule(const LaunchSpec& spec, const std::string& binary,
                                             const std::string& path);

/// The kernel's argument slots, 8 bytes each, in launch order (parameters, then the symbols'
/// values): tensors as device pointers, scalars packed as the types the kernel declares.
/// Checks `args` (for `device`) and returns the symbols' values in `sym_values`.
std::vector<uint64_t> PackKernelArgs(const LaunchSpec& spec, const std::vector<TensorArg>& args,
                                     const std::string& device, std::vector<int64_t>* sym_values = nullptr);

}  // namespace tl
