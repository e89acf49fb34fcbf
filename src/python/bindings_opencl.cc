// nanobind bindings of the OpenCL backend (kept apart from bindings.cc until the backend registry
// takes over the dispatch): build, launch, code generation and the lower trace.
#include <nanobind/nanobind.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "ir/printer.h"
#include "runtime/opencl_module.h"
#include "transform/pass_config.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace tl {
namespace {

CudaLowerOptions OpenCLLowerOptions(const std::map<std::string, std::string>& cfg) {
  PassConfig pc = ParsePassConfig(cfg);
  CudaLowerOptions o;
  o.disable_barriers = pc.disable_barrier_insertion;
  o.disable_cp_async = true;
  o.corrupt_mma_layout = pc.test_corrupt_mma_layout;
  return o;
}

}  // namespace

void BindOpenCL(nb::module_& m) {
  nb::class_<OpenCLModule>(m, "OpenCLModule")
      .def_prop_ro("source", [](const OpenCLModule& c) { return c.src.source; })
      .def_prop_ro("kernel_name", [](const OpenCLModule& c) { return c.src.kernel_name; })
      .def_prop_ro("build_log", [](const OpenCLModule& c) { return c.build_log; })
      .def_prop_ro("device", [](const OpenCLModule& c) { return c.device; })
      .def_prop_ro("from_cache", [](const OpenCLModule& c) { return c.from_cache; })
      .def_prop_ro("lower_ms", [](const OpenCLModule& c) { return c.lower_ms; })
      .def_prop_ro("codegen_ms", [](const OpenCLModule& c) { return c.codegen_ms; })
      .def_prop_ro("compile_ms", [](const OpenCLModule& c) { return c.compile_ms; })
      .def_prop_ro("lowered", [](const OpenCLModule& c) { return c.lowered; })
      .def_prop_ro("threads", [](const OpenCLModule& c) { return c.info.threads; })
      .def_prop_ro("warnings", [](const OpenCLModule& c) { return c.info.warnings; })
      .def_prop_ro("choices", [](const OpenCLModule& c) { return c.info.choices; })
      .def_prop_ro("smem_report", [](const OpenCLModule& c) { return c.info.smem_report; })
      .def_prop_ro("smem_bytes", [](const OpenCLModule& c) { return c.info.smem_bytes; })
      .def_prop_ro("local_mem_limit", [](const OpenCLModule& c) { return c.limits.local_mem; })
      .def_prop_ro("layouts", [](const OpenCLModule& c) { return c.info.layouts; })
      .def_prop_ro("last_kernel_ms", [](const OpenCLModule& c) { return c.last_kernel_ms; })
      .def("output_shapes", [](const OpenCLModule& c, const std::vector<TensorArg>& in, const std::vector<int>& out_idx) {
        return ArgumentOutputShapes(c.func, c.syms, in, out_idx);
      })
      .def("launch", [](const OpenCLModule& c, const std::vector<TensorArg>& args) {
        nb::gil_scoped_release release;
        return c.Launch(args);
      });
  m.def("build_opencl", [](const PrimFunc& f, bool use_cache, const std::string& cache_dir,
                           const std::map<std::string, std::string>& cfg, bool compile) {
    OpenCLBuildOptions o;
    o.lower = OpenCLLowerOptions(cfg);
    o.use_cache = use_cache;
    o.cache_dir = cache_dir;
    o.compile = compile;
    nb::gil_scoped_release release;
    return BuildOpenCL(f, o);
  }, "func"_a, "use_cache"_a = true, "cache_dir"_a = "", "pass_configs"_a = std::map<std::string, std::string>{},
     "compile"_a = true);
  m.def("lower_opencl_trace", [](const PrimFunc& f, const std::map<std::string, std::string>& cfg) {
    std::vector<PassRecord> trace;
    CudaLowerInfo info;
    OpenCLLimits lim;
    if (opencl::Available()) {
      lim.local_mem = opencl::Device().local_mem;
      lim.max_work_group = opencl::Device().max_work_group;
      lim.device = "'" + opencl::Device().name + "'";
    }
    LowerForOpenCL(f, lim, OpenCLLowerOptions(cfg), &info, &trace);
    std::vector<std::tuple<std::string, std::string, double, bool>> out;
    for (auto& r : trace) out.emplace_back(r.name, PrintPrimFunc(r.result), r.ms, r.changed);
    return out;
  }, "func"_a, "pass_configs"_a = std::map<std::string, std::string>{});
  // The OpenCL C of a kernel without building it (no OpenCL runtime needed; the device's limits when
  // there is one, else the OpenCL 1.2 minimums).
  m.def("codegen_opencl", [](const PrimFunc& f, const std::map<std::string, std::string>& cfg) {
    OpenCLBuildOptions o;
    o.lower = OpenCLLowerOptions(cfg);
    o.compile = false;
    return BuildOpenCL(f, o)->src.source;
  }, "func"_a, "pass_configs"_a = std::map<std::string, std::string>{});
  m.def("opencl_available", &opencl::Available);
  m.def("opencl_unavailable_reason", &opencl::UnavailableReason);
  m.def("opencl_device", []() {
    const opencl::DeviceInfo& d = opencl::Device();
    std::map<std::string, std::string> r{{"name", d.name}, {"vendor", d.vendor}, {"version", d.version},
                                         {"driver", d.driver}, {"platform", d.platform},
                                         {"extensions", d.extensions}, {"local_mem", std::to_string(d.local_mem)},
                                         {"max_work_group", std::to_string(d.max_work_group)}};
    return r;
  });
}

}  // namespace tl
