// The CPU backend: its pipeline (pipeline.cc), CodegenCPU, the host compiler with the disk cache, and the
// dlopen loader (runtime/cpu_module.h).
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
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
  opt.flags = "-O3 " + ChooseCpuIsa(k.target).arch_flags + " -fno-trapping-math" +
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
  std::string key = CacheKey(PrintPrimFunc(k.func) + "\n" + k.source + "\n" + HashHex(headers), "cpu", opt);
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
  for (const char* a : {"kernel.cc", "-o", "kernel.so"}) argv.push_back(a);
  argv.insert(argv.end() - 3, "-I" + opt.include_dir);
  const std::string cmd = "cd " + CommandLine({work}) + " && " + CommandLine(argv);
  std::string log;
  int rc = RunCommand(argv, &log, work);
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
  info->build_log = log;
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
