// nanobind bindings of the OpenCL runtime's device query (compiling and launching go through the
// backend registry, bind_compile.cc).
#include <nanobind/nanobind.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "runtime/opencl_runtime.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace tl {
void BindOpenCL(nb::module_& m) {
  m.def("opencl_available", &opencl::Available);
  m.def("opencl_unavailable_reason", &opencl::UnavailableReason);
  m.def("opencl_device", []() {
    const opencl::DeviceInfo& d = opencl::Device();
    std::map<std::string, std::string> r{{"name", d.name},
                                         {"vendor", d.vendor},
                                         {"version", d.version},
                                         {"driver", d.driver},
                                         {"platform", d.platform},
                                         {"extensions", d.extensions},
                                         {"local_mem", std::to_string(d.local_mem)},
                                         {"max_work_group", std::to_string(d.max_work_group)},
                                         {"opencl_c_version", d.c_version},
                                         {"subgroups", d.subgroups ? "1" : "0"}};
    return r;
  });
}

}  // namespace tl
