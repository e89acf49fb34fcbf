// Times tl_cpu::gemm<false,false,float,float,float> on in-cache tiles (M=N=128, K=32/64/128) and
// reports GFLOP/s against the single-core FMA peak.
//
// Build: g++ -O3 -march=native -std=c++17 -fopenmp -Iinclude benchmarks/cpu_microkernel_bench.cc
// Usage: cpu_microkernel_bench [GHz]   (clock for the peak; measured with a dependent-add chain if absent)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "tl_device/cpu/gemm.h"

namespace {

using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

/// Estimates the core clock in GHz by timing a chain of dependent 1-cycle integer adds, which
/// tracks the clock the kernel actually runs at (turbo included) where /proc/cpuinfo does not.
double measure_ghz() {
#if defined(__x86_64__)
  const long iters = 200000000;  // 8 dependent adds per iteration
  double best = 0;
  for (int rep = 0; rep < 5; ++rep) {
    long x = 0, n = iters / 8;
    const auto t0 = clock_type::now();
    asm volatile(
        "1:\n\t"
        "add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\t"
        "add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\t"
        "dec %1\n\tjnz 1b\n"
        : "+r"(x), "+r"(n));
    best = std::max(best, double(iters) / seconds_since(t0) * 1e-9);
  }
  return best;
#else
  return 0;
#endif
}

struct timing {
  double median, best;  // seconds per call; best shows the kernel's ceiling on a noisy (shared) host
};

/// Times gemm on an in-cache M x N x K problem.
timing time_gemm(int M, int N, int K) {
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<float> A(size_t(M) * K), B(size_t(K) * N), C(size_t(M) * N, 0.f);
  for (float& v : A) v = dist(rng);
  for (float& v : B) v = dist(rng);
  // Each sample batches enough calls (~50 us) that timer resolution does not matter.
  const double flops = 2.0 * M * N * K;
  const int calls = std::max(1, int(2e-5 * 32 * 2.5e9 / flops));
  for (int w = 0; w < 200; ++w)
    tl_cpu::gemm<false, false>(A.data(), K, B.data(), N, C.data(), N, M, N, K);
  std::vector<double> samples;
  for (int s = 0; s < 301; ++s) {
    const auto t0 = clock_type::now();
    for (int c = 0; c < calls; ++c)
      tl_cpu::gemm<false, false>(A.data(), K, B.data(), N, C.data(), N, M, N, K);
    samples.push_back(seconds_since(t0) / calls);
    if (C[0] != C[0]) std::printf("nan\n");  // keeps C observable
  }
  std::sort(samples.begin(), samples.end());
  return {samples[samples.size() / 2], samples.front()};
}

}  // namespace

int main(int argc, char** argv) {
  double ghz = argc > 1 ? std::atof(argv[1]) : measure_ghz();
  const double peak = ghz * 2 /*FMA/cycle*/ * 8 /*lanes*/ * 2 /*flops*/;
  std::printf("clock %.3f GHz (%s), peak %.1f GFLOP/s per core\n", ghz, argc > 1 ? "given" : "measured",
              peak);
  const int M = 128, N = 128;
  for (int K : {32, 64, 128}) {
    const timing t = time_gemm(M, N, K);
    const double gflops = 2.0 * M * N * K / t.median * 1e-9, best = 2.0 * M * N * K / t.best * 1e-9;
    std::printf("M=%d N=%d K=%-3d  median %7.2f us %7.2f GFLOP/s %5.1f%% of peak | best %7.2f GFLOP/s %5.1f%%\n",
                M, N, K, t.median * 1e6, gflops, peak > 0 ? 100 * gflops / peak : 0.0, best,
                peak > 0 ? 100 * best / peak : 0.0);
  }
  return 0;
}
