// The CUDA driver API, loaded lazily with dlopen("libcuda.so.1") the first time a kernel is loaded
// or a device is queried, so that a machine without a GPU can still build and inspect CUDA kernels.
// Loads cubins into the device's primary context (the one the CUDA runtime and PyTorch share) and
// launches their kernels on caller-provided streams.
//
// Every failure is a UserError; nothing here aborts the process.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace tl::cuda {

/// Grid or block extents, like CUDA's dim3.
struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};

/// True when libcuda.so.1 loads and cuInit succeeds. Never throws.
bool DriverAvailable();

/// Why DriverAvailable() is false ("" when it is true).
std::string DriverUnavailableReason();

/// Number of visible CUDA devices; 0 without a driver.
int DeviceCount();

struct DeviceInfo {
  int ordinal = 0;
  int cc_major = 0, cc_minor = 0;  // compute capability
  int max_shared_optin = 0;        // dynamic + static shared bytes a block may opt in to
  int sm_count = 0;                // streaming multiprocessors
  int max_registers_per_block = 0;
  int max_shared_per_sm = 0;
  /// "sm_80", "sm_90a": the cubin arch to compile for (the 'a' features on sm_90 and newer).
  std::string Arch() const;
};

/// Throws UserError(kUnsupported) without a driver, kArgument for a bad ordinal.
DeviceInfo GetDeviceInfo(int device);

/// The ordinal of the device that owns `ptr`, or -1 when it is not CUDA device memory.
/// Throws UserError(kUnsupported) without a driver.
int PointerDevice(const void* ptr);

/// cuTensorMapEncodeTiled into the 128 bytes at `map` (64-byte aligned): a tiled TMA map of the tensor at
/// `global` with `rank` dims and the `rank - 1` byte strides of dims 1.. (both innermost first), boxes of
/// `box` elements, element strides 1, the given swizzle (0, 32, 64, 128 bytes), zero fill out of bounds.
/// format 1: CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B (dims[0] and box[0] in fp4 values, two a byte); 2:
/// 16U6_ALIGN16B (fp6 values, four in 3 bytes).
/// Throws UserError (kUnsupported without a driver that has it, kArgument when the driver refuses).
void EncodeTensorMapTiled(void* map, int elem_bytes, int rank, void* global, const uint64_t* dims,
                          const uint64_t* strides, const uint32_t* box, int swizzle_bytes, int format = 0);

/// Waits for all work on `device`; throws UserError(kArgument) if a kernel failed.
void Synchronize(int device);

/// A cubin loaded into one device's primary context.
class Module {
 public:
  /// Throws UserError: kUnsupported without a driver, kCompile when the cubin does not suit the device.
  static std::shared_ptr<Module> Load(const std::string& cubin, int device);
  ~Module();
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  /// Launches `fn` asynchronously on `stream` (a CUstream; 0 is the legacy default stream).
  /// `args` points at each kernel argument, as cuLaunchKernel wants. Dynamic shared memory above
  /// 48 KB is opted into on the first launch that needs it.
  /// `cooperative`: every block resident at once (cuLaunchCooperativeKernel: a grid too large for the device
  /// is an error naming the limit), as T.sync_grid needs.
  void Launch(const std::string& fn, Dim3 grid, Dim3 block, int dyn_smem, void** args, uintptr_t stream,
              bool cooperative = false);
  int device() const { return device_; }

 private:
  struct Function {
    void* handle = nullptr;  // CUfunction
    int dyn_smem_limit = 48 * 1024;
  };
  Module(int device, void* ctx, void* module) : device_(device), ctx_(ctx), module_(module) {}
  Function& Lookup(const std::string& fn);

  int device_;
  void* ctx_;     // CUcontext (primary, retained for the life of the process)
  void* module_;  // CUmodule
  std::mutex mu_;
  std::map<std::string, Function> functions_;
};

}  // namespace tl::cuda
