// The CUDA backend: LowerForCUDA, CodegenCUDA, NVRTC (or nvcc) with the disk cache, and the
// driver-based loader (runtime/cuda_module.h). Its lowered IR is thread-level, so the emulator
// runs it too.
#include <sstream>

#include "ir/printer.h"
#include "runtime/cache_util.h"
#include "runtime/cuda_driver.h"
#include "runtime/cuda_module.h"
#include "support/error.h"
#include "target/backend.h"
#include "target/cuda/codegen_cuda.h"
#include "target/cuda/nvrtc.h"
#include "target/cuda/passes.h"
#include "target/cuda/target.h"
#include "transform/gpu_options.h"

namespace tl {
namespace {
using namespace cache_util;

void Report(const cuda::CompileResult& c, CompileInfo* info) {
  info->resources = {{"registers", c.registers},
                     {"shared_bytes", info->smem_bytes},
                     {"static_shared_bytes", c.shared_bytes},
                     {"spill_stores", c.spill_stores},
                     {"spill_loads", c.spill_loads},
                     {"stack_bytes", c.stack_bytes}};
  info->compiler = c.compiler;
  info->build_log = c.log;
  // ptxas's performance advisories ("(C7520) Potential Performance Loss: wgmma.mma_async instructions are
  // serialized ...", "(C7508) ... 'setmaxnreg' ignored"): what the CUDA compiler did to the kernel that the
  // choices cannot show, said as warnings rather than left in the build log.
  std::stringstream ss(c.log);
  std::string line;
  while (std::getline(ss, line)) {
    const size_t at = line.find("(C7");
    if (at == std::string::npos || at + 7 > line.size() || line[at + 6] != ')') continue;
    info->warnings.push_back("ptxas (the CUDA assembler) reports " + line.substr(at));
  }
}

// NVRTC through the disk cache: an entry holds the cubin, the PTX, the compiler's log and name,
// and kernel.meta binding them to the key (source, arch, toolchain, device header).
Artifact BuildCubin(const CompiledKernel& k, const PassConfig& pc, const BuildOptions& bo, CompileInfo* info) {
  CudaTarget target = CudaTargetOf(k.target);
  std::string header;
  ReadFile(bo.include_dir + "/tl_device/cuda/common.h", &header);
  for (const char* f : {"/tl_device/cuda/hopper.h", "/tl_device/cuda/blackwell.h"})
    if (std::string h; ReadFile(bo.include_dir + f, &h)) header += h;
  CompileOptions co;
  co.cache_dir = bo.cache_dir;
  co.use_cache = bo.use_cache;
  // tl.enable_fast_math: approximate division, square root and transcendentals, denormals flushed
  // (NVRTC's and nvcc's --use_fast_math); the emulator runs the exact operations either way.
  // cuda.lineinfo (set by execution_backend="ptx"): .loc lines in the PTX, for the PTX emulator's reports.
  std::vector<std::string> options =
      pc.enable_fast_math ? std::vector<std::string>{"--use_fast_math"} : std::vector<std::string>{};
  if (pc.cuda_lineinfo) options.push_back("-lineinfo");
  std::string opt_key;
  for (const auto& o : options) opt_key += " " + o;
  const CacheEntry entry(co, "cuda", HashHex(k.source + "\n--arch " + target.arch + "\n--toolchain " +
                                              cuda::ToolchainFingerprint() + "\n--options" + opt_key +
                                              "\n--header\n" + header));
  Artifact a;
  a.format = "cubin";
  cuda::CompileResult c;
  if (entry.Load({{"kernel.cubin", &c.cubin}, {"kernel.ptx", &c.ptx}, {"kernel.log", &c.log},
                  {"kernel.compiler", &c.compiler}})) {
    cuda::ParsePtxasReport(c.log, &c);
    Report(c, info);
    a.binary = c.cubin;
    a.text = c.ptx;
    a.path = entry.Path("kernel.cubin");
    a.from_cache = true;
    return a;
  }
  c = cuda::Compile(k.source, target.arch, {bo.include_dir}, options);
  if (entry.enabled()) {
    entry.Publish({{"kernel.cubin", &c.cubin}, {"kernel.ptx", &c.ptx}, {"kernel.log", &c.log},
                   {"kernel.compiler", &c.compiler}});
    a.path = entry.Path("kernel.cubin");
  }
  Report(c, info);
  a.binary = c.cubin;
  a.text = c.ptx;
  return a;
}

}  // namespace

Backend CudaBackend() {
  Backend b;
  b.kind = "cuda";
  b.header_dir = "cuda";
  b.fragment_kinds = {"mma_C", "mma_rows", "striped"};
  b.execution_backends = {"cuda", "auto", "nvrtc", "cython", "ctypes", "tvm_ffi"};
  b.emulatable = true;
  // With no arch named, a kernel that will run is built for the GPU that runs it.
  b.resolve = [](const Target& t, bool will_run) {
    if (t.arch_given || !will_run || !cuda::DriverAvailable()) return t;
    return ParseTarget("cuda -arch=" + cuda::GetDeviceInfo(0).Arch());
  };
  b.pass_context = CudaPassContext;
  b.pipeline = CudaPipeline;
  b.codegen = [](const PrimFunc& lowered, const Target& t) { return CodegenCUDA(lowered, CudaTargetOf(t).arch); };
  b.entry = [](const PrimFunc& lowered) { return CudaKernelName(lowered); };
  b.build = BuildCubin;
  b.load = [](const CompiledKernel& k) { return LoadCudaModule(k.launch, k.artifact.binary); };
  return b;
}

}  // namespace tl
