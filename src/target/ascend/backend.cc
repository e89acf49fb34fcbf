// The Ascend backend (docs/ascend.md): the tile program lowered to the AI Core's instruction stream
// (lower_ascend.cc), its pipes ordered by flags (ascend_sync.cc), and AscendC C++ (codegen_ascend.cc). There
// is no Ascend compiler or runtime here (CANN ships only with Huawei's toolkit): `build` keeps the AscendC
// source as the artifact, and `execution_backend="emulator"` runs the lowered stream with each pipe as its
// own queue (src/emulator/intrinsics_ascend.cc).
#include "support/error.h"
#include "target/ascend/target.h"
#include "target/backend.h"

namespace tl {
namespace {

class AscendModule : public RuntimeModule {
 public:
  AscendModule(LaunchSpec spec, std::string name) : RuntimeModule(std::move(spec)), name_(std::move(name)) {}
  std::string device() const override { return "ascend"; }
  void Launch(const std::vector<TensorArg>&, uintptr_t) const override {
    throw UserError(
        ErrorKind::kUnsupported,
        "kernel '" + name_ +
            "' was compiled for Ascend, and there is no Ascend runtime here (CANN's compiler and "
            "runtime ship with Huawei's toolkit); its AscendC source is kernel.get_kernel_source() "
            "(docs/ascend.md says how to build it with CANN); to run its lowering here, compile it "
            "with execution_backend=\"emulator\"");
  }

 private:
  std::string name_;
};

}  // namespace

Backend AscendBackend() {
  Backend b;
  b.kind = "ascend";
  b.header_dir = "ascend";
  b.fragment_kinds = {};
  b.execution_backends = {"ascend", "auto"};
  b.emulatable = true;  // one scalar thread per block issuing pipe instructions: the emulator runs it
  b.resolve = [](const Target& t, bool) {
    Target r = t;
    if (r.arch.empty()) r.arch = AscendArchOf(t).name;
    AscendArchOf(r);
    return r;
  };
  b.pass_context = AscendPassContext;
  b.pipeline = AscendPipeline;
  b.codegen = CodegenAscend;
  b.entry = [](const PrimFunc& lowered) { return lowered->name; };
  b.build = [](const CompiledKernel& k, const PassConfig&, const BuildOptions&, CompileInfo* info) {
    info->compiler = "none (AscendC source only; CANN's compiler is not on this platform)";
    Artifact a;
    a.format = "ascendc";
    a.binary = k.source;
    a.text = k.source;
    return a;
  };
  b.load = [](const CompiledKernel& k) { return std::make_shared<AscendModule>(k.launch, k.func->name); };
  return b;
}

}  // namespace tl
