// LoadOpenCLModule; see opencl_module.h.
#include "runtime/opencl_module.h"

#include <cstring>

#include "runtime/opencl_runtime.h"
#include "support/error.h"

namespace tl {
namespace {

class OpenCLModule : public RuntimeModule {
 public:
  OpenCLModule(LaunchSpec spec, std::shared_ptr<opencl::Program> p)
      : RuntimeModule(std::move(spec)), prog_(std::move(p)) {}
  std::string device() const override { return "cpu"; }  // host tensors, copied for the launch

  void Launch(const std::vector<TensorArg>& args, uintptr_t) const override {
    std::vector<int64_t> sv;
    std::vector<uint64_t> slots = PackKernelArgs(spec_, args, "cpu", &sv);
    std::vector<opencl::Program::Arg> cl(slots.size());
    for (size_t i = 0; i < slots.size(); ++i) {
      if (i < spec_.params.size() && spec_.params[i].is_tensor) {
        int64_t n = 1;
        for (auto s : args[i].shape) n *= s;
        cl[i].is_buffer = true;
        cl[i].host = args[i].data;
        cl[i].bytes = static_cast<size_t>(n) * spec_.params[i].dtype.bytes();
        cl[i].written = spec_.params[i].written;
      } else {
        DataType t =
            i < spec_.params.size() ? spec_.params[i].dtype : spec_.syms[i - spec_.params.size()].dtype;
        cl[i].scalar = slots[i];
        cl[i].bytes = static_cast<size_t>(t.bytes());
      }
    }
    std::vector<int64_t> g = spec_.Grid(sv, args);
    std::vector<size_t> grid;
    for (auto v : g) {
      if (v <= 0) return;  // an empty grid (e.g. n = 0): nothing to run
      grid.push_back(static_cast<size_t>(v));
    }
    last_ms_ = prog_->Launch(cl, grid, static_cast<size_t>(spec_.threads));
  }
  double last_launch_ms() const override { return last_ms_; }

 private:
  std::shared_ptr<opencl::Program> prog_;
  mutable double last_ms_ = -1;
};

}  // namespace

std::shared_ptr<RuntimeModule> LoadOpenCLModule(const LaunchSpec& spec, const std::string& binary,
                                                const std::string& source) {
  const opencl::DeviceInfo& dev = opencl::Device();  // a clear error when there is no runtime
  if (opencl::UsesSubgroups(source)) opencl::RequireSubgroups(dev, "kernel '" + spec.entry + "' uses");
  const std::string options = opencl::BuildOptionsFor(dev, source);
  std::shared_ptr<opencl::Program> p;
  if (!binary.empty()) p = opencl::Program::FromBinary(binary, spec.entry, options);
  if (!p) p = opencl::Program::FromSource(source, spec.entry, options);
  return std::make_shared<OpenCLModule>(spec, p);
}

}  // namespace tl
