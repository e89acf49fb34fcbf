// General file, path and environment helpers (no policy: the disk cache's lives in runtime/cache_util.h).
#pragma once
#include <string>
#include <vector>

namespace tl {

/// The whole file as bytes; false when it cannot be opened.
bool ReadFile(const std::string& path, std::string* out);
/// Writes `data` to `path` (a UserError when it cannot).
void WriteFile(const std::string& path, const std::string& data);
/// Creates `path` and its missing parents (mode 0755); existing ones are kept.
void MakeDirs(const std::string& path);
bool FileExists(const std::string& path);
bool IsExecutable(const std::string& path);
/// The directory part of a path ("." for a bare name, "/" for a file at the root).
std::string Dirname(const std::string& path);
/// The value of an environment variable, "" when unset.
std::string Getenv(const char* name);
/// $TMPDIR, else /tmp.
std::string TempDir();
/// The first executable `tool` in the directories of $PATH, else "".
std::string FindOnPath(const std::string& tool);

/// The parts of `s` between the separators, empty parts dropped.
std::vector<std::string> SplitNonEmpty(const std::string& s, char sep);

}  // namespace tl
