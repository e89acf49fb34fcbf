// BuildCUDA and CudaModule; see cuda_module.h.
#include "runtime/cuda_module.h"

#include <chrono>
#include <cstring>

#include "arith/expr_depth.h"
#include "arith/index_check.h"
#include "ir/printer.h"
#include "layout/fragment.h"
#include "runtime/cache_util.h"
#include "runtime/cuda_driver.h"
#include "runtime/scalar_abi.h"
#include "target/cpu/codegen_cpu.h"
#include "target/cuda/codegen_cuda.h"

namespace tl {
namespace {

double MsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

std::shared_ptr<CudaModule> BuildCUDA(const PrimFunc& f, const CudaBuildOptions& opt) {
  using namespace cache_util;
  auto m = std::make_shared<CudaModule>();
  CudaTarget target = ParseCudaTarget(opt.target);
  auto t0 = std::chrono::steady_clock::now();
  CheckExprDepth(f);
  CheckStaticIndices(f);
  m->func = f;
  try {
    m->lowered = LowerForCUDA(f, target, opt.lower, &m->info);
    m->lower_ms = MsSince(t0);
    t0 = std::chrono::steady_clock::now();
    m->source = CodegenCUDA(m->lowered, target.arch);
  } catch (const UserError& e) {
    // An error that knows no finer location points at the kernel's definition.
    if (e.span().defined() || !f->span.defined()) throw;
    throw UserError(e.kind(), e.raw_message(), f->span);
  }
  m->codegen_ms = MsSince(t0);
  m->kernel_name = CudaKernelName(m->lowered);
  m->arch = target.arch;
  m->syms = SymbolicVars(f);
  if (!opt.compile) return m;

  std::string header;
  ReadFile(opt.include_dir + "/tl_device/cuda/common.h", &header);
  CompileOptions co;
  co.cache_dir = opt.cache_dir;
  co.use_cache = opt.use_cache;
  bool cache = !CacheDisabled(co);
  std::string key = HashHex(m->source + "\n--arch " + target.arch + "\n--toolchain " + cuda::ToolchainFingerprint() +
                            "\n--header\n" + header);
  std::string dir = CacheDir(co) + "/cuda/" + key;
  if (cache) {
    std::string cubin, ptx, log, meta;
    // Every file must be a regular file of bounded size, and the meta must name this entry's key
    // (see EntryValid in cpu_module.cc).
    const size_t kMax = size_t(256) << 20;
    std::string compiler;
    if (ReadCacheFile(dir + "/kernel.cubin", kMax, &cubin) && ReadCacheFile(dir + "/kernel.ptx", kMax, &ptx) &&
        ReadCacheFile(dir + "/kernel.log", kMax, &log) && ReadCacheFile(dir + "/kernel.meta", 4096, &meta) &&
        ReadCacheFile(dir + "/kernel.compiler", 4096, &compiler) &&
        meta == std::to_string(cubin.size()) + " " + HashHex(cubin + ptx + "\n" + log + "\n" + compiler) + " " + key) {
      m->compiled.cubin = cubin;
      m->compiled.ptx = ptx;
      m->compiled.log = log;
      cuda::ParsePtxasReport(log, &m->compiled);
      m->compiled.compiler = compiler;
      m->from_cache = true;
      return m;
    }
  }
  m->compiled = cuda::Compile(m->source, target.arch, {opt.include_dir}, {});
  if (cache) {
    MakeDirs(dir);
    AtomicWrite(dir + "/kernel.cubin", m->compiled.cubin);
    AtomicWrite(dir + "/kernel.ptx", m->compiled.ptx);
    AtomicWrite(dir + "/kernel.log", m->compiled.log);
    AtomicWrite(dir + "/kernel.compiler", m->compiled.compiler);
    AtomicWrite(dir + "/kernel.meta", std::to_string(m->compiled.cubin.size()) + " " +
                                          HashHex(m->compiled.cubin + m->compiled.ptx + "\n" + m->compiled.log + "\n" +
                                                  m->compiled.compiler) + " " + key);
  }
  return m;
}

std::vector<int64_t> CudaModule::Grid(const std::vector<int64_t>& sym_values) const {
  std::map<const VarNode*, int64_t> env;
  for (size_t i = 0; i < syms.size() && i < sym_values.size(); ++i) env[syms[i].get()] = sym_values[i];
  const KernelNode* k = FindKernel(lowered->body);
  std::vector<int64_t> g;
  for (auto& e : k->grid) {
    int64_t v;
    if (!EvalInt(e, env, &v))
      throw UserError(ErrorKind::kArgument, "the grid extent " + PrintExpr(e) + " of kernel '" + func->name +
                                                "' depends on a scalar argument; this launcher supports grids of constants and "
                                                "tensor dimensions");
    g.push_back(v);
  }
  while (g.size() < 3) g.push_back(1);
  return g;
}

std::vector<uint64_t> CudaModule::PackArgs(const std::vector<TensorArg>& args, std::vector<int64_t>* sym_values) const {
  std::vector<int64_t> sv = Check(args, {}, "any");
  std::vector<uint64_t> slots(args.size() + sv.size(), 0);
  for (size_t i = 0; i < args.size(); ++i) {
    const Param& p = func->params[i];
    if (p.buffer) {
      std::memcpy(&slots[i], &args[i].data, sizeof(void*));
    } else {
      std::string what = "argument " + std::to_string(i) + " ('" + p.var->name + "') of kernel '" + func->name + "'";
      PackScalar(ConvertScalar(args[i], p.var->dtype, what), &slots[i]);
    }
  }
  for (size_t i = 0; i < sv.size(); ++i) {
    TensorArg a;
    a.is_tensor = false;
    a.scalar_is_int = true;
    a.scalar_int = sv[i];
    PackScalar(ConvertScalar(a, syms[i]->dtype, "the symbolic dimension '" + syms[i]->name + "'"), &slots[args.size() + i]);
  }
  if (sym_values) *sym_values = sv;
  return slots;
}

void CudaModule::Launch(const std::vector<TensorArg>& args, uintptr_t stream) const {
  Check(args, {}, "cuda");
  std::vector<int64_t> sv;
  std::vector<uint64_t> slots = PackArgs(args, &sv);
  if (compiled.cubin.empty()) throw UserError(ErrorKind::kUnsupported, "kernel '" + func->name + "' was built without a cubin");
  auto g = Grid(sv);
  if (g[0] == 0 || g[1] == 0 || g[2] == 0) return;  // an empty grid (e.g. n = 0): nothing to run
  int dev = 0;
  for (auto& a : args)
    if (a.is_tensor && a.data) {
      dev = cuda::PointerDevice(a.data);
      break;
    }
  if (dev < 0) dev = 0;
  if (!loaded_) loaded_ = cuda::Module::Load(compiled.cubin, dev);
  auto mod = std::static_pointer_cast<cuda::Module>(loaded_);
  std::vector<void*> ptrs;
  for (auto& s : slots) ptrs.push_back(&s);
  cuda::Dim3 grid{static_cast<unsigned>(g[0]), static_cast<unsigned>(g[1]), static_cast<unsigned>(g[2])};
  cuda::Dim3 block{static_cast<unsigned>(info.threads), 1, 1};
  mod->Launch(kernel_name, grid, block, static_cast<int>(info.smem_bytes), ptrs.data(), stream);
}

}  // namespace tl
