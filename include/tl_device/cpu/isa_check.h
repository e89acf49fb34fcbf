// Run-time check that this CPU has every instruction-set extension the kernel library was compiled
// with (the compiler's __AVX2__, __AVX512F__, ... macros), so a library built for a richer target
// (e.g. `cpu -mattr=+avx512f` on an AVX2 machine) reports an error instead of dying of SIGILL.
#pragma once
#include <cstdio>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace tl_cpu {

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
// Compiled for the x86-64 baseline and never inlined into the kernel, so the check cannot itself
// use an instruction it is about to report missing.
#define TL_CPU_BASELINE __attribute__((noinline, target("arch=x86-64")))
#else
#define TL_CPU_BASELINE
#endif

/// The first extension the library was compiled with that this CPU lacks, or nullptr.
TL_CPU_BASELINE inline const char* isa_missing() {
#if defined(__x86_64__) || defined(__i386__)
  unsigned a = 0, b = 0, c = 0, d = 0, b7 = 0, c7 = 0, d7 = 0, a71 = 0;
  __get_cpuid(1, &a, &b, &c, &d);
  const unsigned c1 = c;
  if (__get_cpuid_max(0, nullptr) >= 7) {
    __cpuid_count(7, 0, a, b7, c7, d7);
    __cpuid_count(7, 1, a71, b, c, d);
  }
  unsigned long long xcr0 = 0;
  if ((c1 >> 27) & 1u) {
    unsigned lo = 0, hi = 0;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    xcr0 = (static_cast<unsigned long long>(hi) << 32) | lo;
  }
  const bool ymm = (xcr0 & 0x6) == 0x6, zmm = ymm && (xcr0 & 0xe0) == 0xe0;
  (void)zmm;
  (void)a71;
  (void)c7;
  (void)d7;
#define TL_CPU_NEED(have, name) \
  if (!(have)) return name;
#ifdef __AVX__
  TL_CPU_NEED(ymm && ((c1 >> 28) & 1u), "avx")
#endif
#ifdef __FMA__
  TL_CPU_NEED(ymm && ((c1 >> 12) & 1u), "fma")
#endif
#ifdef __F16C__
  TL_CPU_NEED(ymm && ((c1 >> 29) & 1u), "f16c")
#endif
#ifdef __AVX2__
  TL_CPU_NEED(ymm && ((b7 >> 5) & 1u), "avx2")
#endif
#ifdef __AVX512F__
  TL_CPU_NEED(zmm && ((b7 >> 16) & 1u), "avx512f")
#endif
#ifdef __AVX512DQ__
  TL_CPU_NEED(zmm && ((b7 >> 17) & 1u), "avx512dq")
#endif
#ifdef __AVX512BW__
  TL_CPU_NEED(zmm && ((b7 >> 30) & 1u), "avx512bw")
#endif
#ifdef __AVX512VL__
  TL_CPU_NEED(zmm && ((b7 >> 31) & 1u), "avx512vl")
#endif
#ifdef __AVX512VNNI__
  TL_CPU_NEED(zmm && ((c7 >> 11) & 1u), "avx512vnni")
#endif
#ifdef __AVX512FP16__
  TL_CPU_NEED(zmm && ((d7 >> 23) & 1u), "avx512fp16")
#endif
#ifdef __AVX512BF16__
  TL_CPU_NEED(zmm && ((a71 >> 5) & 1u), "avx512bf16")
#endif
#undef TL_CPU_NEED
#endif
  return nullptr;
}

/// Returns true when the CPU runs every extension the library uses; else says which it lacks.
TL_CPU_BASELINE inline bool isa_supported(char* err, int errlen) {
  static const char* const missing = isa_missing();
  if (!missing) return true;
  std::snprintf(err, size_t(errlen),
                "this kernel was compiled for a CPU target with %s, which this CPU lacks; compile it for "
                "target \"cpu\" (the host) or remove the feature with -mattr=-%s",
                missing, missing);
  return false;
}

}  // namespace tl_cpu
