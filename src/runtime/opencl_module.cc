// BuildOpenCL and OpenCLModule; see opencl_module.h.
#include "runtime/opencl_module.h"

#include <chrono>
#include <map>

#include "arith/eval.h"
#include "arith/expr_depth.h"
#include "arith/index_check.h"
#include "ir/printer.h"
#include "runtime/cache_util.h"
#include "runtime/scalar_abi.h"
#include "target/cpu/codegen_cpu.h"

namespace tl {
namespace {

double MsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// What the device must offer for the generated source; a clear error naming the extension.
void CheckExtensions(const OpenCLModule& m, const opencl::DeviceInfo& d) {
  auto need = [&](bool used, const std::string& ext, const std::string& what) {
    if (used && !d.Has(ext))
      throw UserError(ErrorKind::kUnsupported,
                      "kernel '" + m.func->name + "' uses " + what + ", which needs the OpenCL extension " + ext +
                          "; the device '" + d.name + "' (" + d.version + ") does not offer it. Use float32 (or run "
                          "on a device with " + ext + ")",
                      m.func->span);
  };
  need(m.src.uses_fp64, "cl_khr_fp64", "float64");
  need(m.src.uses_int64_atomics, "cl_khr_int64_base_atomics", "64-bit atomics");
}

}  // namespace

std::shared_ptr<OpenCLModule> BuildOpenCL(const PrimFunc& f, const OpenCLBuildOptions& opt) {
  using namespace cache_util;
  auto m = std::make_shared<OpenCLModule>();
  m->func = f;
  m->syms = SymbolicVars(f);
  const opencl::DeviceInfo* dev = nullptr;
  if (opt.compile || opencl::Available()) {
    dev = &opencl::Device();  // throws (at compile time, not import time) when there is no runtime
    m->limits.local_mem = dev->local_mem;
    m->limits.max_work_group = dev->max_work_group;
    m->limits.device = "'" + dev->name + "'";
    m->device = dev->name;
  }
  auto t0 = std::chrono::steady_clock::now();
  CheckExprDepth(f);
  CheckStaticIndices(f);
  try {
    m->lowered = LowerForOpenCL(f, m->limits, opt.lower, &m->info);
    m->lower_ms = MsSince(t0);
    t0 = std::chrono::steady_clock::now();
    m->src = CodegenOpenCL(m->lowered, dev && dev->is_pocl);
  } catch (const UserError& e) {
    if (e.span().defined() || !f->span.defined()) throw;
    throw UserError(e.kind(), e.raw_message(), f->span);
  }
  m->codegen_ms = MsSince(t0);
  if (!opt.compile) return m;
  CheckExtensions(*m, *dev);

  t0 = std::chrono::steady_clock::now();
  CompileOptions co;
  co.cache_dir = opt.cache_dir;
  co.use_cache = opt.use_cache;
  bool cache = !CacheDisabled(co);
  std::string key = HashHex(m->src.source + "\n--options " + dev->build_options + "\n--device " + dev->name + "\n" +
                            dev->vendor + "\n" + dev->version + "\n" + dev->driver);
  std::string dir = CacheDir(co) + "/opencl/" + key;
  if (cache) {
    std::string bin, meta;
    const size_t kMax = size_t(256) << 20;
    if (ReadCacheFile(dir + "/kernel.bin", kMax, &bin) && ReadCacheFile(dir + "/kernel.meta", 4096, &meta) &&
        meta == std::to_string(bin.size()) + " " + HashHex(bin) + " " + key) {
      m->program = opencl::Program::FromBinary(bin, m->src.kernel_name, dev->build_options);
      if (m->program) {
        m->from_cache = true;
        m->compile_ms = MsSince(t0);
        return m;
      }
    }
  }
  m->program = opencl::Program::FromSource(m->src.source, m->src.kernel_name, dev->build_options);
  m->build_log = m->program->build_log();
  m->compile_ms = MsSince(t0);
  if (cache) {
    std::string bin = m->program->Binary();
    if (!bin.empty()) {
      MakeDirs(dir);
      AtomicWrite(dir + "/kernel.bin", bin);
      AtomicWrite(dir + "/kernel.meta", std::to_string(bin.size()) + " " + HashHex(bin) + " " + key);
    }
  }
  return m;
}

double OpenCLModule::Launch(const std::vector<TensorArg>& args) const {
  std::vector<int64_t> sv = Check(args);
  if (!program) throw UserError(ErrorKind::kUnsupported, "kernel '" + func->name + "' was built without a program");
  std::vector<bool> written = WrittenParams(func);
  std::vector<opencl::Program::Arg> cl(args.size() + sv.size());
  for (size_t i = 0; i < args.size(); ++i) {
    const Param& p = func->params[i];
    if (p.buffer) {
      int64_t n = 1;
      for (auto s : args[i].shape) n *= s;
      cl[i].is_buffer = true;
      cl[i].host = args[i].data;
      cl[i].bytes = static_cast<size_t>(n) * p.buffer->dtype.bytes();
      cl[i].written = written[i];
    } else {
      std::string what = "argument " + std::to_string(i) + " ('" + p.var->name + "') of kernel '" + func->name + "'";
      TypedScalar ts = ConvertScalar(args[i], p.var->dtype, what);
      uint64_t slot[2] = {0, 0};
      PackScalar(ts, slot);
      cl[i].scalar = slot[0];
      cl[i].bytes = p.var->dtype.bytes();
    }
  }
  for (size_t i = 0; i < sv.size(); ++i) {
    TensorArg a;
    a.is_tensor = false;
    a.scalar_is_int = true;
    a.scalar_int = sv[i];
    TypedScalar ts = ConvertScalar(a, syms[i]->dtype, "the symbolic dimension '" + syms[i]->name + "'");
    uint64_t slot[2] = {0, 0};
    PackScalar(ts, slot);
    cl[args.size() + i].scalar = slot[0];
    cl[args.size() + i].bytes = syms[i]->dtype.bytes();
  }
  std::map<const VarNode*, int64_t> env;
  for (size_t i = 0; i < syms.size(); ++i) env[syms[i].get()] = sv[i];
  const KernelNode* k = FindKernel(lowered->body);
  std::vector<size_t> grid;
  for (auto& e : k->grid) {
    int64_t v;
    if (!EvalInt(e, env, &v))
      throw UserError(ErrorKind::kArgument, "the grid extent " + PrintExpr(e) + " of kernel '" + func->name +
                                                "' depends on a scalar argument; this launcher supports grids of constants and "
                                                "tensor dimensions");
    if (v <= 0) return 0.0;  // an empty grid: nothing to run
    grid.push_back(static_cast<size_t>(v));
  }
  last_kernel_ms = program->Launch(cl, grid, static_cast<size_t>(info.threads));
  return last_kernel_ms;
}

}  // namespace tl
