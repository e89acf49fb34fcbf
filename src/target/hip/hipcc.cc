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
  if (const char* e = std::getenv("TL_HIPCC"); e && *e) return IsExecutable(e) ? e : "";
  for (const char* p : {"/usr/bin/hipcc", "/opt/rocm/bin/hipcc", "/usr/local/bin/hipcc"})
    if (IsExecutable(p)) return p;
  return "";
}

namespace {

std::string VersionLines(const std::string& path) {
  std::string out, v;
  RunCommand({path, "--version"}, &out);
  std::istringstream is(out);
  std::string line;
  while (std::getline(is, line))
    if (line.find("version") != std::string::npos) v += line + "; ";
  return v.empty() ? path : v;
}

// The ROCm device libraries (ocml, ockl and the oclc_* control libraries) as bitcode, or "".
std::string DeviceLibDir() {
  if (const char* e = std::getenv("TL_ROCM_DEVICE_LIBS"); e && *e) return e;
  for (const char* d :
       {"/usr/lib/x86_64-linux-gnu/amdgcn/bitcode", "/usr/lib/aarch64-linux-gnu/amdgcn/bitcode",
        "/opt/rocm/amdgcn/bitcode", "/opt/rocm/lib/amdgcn/bitcode"})
    if (access((std::string(d) + "/ocml.bc").c_str(), R_OK) == 0) return d;
  return "";
}

// The oclc_isa_version library for `arch` ("gfx942" -> 942), or, when the installed device libraries
// predate the arch, the newest one of the same family below it (gfx942 -> gfx940: gfx942 runs the
// gfx940 instruction set, which is all ocml asks the ISA version about). "" when there is none.
std::string IsaVersionLib(const std::string& dir, const std::string& arch, std::string* stand_in) {
  std::string want = arch.substr(3);
  auto path = [&](const std::string& v) { return dir + "/oclc_isa_version_" + v + ".bc"; };
  if (access(path(want).c_str(), R_OK) == 0) return path(want);
  for (char c = want.back(); c > '0';) {
    --c;
    std::string v = want.substr(0, want.size() - 1) + c;
    if (access(path(v).c_str(), R_OK) == 0) {
      *stand_in = "gfx" + v;
      return path(v);
    }
  }
  return "";
}

bool UnknownArch(const std::string& log, const std::string& arch) {
  return log.find("invalid target ID '" + arch) != std::string::npos ||
         log.find("unsupported CUDA gpu architecture") != std::string::npos ||
         log.find("Invalid offload arch") != std::string::npos;
}

// Runs one compile command in a scratch directory holding kernel.hip; reads kernel.co and the
// -save-temps assembly, then removes every file the compilers write there (by their fixed names).
bool RunInScratch(const std::string& source, const std::string& arch, const std::vector<std::string>& args,
                  const std::string& compiler, CompileResult* r, std::string* cmd) {
  std::string work = TempDir() + "/tl-hip-" + cache_util::UniqueSuffix();
  cache_util::MakeDirs(work);
  cache_util::WriteFile(work + "/kernel.hip", source);
  std::vector<std::string> argv = {compiler};
  argv.insert(argv.end(), args.begin(), args.end());
  *cmd = "cd " + CommandLine({work}) + " && " + CommandLine(argv);
  r->log.clear();
  int rc = RunCommand(argv, &r->log, work);
  std::string s_file = work + "/kernel-hip-amdgcn-amd-amdhsa-" + arch + ".s";
  bool ok = rc == 0 && cache_util::ReadFile(work + "/kernel.co", &r->code_object) &&
            cache_util::ReadFile(s_file, &r->assembly);
  for (const char* suffix : {".bc", ".cui", ".hipi", ".o", ".s", ".out", ".hipfb", ".tmp"})
    std::remove((work + "/kernel-hip-amdgcn-amd-amdhsa-" + arch + suffix).c_str());
  for (const char* f : {"kernel.hip", "kernel.co", "kernel.co.resolution.txt"})
    std::remove((work + "/" + f).c_str());
  rmdir(work.c_str());
  return ok;
}

// -disable-promote-alloca-to-lds: the AMDGPU backend would otherwise move per-lane arrays (a reduction's
// partials) into LDS behind the compiler's back, so the kernel's LDS would exceed the planned table (and the
// 64 KB check) and lower occupancy; they stay in VGPRs (the tests check no scratch appears instead).
const char* kCommonFlags =
    " -std=c++17 -nogpuinc -O3 --offload-device-only --no-gpu-bundle-output -save-temps"
    " -Wno-unused-command-line-argument -mllvm -disable-promote-alloca-to-lds";

}  // namespace

std::string HipClangPath() {
  if (const char* e = std::getenv("TL_HIP_CLANG"); e && *e) return IsExecutable(e) ? e : "";
  for (int v = 22; v >= 17; --v)
    for (const char* d : {"/usr/bin/clang++-", "/usr/lib/llvm-"}) {
      std::string p = d == std::string("/usr/bin/clang++-") ? d + std::to_string(v)
                                                            : d + std::to_string(v) + "/bin/clang++";
      if (IsExecutable(p)) return p;
    }
  return "";
}

std::string CompileFlags() { return kCommonFlags; }

std::string HipccVersion() {
  static std::once_flag once;
  static std::string v;
  std::call_once(once, [] {
    std::string hipcc = HipccPath(), clang = HipClangPath();
    if (!hipcc.empty()) v = VersionLines(hipcc);
    if (!clang.empty()) v += "fallback " + VersionLines(clang);
  });
  return v;
}

bool NeedsZig(const std::string& arch) { return arch == "gfx950"; }

std::string ZigPath() {
  if (const char* e = std::getenv("TL_ZIG"); e && *e) return IsExecutable(e) ? e : "";
  return FindOnPath("zig");
}

std::string ToolchainVersion(const std::string& arch) {
  if (!NeedsZig(arch)) return HipccVersion();
  static std::once_flag once;
  static std::string v;
  std::call_once(once, [] {
    std::string zig = ZigPath();
    if (zig.empty()) return;
    std::string out;
    RunCommand({zig, "clang", "--version"}, &out);
    v = "zig " + zig + ": " + out.substr(0, out.find('\n'));
  });
  return v;
}

namespace {

// gfx950 through ziglang's clang (LLVM 22, from PyPI): HIP device code to assembly (-S; the driver's
// one-step path cannot link an AMDGPU object), assembled by the same clang, linked by its ld.lld into the
// code object. There are no ROCm device libraries for it: the header's own math (TL_HIP_NO_DEVICE_LIBS,
// include/tl_device/hip/math.h), and --no-undefined turns any call the backend could not lower into an
// error here rather than a code object that fails to load.
CompileResult CompileWithZig(const std::string& source, const std::string& arch,
                             const std::string& include_dir) {
  std::string zig = ZigPath();
  if (zig.empty())
    throw UserError(ErrorKind::kUnsupported,
                    "target 'hip -arch=" + arch +
                        "': building for it needs clang 22 with the AMDGPU target, which the PyPI package "
                        "'ziglang' provides (`pip install ziglang`; scripts/setup.sh installs it), found "
                        "through $TL_ZIG or `zig` on PATH; without it the kernel can still be generated and "
                        "run in the emulator (execution_backend=\"emulator\")");
  CompileResult r;
  std::string work = TempDir() + "/tl-hip-" + cache_util::UniqueSuffix();
  cache_util::MakeDirs(work);
  cache_util::WriteFile(work + "/kernel.hip", source);
  std::vector<std::string> compile = {zig, "clang", "-x", "hip"};
  for (const std::string& f : SplitWords(kCommonFlags))
    if (f != "-save-temps" && f != "--no-gpu-bundle-output") compile.push_back(f);
  for (const std::string& f : std::vector<std::string>{
           "--no-gpu-bundle-output", "-nogpulib", "-DTL_HIP_NO_DEVICE_LIBS", "--offload-arch=" + arch,
           "-I" + include_dir, "-S", "kernel.hip", "-o", "kernel.s"})
    compile.push_back(f);
  const std::vector<std::vector<std::string>> steps = {
      compile,
      {zig, "clang", "-target", "amdgcn-amd-amdhsa", "-mcpu=" + arch, "-c", "kernel.s", "-o", "kernel.o"},
      {zig, "ld.lld", "-shared", "--no-undefined", "kernel.o", "-o", "kernel.co"}};
  bool ok = true;
  std::string cmd;
  for (const auto& argv : steps) {
    cmd = "cd " + CommandLine({work}) + " && " + CommandLine(argv);
    std::string log;
    ok = RunCommand(argv, &log, work) == 0;
    r.log += log;
    if (!ok) break;
  }
  ok = ok && cache_util::ReadFile(work + "/kernel.co", &r.code_object) &&
       cache_util::ReadFile(work + "/kernel.s", &r.assembly);
  for (const char* f : {"kernel.hip", "kernel.s", "kernel.o", "kernel.co"})
    std::remove((work + "/" + f).c_str());
  rmdir(work.c_str());
  if (!ok)
    throw UserError(ErrorKind::kCompile, "ziglang's clang failed on the generated HIP source for " + arch +
                                             " (a TileLang-C++ bug if the program was accepted):\n" + cmd +
                                             "\n" + r.log.substr(0, 4000));
  r.compiler = ToolchainVersion(arch) + "; no device libraries (the header's own math)";
  return r;
}

}  // namespace

CompileResult Compile(const std::string& source, const std::string& arch, const std::string& include_dir) {
  if (NeedsZig(arch)) return CompileWithZig(source, arch, include_dir);
  std::string hipcc = HipccPath(), clang = HipClangPath();
  if (hipcc.empty() && clang.empty())
    throw UserError(
        ErrorKind::kUnsupported,
        "target 'hip': no hipcc found (install it with `apt-get install hipcc`, or set TL_HIPCC; a clang 17+ "
        "with the AMDGPU target also does, e.g. `apt-get install clang-19 lld-19`); "
        "without it HIP kernels can still be generated and run in the emulator "
        "(execution_backend=\"emulator\")");
  CompileResult r;
  std::string cmd;
  std::vector<std::string> args = SplitWords(kCommonFlags);
  args.push_back("--offload-arch=" + arch);
  const std::vector<std::string> inc = {"-I" + include_dir, "-c", "kernel.hip", "-o", "kernel.co"};
  auto with = [](std::vector<std::string> a, const std::vector<std::string>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  };
  if (!hipcc.empty()) {
    if (RunInScratch(source, arch, with(args, inc), hipcc, &r, &cmd)) {
      r.compiler = VersionLines(hipcc);
      return r;
    }
    if (!UnknownArch(r.log, arch))
      throw UserError(
          ErrorKind::kCompile,
          "hipcc failed on the generated HIP source (a TileLang-C++ bug if the program was accepted):\n" +
              cmd + "\n" + r.log.substr(0, 4000));
    if (clang.empty())
      throw UserError(
          ErrorKind::kUnsupported,
          "target 'hip -arch=" + arch + "': the installed hipcc (" + VersionLines(hipcc) +
              ") cannot compile for " + arch +
              "; use gfx90a or gfx940, or install a newer clang with the AMDGPU target (on Debian: "
              "apt-get install clang-19 lld-19), which is then used for it");
  }
  // A newer clang for what hipcc does not know (Debian's ROCm 5.2 hipcc stops at gfx940/941): the same
  // HIP compile, with the device libraries linked by hand because the installed ones predate the arch.
  std::string libs = DeviceLibDir(), stand_in;
  std::string isa = libs.empty() ? "" : IsaVersionLib(libs, arch, &stand_in);
  if (isa.empty())
    throw UserError(ErrorKind::kUnsupported,
                    "target 'hip -arch=" + arch +
                        "': no ROCm device libraries (ocml.bc) for it were found (install "
                        "rocm-device-libs, or set TL_ROCM_DEVICE_LIBS)");
  std::vector<std::string> link = {"-nogpulib"};
  auto link_bitcode = [&](const std::string& path) {
    for (const std::string& a :
         {std::string("-Xclang"), std::string("-mlink-builtin-bitcode"), std::string("-Xclang"), path})
      link.push_back(a);
  };
  for (std::string lib :
       {"ocml", "ockl", "oclc_daz_opt_off", "oclc_unsafe_math_off", "oclc_finite_only_off",
        "oclc_correctly_rounded_sqrt_on", "oclc_wavefrontsize64_on", "oclc_abi_version_500"})
    link_bitcode(libs + "/" + lib + ".bc");
  link_bitcode(isa);
  if (!RunInScratch(source, arch, with(with(args, link), inc), clang, &r, &cmd))
    throw UserError(ErrorKind::kCompile, "clang failed on the generated HIP source for " + arch +
                                             " (a TileLang-C++ bug if the program was accepted):\n" + cmd +
                                             "\n" + r.log.substr(0, 4000));
  r.compiler =
      VersionLines(clang) + (stand_in.empty() ? "" : "device libraries of " + stand_in + " for " + arch);
  return r;
}

std::map<std::string, int64_t> ParseResources(const std::string& s) {
  std::map<std::string, int64_t> r;
  r["vgprs"] = After(s, "; NumVgprs:");
  r["agprs"] = After(s, "; NumAgprs:");
  r["total_vgprs"] = After(s, "; TotalNumVgprs:");
  bool found = false;
  r["sgprs"] = After(s, "; NumSgprs:", &found);
  if (!found) r["sgprs"] = After(s, "; TotalNumSgprs:");  // LLVM 22 prints only the total
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
