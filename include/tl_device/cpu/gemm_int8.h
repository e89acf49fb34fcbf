// int8 x int8 -> int32 tile GEMM on AVX2 (and the AVX-512 family, which has AVX2): exact integer
// products through vpmaddwd (vpdpwssd, which also adds, where the target has AVX512-VNNI). Both operands are
// widened to int16 and interleaved in k pairs, so one vpmaddwd multiplies a broadcast pair (a(r, 2p), a(r,
// 2p+1)) with 8 columns' pairs of B and adds each column's two products into an int32 lane. |a * b| <= 2^14,
// so a pair sum never overflows and the int32 accumulators wrap exactly as the reference loop's would.
//
// gemm_s8<TransA, TransB>(A, lda, B, ldb, C, ldc, M, N, K, scratch): C[M,N] += op(A) * op(B), with
// the layouts of tl_cpu::gemm (gemm.h); `scratch(slot, n)` returns 64-byte aligned room for n
// 32-bit words. A 6 x 16 register block (12 ymm accumulators), then 4/2/1-row tails.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tl_device/cpu/gemm_isa.h"

#if TL_CPU_ISA >= 2
#define TL_CPU_GEMM_S8 1

namespace tl_cpu {
namespace detail {

constexpr int kS8NR = 16;  // columns per packed panel: two ymm of 8 int32 lanes

/// Two int16 values in one 32-bit word, lo first (the order vpmaddwd pairs them in).
inline uint32_t s16_pair(int lo, int hi) {
  return uint32_t(uint16_t(int16_t(lo))) | (uint32_t(uint16_t(int16_t(hi))) << 16);
}

/// acc + the two int16 products of each 32-bit pair: one vpdpwssd where the target has
/// AVX512-VNNI (with VL, for ymm), else vpmaddwd + vpaddd. Operands are widened int8, so no pair
/// sum overflows and both wrap alike.
inline __m256i s16_pair_dot(__m256i acc, __m256i a, __m256i b) {
#if defined(__AVX512VNNI__) && defined(__AVX512VL__)
  return _mm256_dpwssd_epi32(acc, a, b);
#else
  return _mm256_add_epi32(acc, _mm256_madd_epi16(a, b));
#endif
}

template <int MR>
inline void s8_micro_kernel(int KP, const uint32_t* __restrict Ap, const uint32_t* __restrict Bp,
                            int32_t* __restrict C, long ldc, int nr) {
  __m256i c0[MR], c1[MR];
#pragma GCC unroll 6
  for (int r = 0; r < MR; ++r) c0[r] = c1[r] = _mm256_setzero_si256();
#pragma GCC unroll 2
  for (int p = 0; p < KP; ++p) {
    const __m256i b0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(Bp + p * kS8NR));
    const __m256i b1 = _mm256_load_si256(reinterpret_cast<const __m256i*>(Bp + p * kS8NR + 8));
#pragma GCC unroll 6
    for (int r = 0; r < MR; ++r) {
      const __m256i a = _mm256_set1_epi32(int(Ap[r * KP + p]));
      c0[r] = s16_pair_dot(c0[r], a, b0);
      c1[r] = s16_pair_dot(c1[r], a, b1);
    }
  }
  alignas(32) int32_t acc[kS8NR];
#pragma GCC unroll 6
  for (int r = 0; r < MR; ++r) {
    int32_t* c = C + r * ldc;
    if (nr == kS8NR) {
      __m256i* c8 = reinterpret_cast<__m256i*>(c);
      _mm256_storeu_si256(c8, _mm256_add_epi32(_mm256_loadu_si256(c8), c0[r]));
      _mm256_storeu_si256(c8 + 1, _mm256_add_epi32(_mm256_loadu_si256(c8 + 1), c1[r]));
    } else {
      _mm256_store_si256(reinterpret_cast<__m256i*>(acc), c0[r]);
      _mm256_store_si256(reinterpret_cast<__m256i*>(acc + 8), c1[r]);
      for (int j = 0; j < nr; ++j) c[j] += acc[j];
    }
  }
}

template <bool ATrans, bool BTrans, typename Scratch>
inline void gemm_s8(const int8_t* A, long lda, const int8_t* B, long ldb, int32_t* C, long ldc, int M, int N,
                    int K, Scratch scratch) {
  if (M <= 0 || N <= 0 || K <= 0) return;
  const int KP = (K + 1) / 2;  // an odd K gets a zero partner
  auto a_at = [&](int i, int k) {
    return k < K ? int(ATrans ? A[long(k) * lda + i] : A[long(i) * lda + k]) : 0;
  };
  auto b_at = [&](int k, int j) {
    return k < K ? int(BTrans ? B[long(j) * ldb + k] : B[long(k) * ldb + j]) : 0;
  };
  uint32_t* Ap = reinterpret_cast<uint32_t*>(scratch(0, size_t(M) * size_t(KP)));
  for (int i = 0; i < M; ++i)
    for (int p = 0; p < KP; ++p) Ap[size_t(i) * KP + p] = s16_pair(a_at(i, 2 * p), a_at(i, 2 * p + 1));
  uint32_t* Bp = reinterpret_cast<uint32_t*>(scratch(2, size_t(KP) * kS8NR));
  for (int j = 0; j < N; j += kS8NR) {
    const int nr = N - j < kS8NR ? N - j : kS8NR;
    for (int p = 0; p < KP; ++p)
      for (int c = 0; c < kS8NR; ++c)
        Bp[p * kS8NR + c] = c < nr ? s16_pair(b_at(2 * p, j + c), b_at(2 * p + 1, j + c)) : 0u;
    int i = 0;
    for (; i + 6 <= M; i += 6) s8_micro_kernel<6>(KP, Ap + size_t(i) * KP, Bp, C + i * ldc + j, ldc, nr);
    if (M - i >= 4) {
      s8_micro_kernel<4>(KP, Ap + size_t(i) * KP, Bp, C + i * ldc + j, ldc, nr);
      i += 4;
    }
    if (M - i >= 2) {
      s8_micro_kernel<2>(KP, Ap + size_t(i) * KP, Bp, C + i * ldc + j, ldc, nr);
      i += 2;
    }
    if (M - i >= 1) s8_micro_kernel<1>(KP, Ap + size_t(i) * KP, Bp, C + i * ldc + j, ldc, nr);
  }
}

}  // namespace detail
}  // namespace tl_cpu

#endif
