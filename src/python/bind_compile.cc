// nanobind bindings of the compiler's entry point and the runtime: Compile() for every backend,
// the compiled kernel (lowered IR, source, binary, info, launch description, trace), module
// loading, the emulator, the backend registry, the disk-cache policy, and the CUDA-only helpers.
#include <algorithm>
#include <map>
#include <mutex>

#include <nanobind/nanobind.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "emulator/emulator.h"
#include "emulator/ptx/ptx.h"
#include "emulator/tensor_map_image.h"
#include "ir/functor.h"
#include "runtime/cache_util.h"
#include "runtime/cuda_driver.h"
#include "runtime/runtime_module.h"
#include "runtime/scalar_abi.h"
#include "target/backend.h"
#include "ir/params.h"
#include "target/cuda/nvrtc.h"
#include "target/launch_spec_builder.h"
#include "transform/gpu_passes.h"
#include "target/cuda/target.h"
#include "transform/gpu_options.h"
#include "transform/pass_config.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace tl {
namespace {

// Runs the PTX emulator (execution_backend="ptx"): the text is parsed once per distinct PTX (a kernel called again
// reuses its decoded module; the cache is keyed by the text itself and holds the last 32), then run without the
// GIL. Returns (reports as (kind, message), total reports, lane operations).
std::tuple<std::vector<std::pair<std::string, std::string>>, int64_t, int64_t> RunPtx(const std::string& ptx,
                                                                                     const emu::ptx::Launch& L,
                                                                                     const emu::Options& o) {
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<const emu::ptx::Module>> parsed;
  emu::Result r;
  {
    nb::gil_scoped_release release;
    std::shared_ptr<const emu::ptx::Module> mod;
    {
      std::lock_guard<std::mutex> lock(mu);
      auto it = parsed.find(ptx);
      if (it != parsed.end()) mod = it->second;
    }
    if (!mod) {
      mod = emu::ptx::Parse(ptx);
      std::lock_guard<std::mutex> lock(mu);
      if (parsed.size() >= 32) parsed.erase(parsed.begin());
      parsed.emplace(ptx, mod);
    }
    r = emu::ptx::Run(*mod, L, o);
  }
  std::vector<std::pair<std::string, std::string>> reps;
  for (auto& x : r.reports) reps.emplace_back(x.kind, x.message);
  return std::make_tuple(reps, r.total_reports, r.lane_ops);
}

// Tensors a kernel binds at run-time addresses (T.make_tensor of a pointer-table element, tl.buffer_bind):
// each non-zero entry of an int64 tensor argument (the tables) that is not inside another argument becomes a
// region as large as the largest tensor the kernel binds, so that the PTX emulator's bounds checks accept
// their accesses (the thread-level emulator checks them against the bound shape itself).
void AddPointerTableRegions(const CompiledKernel& k, const std::vector<TensorArg>& args,
                            emu::ptx::Launch* L) {
  int64_t bound = 0;
  PostOrderVisitStmt(k.lowered->body, [&](const Stmt& s) {
    auto* a = As<AttrStmtNode>(s);
    if (!a || a->key != "tl.buffer_bind" || !a->node) return;
    int64_t n = a->node->dtype.bytes();
    for (const Expr& e : a->node->shape) {
      auto* c = As<IntImmNode>(e);
      if (!c)
        throw UserError(ErrorKind::kUnsupported, "the PTX emulator needs a constant shape for tensor '" +
                                                     a->node->name +
                                                     "' (T.make_tensor of a pointer-table entry)");
      n *= c->value;
    }
    bound = std::max(bound, n);
  });
  if (!bound) return;
  const size_t given = L->regions.size();
  for (size_t i = 0; i < args.size(); ++i) {
    if (!args[i].is_tensor || !args[i].data || args[i].dtype != "int64") continue;
    int64_t n = 1;
    for (int64_t e : args[i].shape) n *= e;
    const int64_t* v = static_cast<const int64_t*>(args[i].data);
    for (int64_t j = 0; j < n; ++j) {
      const uint64_t a = static_cast<uint64_t>(v[j]);
      bool inside = a == 0;
      for (size_t r = 0; r < given && !inside; ++r)
        inside = a >= L->regions[r].base && a < L->regions[r].base + L->regions[r].bytes;
      if (!inside)
        L->regions.push_back({a, static_cast<uint64_t>(bound),
                              "the tensor at " + k.launch.Label(i) + "[" + std::to_string(j) + "]"});
    }
  }
}

// The steps Compile() runs for a target spec and configs (its front steps, then the backend's pipeline),
// and in `ctx` the context it runs them with: what the per-pass hook runs and lists.
Pipeline CompileSteps(const std::string& target, const std::map<std::string, std::string>& cfg, PassContext* ctx) {
  const Target t = ParseTarget(target);
  const Backend& b = GetBackend(t.kind);
  *ctx = b.pass_context(b.resolve ? b.resolve(t, false) : t, ParsePassConfig(cfg));
  return Concat(FrontSteps(), b.pipeline(*ctx));
}

}  // namespace

void BindCompile(nb::module_& m) {
  // ---- compiling: one entry point for every backend (target/backend.h) -------------------------
  nb::class_<CompiledKernel>(m, "CompiledKernel")
      .def_prop_ro("target", [](const CompiledKernel& k) { return k.target; })
      .def_prop_ro("func", [](const CompiledKernel& k) { return k.func; })
      .def_prop_ro("lowered", [](const CompiledKernel& k) { return k.lowered; })
      .def_prop_ro("source", [](const CompiledKernel& k) { return k.source; })
      .def_prop_ro("binary",
                   [](const CompiledKernel& k) {
                     return nb::bytes(k.artifact.binary.data(), k.artifact.binary.size());
                   })
      .def_prop_ro("binary_format", [](const CompiledKernel& k) { return k.artifact.format; })
      .def_prop_ro("binary_path", [](const CompiledKernel& k) { return k.artifact.path; })
      .def_prop_ro("ptx", [](const CompiledKernel& k) { return k.artifact.text; })
      .def_prop_ro("from_cache", [](const CompiledKernel& k) { return k.artifact.from_cache; })
      .def_prop_ro("kernel_name", [](const CompiledKernel& k) { return k.launch.entry; })
      .def_prop_ro("threads", [](const CompiledKernel& k) { return k.info.threads; })
      .def_prop_ro("cooperative", [](const CompiledKernel& k) { return k.launch.cooperative; })
      .def_prop_ro("warnings", [](const CompiledKernel& k) { return k.info.warnings; })
      .def_prop_ro("choices", [](const CompiledKernel& k) { return k.info.choices; })
      .def_prop_ro("smem_report", [](const CompiledKernel& k) { return k.info.smem_report; })
      .def_prop_ro("smem_bytes", [](const CompiledKernel& k) { return k.info.smem_bytes; })
      .def_prop_ro("layouts", [](const CompiledKernel& k) { return k.info.layouts; })
      .def_prop_ro("resources", [](const CompiledKernel& k) { return k.info.resources; })
      .def_prop_ro("compiler", [](const CompiledKernel& k) { return k.info.compiler; })
      .def_prop_ro("compile_log", [](const CompiledKernel& k) { return k.info.build_log; })
      .def_prop_ro("lower_ms", [](const CompiledKernel& k) { return k.info.lower_ms; })
      .def_prop_ro("codegen_ms", [](const CompiledKernel& k) { return k.info.codegen_ms; })
      .def_prop_ro("compile_ms", [](const CompiledKernel& k) { return k.info.build_ms; })
      .def_prop_ro("written",
                   [](const CompiledKernel& k) {
                     std::vector<bool> w;
                     for (auto& p : k.launch.params) w.push_back(p.written);
                     return w;
                   })
      // (pass name, IR after it, ms, changed) of every pass, with trace=True
      .def_prop_ro("trace",
                   [](const CompiledKernel& k) {
                     std::vector<std::tuple<std::string, PrimFunc, double, bool>> out;
                     for (auto& r : k.trace) out.emplace_back(r.name, r.result, r.ms, r.changed);
                     return out;
                   })
      .def("output_shapes",
           [](const CompiledKernel& k, const std::vector<TensorArg>& in, const std::vector<int>& out_idx) {
             return k.launch.OutputShapes(in, out_idx);
           })
      .def("check", [](const CompiledKernel& k, const std::vector<TensorArg>& args,
                       const std::string& device) { return k.launch.Check(args, {}, device); })
      .def(
          "grid",
          [](const CompiledKernel& k, const std::vector<int64_t>& syms, const std::vector<TensorArg>& args) {
            return k.launch.Grid(syms, args);
          },
          "syms"_a, "args"_a = std::vector<TensorArg>())
      // Test hook: the launcher's argument slots as bytes, without a device.
      .def("pack_args",
           [](const CompiledKernel& k, const std::vector<TensorArg>& args) {
             std::vector<uint64_t> slots = PackKernelArgs(k.launch, args, "any");
             return nb::bytes(reinterpret_cast<const char*>(slots.data()), slots.size() * 8);
           })
      // Runs the thread-level IR lane by lane on the CPU (GPU kinds; see docs/emulator.md).
      .def(
          "emulate",
          [](const CompiledKernel& k, const std::vector<TensorArg>& args, bool races, bool uninit,
             int max_reports, int subgroup_size, bool subgroup_strided, bool shifts) {
            if (!GetBackend(k.target.kind).emulatable)
              throw UserError(ErrorKind::kUnsupported,
                              "the emulator runs GPU kernels; target '" + k.target.kind + "' is not one");
            std::vector<int64_t> sv = k.launch.Check(args, {}, "cpu");
            std::vector<void*> ptrs;
            std::map<const VarNode*, double> syms;
            emu::Options o;
            std::vector<Var> sym_vars = SymbolicVars(k.func);
            for (size_t i = 0; i < args.size(); ++i) {
              const Param& p = k.func->params[i];
              // An empty tensor (a zero dimension) has no data pointer; the emulator never dereferences
              // it (every access is bounds-checked), but it wants a non-null one.
              static char empty_tensor = 0;
              ptrs.push_back(p.buffer ? (args[i].data ? args[i].data : &empty_tensor) : nullptr);
              if (p.buffer) continue;
              // The value the kernel sees: exact integers, floats rounded to the declared type.
              TypedScalar ts = ConvertScalar(args[i], p.var->dtype, k.launch.Label(i));
              syms[p.var.get()] = ts.f;
              if (!p.var->dtype.is_float()) o.exact_ints[p.var.get()] = ts.i;
            }
            for (size_t i = 0; i < sym_vars.size(); ++i) {
              syms[sym_vars[i].get()] = static_cast<double>(sv[i]);
              o.exact_ints[sym_vars[i].get()] = sv[i];
            }
            o.check_races = races;
            o.check_uninit = uninit;
            o.check_shift_counts = shifts;
            o.max_reports = max_reports;
            o.subgroup_size = subgroup_size;
            o.subgroup_strided = subgroup_strided;
            emu::Result r;
            {
              nb::gil_scoped_release release;
              r = emu::Run(k.lowered, ptrs, syms, o);
            }
            std::vector<std::pair<std::string, std::string>> reps;
            for (auto& x : r.reports) reps.emplace_back(x.kind, x.message);
            std::vector<std::tuple<std::string, std::string, int64_t, int64_t, int>> banks;
            for (auto& [key, b] : r.banks)
              banks.emplace_back(key.first, key.second, b.passes, b.extra_cycles, b.max_ways);
            return std::make_tuple(reps, r.total_reports, r.lane_ops, banks);
          },
          "args"_a, "check_races"_a = true, "check_uninit"_a = true, "max_reports"_a = 20,
          "subgroup_size"_a = 32, "subgroup_strided"_a = false, "check_shift_counts"_a = true);
  // Runs the PTX NVRTC made of the kernel (execution_backend="ptx"; src/emulator/ptx/, docs/emulator.md).
  m.def(
      "emulate_ptx",
      [](const CompiledKernel& k, const std::vector<TensorArg>& args, bool races, bool uninit, int max_reports) {
        if (k.target.kind != "cuda")
          throw UserError(ErrorKind::kUnsupported,
                          "execution_backend 'ptx' runs CUDA kernels; target '" + k.target.kind + "' is not one");
        if (k.artifact.text.empty())
          throw UserError(ErrorKind::kUnsupported, "kernel '" + k.launch.func_name + "' has no PTX (not built)");
        std::vector<int64_t> sv;
        emu::ptx::Launch L;
        L.params = PackKernelArgs(k.launch, args, "cpu", &sv);
        // TMA tensor maps follow the other parameters (as in a GPU launch), each as the emulators' own 128-byte
        // image (emulator/tensor_map_image.h) where a GPU gets the driver's CUtensorMap.
        for (const TensorMapSpec& tm : k.launch.tensor_maps) {
          const TensorArg& a = args[static_cast<size_t>(tm.param)];
          emu::MapImage img = emu::EncodeTensorMap(
              static_cast<const uint8_t*>(a.data), TensorMapDims(k.launch, tm, args, sv),
              std::max(1, tm.dtype.bits() / 8), tm.box, tm.swizzle_bytes, tm.dtype, tm.format);
          // (the driver's rules for the packed formats, which a GPU launch meets there)
          const std::string why = emu::PackedMapProblem(img);
          if (!why.empty())
            throw UserError(ErrorKind::kArgument,
                            "the TMA copy of " + k.launch.Label(static_cast<size_t>(tm.param)) + " " + why);
          L.blobs[L.params.size()] = std::vector<uint8_t>(img.b, img.b + sizeof(img.b));
          L.params.push_back(0);
        }
        L.entry = k.launch.entry;
        std::vector<int64_t> g = k.launch.Grid(sv, args);
        for (size_t d = 0; d < 3 && d < g.size(); ++d) L.grid[d] = g[d];
        L.block = {k.launch.threads, 1, 1};
        L.dynamic_smem = k.launch.dynamic_smem;
        for (size_t i = 0; i < args.size(); ++i) {
          if (!args[i].is_tensor || !args[i].data) continue;
          DataType dt;
          if (!DataType::Parse(args[i].dtype, &dt)) continue;
          int64_t n = 1;
          for (int64_t e : args[i].shape) n *= e;
          L.regions.push_back({reinterpret_cast<uint64_t>(args[i].data),
                               static_cast<uint64_t>(n * std::max(1, dt.bits() / 8)), k.launch.Label(i)});
        }
        AddPointerTableRegions(k, args, &L);
        emu::Options o;
        o.check_races = races;
        o.check_uninit = uninit;
        o.max_reports = max_reports;
        return RunPtx(k.artifact.text, L, o);
      },
      "kernel"_a, "args"_a, "check_races"_a = true, "check_uninit"_a = true, "max_reports"_a = 20);
  // The PTX emulator on PTX from elsewhere (tests run Triton's): parameters as 8-byte slots, the global
  // buffers as (address, bytes, name) for the bounds checks.
  m.def(
      "emulate_ptx_text",
      [](const std::string& ptx, const std::string& entry, const std::vector<int64_t>& grid,
         const std::vector<int64_t>& block, int64_t dynamic_smem, const std::vector<uint64_t>& params,
         const std::vector<std::tuple<uint64_t, uint64_t, std::string>>& regions, bool races, bool uninit,
         int max_reports) {
        emu::ptx::Launch L;
        L.entry = entry;
        for (size_t d = 0; d < 3 && d < grid.size(); ++d) L.grid[d] = grid[d];
        for (size_t d = 0; d < 3 && d < block.size(); ++d) L.block[d] = block[d];
        L.dynamic_smem = dynamic_smem;
        L.params = params;
        for (const auto& [a, b, n] : regions) L.regions.push_back({a, b, n});
        emu::Options o;
        o.check_races = races;
        o.check_uninit = uninit;
        o.max_reports = max_reports;
        return RunPtx(ptx, L, o);
      },
      "ptx"_a, "entry"_a, "grid"_a, "block"_a, "dynamic_smem"_a, "params"_a, "regions"_a, "check_races"_a = true,
      "check_uninit"_a = true, "max_reports"_a = 20);
  nb::class_<RuntimeModule>(m, "RuntimeModule")
      .def_prop_ro("device", &RuntimeModule::device)
      .def_prop_ro("kernel_name", [](const RuntimeModule& r) { return r.spec().entry; })
      .def_prop_ro("last_launch_ms", &RuntimeModule::last_launch_ms)
      .def("output_shapes",
           [](const RuntimeModule& r, const std::vector<TensorArg>& in, const std::vector<int>& out_idx) {
             return r.spec().OutputShapes(in, out_idx);
           })
      .def(
          "launch",
          [](const RuntimeModule& r, const std::vector<TensorArg>& args, uintptr_t stream) {
            nb::gil_scoped_release release;
            r.Launch(args, stream);
          },
          "args"_a, "stream"_a = 0);
  // The target a kernel is built for: e.g. the arch of the GPU that will run it when none is named.
  m.def(
      "resolve_target",
      [](const std::string& spec, bool will_run) {
        Target t = ParseTarget(spec);
        return GetBackend(t.kind).resolve(t, will_run);
      },
      "spec"_a, "will_run"_a = false);
  m.def(
      "compile",
      [](const PrimFunc& f, const std::string& target, const std::map<std::string, std::string>& cfg,
         const std::string& include_dir, bool use_cache, const std::string& cache_dir, bool build_binary,
         bool trace) {
        BuildOptions o;
        o.include_dir = include_dir;
        o.use_cache = use_cache;
        o.cache_dir = cache_dir;
        o.build_binary = build_binary;
        o.trace = trace;
        Target t = ParseTarget(target);
        nb::gil_scoped_release release;
        return Compile(f, t, cfg, o);
      },
      "func"_a, "target"_a, "pass_configs"_a = std::map<std::string, std::string>{}, "include_dir"_a = "",
      "use_cache"_a = true, "cache_dir"_a = "", "build_binary"_a = true, "trace"_a = false);
  m.def("load_module", [](const CompiledKernel& k) {
    nb::gil_scoped_release release;
    return LoadModule(k);
  });
  m.def("backend_kinds", &BackendKinds);
  m.def("backend_info", [](const std::string& kind) {
    const Backend& b = GetBackend(kind);
    return std::make_tuple(b.header_dir, b.fragment_kinds, b.execution_backends, b.emulatable, b.fork_safe);
  });
  // The disk cache's policy, the one every user of the cache follows: (enabled, directory).
  m.def("cache_policy", []() {
    CompileOptions o;
    return std::make_pair(!cache_util::CacheDisabled(o), cache_util::CacheDir(o));
  });
  m.def("written_params", &WrittenParams);
  // The lowered function only / the generated source only (no toolchain).
  m.def(
      "lower",
      [](const PrimFunc& f, const std::string& target, const std::map<std::string, std::string>& cfg) {
        BuildOptions o;
        o.build_binary = false;
        return Compile(f, ParseTarget(target), cfg, o).lowered;
      },
      "func"_a, "target"_a = "cpu", "pass_configs"_a = std::map<std::string, std::string>{});
  m.def(
      "codegen",
      [](const PrimFunc& f, const std::string& target, const std::map<std::string, std::string>& cfg) {
        BuildOptions o;
        o.build_binary = false;
        return Compile(f, ParseTarget(target), cfg, o).source;
      },
      "func"_a, "target"_a = "cpu", "pass_configs"_a = std::map<std::string, std::string>{});
  // The function after every pass, as IR (the round-trip and pass tests re-parse them).
  m.def(
      "lower_trace_funcs",
      [](const PrimFunc& f, const std::string& target, const std::map<std::string, std::string>& cfg) {
        BuildOptions o;
        o.build_binary = false;
        o.trace = true;
        std::vector<std::pair<std::string, PrimFunc>> out;
        for (auto& r : Compile(f, ParseTarget(target), cfg, o).trace) out.emplace_back(r.name, r.result);
        return out;
      },
      "func"_a, "target"_a, "pass_configs"_a = std::map<std::string, std::string>{});

  // (ordinal, file, line, col) of every tile op of a lowered function (its tl.tile_op scopes), to map
  // the "// tile op N" markers of the generated source back to the DSL.
  m.def("tile_op_spans", [](const PrimFunc& f) {
    std::vector<std::tuple<int64_t, std::string, int, int>> out;
    PostOrderVisitStmt(f->body, [&](const Stmt& s) {
      auto* a = As<AttrStmtNode>(s);
      int64_t op;
      if (a && a->key == "tl.tile_op" && AsConstInt(a->value, &op))
        out.emplace_back(op, a->span.file, a->span.line, a->span.col);
    });
    std::sort(out.begin(), out.end());
    return out;
  });
  m.def("pass_config_keys", &PassConfigKeys);
  m.def("check_pass_configs", [](const std::map<std::string, std::string>& cfg) { ParsePassConfig(cfg); });
  // The per-pass test hook: one step of the target's pipeline (or of Compile()'s front), alone on `func`,
  // with exactly the context Compile() gives it (the backend's features and the one config mapping).
  m.def(
      "run_pass",
      [](const std::string& name, const PrimFunc& f, const std::string& target,
         const std::map<std::string, std::string>& cfg, int occurrence) {
        CompileInfo info;
        PassContext ctx;
        const Pipeline steps = CompileSteps(target, cfg, &ctx);
        ctx.info = &info;
        return RunPipelineStep(steps, name, occurrence, f, ctx);
      },
      "name"_a, "func"_a, "target"_a = "cuda -arch=sm_80",
      "pass_configs"_a = std::map<std::string, std::string>{}, "occurrence"_a = 0);
  // The names of the steps Compile() runs for a target and configs, in order (front steps first).
  m.def(
      "pipeline_steps",
      [](const std::string& target, const std::map<std::string, std::string>& cfg) {
        PassContext ctx;
        std::vector<std::string> out;
        for (const PipelineStep& s : CompileSteps(target, cfg, &ctx)) out.push_back(s.name);
        return out;
      },
      "target"_a, "pass_configs"_a = std::map<std::string, std::string>{});
  m.def("shared_pass_names", &SharedPassNames);
  // ---- CUDA specifics --------------------------------------------------------------------------
  m.def("cuda_driver_available", &cuda::DriverAvailable);
  m.def(
      "cuda_device_arch", [](int dev) { return cuda::GetDeviceInfo(dev).Arch(); }, "device"_a = 0);
  m.def("cuda_device_count", &cuda::DeviceCount);
  m.def(
      "cuda_device_info",
      [](int dev) {
        cuda::DeviceInfo d = cuda::GetDeviceInfo(dev);
        return std::map<std::string, std::string>{
            {"arch", d.Arch()},
            {"compute_capability", std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor)},
            {"sm_count", std::to_string(d.sm_count)},
            {"max_shared_optin", std::to_string(d.max_shared_optin)},
            {"max_shared_per_sm", std::to_string(d.max_shared_per_sm)},
            {"max_registers_per_block", std::to_string(d.max_registers_per_block)}};
      },
      "device"_a = 0);
  m.def("cuda_toolchain_version", &cuda::ToolchainVersion);
}

}  // namespace tl
