// See file_util.h.
#include "support/file_util.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "support/error.h"

namespace tl {

bool ReadFile(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  return true;
}

void WriteFile(const std::string& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary);
  out << data;
  if (!out) throw UserError(ErrorKind::kCompile, "cannot write " + path);
}

void MakeDirs(const std::string& path) {
  std::string cur;
  if (!path.empty() && path[0] == '/') cur = "/";
  for (const std::string& part : SplitNonEmpty(path, '/')) {
    cur += part + "/";
    mkdir(cur.c_str(), 0755);
  }
}

bool FileExists(const std::string& path) {
  struct stat st;
  return !path.empty() && ::stat(path.c_str(), &st) == 0;
}

bool IsExecutable(const std::string& path) { return !path.empty() && access(path.c_str(), X_OK) == 0; }

std::string Dirname(const std::string& path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
}

std::string Getenv(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

std::string TempDir() {
  std::string t = Getenv("TMPDIR");
  return t.empty() ? "/tmp" : t;
}

std::string FindOnPath(const std::string& tool) {
  for (const std::string& dir : SplitNonEmpty(Getenv("PATH"), ':'))
    if (FileExists(dir + "/" + tool)) return dir + "/" + tool;
  return "";
}

std::vector<std::string> SplitNonEmpty(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

}  // namespace tl
