// The CPU backend: LowerForCPU, CodegenCPU, the host compiler with the disk cache, and the
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
#include "transform/cache_gemm_tiles_cpu.h"
#include "transform/coalesce_k_steps_cpu.h"
#include "transform/group_gemm_blocks_cpu.h"
#include "transform/pack_gemm_tiles_cpu.h"

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

// How tl_cpu::gemm (include/tl_device/cpu/gemm.h) runs a T.gemm of these types on this target.
std::string GemmPath(const GemmNode& g, const Target& t, const CpuIsa& isa) {
  using C = DataType::Code;
  const DataType a = g.A.buffer->dtype, b = g.B.buffer->dtype, c = g.C.buffer->dtype;
  auto f32 = [](DataType d) { return d.code() == C::kFloat && d.bits() == 32; };
  const std::string types = a.str() + " x " + b.str() + " -> " + c.str() + ": ";
  auto s8 = [](DataType d) { return d.code() == C::kInt && d.bits() == 8; };
  // AMX runs only where Linux grants the process the tile state (gemm_amx.h); else the next path.
  auto amx = [&](const char* feature, const char* insn, const char* group, const std::string& otherwise) {
    return types + feature + " " + insn + " on 32x32 blocks of 16x16 AMX tiles (A and B packed in k " +
           group + "), if the OS grants the tile state; otherwise " + otherwise;
  };
  if (s8(a) && s8(b) && c.code() == C::kInt && c.bits() == 32) {
    const bool vnni = isa.level >= 3 && t.Has("avx512vnni") && t.Has("avx512vl");
    const std::string simd = vnni ? "avx512vnni 6x16 vpdpwssd micro-kernel on int16 k pairs (exact)"
                             : isa.level >= 2 ? "avx2 6x16 vpmaddwd micro-kernel on int16 k pairs (exact)"
                                              : "reference loop (exact)";
    return t.Has("amx-int8") ? amx("amx-int8", "tdpbssd", "quads", simd) : types + simd;
  }
  if (!f32(c)) return types + "reference loop (the SIMD kernels accumulate in float32)";
  if (a.code() == C::kBFloat && b.code() == C::kBFloat) {
    const bool dot = isa.level >= 3 && t.Has("avx512bf16");
    const std::string simd =
        dot ? "avx512bf16 vdpbf16ps 12x32 micro-kernel on k-pair packed A and B"
            : isa.name + " " + isa.gemm + " micro-kernel, bfloat16 widened by a 16-bit shift";
    if (t.Has("amx-bf16")) return amx("amx-bf16", "tdpbf16ps", "pairs", simd);
    if (dot) return types + simd;
  }
  auto widen = [&](DataType d) -> std::string {
    if (d.code() == C::kFloat && d.bits() == 16)
      return t.Has("f16c") ? "float16 widened by vcvtph2ps" : "float16 widened in software";
    if (d.code() == C::kBFloat) return "bfloat16 widened by a 16-bit shift";
    return d.str() + " widened to float32";
  };
  std::string s = types + isa.name + " " + isa.gemm + " micro-kernel, B packed per panel";
  if (!f32(b)) s += " (" + widen(b) + " while packing)";
  if (!f32(a)) s += ", A " + widen(a) + " once per call";
  return s;
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
  b.lower = [](const PrimFunc& f, const Target& t, const PassConfig&, CompileInfo* info,
               std::vector<PassRecord>* trace) {
    const CpuIsa isa = ChooseCpuIsa(t);
    if (info)
      info->choices.push_back("CPU target " + t.str() + ": " + isa.name + " micro-kernels; " +
                              isa.arch_flags);
    PostOrderVisitStmt(f->body, [&](const Stmt& s) {
      auto* g = As<GemmNode>(s);
      if (!g || !info) return;
      const std::string loc = g->span.file + ":" + std::to_string(g->span.line);
      if (g->k_pack != 1)
        info->warnings.push_back(loc + ": T.gemm k_pack=" + std::to_string(g->k_pack) +
                                 " is an AMD MFMA option; it has no effect on the CPU");
      info->choices.push_back(loc + ": T.gemm " + GemmPath(*g, t, isa));
    });
    // The tile-level GEMM rewrites, each recorded in the trace (rewrites print, and re-parse,
    // simplified). Tiles served from tile caches run K = 256 per gemm call (their copies are paid
    // once per call, and deeper calls halve the accumulator traffic); per-worker tiles stay at
    // K = 128, where two 256-deep tiles per group would not fit in L2 beside the accumulators.
    auto rewrite = [&](int64_t target_k, std::vector<std::string>* choices, std::vector<PassRecord>* tr,
                       bool* cached) {
      PrimFunc g = f;
      auto step = [&](const char* name, PrimFunc h, bool simplify) {
        if (h == g) return false;
        g = simplify ? Simplify(h) : h;
        if (tr) tr->push_back({name, g, 0.0, true});
        return true;
      };
      // Deeper gemm tiles first; then blocks in lockstep groups, so one copy of a tile from global
      // memory serves two blocks; then tile caches; then B tiles packed into panels by their copies.
      step("CoalesceGemmKStepsCPU", CoalesceGemmKStepsCPU(g, choices, target_k), true);
      step("GroupGemmBlocksCPU", GroupGemmBlocksCPU(g, choices), true);
      *cached = step("CacheGemmTilesCPU", CacheGemmTilesCPU(g, choices), false);
      step("PackGemmTilesCPU", PackGemmTilesCPU(g, choices), false);
      return g;
    };
    std::vector<std::string> choices;
    std::vector<PassRecord> records;
    bool cached = false;
    PrimFunc g = rewrite(256, &choices, &records, &cached);
    if (!cached) {
      choices.clear();
      records.clear();
      g = rewrite(128, &choices, &records, &cached);
    }
    if (info) info->choices.insert(info->choices.end(), choices.begin(), choices.end());
    if (trace) trace->insert(trace->end(), records.begin(), records.end());
    return LowerForCPU(g, trace);
  };
  b.codegen = [](const PrimFunc& lowered, const Target& t) { return CodegenCPU(lowered, t); };
  b.entry = [](const PrimFunc&) { return std::string("tl_entry"); };
  b.build = BuildHostLibrary;
  b.load = [](const CompiledKernel& k) -> std::shared_ptr<RuntimeModule> {
    return LoadCpuModule(k.launch, k.artifact.binary, k.artifact.path);
  };
  return b;
}

}  // namespace tl
