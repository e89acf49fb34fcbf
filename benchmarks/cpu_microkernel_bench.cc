// Times tl_cpu::gemm<false,false,float,float,float> on in-cache tiles (M=N=128, K=32/64/128) and
// reports GFLOP/s against the single-core FMA peak (2 FMA/cycle x 8 lanes x 2 flops; 16 lanes when
// built with AVX-512, which selects the zmm micro-kernel: see tl_device/cpu/gemm_isa.h).
//
// Build: g++ -O3 -march=native -std=c++17 -fopenmp -Iinclude benchmarks/cpu_microkernel_bench.cc
// Usage: cpu_microkernel_bench [GHz]   (clock for the peak; measured with a dependent-add chain if absent)
//
// On a shared or virtualised host the clock estimate and the kernel both drift with the neighbours'
// load, so each gemm sample is paired with an equal-flop run of a register-only FMA loop (which
// attains the peak on an idle core); the median of the per-sample ratios is the steadier figure.
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

/// Estimates the core clock in GHz by timing a chain of dependent 1-cycle integer adds.
double measure_ghz() {
#if defined(__x86_64__)
  const long iters = 200000000;  // 8 dependent adds per loop iteration
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

/// Runs `flops` worth of independent register-only FMAs (12 chains hide the FMA latency) and
/// returns the seconds taken.
double fma_loop_seconds(double flops) {
#if TL_CPU_ISA >= 3
  const long iters = long(flops / (12 * 32));
  __m512 acc[12];
  for (int i = 0; i < 12; ++i) acc[i] = _mm512_set1_ps(1e-3f * i);
  const __m512 m = _mm512_set1_ps(0.999f), c = _mm512_set1_ps(1e-6f);
  const auto t0 = clock_type::now();
  for (long it = 0; it < iters; ++it) {
    for (int i = 0; i < 12; ++i) acc[i] = _mm512_fmadd_ps(acc[i], m, c);
    asm volatile(""
                 : "+v"(acc[0]), "+v"(acc[1]), "+v"(acc[2]), "+v"(acc[3]), "+v"(acc[4]), "+v"(acc[5]),
                   "+v"(acc[6]), "+v"(acc[7]), "+v"(acc[8]), "+v"(acc[9]), "+v"(acc[10]), "+v"(acc[11]));
  }
  return seconds_since(t0);
#elif defined(__AVX2__) && defined(__FMA__)
  const long iters = long(flops / (12 * 16));
  __m256 acc[12];
  for (int i = 0; i < 12; ++i) acc[i] = _mm256_set1_ps(1e-3f * i);
  const __m256 m = _mm256_set1_ps(0.999f), c = _mm256_set1_ps(1e-6f);
  const auto t0 = clock_type::now();
  for (long it = 0; it < iters; ++it) {
    for (int i = 0; i < 12; ++i) acc[i] = _mm256_fmadd_ps(acc[i], m, c);
    asm volatile(""
                 : "+x"(acc[0]), "+x"(acc[1]), "+x"(acc[2]), "+x"(acc[3]), "+x"(acc[4]), "+x"(acc[5]),
                   "+x"(acc[6]), "+x"(acc[7]), "+x"(acc[8]), "+x"(acc[9]), "+x"(acc[10]), "+x"(acc[11]));
  }
  return seconds_since(t0);
#else
  (void)flops;
  return 0;
#endif
}

struct timing {
  double median, best;  // seconds per gemm call
  double vs_fma_loop;   // median over samples of (FMA-loop time / gemm time) for equal flops
};

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

/// Times gemm on an in-cache M x N x K problem.
timing time_gemm(int M, int N, int K) {
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<float> A(size_t(M) * K), B(size_t(K) * N), C(size_t(M) * N, 0.f);
  for (float& v : A) v = dist(rng);
  for (float& v : B) v = dist(rng);
  const double flops = 2.0 * M * N * K;
  // Each sample batches calls worth ~50 us so timer resolution does not matter.
  const int calls = std::max(1, int(5e-5 * 1e11 / flops));
  for (int w = 0; w < 200; ++w) tl_cpu::gemm<false, false>(A.data(), K, B.data(), N, C.data(), N, M, N, K);
  std::vector<double> samples, ratios;
  for (int s = 0; s < 301; ++s) {
    const auto t0 = clock_type::now();
    for (int c = 0; c < calls; ++c)
      tl_cpu::gemm<false, false>(A.data(), K, B.data(), N, C.data(), N, M, N, K);
    const double t = seconds_since(t0);
    samples.push_back(t / calls);
    ratios.push_back(fma_loop_seconds(flops * calls) / t);
    if (C[0] != C[0]) std::printf("nan\n");  // keeps C observable
  }
  return {median(samples), *std::min_element(samples.begin(), samples.end()), median(ratios)};
}

}  // namespace

int main(int argc, char** argv) {
  const double ghz = argc > 1 ? std::atof(argv[1]) : measure_ghz();
  const int lanes = TL_CPU_ISA >= 3 ? 16 : 8;
  const double peak = ghz * 2 /*FMA/cycle*/ * lanes * 2 /*flops*/;
  std::printf("%s micro-kernel; clock %.3f GHz (%s), peak %.1f GFLOP/s per core\n",
              tl_cpu::detail::gemm_isa_name(), ghz, argc > 1 ? "given" : "measured", peak);
  const int M = 128, N = 128;
  for (int K : {32, 64, 128}) {
    const timing t = time_gemm(M, N, K);
    const double flops = 2.0 * M * N * K;
    const double gflops = flops / t.median * 1e-9, best = flops / t.best * 1e-9;
    std::printf(
        "M=%d N=%d K=%-3d median %6.2f us %6.2f GFLOP/s = %5.1f%% of peak (best %6.2f GFLOP/s = %5.1f%%); "
        "%5.1f%% of the paired FMA loop\n",
        M, N, K, t.median * 1e6, gflops, peak > 0 ? 100 * gflops / peak : 0.0, best,
        peak > 0 ? 100 * best / peak : 0.0, 100 * t.vs_fma_loop);
  }
  return 0;
}
