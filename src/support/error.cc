// Source registry and span formatting for diagnostics.
#include "support/error.h"

#include <fstream>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace tl {
namespace {
std::mutex g_mu;
std::unordered_map<std::string, std::string>& Registry() {
  static std::unordered_map<std::string, std::string> r;
  return r;
}

bool SourceLine(const std::string& file, int line, std::string* out) {
  std::string text;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    auto it = Registry().find(file);
    if (it != Registry().end()) text = it->second;
  }
  if (text.empty()) {
    std::ifstream in(file);
    if (!in) return false;
    std::string l;
    for (int i = 1; std::getline(in, l); ++i)
      if (i == line) {
        *out = l;
        return true;
      }
    return false;
  }
  size_t pos = 0;
  for (int i = 1; i < line; ++i) {
    pos = text.find('\n', pos);
    if (pos == std::string::npos) return false;
    ++pos;
  }
  size_t end = text.find('\n', pos);
  *out = text.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
  return true;
}
}  // namespace

void RegisterSource(const std::string& file, const std::string& text) {
  std::lock_guard<std::mutex> lock(g_mu);
  Registry()[file] = text;
}

std::string FormatSpan(const Span& span) {
  if (!span.defined()) return "";
  std::ostringstream os;
  os << span.file << ":" << span.line << ":" << span.col;
  std::string src;
  if (SourceLine(span.file, span.line, &src)) {
    os << "\n    " << src << "\n    ";
    for (int i = 1; i < span.col && i <= static_cast<int>(src.size()); ++i)
      os << (src[i - 1] == '\t' ? '\t' : ' ');
    os << "^";
  }
  return os.str();
}

std::string UserError::Compose(const std::string& msg, const Span& span) {
  if (!span.defined()) return msg;
  std::string loc = FormatSpan(span);
  size_t nl = loc.find('\n');
  if (nl == std::string::npos) return loc + ": " + msg;
  return loc.substr(0, nl) + ": " + msg + loc.substr(nl);
}

}  // namespace tl
