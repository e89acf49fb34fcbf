// File and hashing helpers of the disk cache, shared by the CPU and CUDA modules.
#pragma once
#include <string>

#include "runtime/module.h"

namespace tl {
namespace cache_util {
std::string HashHex(const std::string& s);  // 32 hex digits, content hash
bool ReadFile(const std::string& path, std::string* out);
void MakeDirs(const std::string& path);
/// Writes through a unique temporary file and a rename, so readers never see a partial file.
void AtomicWrite(const std::string& path, const std::string& data);
std::string CacheDir(const CompileOptions& opt);  // $TILELANG_CACHE_DIR, ~/.cache/tilelang-cpp
bool CacheDisabled(const CompileOptions& opt);
}  // namespace cache_util
}  // namespace tl
