// The disk cache shared by every backend: content hashes, bounded reads of cache files, atomic
// publication, and the one environment policy (TILELANG_CACHE_DIR, TILELANG_DISABLE_CACHE).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <sstream>

#include "runtime/cache_util.h"
#include "support/error.h"
#include "support/file_util.h"
#include "support/subprocess.h"

namespace tl {
namespace cache_util {

uint64_t Fnv(const std::string& s, uint64_t seed) {
  uint64_t h = 0xcbf29ce484222325ULL ^ seed;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}
std::string Hex(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(v));
  return buf;
}
std::string HashHex(const std::string& s) { return Hex(Fnv(s, 0)) + Hex(Fnv(s, 0x5bd1e995)); }

bool ReadCacheFile(const std::string& path, size_t max_bytes, std::string* out) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || static_cast<size_t>(st.st_size) > max_bytes)
    return false;
  int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat fst;
  bool ok =
      fstat(fd, &fst) == 0 && S_ISREG(fst.st_mode) && fst.st_ino == st.st_ino && fst.st_dev == st.st_dev;
  std::string data;
  if (ok) {
    data.resize(static_cast<size_t>(fst.st_size));
    size_t got = 0;
    while (got < data.size()) {
      ssize_t r = read(fd, &data[got], data.size() - got);
      if (r <= 0) break;
      got += static_cast<size_t>(r);
    }
    ok = got == data.size();
  }
  close(fd);
  if (ok) *out = std::move(data);
  return ok;
}


std::string CompilerCommand(const CompileOptions& opt) {
  if (!opt.cxx.empty()) return opt.cxx;
  const char* e = std::getenv("CXX");
  return e && *e ? e : "g++";
}

std::string CompilerVersion(const std::string& cxx) {
  static std::mutex mu;
  static std::map<std::string, std::string> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(cxx);
  if (it != cache.end()) return it->second;
  std::string out;
  std::vector<std::string> argv = SplitWords(cxx);
  argv.push_back("--version");
  RunCommand(argv, &out);
  return cache[cxx] = out.substr(0, out.find('\n'));
}

std::string CacheDir(const CompileOptions& opt) {
  if (!opt.cache_dir.empty()) return opt.cache_dir;
  if (const char* d = std::getenv("TILELANG_CACHE_DIR")) return d;
  const char* home = std::getenv("HOME");
  return std::string(home ? home : "/tmp") + "/.cache/tilelang-cpp";
}

bool CacheDisabled(const CompileOptions& opt) {
  const char* d = std::getenv("TILELANG_DISABLE_CACHE");
  return !opt.use_cache || (d && *d && std::string(d) != "0");
}

CacheEntry::CacheEntry(const CompileOptions& opt, const std::string& kind, const std::string& key)
    : enabled_(!CacheDisabled(opt)), key_(key), dir_(CacheDir(opt) + (kind.empty() ? "" : "/" + kind) + "/" + key) {}

std::string CacheEntry::Meta(const std::string& key,
                             const std::vector<std::pair<std::string, const std::string*>>& files) {
  std::string m = "tilelang-cpp cache entry 2\nkey " + key + "\n";
  for (const auto& f : files) m += f.first + " " + std::to_string(f.second->size()) + " " + HashHex(*f.second) + "\n";
  return m;
}

bool CacheEntry::Load(const std::vector<std::pair<std::string, std::string*>>& files, size_t max_bytes) const {
  if (!enabled_) return false;
  std::string meta;
  if (!ReadCacheFile(Path("kernel.meta"), kMaxMetaBytes, &meta)) return false;
  std::vector<std::string> data(files.size());
  std::vector<std::pair<std::string, const std::string*>> got;
  for (size_t i = 0; i < files.size(); ++i) {
    if (!ReadCacheFile(Path(files[i].first), max_bytes, &data[i])) return false;
    got.emplace_back(files[i].first, &data[i]);
  }
  if (meta != Meta(key_, got)) return false;
  for (size_t i = 0; i < files.size(); ++i) *files[i].second = std::move(data[i]);
  return true;
}

void CacheEntry::Publish(const std::vector<std::pair<std::string, const std::string*>>& files) const {
  if (!enabled_) return;
  MakeDirs(dir_);
  auto put = [&](const std::string& name, const std::string& bytes) {
    // rename() replaces a regular file atomically; whatever else squats on the name (a FIFO, a
    // symlink, a directory) is removed first
    const std::string path = Path(name);
    struct stat st;
    if (lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
      if (std::remove(path.c_str()) != 0 && S_ISDIR(st.st_mode)) rmdir(path.c_str());
    }
    AtomicWrite(path, bytes);
  };
  for (const auto& f : files) put(f.first, *f.second);
  put("kernel.meta", Meta(key_, files));  // last: until it is in place the entry reads as absent
}

std::string UniqueSuffix() {
  static std::atomic<uint64_t> counter{0};
  std::random_device rd;
  return std::to_string(getpid()) + "-" + std::to_string(counter++) + "-" + std::to_string(rd());
}

void AtomicWrite(const std::string& path, const std::string& data) {
  std::string tmp = path + ".tmp-" + UniqueSuffix();
  WriteFile(tmp, data);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw UserError(ErrorKind::kCompile, "cannot move " + tmp + " into the kernel cache");
  }
}

}  // namespace cache_util
}  // namespace tl
