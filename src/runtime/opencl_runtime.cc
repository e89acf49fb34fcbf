// The OpenCL runtime through dlopen; see opencl_runtime.h. The declarations below are the few
// entry points and constants of the OpenCL 1.2 API this file uses, written from the Khronos
// OpenCL API specification (no OpenCL header is needed to build).
#include "runtime/opencl_runtime.h"

#include <cstdlib>
#include <mutex>

#include "support/dynlib.h"
#include "support/error.h"

namespace tl {
namespace opencl {
namespace {

using cl_int = int32_t;
using cl_uint = uint32_t;
using cl_ulong = uint64_t;
using Handle = void*;  // cl_platform_id, cl_device_id, cl_context, cl_command_queue, cl_program, cl_kernel,
                       // cl_mem, cl_event

constexpr cl_int CL_SUCCESS = 0;
constexpr cl_int CL_BUILD_PROGRAM_FAILURE = -11;
constexpr cl_ulong CL_DEVICE_TYPE_ALL = 0xFFFFFFFFull;
constexpr cl_uint CL_DEVICE_MAX_WORK_GROUP_SIZE = 0x1004;
constexpr cl_uint CL_DEVICE_LOCAL_MEM_SIZE = 0x1023;
constexpr cl_uint CL_DEVICE_NAME = 0x102B;
constexpr cl_uint CL_DEVICE_VENDOR = 0x102C;
constexpr cl_uint CL_DRIVER_VERSION = 0x102D;
constexpr cl_uint CL_DEVICE_VERSION = 0x102F;
constexpr cl_uint CL_DEVICE_EXTENSIONS = 0x1030;
constexpr cl_uint CL_DEVICE_OPENCL_C_VERSION = 0x103D;
constexpr cl_uint CL_PLATFORM_NAME = 0x0902;
constexpr cl_ulong CL_QUEUE_PROFILING_ENABLE = 1 << 1;
constexpr cl_uint CL_PROGRAM_BINARY_SIZES = 0x1165;
constexpr cl_uint CL_PROGRAM_BINARIES = 0x1166;
constexpr cl_uint CL_PROGRAM_BUILD_LOG = 0x1183;
constexpr cl_ulong CL_MEM_READ_WRITE = 1 << 0;
constexpr cl_ulong CL_MEM_COPY_HOST_PTR = 1 << 5;
constexpr cl_uint CL_PROFILING_COMMAND_START = 0x1282;
constexpr cl_uint CL_PROFILING_COMMAND_END = 0x1283;

struct Api {
  cl_int (*GetPlatformIDs)(cl_uint, Handle*, cl_uint*);
  cl_int (*GetPlatformInfo)(Handle, cl_uint, size_t, void*, size_t*);
  cl_int (*GetDeviceIDs)(Handle, cl_ulong, cl_uint, Handle*, cl_uint*);
  cl_int (*GetDeviceInfo)(Handle, cl_uint, size_t, void*, size_t*);
  Handle (*CreateContext)(const intptr_t*, cl_uint, const Handle*, void*, void*, cl_int*);
  Handle (*CreateCommandQueue)(Handle, Handle, cl_ulong, cl_int*);
  Handle (*CreateProgramWithSource)(Handle, cl_uint, const char**, const size_t*, cl_int*);
  Handle (*CreateProgramWithBinary)(Handle, cl_uint, const Handle*, const size_t*, const unsigned char**,
                                    cl_int*, cl_int*);
  cl_int (*BuildProgram)(Handle, cl_uint, const Handle*, const char*, void*, void*);
  cl_int (*GetProgramBuildInfo)(Handle, Handle, cl_uint, size_t, void*, size_t*);
  cl_int (*GetProgramInfo)(Handle, cl_uint, size_t, void*, size_t*);
  Handle (*CreateKernel)(Handle, const char*, cl_int*);
  cl_int (*SetKernelArg)(Handle, cl_uint, size_t, const void*);
  Handle (*CreateBuffer)(Handle, cl_ulong, size_t, void*, cl_int*);
  cl_int (*EnqueueNDRangeKernel)(Handle, Handle, cl_uint, const size_t*, const size_t*, const size_t*,
                                 cl_uint, const Handle*, Handle*);
  cl_int (*EnqueueReadBuffer)(Handle, Handle, cl_uint, size_t, size_t, void*, cl_uint, const Handle*,
                              Handle*);
  cl_int (*Finish)(Handle);
  cl_int (*WaitForEvents)(cl_uint, const Handle*);
  cl_int (*GetEventProfilingInfo)(Handle, cl_uint, size_t, void*, size_t*);
  cl_int (*ReleaseEvent)(Handle);
  cl_int (*ReleaseMemObject)(Handle);
  cl_int (*ReleaseKernel)(Handle);
  cl_int (*ReleaseProgram)(Handle);
};

struct State {
  Api api{};
  Handle device = nullptr, context = nullptr, queue = nullptr;
  DeviceInfo info;
  std::string error;  // why there is no device
  std::mutex launch_mu;
};

std::string ErrName(cl_int e) {
  switch (e) {
    case -1: return "CL_DEVICE_NOT_FOUND";
    case -4: return "CL_MEM_OBJECT_ALLOCATION_FAILURE";
    case -5: return "CL_OUT_OF_RESOURCES";
    case -6: return "CL_OUT_OF_HOST_MEMORY";
    case -11: return "CL_BUILD_PROGRAM_FAILURE";
    case -30: return "CL_INVALID_VALUE";
    case -38: return "CL_INVALID_MEM_OBJECT";
    case -42: return "CL_INVALID_BINARY";
    case -46: return "CL_INVALID_KERNEL_NAME";
    case -48: return "CL_INVALID_KERNEL";
    case -49: return "CL_INVALID_ARG_INDEX";
    case -50: return "CL_INVALID_ARG_VALUE";
    case -51: return "CL_INVALID_ARG_SIZE";
    case -52: return "CL_INVALID_KERNEL_ARGS";
    case -54: return "CL_INVALID_WORK_GROUP_SIZE";
    case -1001: return "CL_PLATFORM_NOT_FOUND_KHR (no OpenCL platform is installed)";
    default: return "OpenCL error " + std::to_string(e);
  }
}

void Check(cl_int e, const std::string& what) {
  if (e != CL_SUCCESS) throw UserError(ErrorKind::kUnsupported, "OpenCL: " + what + " failed: " + ErrName(e));
}

std::string DevStr(const Api& a, Handle d, cl_uint what) {
  size_t n = 0;
  if (a.GetDeviceInfo(d, what, 0, nullptr, &n) != CL_SUCCESS || n == 0) return "";
  std::string s(n, '\0');
  a.GetDeviceInfo(d, what, n, &s[0], nullptr);
  while (!s.empty() && (s.back() == '\0' || s.back() == ' ')) s.pop_back();
  return s;
}

State* Init() {
  auto* st = new State();
  const char* env = std::getenv("TILELANG_OPENCL_LIBRARY");
  std::string lib = env && *env ? env : "libOpenCL.so.1";
  std::string why;
  void* h = dynlib::Open(lib, &why);
  if (!h && !(env && *env)) h = dynlib::Open("libOpenCL.so");
  if (!h) {
    st->error = "no OpenCL runtime: " + lib + " could not be loaded (" + why +
                "); install an ICD loader and a driver (on Debian: apt-get install ocl-icd-libopencl1 "
                "pocl-opencl-icd)";
    return st;
  }
  Api& a = st->api;
  bool ok = true;
  auto sym = [&](auto& fn, const char* name) { ok = dynlib::Sym(h, name, &fn) && ok; };
  sym(a.GetPlatformIDs, "clGetPlatformIDs");
  sym(a.GetPlatformInfo, "clGetPlatformInfo");
  sym(a.GetDeviceIDs, "clGetDeviceIDs");
  sym(a.GetDeviceInfo, "clGetDeviceInfo");
  sym(a.CreateContext, "clCreateContext");
  sym(a.CreateCommandQueue, "clCreateCommandQueue");
  sym(a.CreateProgramWithSource, "clCreateProgramWithSource");
  sym(a.CreateProgramWithBinary, "clCreateProgramWithBinary");
  sym(a.BuildProgram, "clBuildProgram");
  sym(a.GetProgramBuildInfo, "clGetProgramBuildInfo");
  sym(a.GetProgramInfo, "clGetProgramInfo");
  sym(a.CreateKernel, "clCreateKernel");
  sym(a.SetKernelArg, "clSetKernelArg");
  sym(a.CreateBuffer, "clCreateBuffer");
  sym(a.EnqueueNDRangeKernel, "clEnqueueNDRangeKernel");
  sym(a.EnqueueReadBuffer, "clEnqueueReadBuffer");
  sym(a.Finish, "clFinish");
  sym(a.WaitForEvents, "clWaitForEvents");
  sym(a.GetEventProfilingInfo, "clGetEventProfilingInfo");
  sym(a.ReleaseEvent, "clReleaseEvent");
  sym(a.ReleaseMemObject, "clReleaseMemObject");
  sym(a.ReleaseKernel, "clReleaseKernel");
  sym(a.ReleaseProgram, "clReleaseProgram");
  if (!ok) {
    st->error = "no OpenCL runtime: " + lib + " lacks OpenCL 1.2 entry points";
    return st;
  }
  cl_uint np = 0;
  cl_int e = a.GetPlatformIDs(0, nullptr, &np);
  if (e != CL_SUCCESS || np == 0) {
    st->error = "no OpenCL platform: the ICD loader " + lib + " found no driver (" +
                (e == CL_SUCCESS ? std::string("0 platforms") : ErrName(e)) +
                "); install one (on Debian: apt-get install pocl-opencl-icd)";
    return st;
  }
  std::vector<Handle> plats(np);
  a.GetPlatformIDs(np, plats.data(), nullptr);
  int want_p = -1, want_d = 0;
  if (const char* sel = std::getenv("TILELANG_OPENCL_DEVICE"); sel && *sel) {
    std::string s = sel;
    auto c = s.find(':');
    want_p = std::atoi(s.substr(0, c).c_str());
    want_d = c == std::string::npos ? 0 : std::atoi(s.substr(c + 1).c_str());
  }
  Handle plat = nullptr;
  for (cl_uint p = 0; p < np && !st->device; ++p) {
    if (want_p >= 0 && static_cast<int>(p) != want_p) continue;
    cl_uint nd = 0;
    if (a.GetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 0, nullptr, &nd) != CL_SUCCESS || nd == 0) continue;
    std::vector<Handle> devs(nd);
    a.GetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, nd, devs.data(), nullptr);
    int d = want_p >= 0 ? want_d : 0;
    if (d < 0 || d >= static_cast<int>(nd)) continue;
    st->device = devs[d];
    plat = plats[p];
  }
  if (!st->device) {
    st->error = "no OpenCL device" + std::string(want_p >= 0 ? " matches TILELANG_OPENCL_DEVICE" : "") +
                " (the platforms offer none)";
    return st;
  }
  DeviceInfo& di = st->info;
  di.name = DevStr(a, st->device, CL_DEVICE_NAME);
  di.vendor = DevStr(a, st->device, CL_DEVICE_VENDOR);
  di.version = DevStr(a, st->device, CL_DEVICE_VERSION);
  di.driver = DevStr(a, st->device, CL_DRIVER_VERSION);
  di.extensions = " " + DevStr(a, st->device, CL_DEVICE_EXTENSIONS) + " ";
  size_t n = 0;
  if (a.GetPlatformInfo(plat, CL_PLATFORM_NAME, 0, nullptr, &n) == CL_SUCCESS && n) {
    di.platform.assign(n, '\0');
    a.GetPlatformInfo(plat, CL_PLATFORM_NAME, n, &di.platform[0], nullptr);
    while (!di.platform.empty() && di.platform.back() == '\0') di.platform.pop_back();
  }
  di.c_version = DevStr(a, st->device, CL_DEVICE_OPENCL_C_VERSION);
  // "OpenCL C <major>.<minor> <vendor-specific>"
  if (di.c_version.rfind("OpenCL C ", 0) == 0) {
    const char* v = di.c_version.c_str() + 9;
    char* end = nullptr;
    di.c_major = static_cast<int>(std::strtol(v, &end, 10));
    if (end && *end == '.') di.c_minor = static_cast<int>(std::strtol(end + 1, nullptr, 10));
  }
  // cl_khr_subgroups is an OpenCL 2.0 extension: its builtins exist in OpenCL C 2.0 and later.
  di.subgroups = di.Has("cl_khr_subgroups") && di.c_major >= 2;
  di.build_options = "-cl-std=CL1.2";
  // PoCL (OpenCL on the CPU): the code generator avoids a construct its vectorising work-group
  // method miscompiles (codegen_opencl.h, dynamic_register_index).
  di.is_pocl = di.platform.find("Portable Computing Language") != std::string::npos;
  cl_ulong lm = 0;
  a.GetDeviceInfo(st->device, CL_DEVICE_LOCAL_MEM_SIZE, sizeof(lm), &lm, nullptr);
  size_t wg = 0;
  a.GetDeviceInfo(st->device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof(wg), &wg, nullptr);
  di.local_mem = static_cast<int64_t>(lm);
  di.max_work_group = static_cast<int64_t>(wg);
  st->context = a.CreateContext(nullptr, 1, &st->device, nullptr, nullptr, &e);
  if (e != CL_SUCCESS) {
    st->error = "OpenCL: clCreateContext failed on " + di.name + ": " + ErrName(e);
    st->device = nullptr;
    return st;
  }
  st->queue = a.CreateCommandQueue(st->context, st->device, CL_QUEUE_PROFILING_ENABLE, &e);
  if (e != CL_SUCCESS) {
    st->error = "OpenCL: clCreateCommandQueue failed on " + di.name + ": " + ErrName(e);
    st->device = nullptr;
  }
  return st;
}

// Loaded once per process and kept (the ICD loader and its drivers are never unloaded).
State& S() {
  static State* s = Init();
  return *s;
}

State& Ready() {
  State& s = S();
  if (!s.device) throw UserError(ErrorKind::kUnsupported, s.error);
  return s;
}

}  // namespace

bool DeviceInfo::Has(const std::string& ext) const {
  return extensions.find(" " + ext + " ") != std::string::npos;
}

std::string BuildOptionsFor(const DeviceInfo& d, const std::string& source) {
  if (!UsesSubgroups(source)) return d.build_options;
  // The sub-group builtins are declared by OpenCL C 2.0 and later; the rest of the source is
  // OpenCL C 1.2, which these versions accept.
  return d.c_major >= 3 ? "-cl-std=CL3.0" : "-cl-std=CL2.0";
}

void RequireSubgroups(const DeviceInfo& d, const std::string& who) {
  if (d.subgroups) return;
  throw UserError(
      ErrorKind::kUnsupported,
      who +
          " sub-group reductions (target feature 'subgroups'), which need the OpenCL extension "
          "cl_khr_subgroups and OpenCL C 2.0; the device '" +
          d.name + "' (" + d.version + ", " + (d.c_version.empty() ? "no OpenCL C version" : d.c_version) +
          ") " +
          (d.Has("cl_khr_subgroups") ? "has an OpenCL C older than 2.0" : "does not offer cl_khr_subgroups") +
          ". Compile for target 'opencl' (the device's extensions decide) or 'opencl -mattr=-subgroups', "
          "or run with execution_backend='emulator'");
}

bool Available() { return S().device != nullptr; }

std::string UnavailableReason() { return S().device ? "" : S().error; }

const DeviceInfo& Device() { return Ready().info; }

Program::~Program() {
  State& s = S();
  if (kernel_) s.api.ReleaseKernel(kernel_);
  if (program_) s.api.ReleaseProgram(program_);
}

namespace {

std::string BuildLog(State& s, Handle prog) {
  size_t n = 0;
  s.api.GetProgramBuildInfo(prog, s.device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &n);
  std::string log(n, '\0');
  if (n) s.api.GetProgramBuildInfo(prog, s.device, CL_PROGRAM_BUILD_LOG, n, &log[0], nullptr);
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  return log;
}

}  // namespace

std::shared_ptr<Program> Program::FromSource(const std::string& source, const std::string& kernel,
                                             const std::string& options) {
  State& s = Ready();
  std::shared_ptr<Program> p(new Program());
  const char* text = source.c_str();
  size_t len = source.size();
  cl_int e = CL_SUCCESS;
  p->program_ = s.api.CreateProgramWithSource(s.context, 1, &text, &len, &e);
  Check(e, "clCreateProgramWithSource");
  e = s.api.BuildProgram(p->program_, 1, &s.device, options.c_str(), nullptr, nullptr);
  p->log_ = BuildLog(s, p->program_);
  if (e == CL_BUILD_PROGRAM_FAILURE)
    throw UserError(ErrorKind::kCompile,
                    "the OpenCL compiler of " + s.info.name + " rejected the generated kernel '" + kernel +
                        "' (a code generator bug; please report it). Build log:\n" + p->log_);
  Check(e, "clBuildProgram");
  p->kernel_ = s.api.CreateKernel(p->program_, kernel.c_str(), &e);
  Check(e, "clCreateKernel(" + kernel + ")");
  return p;
}

std::shared_ptr<Program> Program::FromBinary(const std::string& binary, const std::string& kernel,
                                             const std::string& options) {
  State& s = Ready();
  std::shared_ptr<Program> p(new Program());
  const unsigned char* bin = reinterpret_cast<const unsigned char*>(binary.data());
  size_t len = binary.size();
  cl_int status = CL_SUCCESS, e = CL_SUCCESS;
  p->program_ = s.api.CreateProgramWithBinary(s.context, 1, &s.device, &len, &bin, &status, &e);
  if (e != CL_SUCCESS || status != CL_SUCCESS) return nullptr;
  if (s.api.BuildProgram(p->program_, 1, &s.device, options.c_str(), nullptr, nullptr) != CL_SUCCESS)
    return nullptr;
  p->kernel_ = s.api.CreateKernel(p->program_, kernel.c_str(), &e);
  if (e != CL_SUCCESS) return nullptr;
  return p;
}

std::string Program::Binary() const {
  State& s = Ready();
  size_t size = 0;
  if (s.api.GetProgramInfo(program_, CL_PROGRAM_BINARY_SIZES, sizeof(size), &size, nullptr) != CL_SUCCESS ||
      !size)
    return "";
  std::string bin(size, '\0');
  unsigned char* ptr = reinterpret_cast<unsigned char*>(&bin[0]);
  if (s.api.GetProgramInfo(program_, CL_PROGRAM_BINARIES, sizeof(ptr), &ptr, nullptr) != CL_SUCCESS)
    return "";
  return bin;
}

double Program::Launch(const std::vector<Arg>& args, const std::vector<size_t>& grid, size_t local) const {
  State& s = Ready();
  const Api& a = s.api;
  std::lock_guard<std::mutex> lock(s.launch_mu);  // kernel arguments are per kernel object
  std::vector<Handle> mems(args.size(), nullptr);
  struct Release {
    const Api& a;
    std::vector<Handle>& m;
    ~Release() {
      for (auto h : m)
        if (h) a.ReleaseMemObject(h);
    }
  } release{a, mems};
  for (size_t i = 0; i < args.size(); ++i) {
    const Arg& x = args[i];
    cl_int e = CL_SUCCESS;
    if (x.is_buffer) {
      size_t bytes = x.bytes ? x.bytes : 1;  // an empty tensor still needs a buffer object
      mems[i] = a.CreateBuffer(s.context, CL_MEM_READ_WRITE | (x.bytes ? CL_MEM_COPY_HOST_PTR : 0), bytes,
                               x.bytes ? x.host : nullptr, &e);
      Check(e, "clCreateBuffer(" + std::to_string(bytes) + " bytes)");
      Check(a.SetKernelArg(kernel_, static_cast<cl_uint>(i), sizeof(Handle), &mems[i]),
            "clSetKernelArg(" + std::to_string(i) + ")");
    } else {
      Check(a.SetKernelArg(kernel_, static_cast<cl_uint>(i), x.bytes, &x.scalar),
            "clSetKernelArg(" + std::to_string(i) + ")");
    }
  }
  size_t global[3], loc[3] = {local, 1, 1};
  for (int d = 0; d < 3; ++d) global[d] = (d < static_cast<int>(grid.size()) ? grid[d] : 1) * loc[d];
  Handle ev = nullptr;
  Check(a.EnqueueNDRangeKernel(s.queue, kernel_, 3, nullptr, global, loc, 0, nullptr, &ev),
        "clEnqueueNDRangeKernel");
  cl_int e = a.WaitForEvents(1, &ev);
  cl_ulong t0 = 0, t1 = 0;
  a.GetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof(t0), &t0, nullptr);
  a.GetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof(t1), &t1, nullptr);
  a.ReleaseEvent(ev);
  Check(e, "the kernel run (clWaitForEvents)");
  for (size_t i = 0; i < args.size(); ++i)
    if (args[i].is_buffer && args[i].written && args[i].bytes)
      Check(a.EnqueueReadBuffer(s.queue, mems[i], 1, 0, args[i].bytes, args[i].host, 0, nullptr, nullptr),
            "clEnqueueReadBuffer");
  Check(a.Finish(s.queue), "clFinish");
  return t1 > t0 ? static_cast<double>(t1 - t0) * 1e-6 : 0.0;
}

}  // namespace opencl
}  // namespace tl
