// hipcc driven as a subprocess; see hipcc.h.
#include "target/hip/hipcc.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <sstream>

#include "runtime/cache_util.h"
#include "support/error.h"
#include "support/subprocess.h"

namespace tl {
namespace hip {
namespace {

bool Executable(const std::string& p) { return access(p.c_str(), X_OK) == 0; }

std::string Quote(const std::string& s) {
  std::string r = "'";
  for (char c : s) r += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return r + "'";
}

// The first integer after `key` in `text` (0 when absent).
int64_t After(const std::string& text, const std::string& key, bool* found = nullptr) {
  size_t p = text.find(key);
  if (found) *found = p != std::string::npos;
  if (p == std::string::npos) return 0;
  p += key.size();
  while (p < text.size() && (text[p] == ' ' || text[p] == '\t')) ++p;
  return std::strtoll(text.c_str() + p, nullptr, 10);
}

}  // namespace

std::string HipccPath() {
  if (const char* e = std::getenv("TL_HIPCC"); e && *e) return Executable(e) ? e : "";
  for (const char* p : {"/usr/bin/hipcc", "/opt/rocm/bin/hipcc", "/usr/local/bin/hipcc"})
    if (Executable(p)) return p;
  return "";
}

std::string HipccVersion() {
  static std::once_flag once;
  static std::string v;
  std::call_once(once, [] {
    std::string path = HipccPath(), out;
    if (path.empty()) return;
    RunCommand(Quote(path) + " --version", &out);
    std::istringstream is(out);
    std::string line;
    while (std::getline(is, line))
      if (line.find("version") != std::string::npos) v += line + "; ";
    if (v.empty()) v = path;
  });
  return v;
}

CompileResult Compile(const std::string& source, const std::string& arch, const std::string& include_dir) {
  std::string hipcc = HipccPath();
  if (hipcc.empty())
    throw UserError(
        ErrorKind::kUnsupported,
        "target 'hip': no hipcc found (install it with `apt-get install hipcc`, or set TL_HIPCC); "
        "without it HIP kernels can still be generated and run in the emulator "
        "(execution_backend=\"emulator\")");
  const char* tmp = std::getenv("TMPDIR");
  std::string work = std::string(tmp && *tmp ? tmp : "/tmp") + "/tl-hip-" + cache_util::UniqueSuffix();
  cache_util::MakeDirs(work);
  cache_util::WriteFile(work + "/kernel.hip", source);
  std::string cmd =
      "cd " + Quote(work) + " && " + Quote(hipcc) + " -std=c++17 -nogpuinc -O3 --offload-arch=" + arch +
      " --offload-device-only --no-gpu-bundle-output -save-temps -Wno-unused-command-line-argument"
      " -I" +
      Quote(include_dir) + " -c kernel.hip -o kernel.co";
  CompileResult r;
  int rc = RunCommand(cmd, &r.log);
  std::string s_file = work + "/kernel-hip-amdgcn-amd-amdhsa-" + arch + ".s";
  bool ok = rc == 0 && cache_util::ReadFile(work + "/kernel.co", &r.code_object) &&
            cache_util::ReadFile(s_file, &r.assembly);
  // hipcc's temporaries, by their fixed names only
  for (const char* suffix : {".bc", ".cui", ".o", ".s", ".out", ".hipfb", ".tmp"})
    std::remove((work + "/kernel-hip-amdgcn-amd-amdhsa-" + arch + suffix).c_str());
  for (const char* f : {"kernel.hip", "kernel.co", "kernel.co.resolution.txt"})
    std::remove((work + "/" + f).c_str());
  rmdir(work.c_str());
  if (!ok) {
    if (r.log.find("invalid target ID '" + arch) != std::string::npos ||
        r.log.find("unsupported CUDA gpu architecture") != std::string::npos ||
        r.log.find("Invalid offload arch") != std::string::npos)
      throw UserError(ErrorKind::kUnsupported, "target 'hip -arch=" + arch + "': the installed hipcc (" +
                                                   HipccVersion() + ") cannot compile for " + arch +
                                                   "; use gfx90a or gfx940");
    throw UserError(
        ErrorKind::kCompile,
        "hipcc failed on the generated HIP source (a TileLang-C++ bug if the program was accepted):\n" + cmd +
            "\n" + r.log.substr(0, 4000));
  }
  r.compiler = HipccVersion();
  return r;
}

std::map<std::string, int64_t> ParseResources(const std::string& s) {
  std::map<std::string, int64_t> r;
  r["vgprs"] = After(s, "; NumVgprs:");
  r["agprs"] = After(s, "; NumAgprs:");
  r["total_vgprs"] = After(s, "; TotalNumVgprs:");
  r["sgprs"] = After(s, "; NumSgprs:");
  r["lds_bytes"] = After(s, ".amdhsa_group_segment_fixed_size");
  r["scratch_bytes"] = After(s, ".amdhsa_private_segment_fixed_size");
  r["occupancy"] = After(s, "; Occupancy:");
  // Spills: the compiler marks every spill store/reload in a trailing comment ("; 4-byte Folded Spill",
  // "Folded Reload"); SGPR spills go to VGPR lanes (v_writelane) with the same marks.
  int64_t spill_v = 0, spill_s = 0, mfma = 0;
  std::istringstream is(s);
  std::string line;
  while (std::getline(is, line)) {
    size_t p = line.find_first_not_of(" \t");
    if (p == std::string::npos || line[p] == ';' || line[p] == '.') continue;
    std::string ins = line.substr(p, line.find_first_of(" \t", p) - p);
    if (ins.rfind("v_mfma", 0) == 0) ++mfma;
    bool spill = line.find("Spill") != std::string::npos;
    if (spill && ins.rfind("v_writelane", 0) == 0)
      ++spill_s;
    else if (spill)
      ++spill_v;
  }
  r["spill_stores"] = spill_v;
  r["sgpr_spill_lanes"] = spill_s;
  r["mfma_count"] = mfma;
  return r;
}

}  // namespace hip
}  // namespace tl
