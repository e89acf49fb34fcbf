// Host kernels at run time: dlopen a library built by the CPU backend (target/cpu/backend.cc),
// check the arguments against the LaunchSpec, and call its tl_entry.
#include <unistd.h>

#include <cstdio>

#include "runtime/cache_util.h"
#include "runtime/runtime_module.h"
#include "runtime/scalar_abi.h"
#include "support/dynlib.h"
#include "support/error.h"

namespace tl {
namespace {

class CpuModule : public RuntimeModule {
 public:
  CpuModule(LaunchSpec spec, void* handle, void* entry)
      : RuntimeModule(std::move(spec)), handle_(handle), entry_(entry) {}
  ~CpuModule() override {
    if (handle_) dlclose(handle_);
  }
  std::string device() const override { return "cpu"; }

  void Launch(const std::vector<TensorArg>& args, uintptr_t) const override {
    std::vector<int64_t> syms = spec_.Check(args, {}, "cpu");
    std::vector<void*> ptrs;
    std::vector<uint64_t> slots(args.size());
    for (size_t i = 0; i < args.size(); ++i) {
      const ParamSpec& p = spec_.params[i];
      if (p.is_tensor) {
        ptrs.push_back(args[i].data);
      } else {
        PackScalar(ConvertScalar(args[i], p.dtype, spec_.Label(i)), &slots[i]);
        ptrs.push_back(&slots[i]);
      }
    }
    char err[512] = {0};
    using Entry = int (*)(void**, const int64_t*, char*, int);
    int rc = reinterpret_cast<Entry>(entry_)(ptrs.data(), syms.data(), err, sizeof(err));
    if (rc != 0) throw UserError(ErrorKind::kArgument, "kernel '" + spec_.func_name + "' failed: " + err);
  }

 private:
  void* handle_;
  void* entry_;
};

}  // namespace

std::shared_ptr<RuntimeModule> LoadCpuModule(const LaunchSpec& spec, const std::string& binary,
                                             const std::string& path) {
  using namespace cache_util;
  std::string file = path, scratch_dir;
  if (file.empty() || access(file.c_str(), R_OK) != 0) {
    if (binary.empty())
      throw UserError(ErrorKind::kUnsupported, "kernel '" + spec.func_name + "' has no library to load");
    // Content-addressed paths would let dlopen's per-path caching return another kernel; a
    // scratch file is unique, and removed as soon as it is mapped.
    scratch_dir = CacheDir(CompileOptions{}) + "/load-" + UniqueSuffix();
    MakeDirs(scratch_dir);
    file = scratch_dir + "/kernel.so";
    WriteFile(file, binary);
  }
  std::string why;
  void* handle = dynlib::Open(file, &why);
  if (!scratch_dir.empty()) {
    std::remove(file.c_str());
    rmdir(scratch_dir.c_str());
  }
  if (!handle) throw UserError(ErrorKind::kCompile, "cannot load the compiled kernel: " + why);
  void* entry = dlsym(handle, spec.entry.c_str());
  if (!entry) {
    dlclose(handle);
    throw InternalError("the compiled kernel lacks its entry " + spec.entry);
  }
  return std::make_shared<CpuModule>(spec, handle, entry);
}

}  // namespace tl
