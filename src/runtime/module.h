// Compiled kernels for the host: build (with the disk cache), load, check arguments, launch.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "ir/function.h"

namespace tl {

/// A tensor argument as the binding hands it over (from NumPy, PyTorch or any DLPack object).
struct TensorArg {
  void* data = nullptr;
  std::string dtype;             // canonical name, e.g. "float16"
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;  // in elements
  std::string device = "cpu";
  bool is_tensor = true;         // false for a Python scalar
  // A scalar keeps its exact value until it is packed as the parameter's declared type
  // (runtime/scalar_abi.h): an integer as int64 bits (uint64 values above 2^63 - 1 with
  // scalar_unsigned set), a float as double.
  bool scalar_is_int = false;
  bool scalar_unsigned = false;
  int64_t scalar_int = 0;
  double scalar = 0;             // value of a float scalar
};

struct CompileOptions {
  std::string cxx = "";          // host compiler; $CXX or g++ when empty
  std::string flags = "-O3 -march=native -std=c++17 -fopenmp -fPIC -shared";
  bool use_cache = true;
  std::string cache_dir;         // $TILELANG_CACHE_DIR or ~/.cache/tilelang-cpp when empty
  std::string include_dir;       // where tl_device/ lives
};

/// A loaded host kernel.
class CpuModule {
 public:
  CpuModule(PrimFunc f, std::string source, std::string so_path, void* handle, void* entry, bool from_cache);
  ~CpuModule();
  CpuModule(const CpuModule&) = delete;
  CpuModule& operator=(const CpuModule&) = delete;

  const std::string& source() const { return source_; }
  const std::string& library_path() const { return so_path_; }
  bool from_cache() const { return from_cache_; }
  const PrimFunc& func() const { return func_; }

  /// Checks every argument against the signature (dtype, rank, shape, device, strides),
  /// binding symbolic dims; throws UserError(kArgument) naming the parameter on a mismatch.
  std::vector<int64_t> Check(const std::vector<TensorArg>& args, const std::vector<int>& skip = {}) const;
  /// Shapes of parameters `idx` once the symbolic dims are bound by the other arguments.
  std::vector<std::vector<int64_t>> OutputShapes(const std::vector<TensorArg>& inputs, const std::vector<int>& out_idx) const;
  void Launch(const std::vector<TensorArg>& args) const;

 private:
  PrimFunc func_;
  std::string source_, so_path_;
  void* handle_;
  void* entry_;
  bool from_cache_;
  std::vector<Var> syms_;
};

/// Checks arguments against a function's signature (see CpuModule::Check); `device` is "cpu",
/// "cuda" or "any". Returns the values of `syms`.
std::vector<int64_t> CheckArguments(const PrimFunc& f, const std::vector<Var>& syms, const std::vector<TensorArg>& args,
                                    const std::vector<int>& skip, const std::string& device);
std::vector<std::vector<int64_t>> ArgumentOutputShapes(const PrimFunc& f, const std::vector<Var>& syms,
                                                       const std::vector<TensorArg>& inputs, const std::vector<int>& out_idx);

/// Which parameters the kernel may write (stores and tile-op destinations), by position.
std::vector<bool> WrittenParams(const PrimFunc& f);

/// Lowers, generates C++, and builds (or loads from the disk cache) a host kernel.
std::shared_ptr<CpuModule> BuildCPU(const PrimFunc& f, const CompileOptions& opt);

/// The cache key: a content hash of canonical IR text, target, options and compiler version.
std::string CacheKey(const std::string& canonical_ir, const std::string& target, const CompileOptions& opt);

}  // namespace tl
