// The backend registry and Compile(); see backend.h. To add a backend, add its factory to
// Builtins() below (and see docs/adding_a_backend.md).
#include <chrono>
#include <sstream>
#include <mutex>

#include "arith/expr_depth.h"
#include "arith/index_check.h"
#include "support/error.h"
#include "target/backend.h"
#include "target/launch_spec_builder.h"

namespace tl {
namespace {

std::mutex& RegistryMutex() {
  static std::mutex mu;
  return mu;
}

std::map<std::string, Backend>& Registry() {
  static std::map<std::string, Backend> reg = [] {
    std::map<std::string, Backend> r;
    for (Backend b :
         {CpuBackend(), CudaBackend(), OpenCLBackend(), MetalBackend(), HipBackend(), AscendBackend()})
      r[b.kind] = std::move(b);
    return r;
  }();
  return reg;
}

double MsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

void RegisterBackend(Backend b) {
  for (auto [set, what] : {std::pair<bool, const char*>{bool(b.pass_context), "pass_context"},
                           {bool(b.pipeline), "pipeline"}, {bool(b.codegen), "codegen"},
                           {bool(b.entry), "entry"}, {bool(b.build), "build"}, {bool(b.load), "load"}})
    if (!set) throw InternalError("backend '" + b.kind + "' registered without its " + what);
  std::lock_guard<std::mutex> lock(RegistryMutex());
  std::string k = b.kind;
  Registry()[k] = std::move(b);
}

const Backend& GetBackend(const std::string& kind) {
  std::lock_guard<std::mutex> lock(RegistryMutex());
  auto& reg = Registry();
  auto it = reg.find(kind);
  if (it == reg.end()) {
    std::string have;
    for (auto& [k, b] : reg) have += (have.empty() ? "" : ", ") + ("'" + k + "'");
    throw UserError(ErrorKind::kUnsupported,
                    "target '" + kind +
                        "': code generation for this target is not implemented yet in "
                        "TileLang-C++; the available targets are " +
                        have);
  }
  return it->second;
}

std::vector<std::string> BackendKinds() {
  std::lock_guard<std::mutex> lock(RegistryMutex());
  std::vector<std::string> out;
  for (auto& [k, b] : Registry()) out.push_back(k);
  return out;
}

CompiledKernel Compile(const PrimFunc& user_func, const Target& target,
                       const std::map<std::string, std::string>& pass_configs, const BuildOptions& opt) {
  const Backend& b = GetBackend(target.kind);
  PassConfig pc = ParsePassConfig(pass_configs);
  CompiledKernel k;
  k.target = target;
  PassContext ctx = b.pass_context(target, pc);
  ctx.info = &k.info;
  std::vector<PassRecord>* trace = opt.trace ? &k.trace : nullptr;
  auto t0 = std::chrono::steady_clock::now();
  // T.alloc_global buffers become trailing parameters the JIT allocates per call (HoistWorkspaces).
  const PrimFunc f = RunPipeline(FrontSteps(), user_func, ctx, trace);
  k.func = f;
  CheckExprDepth(f);
  CheckStaticIndices(f);
  try {
    k.lowered = RunPipeline(b.pipeline(ctx), f, ctx, trace);
    k.info.lower_ms = MsSince(t0);
    t0 = std::chrono::steady_clock::now();
    k.source = b.codegen(k.lowered, target);
    k.info.codegen_ms = MsSince(t0);
  } catch (const UserError& e) {
    // An error that knows no finer location points at the kernel's definition.
    if (e.span().defined() || !f->span.defined()) throw;
    throw UserError(e.kind(), e.raw_message(), f->span);
  }
  // A backend may store a tensor parameter in another form (sm_120a: float4_e2m1fn two values a byte, uint8
  // [..., K / 2]; src/target/cuda/pack_fp4_tiles.cc): the launch takes the lowered parameter's dtype and
  // shape.
  // The pass that does so lists them in the attribute tl.packed_params (indices, comma-separated).
  auto packed = k.lowered ? k.lowered->attrs.find("tl.packed_params") : f->attrs.end();
  if (k.lowered && packed != k.lowered->attrs.end() && k.lowered->params.size() == f->params.size()) {
    std::vector<Param> params = f->params;
    std::stringstream list(packed->second);
    for (std::string item; std::getline(list, item, ',');) {
      const size_t i = static_cast<size_t>(std::stoul(item));
      if (i < params.size() && params[i].buffer && k.lowered->params[i].buffer)
        params[i].buffer = k.lowered->params[i].buffer;
    }
    k.func = MakePrimFunc(f->name, params, f->body, f->attrs, f->span);
  }
  k.launch = MakeLaunchSpec(k.func, k.lowered, b.entry(k.lowered), k.info.threads, k.info.smem_bytes);
  if (opt.build_binary) {
    t0 = std::chrono::steady_clock::now();
    k.artifact = b.build(k, pc, opt, &k.info);
    k.info.build_ms = MsSince(t0);
  }
  return k;
}

std::shared_ptr<RuntimeModule> LoadModule(const CompiledKernel& k) {
  if (k.artifact.format.empty())
    throw UserError(ErrorKind::kUnsupported, "kernel '" + k.func->name +
                                                 "' was compiled without a binary (for the "
                                                 "emulator or for inspection); it cannot be "
                                                 "launched");
  return GetBackend(k.target.kind).load(k);
}

}  // namespace tl
