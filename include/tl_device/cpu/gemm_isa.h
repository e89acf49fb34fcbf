// Which micro-kernel family a generated CPU kernel uses, and its register-block shape.
//
// The generated code defines TL_CPU_ISA from its target (src/target/cpu/isa.cc): 3 = AVX-512F
// (zmm), 2 = AVX2+FMA (ymm), 1 = portable GCC/Clang vector extensions (SSE, NEON, ...). The host
// compiler flags come from the same target, so a mismatch means cpu.compile_flags overrode them.
// Code that includes these headers without the macro gets the best family its flags enable.
#pragma once

#ifndef TL_CPU_ISA
#if defined(__AVX512F__)
#define TL_CPU_ISA 3
#elif defined(__AVX2__) && defined(__FMA__)
#define TL_CPU_ISA 2
#else
#define TL_CPU_ISA 1
#endif
#endif

#if TL_CPU_ISA >= 3 && !defined(__AVX512F__)
#error \
    "the CPU target selects AVX-512 kernels but the host-compiler flags do not enable AVX-512F (-mavx512f); fix cpu.compile_flags or use a target with -mattr=-avx512f"
#endif
#if TL_CPU_ISA == 2 && !(defined(__AVX2__) && defined(__FMA__))
#error \
    "the CPU target selects AVX2+FMA kernels but the host-compiler flags do not enable them (-mavx2 -mfma); fix cpu.compile_flags or use a target with -mattr=-avx2"
#endif

#if TL_CPU_ISA >= 2
#include <immintrin.h>
#endif

// bf16 dot products (vdpbf16ps) when the target has AVX512-BF16 and the zmm kernels are chosen.
#if TL_CPU_ISA >= 3 && defined(__AVX512BF16__) && defined(__AVX512BW__)
#define TL_CPU_GEMM_BF16_DOT 1
#endif

namespace tl_cpu {
namespace detail {

#if TL_CPU_ISA >= 3
// 12 rows x 2 zmm = 24 accumulators + 2 B vectors; A comes in as embedded broadcasts. 12 rows
// (not 14) because the tiles people write have 64 or 128 rows: 11 blocks cover 128 with 4 rows
// of tail work, where 14 would leave a 2-row block running at a quarter of the FMA rate.
constexpr int kGemmMR = 12;
constexpr int kGemmNR = 32;
#else
// 6 rows x 2 ymm = 12 accumulators + 2 B + 1 broadcast A = 15 of the 16 ymm registers.
constexpr int kGemmMR = 6;
constexpr int kGemmNR = 16;
#endif
// K slice: a packed B panel (KC x NR floats = 16 KiB) stays in L1 next to the A rows it meets.
constexpr int kGemmKC = 4096 / kGemmNR;

/// The name of the micro-kernel family, for tests and benchmarks.
inline const char* gemm_isa_name() {
  return TL_CPU_ISA >= 3 ? "avx512" : TL_CPU_ISA == 2 ? "avx2" : "portable";
}

}  // namespace detail
}  // namespace tl_cpu
