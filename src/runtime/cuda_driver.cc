// The CUDA driver through dlopen; see cuda_driver.h. The declarations below are written from the
// CUDA driver API documentation (no cuda.h here: the machine that builds us may have none).
#include "runtime/cuda_driver.h"

#include <vector>

#include "support/dynlib.h"
#include "support/error.h"

namespace tl::cuda {
namespace {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = void*;
using CUmodule = void*;
using CUfunction = void*;
using CUstream = void*;

constexpr CUresult kSuccess = 0;
constexpr CUresult kErrorInvalidValue = 1;
constexpr CUresult kErrorNoDevice = 100;
constexpr CUresult kErrorInvalidImage = 200;
constexpr CUresult kErrorNoBinaryForGpu = 209;
constexpr CUresult kErrorNotFound = 500;
constexpr CUresult kErrorLaunchOutOfResources = 701;
constexpr CUresult kErrorCooperativeLaunchTooLarge = 720;  // CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE
constexpr int kAttrComputeCapabilityMajor = 75;  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
constexpr int kAttrComputeCapabilityMinor = 76;  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR
constexpr int kAttrMaxSharedPerBlockOptin = 97;  // CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
constexpr int kAttrMultiprocessorCount = 16;     // CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
constexpr int kAttrMaxRegistersPerBlock = 12;    // CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK
constexpr int kAttrMaxSharedPerSm = 81;          // CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR
constexpr int kFuncAttrMaxDynamicShared = 8;     // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
constexpr int kPointerAttrDeviceOrdinal = 9;     // CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL

struct DriverApi {
  void* handle = nullptr;
  CUresult (*Init)(unsigned) = nullptr;
  CUresult (*DeviceGetCount)(int*) = nullptr;
  CUresult (*DeviceGet)(CUdevice*, int) = nullptr;
  CUresult (*DeviceGetAttribute)(int*, int, CUdevice) = nullptr;
  CUresult (*DevicePrimaryCtxRetain)(CUcontext*, CUdevice) = nullptr;
  CUresult (*CtxGetCurrent)(CUcontext*) = nullptr;
  CUresult (*CtxSetCurrent)(CUcontext) = nullptr;
  CUresult (*CtxSynchronize)() = nullptr;
  CUresult (*ModuleLoadData)(CUmodule*, const void*) = nullptr;
  CUresult (*ModuleGetFunction)(CUfunction*, CUmodule, const char*) = nullptr;
  CUresult (*ModuleUnload)(CUmodule) = nullptr;
  CUresult (*FuncSetAttribute)(CUfunction, int, int) = nullptr;
  CUresult (*LaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                           CUstream, void**, void**) = nullptr;
  CUresult (*GetErrorString)(CUresult, const char**) = nullptr;
  CUresult (*LaunchCooperativeKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                      unsigned, CUstream, void**) = nullptr;  // optional (T.sync_grid)
  CUresult (*PointerGetAttribute)(void*, int, CUdeviceptr) = nullptr;
  // CUDA 12+ (optional: older drivers lack it, and then TMA kernels cannot launch)
  CUresult (*TensorMapEncodeTiled)(void*, int, uint32_t, void*, const uint64_t*, const uint64_t*,
                                   const uint32_t*, const uint32_t*, int, int, int, int) = nullptr;
};

using dynlib::Sym;

std::string g_failure;  // why the driver is unusable; written once under the call_once below

const DriverApi* LoadDriver() {
  static DriverApi api;
  static std::once_flag once;
  std::call_once(once, [] {
    void* h = dynlib::Open("libcuda.so.1");
    if (!h) {
      g_failure = "no CUDA driver (libcuda.so.1) on this machine";
      return;
    }
    DriverApi a;
    a.handle = h;
    bool ok =
        Sym(h, "cuInit", &a.Init) && Sym(h, "cuDeviceGetCount", &a.DeviceGetCount) &&
        Sym(h, "cuDeviceGet", &a.DeviceGet) && Sym(h, "cuDeviceGetAttribute", &a.DeviceGetAttribute) &&
        Sym(h, "cuDevicePrimaryCtxRetain", &a.DevicePrimaryCtxRetain) &&
        Sym(h, "cuCtxGetCurrent", &a.CtxGetCurrent) && Sym(h, "cuCtxSetCurrent", &a.CtxSetCurrent) &&
        Sym(h, "cuCtxSynchronize", &a.CtxSynchronize) && Sym(h, "cuModuleLoadData", &a.ModuleLoadData) &&
        Sym(h, "cuModuleGetFunction", &a.ModuleGetFunction) && Sym(h, "cuModuleUnload", &a.ModuleUnload) &&
        Sym(h, "cuFuncSetAttribute", &a.FuncSetAttribute) && Sym(h, "cuLaunchKernel", &a.LaunchKernel) &&
        Sym(h, "cuGetErrorString", &a.GetErrorString) &&
        Sym(h, "cuPointerGetAttribute", &a.PointerGetAttribute);
    Sym(h, "cuTensorMapEncodeTiled", &a.TensorMapEncodeTiled);  // optional
    Sym(h, "cuLaunchCooperativeKernel", &a.LaunchCooperativeKernel);  // optional
    if (!ok) {
      g_failure = "the CUDA driver (libcuda.so.1) is too old: it lacks part of the driver API we use";
      dlclose(h);
      return;
    }
    CUresult rc = a.Init(0);
    if (rc != kSuccess) {
      const char* s = nullptr;
      a.GetErrorString(rc, &s);
      g_failure = std::string("the CUDA driver failed to initialise (cuInit: ") + (s ? s : "unknown error") +
                  (rc == kErrorNoDevice ? "; no GPU is visible" : "") + ")";
      return;  // keep the library loaded: unloading a half-initialised driver is not safe
    }
    api = a;
  });
  return api.handle ? &api : nullptr;
}

const DriverApi& Api() {
  const DriverApi* api = LoadDriver();
  if (!api)
    TL_USER_ERROR(kUnsupported, Span(), g_failure,
                  ": kernels compiled for 'cuda' can be built and inspected "
                  "here but not launched; use execution_backend='emulator'");
  return *api;
}

std::string ErrorText(CUresult rc) {
  const char* s = nullptr;
  if (const DriverApi* api = LoadDriver()) api->GetErrorString(rc, &s);
  return std::string(s ? s : "unknown CUDA error") + " (CUresult " + std::to_string(rc) + ")";
}

// Makes `ctx` current for the scope and restores the caller's context afterwards, so that we do
// not disturb a framework (e.g. PyTorch) that manages contexts on the same thread.
class ScopedContext {
 public:
  explicit ScopedContext(CUcontext ctx) {
    const DriverApi& api = Api();
    if (api.CtxGetCurrent(&saved_) != kSuccess) saved_ = nullptr;
    if (saved_ != ctx) {
      CUresult rc = api.CtxSetCurrent(ctx);
      if (rc != kSuccess)
        TL_USER_ERROR(kUnsupported, Span(), "cannot make the CUDA context current: ", ErrorText(rc));
      switched_ = true;
    }
  }
  ~ScopedContext() {
    if (const DriverApi* api = LoadDriver(); api && switched_) api->CtxSetCurrent(saved_);
  }

 private:
  CUcontext saved_ = nullptr;
  bool switched_ = false;
};

CUdevice CheckedDevice(int ordinal) {
  const DriverApi& api = Api();
  int count = 0;
  api.DeviceGetCount(&count);
  if (ordinal < 0 || ordinal >= count)
    TL_USER_ERROR(kArgument, Span(), "CUDA device ", ordinal, " does not exist: this machine has ", count,
                  count == 1 ? " device" : " devices");
  CUdevice dev = 0;
  CUresult rc = api.DeviceGet(&dev, ordinal);
  if (rc != kSuccess)
    TL_USER_ERROR(kUnsupported, Span(), "cuDeviceGet(", ordinal, ") failed: ", ErrorText(rc));
  return dev;
}

// The device's primary context, retained once and kept for the life of the process (as the CUDA
// runtime does), so modules and framework tensors share it.
CUcontext PrimaryContext(int ordinal) {
  static std::mutex mu;
  static std::map<int, CUcontext> contexts;
  CUdevice dev = CheckedDevice(ordinal);
  std::lock_guard<std::mutex> lock(mu);
  auto it = contexts.find(ordinal);
  if (it != contexts.end()) return it->second;
  CUcontext ctx = nullptr;
  CUresult rc = Api().DevicePrimaryCtxRetain(&ctx, dev);
  if (rc != kSuccess)
    TL_USER_ERROR(kUnsupported, Span(), "cannot create a context on CUDA device ", ordinal, ": ",
                  ErrorText(rc));
  contexts[ordinal] = ctx;
  return ctx;
}

int Attribute(int attr, CUdevice dev) {
  int v = 0;
  CUresult rc = Api().DeviceGetAttribute(&v, attr, dev);
  if (rc != kSuccess)
    TL_USER_ERROR(kUnsupported, Span(), "cuDeviceGetAttribute(", attr, ") failed: ", ErrorText(rc));
  return v;
}

}  // namespace

bool DriverAvailable() {
  try {
    return LoadDriver() != nullptr;
  } catch (...) {
    return false;
  }
}

std::string DriverUnavailableReason() { return DriverAvailable() ? std::string() : g_failure; }

int DeviceCount() {
  const DriverApi* api = DriverAvailable() ? LoadDriver() : nullptr;
  int count = 0;
  if (api && api->DeviceGetCount(&count) != kSuccess) count = 0;
  return count;
}

std::string DeviceInfo::Arch() const {
  std::string arch = "sm_" + std::to_string(cc_major * 10 + cc_minor);
  return cc_major >= 9 ? arch + "a" : arch;
}

DeviceInfo GetDeviceInfo(int device) {
  CUdevice dev = CheckedDevice(device);
  DeviceInfo info;
  info.ordinal = device;
  info.cc_major = Attribute(kAttrComputeCapabilityMajor, dev);
  info.cc_minor = Attribute(kAttrComputeCapabilityMinor, dev);
  info.max_shared_optin = Attribute(kAttrMaxSharedPerBlockOptin, dev);
  info.sm_count = Attribute(kAttrMultiprocessorCount, dev);
  info.max_registers_per_block = Attribute(kAttrMaxRegistersPerBlock, dev);
  info.max_shared_per_sm = Attribute(kAttrMaxSharedPerSm, dev);
  return info;
}

int PointerDevice(const void* ptr) {
  const DriverApi& api = Api();
  int ordinal = -1;
  CUresult rc = api.PointerGetAttribute(&ordinal, kPointerAttrDeviceOrdinal,
                                        static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(ptr)));
  return rc == kSuccess ? ordinal : -1;
}

void Synchronize(int device) {
  ScopedContext scope(PrimaryContext(device));
  CUresult rc = Api().CtxSynchronize();
  if (rc != kSuccess)
    TL_USER_ERROR(kArgument, Span(), "a kernel on CUDA device ", device, " failed: ", ErrorText(rc));
}

std::shared_ptr<Module> Module::Load(const std::string& cubin, int device) {
  const DriverApi& api = Api();
  if (cubin.size() < 4 || cubin.compare(0, 4,
                                        "\x7f"
                                        "ELF") != 0)
    TL_USER_ERROR(kCompile, Span(), "Module::Load expects a cubin (an ELF image); got ", cubin.size(),
                  " bytes of something else");
  CUcontext ctx = PrimaryContext(device);
  ScopedContext scope(ctx);
  CUmodule mod = nullptr;
  CUresult rc = api.ModuleLoadData(&mod, cubin.data());
  if (rc != kSuccess) {
    std::string hint;
    if (rc == kErrorNoBinaryForGpu || rc == kErrorInvalidImage)
      hint = ": the cubin was not compiled for this GPU (" + GetDeviceInfo(device).Arch() +
             "); recompile for it";
    TL_USER_ERROR(kCompile, Span(), "cannot load the kernel onto CUDA device ", device, ": ", ErrorText(rc),
                  hint);
  }
  return std::shared_ptr<Module>(new Module(device, ctx, mod));
}

Module::~Module() {
  const DriverApi* api = LoadDriver();
  if (!api || !module_) return;
  try {
    ScopedContext scope(ctx_);
    api->ModuleUnload(module_);  // failures at teardown (e.g. driver shutting down) are ignored
  } catch (...) {
  }
}

Module::Function& Module::Lookup(const std::string& fn) {
  auto it = functions_.find(fn);
  if (it != functions_.end()) return it->second;
  Function f;
  CUresult rc = Api().ModuleGetFunction(&f.handle, module_, fn.c_str());
  if (rc != kSuccess)
    TL_USER_ERROR(kArgument, Span(), "the loaded module has no kernel named '", fn, "'",
                  rc == kErrorNotFound ? " (is it declared extern \"C\" __global__?)" : "", ": ",
                  ErrorText(rc));
  return functions_.emplace(fn, f).first->second;
}

void Module::Launch(const std::string& fn, Dim3 grid, Dim3 block, int dyn_smem, void** args, uintptr_t stream,
                    bool cooperative) {
  const DriverApi& api = Api();
  if (dyn_smem < 0)
    TL_USER_ERROR(kArgument, Span(), "kernel '", fn, "': negative dynamic shared memory size");
  ScopedContext scope(ctx_);
  void* handle = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    Function& f = Lookup(fn);
    if (dyn_smem > f.dyn_smem_limit) {
      DeviceInfo info = GetDeviceInfo(device_);
      if (dyn_smem > info.max_shared_optin)
        TL_USER_ERROR(kResource, Span(), "kernel '", fn, "' needs ", dyn_smem,
                      " bytes of dynamic shared memory, "
                      "but CUDA device ",
                      device_, " (", info.Arch(), ") allows at most ", info.max_shared_optin,
                      " per block; use smaller tiles or fewer pipeline stages");
      CUresult rc = api.FuncSetAttribute(f.handle, kFuncAttrMaxDynamicShared, dyn_smem);
      if (rc != kSuccess)
        TL_USER_ERROR(kResource, Span(), "kernel '", fn, "': cannot opt in to ", dyn_smem,
                      " bytes of dynamic shared memory: ", ErrorText(rc));
      f.dyn_smem_limit = dyn_smem;
    }
    handle = f.handle;
  }
  if (cooperative && !api.LaunchCooperativeKernel)
    TL_USER_ERROR(kUnsupported, Span(), "kernel '", fn,
                  "' uses T.sync_grid, which needs a cooperative launch: this "
                  "CUDA driver has no cuLaunchCooperativeKernel");
  CUresult rc = cooperative ? api.LaunchCooperativeKernel(handle, grid.x, grid.y, grid.z, block.x, block.y,
                                                          block.z, static_cast<unsigned>(dyn_smem),
                                                          reinterpret_cast<CUstream>(stream), args)
                            : api.LaunchKernel(handle, grid.x, grid.y, grid.z, block.x, block.y, block.z,
                                               static_cast<unsigned>(dyn_smem),
                                               reinterpret_cast<CUstream>(stream), args, nullptr);
  if (cooperative && rc == kErrorCooperativeLaunchTooLarge)
    TL_USER_ERROR(
        kResource, Span(), "kernel '", fn, "' uses T.sync_grid: its grid of ", grid.x * grid.y * grid.z,
        " blocks cannot all be resident on the device at once (a cooperative launch's limit: at most the "
        "SM count times the blocks one SM holds); launch fewer blocks, e.g. one per SM");
  if (rc == kErrorLaunchOutOfResources)
    TL_USER_ERROR(kResource, Span(), "kernel '", fn, "' cannot launch with ", block.x * block.y * block.z,
                  " threads per block: too many registers or threads for the device (", ErrorText(rc), ")");
  if (rc == kErrorInvalidValue)
    TL_USER_ERROR(kArgument, Span(), "kernel '", fn, "': invalid launch configuration grid=(", grid.x, ",",
                  grid.y, ",", grid.z, ") block=(", block.x, ",", block.y, ",", block.z,
                  ") dynamic smem=", dyn_smem, " (", ErrorText(rc), ")");
  if (rc != kSuccess) TL_USER_ERROR(kArgument, Span(), "launching kernel '", fn, "' failed: ", ErrorText(rc));
}

void EncodeTensorMapTiled(void* map, int elem_bytes, int rank, void* global, const uint64_t* dims,
                          const uint64_t* strides, const uint32_t* box, int swizzle_bytes, int format) {
  const DriverApi* api = LoadDriver();
  if (!api) throw UserError(ErrorKind::kUnsupported, DriverUnavailableReason());
  if (!api->TensorMapEncodeTiled)
    throw UserError(ErrorKind::kUnsupported,
                    "the CUDA driver lacks cuTensorMapEncodeTiled (CUDA 12+), which TMA kernels need");
  // CUtensorMapDataType by element size (only the size matters for a zero-filled copy): UINT8 = 0,
  // UINT16 = 1, UINT32 = 2, UINT64 = 4. Swizzle: NONE = 0, 32B = 1, 64B = 2, 128B = 3. Interleave NONE = 0,
  // L2 promotion 128B = 2, out-of-bounds fill NONE = 0 (zeros).
  // Format 1 is CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B (14 in CUDA 12.8+'s cuda.h: 16 packed 4-bit values
  // land in 16 shared bytes, the last 8 a gap).
  // Format 2, CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B (15): 16 packed 6-bit values (12 bytes), the last 4 a
  // gap.
  const int dtype = format == 1       ? 14
                    : format == 2     ? 15
                    : elem_bytes == 1 ? 0
                    : elem_bytes == 2 ? 1
                    : elem_bytes == 4 ? 2
                                      : 4;
  const int sw = swizzle_bytes == 128 ? 3 : swizzle_bytes == 64 ? 2 : swizzle_bytes == 32 ? 1 : 0;
  const uint32_t ones[5] = {1, 1, 1, 1, 1};
  CUresult rc = api->TensorMapEncodeTiled(map, dtype, static_cast<uint32_t>(rank), global, dims, strides, box,
                                          ones, 0, sw, 2, 0);
  if (rc != kSuccess) {
    const char* m = nullptr;
    api->GetErrorString(rc, &m);
    throw UserError(ErrorKind::kArgument,
                    std::string("cuTensorMapEncodeTiled failed: ") + (m ? m : "unknown error"));
  }
}

}  // namespace tl::cuda
