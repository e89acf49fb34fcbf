// fp32 micro-kernels of the CPU tile GEMM, one per ISA family (gemm_isa.h):
//   micro_kernel<MR, ATrans>(K, A, lda, Bp, C, ldc, nr):  C[0:MR, 0:nr] += A[0:MR, 0:K] * Bp[0:K, 0:NR]
// A(r, k) is A[r * lda + k] (ATrans: A[k * lda + r]), read in place (either layout gives cheap
// broadcasts); Bp is a packed panel, NR floats per k, 64-byte aligned, columns >= nr zero.
// Accumulators start at zero and C is touched once at the end, so the K loop has no tails.
#pragma once

#include <cstring>

#include "tl_device/cpu/gemm_isa.h"

namespace tl_cpu {
namespace detail {

/// Adds the MR x nr top-left part of acc (row stride NR) into C.
template <int MR>
inline void add_partial_tile(const float* acc, float* __restrict C, long ldc, int nr) {
  for (int r = 0; r < MR; ++r)
    for (int c = 0; c < nr; ++c) C[r * ldc + c] += acc[r * kGemmNR + c];
}

#if TL_CPU_ISA >= 3

template <int MR, bool ATrans>
inline void micro_kernel(int K, const float* __restrict A, long lda, const float* __restrict Bp,
                         float* __restrict C, long ldc, int nr) {
  const long a_rs = ATrans ? 1 : lda, a_ks = ATrans ? lda : 1;
  __m512 c0[MR], c1[MR];
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r) {
    c0[r] = c1[r] = _mm512_setzero_ps();
    __builtin_prefetch(C + r * ldc, 1, 3);
    __builtin_prefetch(C + r * ldc + 16, 1, 3);
  }
#pragma GCC unroll 4
  for (int k = 0; k < K; ++k) {
    const __m512 b0 = _mm512_load_ps(Bp), b1 = _mm512_load_ps(Bp + 16);
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      const __m512 a = _mm512_set1_ps(A[r * a_rs]);  // folds into the FMA as {1to16}
      c0[r] = _mm512_fmadd_ps(a, b0, c0[r]);
      c1[r] = _mm512_fmadd_ps(a, b1, c1[r]);
    }
    A += a_ks;
    Bp += kGemmNR;
  }
  // Masked loads and stores cover a partial panel; masked-off lanes never fault.
  const __mmask16 m0 = nr >= 16 ? __mmask16(0xffff) : __mmask16((1u << nr) - 1);
  const __mmask16 m1 = nr >= 32 ? __mmask16(0xffff) : nr > 16 ? __mmask16((1u << (nr - 16)) - 1) : 0;
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r) {
    float* c = C + r * ldc;
    _mm512_mask_storeu_ps(c, m0, _mm512_add_ps(_mm512_maskz_loadu_ps(m0, c), c0[r]));
    _mm512_mask_storeu_ps(c + 16, m1, _mm512_add_ps(_mm512_maskz_loadu_ps(m1, c + 16), c1[r]));
  }
}

#elif TL_CPU_ISA == 2

template <int MR, bool ATrans>
inline void micro_kernel(int K, const float* __restrict A, long lda, const float* __restrict Bp,
                         float* __restrict C, long ldc, int nr) {
  const long a_rs = ATrans ? 1 : lda, a_ks = ATrans ? lda : 1;
  __m256 c0[MR], c1[MR];
#pragma GCC unroll 6
  for (int r = 0; r < MR; ++r) {
    c0[r] = c1[r] = _mm256_setzero_ps();
    // C usually lives in L2; fetching it now hides that latency behind the K loop.
    __builtin_prefetch(C + r * ldc, 1, 3);
    __builtin_prefetch(C + r * ldc + kGemmNR - 1, 1, 3);
  }
#pragma GCC unroll 4
  for (int k = 0; k < K; ++k) {
    const __m256 b0 = _mm256_load_ps(Bp), b1 = _mm256_load_ps(Bp + 8);
#pragma GCC unroll 6
    for (int r = 0; r < MR; ++r) {
      const __m256 a = _mm256_broadcast_ss(A + r * a_rs);
      c0[r] = _mm256_fmadd_ps(a, b0, c0[r]);
      c1[r] = _mm256_fmadd_ps(a, b1, c1[r]);
    }
    A += a_ks;
    Bp += kGemmNR;
  }
  if (nr == kGemmNR) {
#pragma GCC unroll 6
    for (int r = 0; r < MR; ++r) {
      float* c = C + r * ldc;
      _mm256_storeu_ps(c, _mm256_add_ps(_mm256_loadu_ps(c), c0[r]));
      _mm256_storeu_ps(c + 8, _mm256_add_ps(_mm256_loadu_ps(c + 8), c1[r]));
    }
    return;
  }
  alignas(64) float acc[MR * kGemmNR];
  // Fully unrolled like every loop over r: a runtime index would force c0/c1 into memory.
#pragma GCC unroll 6
  for (int r = 0; r < MR; ++r) {
    _mm256_store_ps(acc + r * kGemmNR, c0[r]);
    _mm256_store_ps(acc + r * kGemmNR + 8, c1[r]);
  }
  add_partial_tile<MR>(acc, C, ldc, nr);
}

#else

template <int MR, bool ATrans>
inline void micro_kernel(int K, const float* __restrict A, long lda, const float* __restrict Bp,
                         float* __restrict C, long ldc, int nr) {
  // GCC/Clang vector types (SSE, NEON, ...): two 8-column passes keep the MR x 8 accumulators
  // within 16 registers.
  const long a_rs = ATrans ? 1 : lda, a_ks = ATrans ? lda : 1;
  typedef float v4 __attribute__((vector_size(16)));
  alignas(64) float acc[MR * kGemmNR];
  for (int h = 0; h < kGemmNR; h += 8) {
    v4 s0[MR], s1[MR];
#pragma GCC unroll 6
    for (int r = 0; r < MR; ++r) s0[r] = s1[r] = v4{0, 0, 0, 0};
    const float* a = A;
    const float* b = Bp + h;
    for (int k = 0; k < K; ++k, a += a_ks, b += kGemmNR) {
      v4 b0, b1;
      std::memcpy(&b0, b, sizeof b0);
      std::memcpy(&b1, b + 4, sizeof b1);
#pragma GCC unroll 6
      for (int r = 0; r < MR; ++r) {
        const float x = a[r * a_rs];
        s0[r] += x * b0;
        s1[r] += x * b1;
      }
    }
#pragma GCC unroll 6
    for (int r = 0; r < MR; ++r) {
      std::memcpy(acc + r * kGemmNR + h, &s0[r], sizeof s0[r]);
      std::memcpy(acc + r * kGemmNR + h + 4, &s1[r], sizeof s1[r]);
    }
  }
  add_partial_tile<MR>(acc, C, ldc, nr);
}

#endif

#if TL_CPU_ISA >= 2
/// Writes the transpose of the 8x8 block src[r * lds + k] to dst[k * ldd + r].
inline void transpose8x8(const float* src, long lds, float* dst, long ldd) {
  __m256 r[8], t[8];
  for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(src + i * lds);
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);      // r_i[0] r_i+1[0] r_i[1] r_i+1[1] | [4],[5]
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);  // r_i[2] r_i+1[2] r_i[3] r_i+1[3] | [6],[7]
  }
  // r[h + k] now holds rows h..h+3 of columns k (low lane) and k+4 (high lane).
  for (int h = 0; h < 8; h += 4) {
    r[h + 0] = _mm256_shuffle_ps(t[h], t[h + 2], _MM_SHUFFLE(1, 0, 1, 0));
    r[h + 1] = _mm256_shuffle_ps(t[h], t[h + 2], _MM_SHUFFLE(3, 2, 3, 2));
    r[h + 2] = _mm256_shuffle_ps(t[h + 1], t[h + 3], _MM_SHUFFLE(1, 0, 1, 0));
    r[h + 3] = _mm256_shuffle_ps(t[h + 1], t[h + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int k = 0; k < 4; ++k) {
    _mm256_storeu_ps(dst + k * ldd, _mm256_permute2f128_ps(r[k], r[k + 4], 0x20));
    _mm256_storeu_ps(dst + (k + 4) * ldd, _mm256_permute2f128_ps(r[k], r[k + 4], 0x31));
  }
}
#endif

/// Runs the micro-kernel over rows [0, M) of one packed panel: full MR-row blocks, then the tail
/// in power-of-two pieces (few instantiations, and each piece keeps >= 2 accumulators per FMA port).
template <bool ATrans>
inline void gemm_panel(const float* A, long lda, const float* Bp, float* C, long ldc, int M, int K, int nr) {
  int i = 0;
  auto a_at = [&](int row) { return ATrans ? A + row : A + row * lda; };
  // With 6-row blocks, a remainder of one or two rows would leave a block of 2-4 accumulators,
  // bound by the FMA latency; one 6-row block and the remainder run as 4 + 4 (or 4 + 2 + 1) rows.
  const int tail = M % kGemmMR;
  const int full = kGemmMR == 6 && tail > 0 && tail <= 2 && M > kGemmMR ? M - kGemmMR - tail : M;
  for (; i + kGemmMR <= full; i += kGemmMR)
    micro_kernel<kGemmMR, ATrans>(K, a_at(i), lda, Bp, C + i * ldc, ldc, nr);
  if (kGemmMR > 8 && M - i >= 8) {
    micro_kernel<8, ATrans>(K, a_at(i), lda, Bp, C + i * ldc, ldc, nr);
    i += 8;
  }
  while (M - i >= 4) {
    micro_kernel<4, ATrans>(K, a_at(i), lda, Bp, C + i * ldc, ldc, nr);
    i += 4;
  }
  if (M - i >= 2) {
    micro_kernel<2, ATrans>(K, a_at(i), lda, Bp, C + i * ldc, ldc, nr);
    i += 2;
  }
  if (M - i >= 1) micro_kernel<1, ATrans>(K, a_at(i), lda, Bp, C + i * ldc, ldc, nr);
}

}  // namespace detail
}  // namespace tl_cpu
