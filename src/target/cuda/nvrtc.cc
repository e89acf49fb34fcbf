// NVRTC through dlopen, with an nvcc + ptxas subprocess as the fallback; see nvrtc.h.
//
// One NVRTC call with -arch=sm_XX yields both the PTX and the cubin (measured: no dearer than
// compiling to compute_XX alone plus a second step), and -Xptxas=-v makes ptxas write its
// resource report into the program log, so a compile costs exactly one front end + one ptxas run.
#include "support/subprocess.h"
#include "target/cuda/nvrtc.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>

#include "support/dynlib.h"
#include "support/error.h"
#include "support/file_util.h"
#include "target/cuda/cubin_info.h"

namespace tl::cuda {
namespace {

// ---- The few NVRTC declarations we need, written from the NVRTC documentation. -----------------
using nvrtcResult = int;  // enum nvrtcResult; NVRTC_SUCCESS = 0
constexpr nvrtcResult kNvrtcSuccess = 0;
constexpr nvrtcResult kNvrtcErrorInvalidOption = 5;
struct NvrtcProgramImpl;
using nvrtcProgram = NvrtcProgramImpl*;

struct NvrtcApi {
  void* handle = nullptr;
  std::string path;  // the library that was loaded
  int major = 0, minor = 0;
  nvrtcResult (*CreateProgram)(nvrtcProgram*, const char*, const char*, int, const char* const*,
                               const char* const*) = nullptr;
  nvrtcResult (*CompileProgram)(nvrtcProgram, int, const char* const*) = nullptr;
  nvrtcResult (*GetPTXSize)(nvrtcProgram, size_t*) = nullptr;
  nvrtcResult (*GetPTX)(nvrtcProgram, char*) = nullptr;
  nvrtcResult (*GetCUBINSize)(nvrtcProgram, size_t*) = nullptr;
  nvrtcResult (*GetCUBIN)(nvrtcProgram, char*) = nullptr;
  nvrtcResult (*GetProgramLogSize)(nvrtcProgram, size_t*) = nullptr;
  nvrtcResult (*GetProgramLog)(nvrtcProgram, char*) = nullptr;
  nvrtcResult (*DestroyProgram)(nvrtcProgram*) = nullptr;
  nvrtcResult (*Version)(int*, int*) = nullptr;
  const char* (*GetErrorString)(nvrtcResult) = nullptr;
};

// Roots of a CUDA toolkit named by the environment or installed at the usual place.
std::vector<std::string> ToolkitRoots() {
  std::vector<std::string> roots;
  for (const char* var : {"CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"}) {
    std::string v = Getenv(var);
    if (!v.empty()) roots.push_back(v);
  }
  roots.push_back("/usr/local/cuda");
  return roots;
}

// Directories above the library holding this code: a pip install puts it in
// site-packages/tilelang/lib/, so pip's nvidia/* wheels live two or three levels up.
std::vector<std::string> SitePackagesCandidates() {
  std::vector<std::string> out;
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&SitePackagesCandidates), &info) && info.dli_fname) {
    std::string dir = Dirname(info.dli_fname);
    for (int up = 0; up < 3; ++up) {
      out.push_back(dir);
      dir = Dirname(dir);
    }
  }
  return out;
}

using dynlib::Sym;

// Where NVRTC may be, in search order (bare names go to the dynamic loader's own search).
std::vector<std::string> NvrtcCandidates() {
  std::vector<std::string> candidates;
  std::string forced = Getenv("TL_NVRTC_LIBRARY");
  if (!forced.empty()) candidates.push_back(forced);
  const char* names[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"};
  for (const std::string& root : ToolkitRoots())
    for (const char* sub : {"/lib64/", "/lib/"})
      for (const char* n : names) candidates.push_back(root + sub + n);
  for (const char* n : names) candidates.push_back(n);
  for (const std::string& sp : SitePackagesCandidates())
    for (const char* wheel : {"/nvidia/cu13/lib/", "/nvidia/cuda_nvrtc/lib/"})
      for (const char* n : names) candidates.push_back(sp + wheel + n);
  return candidates;
}

// Loads NVRTC once per process; nullptr (and `why`) when no usable library is found.
const NvrtcApi* LoadNvrtc(std::string* why) {
  static NvrtcApi api;
  static std::string failure;
  static std::once_flag once;
  std::call_once(once, [] {
    std::vector<std::string> candidates = NvrtcCandidates();
    std::string errors;
    for (const std::string& c : candidates) {
      if (c.find('/') != std::string::npos && !FileExists(c)) continue;
      std::string e;
      void* h = dynlib::Open(c, &e);
      if (!h) {
        if (c.find('/') != std::string::npos) errors += "\n  " + e;
        continue;
      }
      NvrtcApi a;
      a.handle = h;
      a.path = c;
      bool ok = Sym(h, "nvrtcCreateProgram", &a.CreateProgram) &&
                Sym(h, "nvrtcCompileProgram", &a.CompileProgram) &&
                Sym(h, "nvrtcGetPTXSize", &a.GetPTXSize) && Sym(h, "nvrtcGetPTX", &a.GetPTX) &&
                Sym(h, "nvrtcGetCUBINSize", &a.GetCUBINSize) && Sym(h, "nvrtcGetCUBIN", &a.GetCUBIN) &&
                Sym(h, "nvrtcGetProgramLogSize", &a.GetProgramLogSize) &&
                Sym(h, "nvrtcGetProgramLog", &a.GetProgramLog) &&
                Sym(h, "nvrtcDestroyProgram", &a.DestroyProgram) && Sym(h, "nvrtcVersion", &a.Version) &&
                Sym(h, "nvrtcGetErrorString", &a.GetErrorString);
      if (!ok || a.Version(&a.major, &a.minor) != kNvrtcSuccess) {
        errors += "\n  " + c + ": not a usable NVRTC (missing symbols; NVRTC 11.1 or newer is needed)";
        dlclose(h);
        continue;
      }
      api = a;
      return;
    }
    failure = "NVRTC (libnvrtc.so) was not found" + (errors.empty() ? std::string() : ":" + errors);
  });
  if (!api.handle && why) *why = failure;
  return api.handle ? &api : nullptr;
}

// ---- nvcc fallback -----------------------------------------------------------------------------
std::string FindTool(const std::string& tool) {
  for (const std::string& root : ToolkitRoots())
    if (FileExists(root + "/bin/" + tool)) return root + "/bin/" + tool;
  return FindOnPath(tool);
}

std::string ReadWhole(const std::string& path) {
  std::string out;
  return ReadFile(path, &out) ? out : std::string();
}

bool UseNvccOnly() { return Getenv("TL_CUDA_COMPILER") == "nvcc"; }

std::string NvccVersion(const std::string& nvcc) {
  std::string out;
  if (RunCommand({nvcc, "--version"}, &out) != 0) return "nvcc";
  size_t pos = out.find("release ");
  if (pos == std::string::npos) return "nvcc";
  size_t end = out.find_first_of(",\n", pos);
  return "nvcc " + out.substr(pos + 8, end - pos - 8);
}

CompileResult CompileWithNvcc(const std::string& nvcc, const std::string& source, const std::string& arch,
                              const std::vector<std::string>& include_dirs,
                              const std::vector<std::string>& extra_options) {
  std::string ptxas = Dirname(nvcc) + "/ptxas";
  if (!FileExists(ptxas)) ptxas = FindTool("ptxas");
  if (ptxas.empty())
    TL_USER_ERROR(kUnsupported, Span(), "found nvcc at ", nvcc, " but no ptxas next to it or on PATH");
  std::string tmp = TempDir();
  std::string dir = tmp + "/tl-nvcc-XXXXXX";
  if (!mkdtemp(&dir[0])) TL_USER_ERROR(kUnsupported, Span(), "cannot create a temporary directory in ", tmp);
  const std::string cu = dir + "/kernel.cu", ptx = dir + "/kernel.ptx", cubin = dir + "/kernel.cubin";
  auto cleanup = [&] {
    for (const std::string& f : {cu, ptx, cubin}) std::remove(f.c_str());
    ::rmdir(dir.c_str());
  };
  auto t0 = std::chrono::steady_clock::now();
  std::ofstream(cu, std::ios::binary) << source;
  std::string virt = "compute_" + arch.substr(3);
  std::vector<std::string> cmd = {nvcc, "-ptx", "-arch=" + virt};
  for (const std::string& d : include_dirs) cmd.push_back("-I" + d);
  for (const std::string& o : extra_options) cmd.push_back(o);
  for (const std::string& a : {cu, std::string("-o"), ptx}) cmd.push_back(a);
  CompileResult r;
  r.compiler = "nvcc";
  if (RunCommand(cmd, &r.log) != 0) {
    cleanup();
    TL_USER_ERROR(kCompile, Span(), "CUDA compilation for ", arch, " failed (nvcc):\n", r.log);
  }
  std::string ptxas_log;
  int rc = RunCommand({ptxas, "-v", "-arch=" + arch, ptx, "-o", cubin}, &ptxas_log);
  r.log += ptxas_log;
  if (rc != 0) {
    cleanup();
    TL_USER_ERROR(kCompile, Span(), "ptxas for ", arch, " failed:\n", r.log);
  }
  r.ptx = ReadWhole(ptx);
  r.cubin = ReadWhole(cubin);
  cleanup();
  r.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

// ---- NVRTC -------------------------------------------------------------------------------------
std::string NvrtcName(const NvrtcApi& api) {
  return "nvrtc " + std::to_string(api.major) + "." + std::to_string(api.minor);
}

CompileResult CompileWithNvrtc(const NvrtcApi& api, const std::string& source, const std::string& arch,
                               const std::vector<std::string>& include_dirs,
                               const std::vector<std::string>& extra_options, bool ptxas_report = true) {
  std::vector<std::string> opts = {"-arch=" + arch};
  if (ptxas_report) opts.push_back("-Xptxas=-v");
  for (const std::string& d : include_dirs) opts.push_back("-I" + d);
  opts.insert(opts.end(), extra_options.begin(), extra_options.end());
  std::vector<const char*> argv;
  for (const std::string& o : opts) argv.push_back(o.c_str());

  CompileResult r;
  r.compiler = NvrtcName(api);
  auto t0 = std::chrono::steady_clock::now();
  nvrtcProgram prog = nullptr;
  nvrtcResult rc = api.CreateProgram(&prog, source.c_str(), "tl_kernel.cu", 0, nullptr, nullptr);
  if (rc != kNvrtcSuccess)
    TL_USER_ERROR(kCompile, Span(), "nvrtcCreateProgram failed: ", api.GetErrorString(rc));
  // Destroys the program on every path out of this function, exceptions included.
  struct Guard {
    const NvrtcApi& api;
    nvrtcProgram* prog;
    ~Guard() { api.DestroyProgram(prog); }
  } guard{api, &prog};
  rc = api.CompileProgram(prog, static_cast<int>(argv.size()), argv.data());
  size_t n = 0;
  if (api.GetProgramLogSize(prog, &n) == kNvrtcSuccess && n > 1) {
    r.log.resize(n);
    api.GetProgramLog(prog, &r.log[0]);
    r.log.resize(n - 1);  // drop the terminating NUL
  }
  if (rc == kNvrtcErrorInvalidOption && ptxas_report)  // an NVRTC without -Xptxas: read the cubin instead
    return CompileWithNvrtc(api, source, arch, include_dirs, extra_options, false);
  if (rc == kNvrtcErrorInvalidOption) {
    std::string all;
    for (const std::string& o : opts) all += " " + o;
    TL_USER_ERROR(kArgument, Span(), r.compiler, " rejected the compile options", all, "\n", r.log);
  }
  if (rc != kNvrtcSuccess)
    TL_USER_ERROR(kCompile, Span(), "CUDA compilation for ", arch, " failed (", r.compiler, ", ",
                  api.GetErrorString(rc), "):\n", r.log);
  if (api.GetPTXSize(prog, &n) == kNvrtcSuccess && n > 1) {
    r.ptx.resize(n);
    api.GetPTX(prog, &r.ptx[0]);
    r.ptx.resize(n - 1);
  }
  if (api.GetCUBINSize(prog, &n) == kNvrtcSuccess && n > 0) {
    r.cubin.resize(n);
    api.GetCUBIN(prog, &r.cubin[0]);
  }
  r.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  TL_ICHECK(!r.cubin.empty(), r.compiler, " compiled for ", arch, " but returned no cubin");
  return r;
}

// "sm_" followed by two or three digits and an optional feature suffix ('a' or 'f').
bool ValidArch(const std::string& arch) {
  if (arch.size() < 5 || arch.compare(0, 3, "sm_") != 0) return false;
  size_t i = 3;
  while (i < arch.size() && std::isdigit(static_cast<unsigned char>(arch[i]))) ++i;
  if (i - 3 < 2 || i - 3 > 3) return false;
  return i == arch.size() || (i + 1 == arch.size() && (arch[i] == 'a' || arch[i] == 'f'));
}

// The integer ending just before `marker` in `line` ("... 12 bytes smem" -> 12), or -1.
int NumberBefore(const std::string& line, const char* marker) {
  size_t pos = line.find(marker);
  if (pos == std::string::npos) return -1;
  size_t end = pos;
  while (end > 0 && line[end - 1] == ' ') --end;
  size_t begin = end;
  while (begin > 0 && std::isdigit(static_cast<unsigned char>(line[begin - 1]))) --begin;
  return begin == end ? -1 : std::atoi(line.c_str() + begin);
}

// The whole-program fields of `r`: the largest of each over its kernels.
void Summarize(CompileResult* r) {
  auto largest = [&](int KernelResources::*field) {
    int best = -1;
    for (const KernelResources& k : r->kernels) best = std::max(best, k.*field);
    return best;
  };
  r->registers = largest(&KernelResources::registers);
  r->shared_bytes = largest(&KernelResources::shared_bytes);
  r->spill_stores = largest(&KernelResources::spill_stores);
  r->spill_loads = largest(&KernelResources::spill_loads);
  r->stack_bytes = largest(&KernelResources::stack_bytes);
}

}  // namespace

void ParsePtxasReport(const std::string& log, CompileResult* r) {
  r->kernels.clear();
  int entry = -1, props = -1;  // the kernel being compiled; the kernel whose properties follow
  std::stringstream ss(log);
  std::string line;
  auto find = [&](const std::string& name) {
    for (size_t i = 0; i < r->kernels.size(); ++i)
      if (r->kernels[i].name == name) return static_cast<int>(i);
    return -1;
  };
  while (std::getline(ss, line)) {
    size_t pos;
    if ((pos = line.find("Compiling entry function '")) != std::string::npos) {
      size_t begin = pos + std::strlen("Compiling entry function '");
      std::string name = line.substr(begin, line.find('\'', begin) - begin);
      entry = find(name);
      if (entry < 0) {
        r->kernels.push_back(KernelResources{name});
        entry = static_cast<int>(r->kernels.size()) - 1;
      }
    } else if ((pos = line.find("Function properties for ")) != std::string::npos) {
      std::string name = line.substr(pos + std::strlen("Function properties for "));
      while (!name.empty() && std::isspace(static_cast<unsigned char>(name.back()))) name.pop_back();
      props = find(name);  // -1 for device functions: their frames are not the kernel's
    } else if (line.find("bytes stack frame") != std::string::npos) {
      if (props >= 0) {
        KernelResources& k = r->kernels[props];
        k.stack_bytes = NumberBefore(line, "bytes stack frame");
        k.spill_stores = NumberBefore(line, "bytes spill stores");
        k.spill_loads = NumberBefore(line, "bytes spill loads");
      }
      props = -1;
    } else if ((pos = line.find("Used ")) != std::string::npos && entry >= 0) {
      KernelResources& k = r->kernels[entry];
      k.registers = NumberBefore(line, "registers");
      int smem = NumberBefore(line, "bytes smem");
      k.shared_bytes = smem < 0 ? 0 : smem;  // ptxas leaves out "0 bytes smem"
    }
  }
  Summarize(r);
}

std::string CudaIncludeDir() {
  static const std::string dir = [] {
    std::vector<std::string> candidates;
    for (const std::string& root : ToolkitRoots()) {
      candidates.push_back(root + "/include");
      candidates.push_back(root + "/targets/x86_64-linux/include");
      candidates.push_back(root + "/targets/sbsa-linux/include");
    }
    std::string why;
    if (const NvrtcApi* api = LoadNvrtc(&why)) {
      // <toolkit>/lib64/libnvrtc.so -> <toolkit>/include, wherever the library came from.
      char real[4096];
      if (realpath(api->path.c_str(), real)) candidates.push_back(Dirname(Dirname(real)) + "/include");
    }
    std::string nvcc = FindTool("nvcc");
    if (!nvcc.empty()) candidates.push_back(Dirname(Dirname(nvcc)) + "/include");
    for (const std::string& sp : SitePackagesCandidates())
      for (const char* wheel :
           {"/nvidia/cu13/include", "/nvidia/cuda_runtime/include", "/nvidia/cuda_nvrtc/include"})
        candidates.push_back(sp + wheel);
    for (const std::string& c : candidates)
      if (FileExists(c + "/cuda_fp16.h")) return c;
    return std::string();
  }();
  return dir;
}

std::string ToolchainFingerprint() {
  // The first NVRTC file on the search path, identified by path, size and modification time:
  // a stat instead of a dlopen, so a warm start from the disk cache stays cheap.
  if (!UseNvccOnly())
    for (const std::string& c : NvrtcCandidates()) {
      struct stat st;
      if (c.find('/') == std::string::npos || stat(c.c_str(), &st) != 0) continue;
      return "nvrtc@" + c + ":" + std::to_string(static_cast<long long>(st.st_size)) + ":" +
             std::to_string(static_cast<long long>(st.st_mtime));
    }
  return ToolchainVersion();
}

std::string ToolchainVersion() {
  std::string why;
  if (!UseNvccOnly())
    if (const NvrtcApi* api = LoadNvrtc(&why)) return NvrtcName(*api);
  static const std::string nvcc_version = [] {
    std::string nvcc = FindTool("nvcc");
    return nvcc.empty() ? std::string("none") : NvccVersion(nvcc);
  }();
  return nvcc_version;
}

CompileResult Compile(const std::string& source, const std::string& arch,
                      const std::vector<std::string>& include_dirs,
                      const std::vector<std::string>& extra_options) {
  if (!ValidArch(arch))
    TL_USER_ERROR(kArgument, Span(), "'", arch,
                  "' is not a CUDA architecture; expected a name like 'sm_80', "
                  "'sm_89' or 'sm_90a'");
  std::vector<std::string> includes = include_dirs;
  std::string toolkit_include = CudaIncludeDir();
  if (!toolkit_include.empty()) includes.push_back(toolkit_include);
  // CUDA 13 keeps libcu++ (cuda/std/...), which <cooperative_groups.h> includes (T.sync_grid), in
  // include/cccl
  struct stat st;
  if (source.find("cooperative_groups.h") != std::string::npos && !toolkit_include.empty() &&
      stat((toolkit_include + "/cccl").c_str(), &st) == 0)
    includes.push_back(toolkit_include + "/cccl");

  std::string why = "NVRTC not used (TL_CUDA_COMPILER=nvcc)";
  const NvrtcApi* api = UseNvccOnly() ? nullptr : LoadNvrtc(&why);
  CompileResult r;
  if (api) {
    r = CompileWithNvrtc(*api, source, arch, includes, extra_options);
  } else {
    std::string nvcc = FindTool("nvcc");
    if (nvcc.empty())
      TL_USER_ERROR(
          kUnsupported, Span(), "cannot compile CUDA code: ", why,
          ", and nvcc is not on PATH nor in "
          "$CUDA_HOME/bin. Install the CUDA toolkit or the nvidia-cuda-nvrtc wheel, or set CUDA_HOME.");
    r = CompileWithNvcc(nvcc, source, arch, includes, extra_options);
  }
  ParsePtxasReport(r.log, &r);
  if (r.kernels.empty()) {  // no ptxas report: take what the cubin records (no spill sizes)
    r.kernels = ResourcesFromCubin(r.cubin);
    Summarize(&r);
  }
  return r;
}

}  // namespace tl::cuda
