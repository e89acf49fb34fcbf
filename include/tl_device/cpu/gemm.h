// Tile GEMM for the CPU target: C[M,N] += op(A) * op(B), the body a lowered `T.gemm` calls.
//
// float operands run a register-blocked 6x16 micro-kernel (AVX2+FMA, or GCC/Clang vector types
// for other ISAs such as SSE or NEON).  B is packed per 16-column panel into a thread_local buffer, which
// both transposes it when needed and keeps the panel contiguous in L1 (an unpacked panel with a
// power-of-two row stride maps onto a few L1 sets and thrashes).  A is read in place through
// strides, since either layout gives the kernel cheap scalar broadcasts.  Other input types are
// widened to float first; other accumulator types use a plain reference loop.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <type_traits>

#include "tl_device/cpu/types.h"

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define TL_CPU_GEMM_AVX2 1
#endif

namespace tl_cpu {
namespace detail {

constexpr int kGemmMR = 6;    // rows per micro-tile: 6x2 accumulators + 2 B + 1 A = 15 ymm
constexpr int kGemmNR = 16;   // columns per micro-tile (two ymm)
constexpr int kGemmKC = 256;  // K slice, so a packed B panel (KC x NR floats = 16 KiB) stays in L1

/// Returns a 64-byte aligned per-thread buffer of at least n floats; `slot` keeps the buffers of
/// one call apart.  Buffers only grow, so steady-state calls do not allocate.
inline float* gemm_scratch(int slot, size_t n) {
  struct buffer {
    float* p = nullptr;
    size_t cap = 0;
    ~buffer() { ::operator delete(p, std::align_val_t(64)); }
  };
  thread_local buffer bufs[3];
  buffer& b = bufs[slot];
  if (b.cap < n) {
    ::operator delete(b.p, std::align_val_t(64));
    b.cap = std::max(n, size_t(4096));
    b.p = static_cast<float*>(::operator new(b.cap * sizeof(float), std::align_val_t(64)));
  }
  return b.p;
}

/// Adds the MR x nr top-left part of acc (row stride NR) into C.
template <int MR>
inline void add_partial_tile(const float* acc, float* __restrict C, long ldc, int nr) {
  for (int r = 0; r < MR; ++r)
    for (int c = 0; c < nr; ++c) C[r * ldc + c] += acc[r * kGemmNR + c];
}

/// Micro-kernel: C[0:MR, 0:nr] += A[0:MR, 0:K] * Bp[0:K, 0:16].
/// A(r, k) is A[r * a_rs + k * a_ks]; ATrans selects which stride is 1 so addressing is constant.
/// Bp is a packed panel: 16 floats per k, 64-byte aligned, columns >= nr zero.
template <int MR, bool ATrans>
inline void micro_kernel(int K, const float* __restrict A, long lda, const float* __restrict Bp,
                         float* __restrict C, long ldc, int nr) {
  const long a_rs = ATrans ? 1 : lda, a_ks = ATrans ? lda : 1;
#ifdef TL_CPU_GEMM_AVX2
  // Accumulators start at zero and C is touched once at the end, so a partial tile needs no
  // masked loads inside the K loop.
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
#else
  // Portable form with GCC/Clang vector types (SSE, NEON, ...): two 8-column passes keep the
  // MR x 8 accumulators within 16 registers.
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
#endif
  add_partial_tile<MR>(acc, C, ldc, nr);
}

#ifdef TL_CPU_GEMM_AVX2
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

/// Packs columns [0, nr) of op(B) for k in [0, K) into Bp[k * 16 + c], zero-filling c >= nr.
/// !BTrans: element (k, c) is B[k * ldb + c];  BTrans: it is B[c * ldb + k].
template <bool BTrans>
inline void pack_b_panel(const float* __restrict B, long ldb, int K, int nr, float* __restrict Bp) {
  if (!BTrans) {
    for (int k = 0; k < K; ++k) {
      const float* src = B + k * ldb;
      float* dst = Bp + k * kGemmNR;
      if (nr == kGemmNR) {
#pragma GCC unroll 16
        for (int c = 0; c < kGemmNR; ++c) dst[c] = src[c];
      } else {
        for (int c = 0; c < nr; ++c) dst[c] = src[c];
        for (int c = nr; c < kGemmNR; ++c) dst[c] = 0.f;
      }
    }
    return;
  }
  int k0 = 0;
#ifdef TL_CPU_GEMM_AVX2
  // Scalar gathers would cost about as much as the panel's FMAs; 8x8 register transposes do not.
  if (nr == kGemmNR)
    for (; k0 + 8 <= K; k0 += 8) {
      transpose8x8(B + k0, ldb, Bp + k0 * kGemmNR, kGemmNR);
      transpose8x8(B + 8 * ldb + k0, ldb, Bp + k0 * kGemmNR + 8, kGemmNR);
    }
#endif
  for (int k = k0; k < K; ++k)
    for (int c = 0; c < kGemmNR; ++c) Bp[k * kGemmNR + c] = c < nr ? B[c * ldb + k] : 0.f;
}

/// Runs the micro-kernel over all row tiles of one packed panel.
template <bool ATrans>
inline void gemm_panel(const float* A, long lda, const float* Bp, float* C, long ldc, int M, int K, int nr) {
  int i = 0;
  for (; i + kGemmMR <= M; i += kGemmMR)
    micro_kernel<kGemmMR, ATrans>(K, ATrans ? A + i : A + i * lda, lda, Bp, C + i * ldc, ldc, nr);
  const float* a = ATrans ? A + i : A + i * lda;
  float* c = C + i * ldc;
  switch (M - i) {
    case 1: micro_kernel<1, ATrans>(K, a, lda, Bp, c, ldc, nr); break;
    case 2: micro_kernel<2, ATrans>(K, a, lda, Bp, c, ldc, nr); break;
    case 3: micro_kernel<3, ATrans>(K, a, lda, Bp, c, ldc, nr); break;
    case 4: micro_kernel<4, ATrans>(K, a, lda, Bp, c, ldc, nr); break;
    case 5: micro_kernel<5, ATrans>(K, a, lda, Bp, c, ldc, nr); break;
    default: break;
  }
}

/// float GEMM driver: K slices outermost (C accumulates across them), then 16-column panels.
template <bool ATrans, bool BTrans>
inline void gemm_f32(const float* A, long lda, const float* B, long ldb, float* C, long ldc, int M, int N,
                     int K) {
  if (M <= 0 || N <= 0 || K <= 0) return;
  float* Bp = gemm_scratch(2, size_t(std::min(K, kGemmKC)) * kGemmNR);
  for (int k0 = 0; k0 < K; k0 += kGemmKC) {
    const int kc = std::min(kGemmKC, K - k0);
    const float* Ak = ATrans ? A + k0 * lda : A + k0;
    const float* Bk = BTrans ? B + k0 : B + k0 * ldb;
    for (int j = 0; j < N; j += kGemmNR) {
      const int nr = std::min(kGemmNR, N - j);
      pack_b_panel<BTrans>(BTrans ? Bk + j * ldb : Bk + j, ldb, kc, nr, Bp);
      gemm_panel<ATrans>(Ak, lda, Bp, C + j, ldc, M, kc, nr);
    }
  }
}

/// Copies a rows x cols matrix (row stride ld) into dense float scratch, returning it.
template <typename T>
inline const float* widen_to_float(int slot, const T* src, long ld, int rows, int cols) {
  float* dst = gemm_scratch(slot, size_t(rows) * size_t(cols));
  for (int r = 0; r < rows; ++r) convert_row<float, T>(dst + size_t(r) * cols, src + r * ld, cols);
  return dst;
}

}  // namespace detail

/// C[M,N] (row stride ldc) += op(A) * op(B); C is accumulated into, never cleared.
/// A: !TransA -> A[i*lda + k] (M x K);  TransA -> A[k*lda + i] (stored K x M).
/// B: !TransB -> B[k*ldb + j] (K x N);  TransB -> B[j*ldb + k] (stored N x K).
/// With a float accumulator any input type is widened to float and the SIMD kernel runs;
/// other accumulators (double, int32 for int8 inputs, ...) use a straightforward loop.
template <bool TransA, bool TransB, typename TA, typename TB, typename TC>
inline void gemm(const TA* A, long lda, const TB* B, long ldb, TC* C, long ldc, int M, int N, int K) {
  if (M <= 0 || N <= 0 || K <= 0) return;
  if constexpr (std::is_same<TC, float>::value) {
    const float* a;
    const float* b;
    long la = lda, lb = ldb;
    if constexpr (std::is_same<TA, float>::value) {
      a = A;
    } else {
      la = TransA ? M : K;
      a = detail::widen_to_float(0, A, lda, TransA ? K : M, int(la));
    }
    if constexpr (std::is_same<TB, float>::value) {
      b = B;
    } else {
      lb = TransB ? K : N;
      b = detail::widen_to_float(1, B, ldb, TransB ? N : K, int(lb));
    }
    detail::gemm_f32<TransA, TransB>(a, la, b, lb, C, ldc, M, N, K);
  } else {
    // Accumulate each dot product in TC (or float for low-precision TC) and round once into C.
    using acc_t = std::conditional_t<std::is_arithmetic<TC>::value, TC, float>;
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) {
        acc_t s = acc_t(C[i * ldc + j]);
        for (int k = 0; k < K; ++k)
          s += acc_t(TransA ? A[k * lda + i] : A[i * lda + k]) *
               acc_t(TransB ? B[j * ldb + k] : B[k * ldb + j]);
        C[i * ldc + j] = TC(s);
      }
  }
}

}  // namespace tl_cpu
