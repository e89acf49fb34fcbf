// The disk cache shared by every backend and the autotuner (runtime/disk_cache.cc): file and
// hashing helpers and the one environment policy.
//
// Policy: entries live under $TILELANG_CACHE_DIR, else ~/.cache/tilelang-cpp; TILELANG_DISABLE_CACHE
// set to anything but "" or "0" turns reading and writing off. Entries are content-addressed
// directories; each file is published with a rename and verified against kernel.meta on load.
#pragma once
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "runtime/module.h"
#include "support/file_util.h"

namespace tl {
namespace cache_util {
constexpr size_t kMaxMetaBytes = 4096, kMaxLibraryBytes = size_t(512) << 20;

std::string HashHex(const std::string& s);  // 32 hex digits, content hash
using ::tl::ReadFile;  // the general file helpers (support/file_util.h), as the cache's users name them
using ::tl::WriteFile;
using ::tl::MakeDirs;
/// Reads a file of the cache only if it is a regular file (not a symlink, FIFO or device) of at
/// most `max_bytes`; never blocks and never reads without limit.
bool ReadCacheFile(const std::string& path, size_t max_bytes, std::string* out);
/// Writes through a unique temporary file and a rename, so readers never see a partial file.
void AtomicWrite(const std::string& path, const std::string& data);
std::string UniqueSuffix();
std::string CacheDir(const CompileOptions& opt);  // opt.cache_dir, $TILELANG_CACHE_DIR, ~/.cache/tilelang-cpp
bool CacheDisabled(const CompileOptions& opt);    // !opt.use_cache or TILELANG_DISABLE_CACHE
/// One entry of the disk cache, the same protocol for every backend. An entry is the directory
/// <root>/<kind>/<key> (kind "" for the CPU target: <root>/<key>) holding the backend's named files
/// and kernel.meta, which names the key and each file's size and content hash:
///
///   tilelang-cpp cache entry 2
///   key <key>
///   <file> <bytes> <hash>      (one line per file, in the backend's order)
///
/// Load() trusts an entry only when the meta and every file are regular files of sane size (not a
/// FIFO, a symlink or a device) and the meta is exactly the one these bytes and this key give, so a
/// truncated, corrupted, half-written entry, or files copied from another entry, read as absent and
/// the backend rebuilds. Publish() writes each file through a temporary name and a rename (removing
/// whatever non-regular file squats on the name first) and the meta last: concurrent builders of one
/// key never expose a partial entry.
class CacheEntry {
 public:
  CacheEntry(const CompileOptions& opt, const std::string& kind, const std::string& key);
  bool enabled() const { return enabled_; }  // false: TILELANG_DISABLE_CACHE or use_cache=False
  const std::string& dir() const { return dir_; }
  std::string Path(const std::string& file) const { return dir_ + "/" + file; }
  /// Reads every named file into its string; false (the strings untouched) unless the entry is valid.
  bool Load(const std::vector<std::pair<std::string, std::string*>>& files,
            size_t max_bytes = kMaxLibraryBytes) const;
  void Publish(const std::vector<std::pair<std::string, const std::string*>>& files) const;
  /// kernel.meta's text for these files under `key`.
  static std::string Meta(const std::string& key,
                          const std::vector<std::pair<std::string, const std::string*>>& files);

 private:
  bool enabled_;
  std::string key_, dir_;
};
/// The host compiler ($CXX or g++ unless opt.cxx) and its version line (memoised).
std::string CompilerCommand(const CompileOptions& opt);
std::string CompilerVersion(const std::string& cxx);
}  // namespace cache_util
}  // namespace tl
