// The OpenCL backend: the GPU thread-level lowering with OpenCL's switches (target.h), the OpenCL C
// code generator (codegen_opencl.h), the OpenCL runtime's compiler with the disk cache, and the
// host-tensor loader (runtime/opencl_module.h). The runtime is opened lazily (dlopen): code
// generation needs none, building and running report its absence clearly.
#include <algorithm>

#include "runtime/cache_util.h"
#include "runtime/opencl_module.h"
#include "runtime/opencl_runtime.h"
#include "support/error.h"
#include "target/backend.h"
#include "target/cuda/codegen_cuda.h"
#include "target/opencl/codegen_opencl.h"
#include "target/opencl/passes.h"
#include "target/opencl/target.h"

namespace tl {
namespace {
using namespace cache_util;

// The device's limits when there is a runtime (the kernel is checked against the device that will
// run it), else the target's (the OpenCL 1.2 minimums).
OpenCLLimits Limits(const Target& t) {
  OpenCLLimits lim;
  lim.local_mem = t.smem_limit;
  lim.max_work_group = t.max_threads;
  if (opencl::Available()) {
    const opencl::DeviceInfo& d = opencl::Device();
    lim.local_mem = d.local_mem;
    lim.max_work_group = d.max_work_group;
    lim.device = "'" + d.name + "'";
  }
  lim.subgroups = t.Has("subgroups");
  return lim;
}

}  // namespace

PassContext OpenCLPassContext(const Target& t, const PassConfig& pc) {
  return GpuPassContext(OpenCLFeatures(Limits(t)), t, pc);
}

namespace {

bool OnPocl() { return opencl::Available() && opencl::Device().is_pocl; }

// What the device must offer for the generated source: a clear error naming the extension.
void CheckExtensions(const CompiledKernel& k, const opencl::DeviceInfo& d) {
  for (auto [ext, what] : {std::pair<const char*, const char*>{"cl_khr_fp64", "float64"},
                           {"cl_khr_int64_base_atomics", "64-bit atomics"}}) {
    if (k.source.find(std::string("#pragma OPENCL EXTENSION ") + ext) != std::string::npos && !d.Has(ext))
      throw UserError(ErrorKind::kUnsupported,
                      "kernel '" + k.func->name + "' uses " + what + ", which needs the OpenCL extension " +
                          ext + "; the device '" + d.name + "' (" + d.version + ") does not offer it",
                      k.func->span);
  }
}

// The device's compiler through the disk cache: an entry holds the program binary
// (CL_PROGRAM_BINARIES) and kernel.meta binding it to the key (source, options, device, driver).
Artifact BuildProgram(const CompiledKernel& k, const PassConfig&, const BuildOptions& bo, CompileInfo* info) {
  const opencl::DeviceInfo& dev = opencl::Device();  // throws when there is no runtime
  if (opencl::UsesSubgroups(k.source)) opencl::RequireSubgroups(dev, "kernel '" + k.func->name + "' uses");
  CheckExtensions(k, dev);
  const std::string options = opencl::BuildOptionsFor(dev, k.source);
  info->compiler = "OpenCL: " + dev.platform + " / " + dev.name + " / " + dev.driver;
  CompileOptions co;
  co.cache_dir = bo.cache_dir;
  co.use_cache = bo.use_cache;
  const CacheEntry entry(co, "opencl",
                         HashHex(k.source + "\n--options " + options + "\n--device " + dev.name + "\n" +
                                 dev.vendor + "\n" + dev.version + "\n" + dev.driver));
  Artifact a;
  a.format = "opencl";
  if (entry.Load({{"kernel.bin", &a.binary}}, size_t(256) << 20)) {
    a.path = entry.Path("kernel.bin");
    a.from_cache = true;
    return a;
  }
  auto prog = opencl::Program::FromSource(k.source, k.launch.entry, options);  // errors carry the log
  info->build_log = prog->build_log();
  a.binary = prog->Binary();
  if (entry.enabled() && !a.binary.empty()) {
    entry.Publish({{"kernel.bin", &a.binary}});
    a.path = entry.Path("kernel.bin");
  }
  return a;
}

}  // namespace

Backend OpenCLBackend() {
  Backend b;
  b.kind = "opencl";
  b.header_dir = "";  // the generated source is self-contained
  b.fragment_kinds = {"mma_C", "mma_rows", "striped"};
  b.execution_backends = {"opencl", "auto"};
  b.fork_safe = false;  // the OpenCL runtime's driver threads do not survive a fork
  b.emulatable = true;  // thread-level IR without mma / cp.async / shuffles: the emulator runs it
  // A kernel that will run needs the runtime: say so when the kernel is compiled, not at launch.
  // Sub-group reductions: the spec's -mattr decides; without one, the device's cl_khr_subgroups
  // does when the kernel will run there (code generation alone assumes none).
  b.resolve = [](const Target& t, bool will_run) {
    if (!will_run) return t;
    if (!opencl::Available())
      throw UserError(ErrorKind::kUnsupported, "target '" + t.str() + "': " + opencl::UnavailableReason());
    if (t.Has("subgroups")) opencl::RequireSubgroups(opencl::Device(), "target '" + t.str() + "' asks for");
    if (t.features_given || !opencl::Device().subgroups) return t;
    Target r = t;  // spelled "opencl -mattr=+subgroups" from here on
    r.features.push_back("subgroups");
    std::sort(r.features.begin(), r.features.end());
    r.features_given = true;
    return r;
  };
  b.pass_context = OpenCLPassContext;
  b.pipeline = OpenCLPipeline;
  b.codegen = [](const PrimFunc& lowered, const Target&) { return CodegenOpenCL(lowered, OnPocl()).source; };
  b.entry = [](const PrimFunc& lowered) { return CudaKernelName(lowered); };
  b.build = BuildProgram;
  b.load = [](const CompiledKernel& k) { return LoadOpenCLModule(k.launch, k.artifact.binary, k.source); };
  return b;
}

}  // namespace tl
