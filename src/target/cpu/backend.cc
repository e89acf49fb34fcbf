// The CPU backend: its pipeline (pipeline.cc), CodegenCPU, the host compiler with the disk cache, and the
// dlopen loader (runtime/cpu_module.h).
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "arith/simplify.h"
#include "ir/functor.h"
#include "ir/printer.h"
#include "runtime/cache_util.h"
#include "runtime/module.h"
#include "support/error.h"
#include "support/subprocess.h"
#include "target/backend.h"
#include "target/cpu/codegen_cpu.h"
#include "target/cpu/isa.h"
#include "target/cpu/passes.h"

namespace tl {
using namespace cache_util;

std::string CacheKey(const std::string& canonical_ir, const std::string& target, const CompileOptions& opt) {
  std::string cxx = CompilerCommand(opt);
  return HashHex(canonical_ir + "\n--target " + target + "\n--flags " + opt.flags + "\n--cxx " + cxx + " " +
                 CompilerVersion(cxx) + "\n--tilelang-cpp 0.1.0 cpu-abi 1");
}

namespace {

// A precompiled header of the device headers (tl_device/cpu/runtime.h) for one compiler, flag set and
// TL_CPU_ISA, in <cache>/cpu-pch (or $TILELANG_CPU_PCH_DIR): parsing those headers is most of a small kernel's compile time
// (1.8 s of 1.9 s with g++ -O3 on a Zen 3). Returns the -include argument's file, or "" where there is none
// to use: not GCC (Clang reads its own format), the cache off, TILELANG_CPU_PCH=0, or a failed build of it (the
// kernel then includes the headers as written). Built once under a private name, then renamed into place,
// so concurrent builders never read a partial one. GCC checks a PCH's flags and macros when it reads it
// and falls back to the header itself on any mismatch; the generated code is the same either way.
std::string PrecompiledHeader(const CompileOptions& opt, const std::string& headers_hash, int isa_level,
                              std::string* log) {
  if (const char* env = std::getenv("TILELANG_CPU_PCH")) {
    const std::string v = env;
    if (v == "0" || v == "off" || v == "false" || v == "no") return "";
    if (!v.empty() && v != "1" && v != "on" && v != "true" && v != "yes")
      throw UserError(ErrorKind::kUnsupported,
                      "TILELANG_CPU_PCH='" + v + "': expected 0 / off / false / no, or 1 / on / true / yes");
  }
  const std::string cxx = CompilerCommand(opt);
  const std::string version = CompilerVersion(cxx);
  const std::string key = HashHex("tl-cpu-pch 1\n" + headers_hash + "\n" + opt.flags + "\n" + cxx + " " + version +
                                  "\nTL_CPU_ISA=" + std::to_string(isa_level));
  const char* where = std::getenv("TILELANG_CPU_PCH_DIR");
  const std::string base = where && *where ? std::string(where) : CacheDir(opt) + "/cpu-pch";
  const std::string dir = base + "/" + key, header = dir + "/tl_cpu_pch.h";
  struct stat st;
  if (stat((header + ".gch").c_str(), &st) == 0 && S_ISREG(st.st_mode)) return header;
  const std::string work = dir + ".build-" + UniqueSuffix();
  MakeDirs(work);
  WriteFile(work + "/tl_cpu_pch.h", "#include \"tl_device/cpu/runtime.h\"\n");
  std::vector<std::string> argv = SplitWords(cxx);
  for (const std::string& f : SplitWords(opt.flags))
    if (f != "-shared") argv.push_back(f);
  for (const std::string& a : {"-DTL_CPU_ISA=" + std::to_string(isa_level), "-I" + opt.include_dir,
                               std::string("-x"), std::string("c++-header"), std::string("tl_cpu_pch.h"),
                               std::string("-o"), std::string("tl_cpu_pch.h.gch")})
    argv.push_back(a);
  std::string out;
  const bool built = RunCommand(argv, &out, work) == 0;
  if (built && rename(work.c_str(), dir.c_str()) == 0) return header;
  // lost the race to another builder (its entry is complete), or failed: remove ours
  std::remove((work + "/tl_cpu_pch.h.gch").c_str());
  std::remove((work + "/tl_cpu_pch.h").c_str());
  rmdir(work.c_str());
  if (!built) {
    if (log) *log += "precompiled header not built (the kernel includes the headers):\n" + out.substr(0, 2000);
    return "";
  }
  return stat((header + ".gch").c_str(), &st) == 0 ? header : "";
}

// The host compiler on the generated C++, through the disk cache. A built library is published
// into its content-addressed entry with rename(), so concurrent builders never expose a partial one.
Artifact BuildHostLibrary(const CompiledKernel& k, const PassConfig& pc, const BuildOptions& bo,
                          CompileInfo* info) {
  const std::string foreign = CpuForeignFamily(k.target);
  if (!foreign.empty())
    throw UserError(ErrorKind::kUnsupported,
                    "CPU target '" + k.target.str() + "' is for " + foreign +
                        " processors, but the CPU backend builds kernels with this host's compiler, for " +
                        CpuHostFamily() + "; build it on " + foreign +
                        " (the generated C++ is portable), or drop the -mcpu/-mattr that names " + foreign +
                        " features");
  CompileOptions opt;
  opt.include_dir = bo.include_dir;
  opt.use_cache = bo.use_cache;
  opt.cache_dir = bo.cache_dir;
  // The -m flags of exactly the target's features (a forced lower ISA must not get -march=native).
  // -fno-trapping-math lets GCC if-convert (and so vectorise) selects around conversions, as in
  // exp2_f32; no kernel enables floating-point traps, and no value changes.
  // GCC's -fno-tree-loop-distribute-patterns keeps tile copies as inline vector loops: GCC would
  // turn each row of a copy into a memmove call, and rows of 128-512 bytes pay mostly for the call
  // (Clang has no such pass, and rejects the flag).
  const bool clang = CompilerVersion(CompilerCommand(opt)).find("clang") != std::string::npos;
  const CpuIsa isa = ChooseCpuIsa(k.target);
  opt.flags = "-O3 " + isa.arch_flags + " -fno-trapping-math" +
              (clang ? "" : " -fno-tree-loop-distribute-patterns") + " -std=c++17 -fopenmp -fPIC -shared";
  if (!pc.cpu_compile_flags.empty()) opt.flags = pc.cpu_compile_flags;
  // The device headers are part of what gets compiled, so their text is part of the key: every
  // header of the directory, in name order, so a new one cannot be left out.
  std::string headers;
  const std::string hdir = opt.include_dir + "/tl_device/cpu/";
  std::vector<std::string> names;
  if (DIR* d = opendir(hdir.c_str())) {
    while (const dirent* e = readdir(d)) {
      const std::string n = e->d_name;
      if (n.size() > 2 && n.compare(n.size() - 2, 2, ".h") == 0) names.push_back(n);
    }
    closedir(d);
  }
  std::sort(names.begin(), names.end());
  for (const std::string& h : names) {
    std::string text;
    ReadFile(hdir + h, &text);
    headers += h + "\n" + text;
  }
  const std::string headers_hash = HashHex(headers);
  std::string key = CacheKey(PrintPrimFunc(k.func) + "\n" + k.source + "\n" + headers_hash, "cpu", opt);
  const CacheEntry entry(opt, "", key);
  const bool cache = entry.enabled();
  std::string dir = cache ? entry.dir() : CacheDir(opt) + "/nocache-" + UniqueSuffix();
  info->compiler = CompilerCommand(opt) + " " + CompilerVersion(CompilerCommand(opt));
  Artifact a;
  a.format = "so";
  std::string cached_source;
  if (entry.Load({{"kernel.so", &a.binary}, {"kernel.cc", &cached_source}})) {
    a.path = entry.Path("kernel.so");
    a.from_cache = true;
    return a;
  }
  MakeDirs(dir);
  // Build in a private directory under fixed file names (so that concurrent builders of one kernel
  // produce byte-identical libraries), then publish the entry (runtime/cache_util.h).
  std::string work = dir + "/build-" + UniqueSuffix();
  MakeDirs(work);
  std::string src_path = work + "/kernel.cc", tmp_so = work + "/kernel.so";
  WriteFile(src_path, k.source);
  // An argument vector, not a shell line: a quote or a space in the cache or include directory is part
  // of the path. CXX and the flags are split at blank space ("ccache g++", "-O3 -march=native").
  std::vector<std::string> argv = SplitWords(CompilerCommand(opt));
  for (const std::string& f : SplitWords(opt.flags)) argv.push_back(f);
  argv.push_back("-I" + opt.include_dir);
  // The generated source starts "#define TL_CPU_ISA <level>" then includes runtime.h: the header is read
  // precompiled with the same definition (a redefinition to the same value is allowed). Clang reads
  // its own PCH format; without the cache there is no place to keep one.
  std::string pch_log;
  const std::string pch = clang || !cache ? "" : PrecompiledHeader(opt, headers_hash, isa.level, &pch_log);
  std::vector<std::string> plain = argv;
  for (const char* a : {"kernel.cc", "-o", "kernel.so"}) plain.push_back(a);
  if (!pch.empty())
    for (const std::string& a : {"-DTL_CPU_ISA=" + std::to_string(isa.level),
                                 std::string("-include"), pch})
      argv.push_back(a);
  for (const char* a : {"kernel.cc", "-o", "kernel.so"}) argv.push_back(a);
  std::string cmd = "cd " + CommandLine({work}) + " && " + CommandLine(argv);
  std::string log;
  int rc = RunCommand(argv, &log, work);
  if (rc != 0 && !pch.empty()) {
    // A damaged precompiled header (a truncated file is a hard error, not a fallback) must not fail the
    // kernel: build without it, and drop it when that works, so the next build makes a new one.
    const std::string with_pch = log;
    log.clear();
    rc = RunCommand(plain, &log, work);
    cmd = "cd " + CommandLine({work}) + " && " + CommandLine(plain);
    if (rc == 0) {
      std::remove((pch + ".gch").c_str());  // the whole entry, so that the next build makes it anew
      std::remove(pch.c_str());
      rmdir(pch.substr(0, pch.rfind('/')).c_str());
      pch_log += "precompiled header " + pch + ".gch unusable, removed:\n" + with_pch.substr(0, 2000);
    }
  }
  auto cleanup = [&]() {
    std::remove(src_path.c_str());
    std::remove(tmp_so.c_str());
    rmdir(work.c_str());
    if (!cache) rmdir(dir.c_str());
  };
  if (rc != 0) {
    cleanup();
    throw UserError(ErrorKind::kCompile, "the host compiler failed on the kernel generated for '" +
                                             k.func->name +
                                             "' (this is a TileLang-C++ bug if the program was accepted):\n" +
                                             cmd + "\n" + log.substr(0, 4000));
  }
  info->build_log = pch_log + log;
  ReadFile(tmp_so, &a.binary);
  cleanup();
  if (!cache) return a;  // the bytes are the artifact; the loader maps them from a scratch file
  entry.Publish({{"kernel.so", &a.binary}, {"kernel.cc", &k.source}});
  a.path = entry.Path("kernel.so");
  return a;
}

}  // namespace

Backend CpuBackend() {
  Backend b;
  b.kind = "cpu";
  b.header_dir = "cpu";
  b.fragment_kinds = {};  // fragments are plain per-block arrays on the CPU
  b.execution_backends = {"native", "auto", "cpp"};
  b.emulatable = false;
  b.resolve = [](const Target& t, bool) { return t; };
  b.pass_context = CpuPassContext;
  b.pipeline = CpuPipeline;
  b.codegen = [](const PrimFunc& lowered, const Target& t) { return CodegenCPU(lowered, t); };
  b.entry = [](const PrimFunc&) { return std::string("tl_entry"); };
  b.build = BuildHostLibrary;
  b.load = [](const CompiledKernel& k) -> std::shared_ptr<RuntimeModule> {
    return LoadCpuModule(k.launch, k.artifact.binary, k.artifact.path);
  };
  return b;
}

}  // namespace tl
