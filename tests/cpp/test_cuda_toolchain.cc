// The CUDA toolchain (NVRTC via dlopen, nvcc fallback, ptxas resource report) and the lazily
// loaded driver. Runs without a GPU: compiling needs only the toolkit; the driver tests check
// that a machine without libcuda fails cleanly.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "cuda_test_kernels.h"
#include "runtime/cuda_driver.h"
#include "support/error.h"
#include "target/cuda/cubin_info.h"
#include "target/cuda/nvrtc.h"

namespace {

using tl::ErrorKind;
using tl::UserError;

bool HaveToolchain() { return tl::cuda::ToolchainVersion() != "none"; }

void ExpectMmaKernelCompiled(const tl::cuda::CompileResult& r, const std::string& arch) {
  for (const char* insn :
       {"cp.async.cg.shared.global", "cp.async.commit_group", "cp.async.wait_group",
        "ldmatrix.sync.aligned.m8n8.x4.shared.b16", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"})
    EXPECT_NE(r.ptx.find(insn), std::string::npos) << arch << ": PTX lacks " << insn;
  EXPECT_NE(r.ptx.find(".entry warp_gemm"), std::string::npos) << arch;
  ASSERT_GE(r.cubin.size(), 64u) << arch;
  EXPECT_EQ(r.cubin.compare(0, 4,
                            "\x7f"
                            "ELF"),
            0)
      << arch << ": cubin is not an ELF image";
  EXPECT_GT(r.registers, 0) << arch << "\n" << r.log;
  EXPECT_EQ(r.spill_stores, 0) << arch << "\n" << r.log;
  EXPECT_EQ(r.spill_loads, 0) << arch << "\n" << r.log;
  EXPECT_EQ(r.stack_bytes, 0) << arch << "\n" << r.log;
  EXPECT_EQ(r.shared_bytes, 2 * 16 * 16 * 2) << arch << "\n" << r.log;
  ASSERT_EQ(r.kernels.size(), 1u) << r.log;
  EXPECT_EQ(r.kernels[0].name, "warp_gemm");
  EXPECT_EQ(r.kernels[0].registers, r.registers);
  EXPECT_GT(r.ms, 0);
}

TEST(CudaToolchain, CompilesTensorCoreKernelForEachArch) {
  if (!HaveToolchain())
    FAIL() << "no NVRTC and no nvcc on this machine (scripts/setup.sh installs NVRTC from PyPI when the "
              "toolkit lacks it)";
  for (const char* arch : {"sm_80", "sm_86", "sm_89", "sm_90", "sm_90a"}) {
    tl::cuda::CompileResult r = tl::cuda::Compile(tl_test::kWarpMmaKernel, arch, {}, {});
    ExpectMmaKernelCompiled(r, arch);
    EXPECT_NE(r.ptx.find(std::string(".target ") + arch), std::string::npos) << arch;
    EXPECT_EQ(r.compiler, tl::cuda::ToolchainVersion());
  }
}

TEST(CudaToolchain, VersionNamesTheCompiler) {
  if (!HaveToolchain())
    FAIL() << "no NVRTC and no nvcc on this machine (scripts/setup.sh installs NVRTC from PyPI when the "
              "toolkit lacks it)";
  std::string v = tl::cuda::ToolchainVersion();
  EXPECT_TRUE(v.rfind("nvrtc ", 0) == 0 || v.rfind("nvcc", 0) == 0) << v;
}

TEST(CudaToolchain, SyntaxErrorIsACompileErrorWithTheLog) {
  if (!HaveToolchain())
    FAIL() << "no NVRTC and no nvcc on this machine (scripts/setup.sh installs NVRTC from PyPI when the "
              "toolkit lacks it)";
  const std::string src = "extern \"C\" __global__ void broken(float* x) {\n  x[0] = 1.0f\n}\n";
  try {
    tl::cuda::Compile(src, "sm_80", {}, {});
    FAIL() << "a kernel with a syntax error compiled";
  } catch (const UserError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kCompile);
    std::string msg = e.what();
    EXPECT_NE(msg.find("sm_80"), std::string::npos) << msg;
    EXPECT_NE(msg.find("(3): error"), std::string::npos) << msg;  // the compiler's line-3 diagnostic
    EXPECT_NE(msg.find("expected a \";\""), std::string::npos) << msg;
  }
}

TEST(CudaToolchain, MalformedArchIsAnArgumentError) {
  for (const char* arch : {"80", "sm80", "sm_8", "compute_80", "sm_90ab", ""}) {
    try {
      tl::cuda::Compile(tl_test::kWarpMmaKernel, arch, {}, {});
      FAIL() << "arch '" << arch << "' was accepted";
    } catch (const UserError& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kArgument) << arch;
    }
  }
}

TEST(CudaToolchain, FindsToolkitHeaders) {
  if (!HaveToolchain())
    FAIL() << "no NVRTC and no nvcc on this machine (scripts/setup.sh installs NVRTC from PyPI when the "
              "toolkit lacks it)";
  std::string inc = tl::cuda::CudaIncludeDir();
  ASSERT_FALSE(inc.empty());
  EXPECT_TRUE(std::ifstream(inc + "/cuda_fp16.h").good()) << inc;
  // NVRTC has no default include path: Compile adds the toolkit's.
  const std::string src =
      "#include <cuda_fp16.h>\n"
      "extern \"C\" __global__ void scale(__half* x) { x[threadIdx.x] = __hmul(x[threadIdx.x], x[0]); }\n";
  tl::cuda::CompileResult r = tl::cuda::Compile(src, "sm_80", {}, {});
  EXPECT_GT(r.registers, 0);
}

TEST(CudaToolchain, ConcurrentCompilesAgree) {
  if (!HaveToolchain())
    FAIL() << "no NVRTC and no nvcc on this machine (scripts/setup.sh installs NVRTC from PyPI when the "
              "toolkit lacks it)";
  tl::cuda::CompileResult a, b;
  std::thread t([&] { a = tl::cuda::Compile(tl_test::kWarpMmaKernel, "sm_86", {}, {}); });
  b = tl::cuda::Compile(tl_test::kWarpMmaKernel, "sm_86", {}, {});
  t.join();
  EXPECT_EQ(a.ptx, b.ptx);
  EXPECT_EQ(a.registers, b.registers);
}

TEST(CudaToolchain, NvccFallbackGivesTheSameArtifacts) {
  if (!HaveToolchain())
    FAIL() << "no NVRTC and no nvcc on this machine (scripts/setup.sh installs NVRTC from PyPI when the "
              "toolkit lacks it)";
  setenv("TL_CUDA_COMPILER", "nvcc", 1);
  std::string version = tl::cuda::ToolchainVersion();
  tl::cuda::CompileResult r;
  bool compiled = false;
  try {
    if (version != "none") {
      r = tl::cuda::Compile(tl_test::kWarpMmaKernel, "sm_80", {}, {});
      compiled = true;
    }
  } catch (...) {
    unsetenv("TL_CUDA_COMPILER");
    throw;
  }
  unsetenv("TL_CUDA_COMPILER");
  if (!compiled) FAIL() << "no nvcc on this machine: the fallback toolchain cannot be tested";
  EXPECT_EQ(r.compiler, "nvcc");
  EXPECT_EQ(version.rfind("nvcc ", 0), 0u) << version;
  ExpectMmaKernelCompiled(r, "sm_80");
}

TEST(CudaToolchain, ParsesPtxasReport) {
  // Two kernels, a non-inlined device function with its own frame, the NVRTC ("ptxas .") and the
  // standalone ptxas spelling of the properties line, and an old-style "Used" line without smem.
  const std::string log =
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Function properties for helper\n"
      "ptxas         .     64 bytes stack frame, 8 bytes spill stores, 8 bytes spill loads\n"
      "ptxas info    : Compiling entry function 'k1' for 'sm_80'\n"
      "ptxas info    : Function properties for k1\n"
      "ptxas         .     16 bytes stack frame, 12 bytes spill stores, 4 bytes spill loads\n"
      "ptxas info    : Used 255 registers, used 1 barriers, 49152 bytes smem, 380 bytes cmem[0]\n"
      "ptxas info    : Compiling entry function 'k2' for 'sm_80'\n"
      "ptxas info    : Function properties for k2\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 32 registers, 356 bytes cmem[0]\n";
  tl::cuda::CompileResult r;
  tl::cuda::ParsePtxasReport(log, &r);
  ASSERT_EQ(r.kernels.size(), 2u);
  EXPECT_EQ(r.kernels[0].name, "k1");
  EXPECT_EQ(r.kernels[0].registers, 255);
  EXPECT_EQ(r.kernels[0].shared_bytes, 49152);
  EXPECT_EQ(r.kernels[0].stack_bytes, 16);
  EXPECT_EQ(r.kernels[0].spill_stores, 12);
  EXPECT_EQ(r.kernels[0].spill_loads, 4);
  EXPECT_EQ(r.kernels[1].name, "k2");
  EXPECT_EQ(r.kernels[1].registers, 32);
  EXPECT_EQ(r.kernels[1].shared_bytes, 0);
  EXPECT_EQ(r.kernels[1].stack_bytes, 0);
  EXPECT_EQ(r.registers, 255);
  EXPECT_EQ(r.spill_stores, 12);
  EXPECT_EQ(r.stack_bytes, 16);  // the device function's frame is not a kernel's
}

TEST(CudaToolchain, CubinRecordsAgreeWithPtxasReport) {
  if (!HaveToolchain())
    FAIL() << "no NVRTC and no nvcc on this machine (scripts/setup.sh installs NVRTC from PyPI when the "
              "toolkit lacks it)";
  // Two kernels, one with a dynamically indexed local array (a stack frame) and a non-inlined
  // device function.
  const std::string src = R"CUDA(
__device__ __noinline__ float pick(const float* v, int i) { return v[i & 63]; }
extern "C" __global__ void framed(float* out, int i) {
  float local[64];
  for (int j = 0; j < 64; ++j) local[j] = out[j] * j;
  out[threadIdx.x] = local[i & 63] + pick(out, i);
}
extern "C" __global__ void tiled(float* out) {
  __shared__ float tile[256];
  tile[threadIdx.x] = out[threadIdx.x];
  __syncthreads();
  out[threadIdx.x] = tile[255 - threadIdx.x];
}
)CUDA";
  for (const char* arch : {"sm_80", "sm_90a"}) {
    tl::cuda::CompileResult r = tl::cuda::Compile(src, arch, {}, {});
    ASSERT_EQ(r.kernels.size(), 2u) << r.log;
    std::vector<tl::cuda::KernelResources> elf = tl::cuda::ResourcesFromCubin(r.cubin);
    ASSERT_EQ(elf.size(), 2u) << arch;
    for (const tl::cuda::KernelResources& k : r.kernels) {
      auto it = std::find_if(elf.begin(), elf.end(), [&](const auto& e) { return e.name == k.name; });
      ASSERT_NE(it, elf.end()) << k.name;
      EXPECT_EQ(it->registers, k.registers) << arch << " " << k.name;
      if (std::string(arch) == "sm_80")
        EXPECT_EQ(it->shared_bytes, k.shared_bytes) << arch << " " << k.name;
      else  // the image's shared section also holds the 1 KB sm_90 reserves per block
        EXPECT_GE(it->shared_bytes, k.shared_bytes) << arch << " " << k.name;
      EXPECT_EQ(it->stack_bytes, k.stack_bytes) << arch << " " << k.name;
      EXPECT_EQ(it->spill_stores, -1);  // not recorded in the image
    }
    auto framed =
        std::find_if(r.kernels.begin(), r.kernels.end(), [](const auto& k) { return k.name == "framed"; });
    auto tiled =
        std::find_if(r.kernels.begin(), r.kernels.end(), [](const auto& k) { return k.name == "tiled"; });
    ASSERT_TRUE(framed != r.kernels.end() && tiled != r.kernels.end()) << r.log;
    EXPECT_GE(framed->stack_bytes, 256) << r.log;
    EXPECT_EQ(tiled->stack_bytes, 0) << r.log;
    EXPECT_EQ(tiled->shared_bytes, 1024) << r.log;
    EXPECT_EQ(r.shared_bytes, 1024);
    EXPECT_EQ(r.stack_bytes, framed->stack_bytes);
  }
}

TEST(CudaToolchain, DamagedCubinYieldsNoResources) {
  EXPECT_TRUE(tl::cuda::ResourcesFromCubin("").empty());
  EXPECT_TRUE(tl::cuda::ResourcesFromCubin("not an ELF image at all").empty());
  std::string header =
      "\x7f"
      "ELF";
  header.resize(64, '\xff');  // section table far beyond the end
  header[4] = 2;
  EXPECT_TRUE(tl::cuda::ResourcesFromCubin(header).empty());
  if (!HaveToolchain()) return;
  std::string cubin = tl::cuda::Compile(tl_test::kWarpMmaKernel, "sm_80", {}, {}).cubin;
  for (size_t cut : {size_t(64), cubin.size() / 2, cubin.size() - 1})
    tl::cuda::ResourcesFromCubin(cubin.substr(0, cut));  // must not crash; may find fewer kernels
}

TEST(CudaDriver, WithoutDriverFailsCleanly) {
  if (tl::cuda::DriverAvailable()) {  // a GPU machine: the driver must then see a device
    EXPECT_GT(tl::cuda::DeviceCount(), 0);
    return;
  }
  EXPECT_FALSE(tl::cuda::DriverUnavailableReason().empty());
  EXPECT_EQ(tl::cuda::DeviceCount(), 0);
  std::string cubin =
      "\x7f"
      "ELF";
  cubin.resize(256, '\0');
  try {
    tl::cuda::Module::Load(cubin, 0);
    FAIL() << "Module::Load succeeded without a driver";
  } catch (const UserError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
    std::string msg = e.what();
    EXPECT_NE(msg.find("execution_backend='emulator'"), std::string::npos) << msg;
    EXPECT_NE(msg.find(tl::cuda::DriverUnavailableReason()), std::string::npos) << msg;
  }
  EXPECT_THROW(tl::cuda::GetDeviceInfo(0), UserError);
  EXPECT_THROW(tl::cuda::PointerDevice(nullptr), UserError);
  EXPECT_THROW(tl::cuda::Synchronize(0), UserError);
}

TEST(CudaDriver, LoadsACubinForTheDevice) {
  if (!tl::cuda::DriverAvailable()) {  // no GPU here: loading must fail cleanly, not crash
    EXPECT_THROW(tl::cuda::Module::Load("not a cubin", 0), UserError);
    return;
  }
  if (!HaveToolchain())
    FAIL() << "no NVRTC and no nvcc on this machine (scripts/setup.sh installs NVRTC from PyPI when the "
              "toolkit lacks it)";
  tl::cuda::DeviceInfo info = tl::cuda::GetDeviceInfo(0);
  EXPECT_GE(info.cc_major, 7);
  EXPECT_GT(info.max_shared_optin, 48 * 1024);
  tl::cuda::CompileResult r = tl::cuda::Compile(tl_test::kWarpMmaKernel, info.Arch(), {}, {});
  std::shared_ptr<tl::cuda::Module> m = tl::cuda::Module::Load(r.cubin, 0);
  EXPECT_EQ(m->device(), 0);
  EXPECT_EQ(tl::cuda::PointerDevice(&info), -1);  // host memory
  try {
    m->Launch("no_such_kernel", {1, 1, 1}, {32, 1, 1}, 0, nullptr, 0);
    FAIL() << "launched a kernel that does not exist";
  } catch (const UserError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kArgument);
    EXPECT_NE(std::string(e.what()).find("no_such_kernel"), std::string::npos);
  }
  EXPECT_THROW(tl::cuda::Module::Load("not a cubin", 0), UserError);
}

}  // namespace
