// The OpenCL runtime through dlopen of the ICD loader (libOpenCL.so.1): nothing links OpenCL, so
// the package imports and generates code on machines without it; the library is loaded on the
// first build or launch of an OpenCL kernel. One process-wide context and in-order queue (with
// profiling) on one device: the first device of the first platform that has one, or the one
// TILELANG_OPENCL_DEVICE names ("P:D", platform and device index). TILELANG_OPENCL_LIBRARY
// overrides the library path.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tl {
namespace opencl {

struct DeviceInfo {
  std::string name, vendor, version, driver, platform, extensions;
  int64_t local_mem = 0;       // CL_DEVICE_LOCAL_MEM_SIZE
  int64_t max_work_group = 0;  // CL_DEVICE_MAX_WORK_GROUP_SIZE
  std::string c_version;       // CL_DEVICE_OPENCL_C_VERSION, e.g. "OpenCL C 1.2 PoCL"
  int c_major = 1, c_minor = 2;
  std::string build_options;   // clBuildProgram options for this device (OpenCL C 1.2 sources)
  bool is_pocl = false;        // the Portable Computing Language runtime (CPU)
  bool subgroups = false;      // cl_khr_subgroups with OpenCL C >= 2.0: sub_group_reduce_* compile
  bool Has(const std::string& ext) const;
};

/// The clBuildProgram options for `source` on `d`: d.build_options, or OpenCL C 2.0 / 3.0 for a
/// source that enables cl_khr_subgroups.
std::string BuildOptionsFor(const DeviceInfo& d, const std::string& source);
/// UserError(kUnsupported) unless `d` has sub-groups: "<who> sub-group reductions ..." naming the
/// device and what to do instead (who: "target 'opencl -mattr=+subgroups' asks for", ...).
void RequireSubgroups(const DeviceInfo& d, const std::string& who);
inline bool UsesSubgroups(const std::string& source) {
  return source.find("#pragma OPENCL EXTENSION cl_khr_subgroups") != std::string::npos;
}

/// True when the ICD loader loads and offers at least one device (never throws).
bool Available();
/// Why Available() is false ("" when it is true).
std::string UnavailableReason();
/// The device kernels run on; throws UserError(kUnsupported) with the reason when there is none.
const DeviceInfo& Device();

/// A built program with one kernel.
class Program {
 public:
  ~Program();
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;
  /// Builds from source; a build failure throws UserError(kCompile) with the build log.
  static std::shared_ptr<Program> FromSource(const std::string& source, const std::string& kernel,
                                             const std::string& options);
  /// Loads a binary from clGetProgramInfo(CL_PROGRAM_BINARIES); null when the device rejects it.
  static std::shared_ptr<Program> FromBinary(const std::string& binary, const std::string& kernel,
                                             const std::string& options);
  std::string Binary() const;
  const std::string& build_log() const { return log_; }

  /// One launch argument: a host tensor (copied in, and back out when `written`) or scalar bytes.
  struct Arg {
    bool is_buffer = false;
    void* host = nullptr;
    size_t bytes = 0;  // tensor bytes, or the scalar's size
    bool written = false;
    uint64_t scalar = 0;  // the scalar's little-endian bytes
  };
  /// Runs global = grid * local work-items in groups of `local`; blocks until the results are
  /// copied back. Returns the kernel's device time in milliseconds (OpenCL profiling events).
  double Launch(const std::vector<Arg>& args, const std::vector<size_t>& grid, size_t local) const;

 private:
  Program() = default;
  void* program_ = nullptr;
  void* kernel_ = nullptr;
  std::string log_;
};

}  // namespace opencl
}  // namespace tl
