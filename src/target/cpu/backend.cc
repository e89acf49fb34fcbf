// The CPU backend: LowerForCPU, CodegenCPU, the host compiler with the disk cache, and the
// dlopen loader (runtime/cpu_module.h).
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>

#include "ir/functor.h"
#include "ir/printer.h"
#include "runtime/cache_util.h"
#include "runtime/module.h"
#include "support/error.h"
#include "support/subprocess.h"
#include "target/backend.h"
#include "target/cpu/codegen_cpu.h"

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
  CompileOptions opt;
  opt.include_dir = bo.include_dir;
  opt.use_cache = bo.use_cache;
  opt.cache_dir = bo.cache_dir;
  if (!pc.cpu_compile_flags.empty()) opt.flags = pc.cpu_compile_flags;
  // The device headers are part of what gets compiled, so their text is part of the key.
  std::string headers;
  for (const char* h : {"types.h", "gemm.h", "runtime.h"}) {
    std::string text;
    ReadFile(opt.include_dir + "/tl_device/cpu/" + h, &text);
    headers += text;
  }
  std::string key = CacheKey(PrintPrimFunc(k.func) + "\n" + k.source + "\n" + HashHex(headers), "cpu", opt);
  std::string root = CacheDir(opt);
  bool cache = !CacheDisabled(opt);
  std::string dir = cache ? root + "/" + key : root + "/nocache-" + UniqueSuffix();
  std::string so = dir + "/kernel.so";
  info->compiler = CompilerCommand(opt) + " " + CompilerVersion(CompilerCommand(opt));
  Artifact a;
  a.format = "so";
  if (cache && EntryValid(dir, "kernel.so", key) && ReadCacheFile(so, kMaxLibraryBytes, &a.binary)) {
    a.path = so;
    a.from_cache = true;
    return a;
  }
  MakeDirs(dir);
  // Build in a private directory under fixed file names (so that concurrent builders of one kernel
  // produce byte-identical libraries), then publish with rename(): the last rename wins.
  std::string work = dir + "/build-" + UniqueSuffix();
  MakeDirs(work);
  std::string src_path = work + "/kernel.cc", tmp_so = work + "/kernel.so";
  WriteFile(src_path, k.source);
  std::string cmd = "cd '" + work + "' && " + CompilerCommand(opt) + " " + opt.flags + " -I'" +
                    opt.include_dir + "' kernel.cc -o kernel.so";
  std::string log;
  int rc = RunCommand(cmd, &log);
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
  if (!cache) {  // the bytes are the artifact; the loader maps them from a scratch file
    cleanup();
    return a;
  }
  // Whatever squats on the entry's names and is not a regular file (a FIFO, a symlink, a
  // directory) is removed first; rename() replaces regular files atomically.
  for (const std::string& name : {so, dir + "/kernel.meta", dir + "/kernel.cc"}) {
    struct stat st;
    if (lstat(name.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
      if (std::remove(name.c_str()) != 0 && S_ISDIR(st.st_mode)) rmdir(name.c_str());
    }
  }
  if (std::rename(tmp_so.c_str(), so.c_str()) != 0) {
    cleanup();
    throw UserError(ErrorKind::kCompile, "cannot publish " + so);
  }
  AtomicWrite(dir + "/kernel.meta", EntryMeta(a.binary, key));
  std::rename(src_path.c_str(), (dir + "/kernel.cc").c_str());
  cleanup();
  a.path = so;
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
  b.lower = [](const PrimFunc& f, const Target&, const PassConfig&, CompileInfo* info,
               std::vector<PassRecord>* trace) {
    PostOrderVisitStmt(f->body, [&](const Stmt& s) {
      if (auto* g = As<GemmNode>(s); g && g->k_pack != 1 && info)
        info->warnings.push_back(g->span.file + ":" + std::to_string(g->span.line) +
                                 ": T.gemm k_pack=" + std::to_string(g->k_pack) +
                                 " is an AMD MFMA option; it has no effect on the CPU");
    });
    return LowerForCPU(f, trace);
  };
  b.codegen = [](const PrimFunc& lowered, const Target&) { return CodegenCPU(lowered); };
  b.entry = [](const PrimFunc&) { return std::string("tl_entry"); };
  b.build = BuildHostLibrary;
  b.load = [](const CompiledKernel& k) -> std::shared_ptr<RuntimeModule> {
    return LoadCpuModule(k.launch, k.artifact.binary, k.artifact.path);
  };
  return b;
}

}  // namespace tl
