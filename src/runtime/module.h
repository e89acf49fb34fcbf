// What crosses from the front end into a launch (TensorArg), and the host toolchain options.
#pragma once
#include <memory>
#include <string>
#include <vector>

namespace tl {

/// A tensor argument as the binding hands it over (from NumPy, PyTorch or any DLPack object).
struct TensorArg {
  void* data = nullptr;
  std::string dtype;  // canonical name, e.g. "float16"
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;  // in elements
  std::string device = "cpu";
  bool is_tensor = true;  // false for a Python scalar
  // A scalar keeps its exact value until it is packed as the parameter's declared type
  // (runtime/scalar_abi.h): an integer as int64 bits (uint64 values above 2^63 - 1 with
  // scalar_unsigned set), a float as double.
  bool scalar_is_int = false;
  bool scalar_unsigned = false;
  int64_t scalar_int = 0;
  double scalar = 0;  // value of a float scalar
};

struct CompileOptions {
  std::string cxx = "";  // host compiler; $CXX or g++ when empty
  std::string flags = "-O3 -march=native -std=c++17 -fopenmp -fPIC -shared";
  bool use_cache = true;
  std::string cache_dir;    // $TILELANG_CACHE_DIR or ~/.cache/tilelang-cpp when empty
  std::string include_dir;  // where tl_device/ lives
};

/// The cache key of a host library: a content hash of canonical IR text, target, options and
/// compiler version.
std::string CacheKey(const std::string& canonical_ir, const std::string& target, const CompileOptions& opt);

}  // namespace tl
