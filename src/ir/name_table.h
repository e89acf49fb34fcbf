// Unique printable names for vars and buffers (by identity), shared by the DSL printer and the
// C-family code generators: the first request for a key gets its base name, later keys with the
// same base get _1, _2, ...
#pragma once
#include <set>
#include <string>
#include <unordered_map>

namespace tl {

class NameTable {
 public:
  /// `reserved`: names never handed out (a base equal to one gets "_1", ...); `reserved_prefix`:
  /// bases starting with it get "v_" in front; `c_identifiers`: characters outside [A-Za-z0-9_]
  /// become '_', and a leading digit or a name C/C++ reserves for the implementation ("__x",
  /// "_X") gets "v_" in front.
  explicit NameTable(std::set<std::string> reserved = {}, std::string reserved_prefix = "",
                     bool c_identifiers = false)
      : used_(std::move(reserved)), prefix_(std::move(reserved_prefix)), c_ids_(c_identifiers) {}

  std::string Get(const void* key, const std::string& base) {
    auto it = names_.find(key);
    if (it != names_.end()) return it->second;
    std::string n = base;
    if (c_ids_) {
      for (char& c : n)
        if (!(isalnum(static_cast<unsigned char>(c)) || c == '_')) c = '_';
      if (!n.empty() && isdigit(static_cast<unsigned char>(n[0]))) n = "v_" + n;
      if (n.size() >= 2 && n[0] == '_' && (n[1] == '_' || isupper(static_cast<unsigned char>(n[1]))))
        n = "v" + n;
    }
    if (n.empty()) n = "v";
    if (!prefix_.empty() && n.rfind(prefix_, 0) == 0) n = "v_" + n;
    std::string cand = n;
    for (int k = 1; used_.count(cand); ++k) cand = n + "_" + std::to_string(k);
    used_.insert(cand);
    names_[key] = cand;
    return cand;
  }

 private:
  std::unordered_map<const void*, std::string> names_;
  std::set<std::string> used_;
  std::string prefix_;
  bool c_ids_;
};

}  // namespace tl
