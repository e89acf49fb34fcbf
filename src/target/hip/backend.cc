// The HIP backend (AMD CDNA): its pipeline (pipeline.cc: the shared GPU passes on HipFeatures),
// CodegenHIP, hipcc through the disk cache. No AMD GPU runtime is loaded: a built kernel is a code
// object to inspect (source, assembly, resources); running it takes execution_backend="emulator",
// which executes the same thread-level IR lane by lane.
#include "runtime/cache_util.h"
#include "support/error.h"
#include "target/backend.h"
#include "target/cuda/codegen_cuda.h"
#include "target/hip/codegen_hip.h"
#include "target/hip/hipcc.h"
#include "target/hip/passes.h"
#include "target/hip/target.h"

namespace tl {
namespace {
using namespace cache_util;

void Report(const hip::CompileResult& c, CompileInfo* info) {
  info->resources = hip::ParseResources(c.assembly);
  info->resources["shared_bytes"] = info->smem_bytes;
  info->compiler = (c.compiler.rfind("zig ", 0) == 0 ? "" : "hipcc: ") + c.compiler;
  info->build_log = c.log;
}

// hipcc through the disk cache: an entry holds the code object, its assembly, the log and the
// compiler's name, and kernel.meta binding them to the key (source, arch, hipcc, device header).
Artifact BuildCodeObject(const CompiledKernel& k, const PassConfig&, const BuildOptions& bo,
                         CompileInfo* info) {
  if (k.source.find("tl::print(") != std::string::npos)
    throw UserError(ErrorKind::kUnsupported,
                    "kernel '" + k.func->name +
                        "' uses T.print, which has no HIP lowering (the generated code does not include "
                        "hip_runtime.h, so there is no device printf); compile it with "
                        "execution_backend=\"emulator\", which prints per lane",
                    k.func->span);
  std::string header, fp8, math;
  ReadFile(bo.include_dir + "/tl_device/hip/common.h", &header);
  ReadFile(bo.include_dir + "/tl_device/hip/fp8.h", &fp8);  // included by common.h
  ReadFile(bo.include_dir + "/tl_device/hip/math.h", &math);
  header += fp8 + math;
  CompileOptions co;
  co.cache_dir = bo.cache_dir;
  co.use_cache = bo.use_cache;
  const CacheEntry entry(co, "hip",
                         HashHex(k.source + "\n--arch " + k.target.arch + "\n--toolchain " +
                                 hip::ToolchainVersion(k.target.arch) + "\n--flags " + hip::CompileFlags() +
                                 "\n--header\n" + header));
  Artifact a;
  a.format = "hsaco";
  hip::CompileResult c;
  if (entry.Load({{"kernel.co", &c.code_object}, {"kernel.s", &c.assembly}, {"kernel.log", &c.log},
                  {"kernel.compiler", &c.compiler}})) {
    Report(c, info);
    a.binary = c.code_object;
    a.text = c.assembly;
    a.path = entry.Path("kernel.co");
    a.from_cache = true;
    return a;
  }
  c = hip::Compile(k.source, k.target.arch, bo.include_dir);
  if (entry.enabled()) {
    entry.Publish({{"kernel.co", &c.code_object}, {"kernel.s", &c.assembly}, {"kernel.log", &c.log},
                   {"kernel.compiler", &c.compiler}});
    a.path = entry.Path("kernel.co");
  }
  Report(c, info);
  a.binary = c.code_object;
  a.text = c.assembly;
  return a;
}

// A built HIP kernel: its code object can be inspected, not launched (there is no AMD GPU runtime).
class NoRuntimeModule : public RuntimeModule {
 public:
  NoRuntimeModule(LaunchSpec spec, std::string name, std::string arch)
      : RuntimeModule(std::move(spec)), name_(std::move(name)), arch_(std::move(arch)) {}
  std::string device() const override { return "hip"; }
  void Launch(const std::vector<TensorArg>&, uintptr_t) const override {
    throw UserError(ErrorKind::kUnsupported,
                    "kernel '" + name_ + "' was built for HIP " + arch_ +
                        " (a code object), but TileLang-C++ has no AMD GPU runtime; run it with "
                        "execution_backend=\"emulator\", or inspect get_kernel_source(), get_assembly() and "
                        "get_resource_usage()");
  }

 private:
  std::string name_, arch_;
};

}  // namespace

Backend HipBackend() {
  Backend b;
  b.kind = "hip";
  b.header_dir = "hip";
  b.fragment_kinds = {"mfma_C", "mfma_rows", "striped"};
  b.execution_backends = {"hip", "auto"};
  b.emulatable = true;
  b.resolve = [](const Target& t, bool) { return t; };
  b.pass_context = HipPassContext;
  b.pipeline = HipPipeline;
  b.codegen = [](const PrimFunc& lowered, const Target& t) { return CodegenHIP(lowered, t.arch); };
  b.entry = [](const PrimFunc& lowered) { return CudaKernelName(lowered); };
  b.build = BuildCodeObject;
  b.load = [](const CompiledKernel& k) -> std::shared_ptr<RuntimeModule> {
    return std::make_shared<NoRuntimeModule>(k.launch, k.func->name, k.target.arch);
  };
  return b;
}

}  // namespace tl
