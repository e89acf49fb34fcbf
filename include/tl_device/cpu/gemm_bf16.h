// bf16 x bf16 -> fp32 tile GEMM on AVX512-BF16: vdpbf16ps multiplies 16 pairs of bf16 and adds
// both products to 16 fp32 accumulators, so one instruction does 32 multiply-adds.
//
// Operands are packed as 32-bit words holding a pair of consecutive k:
//   A rows:    Ap[r * KP + p]  = (A(r, 2p), A(r, 2p + 1))   KP = ceil(K / 2), odd K padded with 0
//   B panels:  Bp[p * NR + c]  = (B(2p, c), B(2p + 1, c))   columns >= nr zero
// Like the instruction, the products of subnormal bf16 inputs are flushed to zero.
#pragma once

#include <cstdint>
#include <cstring>

#include "tl_device/cpu/gemm_isa.h"
#include "tl_device/cpu/types.h"

#ifdef TL_CPU_GEMM_BF16_DOT
namespace tl_cpu {
namespace detail {

template <int MR>
inline void micro_kernel_bf16(int KP, const uint32_t* __restrict A, long lda, const uint32_t* __restrict Bp,
                              float* __restrict C, long ldc, int nr) {
  __m512 c0[MR], c1[MR];
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r) c0[r] = c1[r] = _mm512_setzero_ps();
#pragma GCC unroll 2
  for (int p = 0; p < KP; ++p) {
    const __m512bh b0 = (__m512bh)_mm512_load_si512(Bp), b1 = (__m512bh)_mm512_load_si512(Bp + 16);
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      const __m512bh a = (__m512bh)_mm512_set1_epi32(int(A[r * lda + p]));
      c0[r] = _mm512_dpbf16_ps(c0[r], a, b0);
      c1[r] = _mm512_dpbf16_ps(c1[r], a, b1);
    }
    Bp += kGemmNR;
  }
  const __mmask16 m0 = nr >= 16 ? __mmask16(0xffff) : __mmask16((1u << nr) - 1);
  const __mmask16 m1 = nr >= 32 ? __mmask16(0xffff) : nr > 16 ? __mmask16((1u << (nr - 16)) - 1) : 0;
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r) {
    float* c = C + r * ldc;
    _mm512_mask_storeu_ps(c, m0, _mm512_add_ps(_mm512_maskz_loadu_ps(m0, c), c0[r]));
    _mm512_mask_storeu_ps(c + 16, m1, _mm512_add_ps(_mm512_maskz_loadu_ps(m1, c + 16), c1[r]));
  }
}

/// Packs pairs [p0, p0 + kp) of columns [0, nr) of op(B) (K rows in all) into Bp.
template <bool BTrans>
inline void pack_b_bf16(const uint16_t* B, long ldb, int K, int p0, int kp, int nr, uint32_t* __restrict Bp) {
  if (!BTrans) {
    // Interleave rows 2p and 2p+1: out0 takes columns 0-15, out1 columns 16-31.
    alignas(64) static const uint16_t lo[32] = {0, 32, 1, 33, 2,  34, 3,  35, 4,  36, 5,  37, 6,  38, 7,  39,
                                                8, 40, 9, 41, 10, 42, 11, 43, 12, 44, 13, 45, 14, 46, 15, 47};
    const __m512i ilo = _mm512_load_si512(lo), ihi = _mm512_add_epi16(ilo, _mm512_set1_epi16(16));
    const __mmask32 cols = nr >= 32 ? __mmask32(0xffffffffu) : __mmask32((1u << nr) - 1);
    for (int p = 0; p < kp; ++p) {
      const int k = 2 * (p0 + p);
      const __m512i r0 = _mm512_maskz_loadu_epi16(cols, B + k * ldb);
      const __m512i r1 =
          k + 1 < K ? _mm512_maskz_loadu_epi16(cols, B + (k + 1) * ldb) : _mm512_setzero_si512();
      _mm512_store_si512(Bp + p * kGemmNR, _mm512_permutex2var_epi16(r0, ilo, r1));
      _mm512_store_si512(Bp + p * kGemmNR + 16, _mm512_permutex2var_epi16(r0, ihi, r1));
    }
    return;
  }
  // B stored N x K: the pair of column c is one (possibly unaligned) word at B + c * ldb + 2p.
  for (int p = 0; p < kp; ++p) {
    const int k = 2 * (p0 + p);
    for (int c = 0; c < kGemmNR; ++c) {
      uint32_t w = 0;
      if (c < nr) {
        const uint16_t* s = B + c * ldb + k;
        w = uint32_t(s[0]) | (k + 1 < K ? uint32_t(s[1]) << 16 : 0u);
      }
      Bp[p * kGemmNR + c] = w;
    }
  }
}

template <bool ATrans, bool BTrans>
inline void gemm_bf16_dot(const bfloat16_t* A_, long lda, const bfloat16_t* B_, long ldb, float* C, long ldc,
                          int M, int N, int K, float* (*scratch)(int, size_t)) {
  const uint16_t* A = reinterpret_cast<const uint16_t*>(A_);
  const uint16_t* B = reinterpret_cast<const uint16_t*>(B_);
  const int KP = (K + 1) / 2;
  uint32_t* Ap = reinterpret_cast<uint32_t*>(scratch(0, size_t(M) * KP));
  for (int r = 0; r < M; ++r) {
    uint16_t* dst = reinterpret_cast<uint16_t*>(Ap + size_t(r) * KP);
    if (!ATrans) {
      std::memcpy(dst, A + r * lda, sizeof(uint16_t) * size_t(K));
    } else {
      for (int k = 0; k < K; ++k) dst[k] = A[k * lda + r];
    }
    if (K & 1) dst[K] = 0;
  }
  constexpr int kPairs = kGemmKC;  // KC pairs: the packed B panel is KC x NR words = 16 KiB
  uint32_t* Bp = reinterpret_cast<uint32_t*>(scratch(2, size_t(kPairs) * kGemmNR));
  for (int p0 = 0; p0 < KP; p0 += kPairs) {
    const int kp = KP - p0 < kPairs ? KP - p0 : kPairs;
    for (int j = 0; j < N; j += kGemmNR) {
      const int nr = N - j < kGemmNR ? N - j : kGemmNR;
      pack_b_bf16<BTrans>(BTrans ? B + j * ldb : B + j, ldb, K, p0, kp, nr, Bp);
      int i = 0;
      const uint32_t* a = Ap + p0;
      for (; i + kGemmMR <= M; i += kGemmMR)
        micro_kernel_bf16<kGemmMR>(kp, a + size_t(i) * KP, KP, Bp, C + i * ldc + j, ldc, nr);
      if (M - i >= 8) micro_kernel_bf16<8>(kp, a + size_t(i) * KP, KP, Bp, C + i * ldc + j, ldc, nr), i += 8;
      if (M - i >= 4) micro_kernel_bf16<4>(kp, a + size_t(i) * KP, KP, Bp, C + i * ldc + j, ldc, nr), i += 4;
      if (M - i >= 2) micro_kernel_bf16<2>(kp, a + size_t(i) * KP, KP, Bp, C + i * ldc + j, ldc, nr), i += 2;
      if (M - i >= 1) micro_kernel_bf16<1>(kp, a + size_t(i) * KP, KP, Bp, C + i * ldc + j, ldc, nr);
    }
  }
}

}  // namespace detail
}  // namespace tl_cpu
#endif
