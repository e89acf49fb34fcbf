// The CUDA runtime module; see cuda_module.h.
#include "runtime/cuda_module.h"

#include <map>
#include <mutex>

#include "runtime/cuda_driver.h"
#include "support/error.h"

namespace tl {
namespace {

struct alignas(64) TensorMapBytes {  // the driver's CUtensorMap
  uint64_t opaque[16];
};

// The tensor map of `m` for this launch: dims from the argument's shape (row-major, contiguous), the
// byte strides that follow, the box and swizzle the kernel was compiled for.
void EncodeMap(const LaunchSpec& spec, const TensorMapSpec& m, const std::vector<TensorArg>& args,
               const std::vector<int64_t>& sv, TensorMapBytes* out) {
  const TensorArg& a = args.at(static_cast<size_t>(m.param));
  const std::vector<int64_t> shape = TensorMapDims(spec, m, args, sv);
  if (shape.size() != m.box.size())
    throw UserError(ErrorKind::kArgument, "a TMA copy tiles tensor argument " + std::to_string(m.param) +
                                              " in " + std::to_string(m.box.size()) + " dimensions; it has " +
                                              std::to_string(shape.size()));
  const int r = static_cast<int>(m.box.size()), eb = m.dtype.bytes();
  if (reinterpret_cast<uintptr_t>(a.data) % 16)
    throw UserError(ErrorKind::kArgument, "a TMA copy reads tensor argument " + std::to_string(m.param) +
                                              ", whose data pointer is not 16-byte aligned");
  uint64_t dims[5], strides[5];
  uint32_t box[5];
  uint64_t stride = static_cast<uint64_t>(eb);
  for (int i = 0; i < r; ++i) {  // innermost first
    const int64_t d = shape[static_cast<size_t>(r - 1 - i)];
    // (16U4_ALIGN16B: the innermost dim counts values, two a byte; the strides are the tensor's bytes)
    const int64_t bytes_d = i == 0 && m.format == 1 ? d / 2 : i == 0 && m.format == 2 ? d * 3 / 4 : d;
    if (d <= 0)
      throw UserError(ErrorKind::kArgument, "a TMA copy reads tensor argument " + std::to_string(m.param) +
                                                ", which is empty along a dimension");
    dims[i] = static_cast<uint64_t>(d);
    if (i > 0) strides[i - 1] = stride;
    stride *= static_cast<uint64_t>(bytes_d);
    box[i] = static_cast<uint32_t>(m.box[static_cast<size_t>(r - 1 - i)]);
  }
  cuda::EncodeTensorMapTiled(out, eb, r, a.data, dims, strides, box, m.swizzle_bytes, m.format);
}

class CudaModule : public RuntimeModule {
 public:
  CudaModule(LaunchSpec spec, std::string cubin) : RuntimeModule(std::move(spec)), cubin_(std::move(cubin)) {}
  std::string device() const override { return "cuda"; }

  void Launch(const std::vector<TensorArg>& args, uintptr_t stream) const override {
    std::vector<int64_t> sv;
    std::vector<uint64_t> slots = PackKernelArgs(spec_, args, "cuda", &sv);
    if (cubin_.empty())
      throw UserError(ErrorKind::kUnsupported, "kernel '" + spec_.func_name + "' was built without a cubin");
    auto g = spec_.Grid(sv, args);
    if (g[0] == 0 || g[1] == 0 || g[2] == 0) return;  // an empty grid (e.g. n = 0): nothing to run
    int dev = 0;
    for (auto& a : args)
      if (a.is_tensor && a.data) {
        dev = cuda::PointerDevice(a.data);
        break;
      }
    if (dev < 0) dev = 0;
    std::shared_ptr<cuda::Module> mod = ForDevice(dev);
    std::vector<void*> ptrs;
    for (auto& s : slots) ptrs.push_back(&s);
    // TMA tensor maps (sm_90+), after the other parameters, encoded from their tensors' arguments.
    std::vector<TensorMapBytes> maps(spec_.tensor_maps.size());
    for (size_t i = 0; i < maps.size(); ++i) {
      EncodeMap(spec_, spec_.tensor_maps[i], args, sv, &maps[i]);
      ptrs.push_back(&maps[i]);
    }
    cuda::Dim3 grid{static_cast<unsigned>(g[0]), static_cast<unsigned>(g[1]), static_cast<unsigned>(g[2])};
    cuda::Dim3 block{static_cast<unsigned>(spec_.threads), 1, 1};
    mod->Launch(spec_.entry, grid, block, static_cast<int>(spec_.dynamic_smem), ptrs.data(), stream,
                spec_.cooperative);
  }

 private:
  // A module is loaded into each device's context the first time a launch runs there; two
  // threads launching at once load it once.
  std::shared_ptr<cuda::Module> ForDevice(int dev) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto& m = loaded_[dev];
    if (!m) m = cuda::Module::Load(cubin_, dev);
    return m;
  }

  std::string cubin_;
  mutable std::mutex mu_;
  mutable std::map<int, std::shared_ptr<cuda::Module>> loaded_;
};

}  // namespace

std::shared_ptr<RuntimeModule> LoadCudaModule(const LaunchSpec& spec, const std::string& cubin) {
  return std::make_shared<CudaModule>(spec, cubin);
}

}  // namespace tl
