// The Metal backend: the GPU thread-level lowering with Metal's switches (target.h) and the Metal
// Shading Language code generator (codegen_metal.h). There is no Metal compiler or runtime on
// Linux: `build` keeps the MSL source as the artifact, and launching raises a clear error that
// points at the emulator (`execution_backend="emulator"` runs the Metal lowering lane by lane).
#include "support/error.h"
#include "target/backend.h"
#include "target/cuda/codegen_cuda.h"
#include "target/metal/codegen_metal.h"
#include "target/metal/passes.h"
#include "target/metal/target.h"

namespace tl {
namespace {

class MetalModule : public RuntimeModule {
 public:
  MetalModule(LaunchSpec spec, std::string name) : RuntimeModule(std::move(spec)), name_(std::move(name)) {}
  std::string device() const override { return "metal"; }
  void Launch(const std::vector<TensorArg>&, uintptr_t) const override {
    throw UserError(
        ErrorKind::kUnsupported,
        "kernel '" + name_ +
            "' was compiled for Metal, and there is no Metal runtime on this platform (Metal runs "
            "on Apple GPUs under macOS); its source is kernel.get_kernel_source(); to run its "
            "lowering here, compile it with execution_backend=\"emulator\"");
  }

 private:
  std::string name_;
};

}  // namespace

Backend MetalBackend() {
  Backend b;
  b.kind = "metal";
  b.header_dir = "";  // the generated source is self-contained
  b.fragment_kinds = {"mma_C", "mma_rows", "striped"};
  b.execution_backends = {"metal", "auto"};
  b.emulatable = true;  // thread-level IR with simdgroup calls and shuffles: the emulator runs it
  b.resolve = [](const Target& t, bool) { return t; };
  b.pass_context = MetalPassContext;
  b.pipeline = MetalPipeline;
  b.codegen = [](const PrimFunc& lowered, const Target&) { return CodegenMetal(lowered); };
  b.entry = [](const PrimFunc& lowered) { return CudaKernelName(lowered); };
  // No Metal compiler here: the artifact is the MSL source (what a Metal host would compile).
  b.build = [](const CompiledKernel& k, const PassConfig&, const BuildOptions&, CompileInfo* info) {
    info->compiler = "none (Metal Shading Language source only; no Metal compiler on this platform)";
    Artifact a;
    a.format = "msl";
    a.binary = k.source;
    a.text = k.source;
    return a;
  };
  b.load = [](const CompiledKernel& k) { return std::make_shared<MetalModule>(k.launch, k.func->name); };
  return b;
}

}  // namespace tl
