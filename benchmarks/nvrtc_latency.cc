// Cold and warm compile latency of the warp-level mma.sync kernel (tests/cpp/cuda_test_kernels.h)
// through tl::cuda::Compile: library load, first compile in the process, then the median of
// repeated compiles, for each arch. Not a test.
//
// Build (after building libtilelang_core in build/nvrtc):
//   g++ -O2 -std=c++17 -Isrc -Itests/cpp benchmarks/nvrtc_latency.cc -Lbuild/nvrtc -ltilelang_core
//       -Wl,-rpath,$PWD/build/nvrtc -o build/nvrtc/nvrtc_latency
// Usage: build/nvrtc/nvrtc_latency [repeats]     (TL_CUDA_COMPILER=nvcc times the subprocess path)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "cuda_test_kernels.h"
#include "target/cuda/nvrtc.h"

int main(int argc, char** argv) {
  int repeats = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
  auto t0 = std::chrono::steady_clock::now();
  std::string version = tl::cuda::ToolchainVersion();  // loads NVRTC (or finds nvcc)
  std::string include = tl::cuda::CudaIncludeDir();
  double load_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::printf("toolchain: %s  (load + toolkit lookup %.1f ms; include dir %s)\n", version.c_str(), load_ms,
              include.c_str());
  std::printf("%-7s %10s %10s %6s %6s %6s\n", "arch", "cold ms", "warm ms", "regs", "smem", "spill");
  for (const char* arch : {"sm_80", "sm_86", "sm_89", "sm_90", "sm_90a"}) {
    tl::cuda::CompileResult first = tl::cuda::Compile(tl_test::kWarpMmaKernel, arch, {}, {});
    std::vector<double> ms;
    for (int i = 0; i < repeats; ++i)
      ms.push_back(tl::cuda::Compile(tl_test::kWarpMmaKernel, arch, {}, {}).ms);
    std::sort(ms.begin(), ms.end());
    std::printf("%-7s %10.1f %10.1f %6d %6d %6d\n", arch, first.ms, ms[ms.size() / 2], first.registers,
                first.shared_bytes, first.spill_stores + first.spill_loads);
  }
  return 0;
}
