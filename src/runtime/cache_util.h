// File and hashing helpers of the disk cache, shared by the CPU and CUDA modules.
#pragma once
#include <string>

#include "runtime/module.h"

namespace tl {
namespace cache_util {
std::string HashHex(const std::string& s);  // 32 hex digits, content hash
bool ReadFile(const std::string& path, std::string* out);
/// Reads a file of the cache only if it is a regular file (not a symlink, FIFO or device) of at
/// most `max_bytes`; never blocks and never reads without limit.
bool ReadCacheFile(const std::string& path, size_t max_bytes, std::string* out);
void MakeDirs(const std::string& path);
/// Writes through a unique temporary file and a rename, so readers never see a partial file.
void AtomicWrite(const std::string& path, const std::string& data);
std::string CacheDir(const CompileOptions& opt);  // $TILELANG_CACHE_DIR, ~/.cache/tilelang-cpp
bool CacheDisabled(const CompileOptions& opt);
}  // namespace cache_util
}  // namespace tl
