// The disk cache shared by every backend and the autotuner (runtime/disk_cache.cc): file and
// hashing helpers and the one environment policy.
//
// Policy: entries live under $TILELANG_CACHE_DIR, else ~/.cache/tilelang-cpp; TILELANG_DISABLE_CACHE
// set to anything but "" or "0" turns reading and writing off. Entries are content-addressed
// directories; each file is published with a rename and verified against kernel.meta on load.
#pragma once
#include <cstddef>
#include <string>

#include "runtime/module.h"

namespace tl {
namespace cache_util {
constexpr size_t kMaxMetaBytes = 4096, kMaxLibraryBytes = size_t(512) << 20;

std::string HashHex(const std::string& s);  // 32 hex digits, content hash
bool ReadFile(const std::string& path, std::string* out);
void WriteFile(const std::string& path, const std::string& data);
/// Reads a file of the cache only if it is a regular file (not a symlink, FIFO or device) of at
/// most `max_bytes`; never blocks and never reads without limit.
bool ReadCacheFile(const std::string& path, size_t max_bytes, std::string* out);
void MakeDirs(const std::string& path);
/// Writes through a unique temporary file and a rename, so readers never see a partial file.
void AtomicWrite(const std::string& path, const std::string& data);
std::string UniqueSuffix();
std::string CacheDir(const CompileOptions& opt);  // opt.cache_dir, $TILELANG_CACHE_DIR, ~/.cache/tilelang-cpp
bool CacheDisabled(const CompileOptions& opt);    // !opt.use_cache or TILELANG_DISABLE_CACHE
/// kernel.meta's content for an entry whose main file holds `bytes`.
std::string EntryMeta(const std::string& bytes, const std::string& key);
/// An entry is valid when `file` and kernel.meta are regular files of sane size, and the meta
/// names this file's size and hash and this key (else it is rebuilt: truncated, corrupted,
/// half-written, or copied from another entry).
bool EntryValid(const std::string& dir, const std::string& file, const std::string& key,
                size_t max_bytes = kMaxLibraryBytes);
/// The host compiler ($CXX or g++ unless opt.cxx) and its version line (memoised).
std::string CompilerCommand(const CompileOptions& opt);
std::string CompilerVersion(const std::string& cxx);
}  // namespace cache_util
}  // namespace tl
