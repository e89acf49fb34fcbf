// Tile GEMM for the CPU target: C[M,N] += op(A) * op(B), the body a lowered `T.gemm` calls.
//
// float accumulators run a register-blocked micro-kernel of the target's ISA family (gemm_isa.h,
// gemm_kernels.h: 12x32 zmm on AVX-512, 6x16 ymm on AVX2+FMA, 6x16 vector extensions elsewhere).
// B is packed per NR-column panel into a thread_local buffer, which transposes it when needed,
// widens fp16/bf16/fp8 to float on the way (F16C vcvtph2ps, a 16-bit shift for bf16) and keeps the
// panel contiguous in L1 (an unpacked panel with a power-of-two row stride maps onto a few L1 sets
// and thrashes). A is read in place through strides, since either layout gives the kernel cheap
// broadcasts; narrow A types are widened once per call. bf16 x bf16 uses vdpbf16ps where the target
// has AVX512-BF16 (gemm_bf16.h). Other accumulator types use a plain reference loop.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <type_traits>

#include "tl_device/cpu/gemm_amx.h"
#include "tl_device/cpu/gemm_bf16.h"
#include "tl_device/cpu/gemm_int8.h"
#include "tl_device/cpu/gemm_isa.h"
#include "tl_device/cpu/gemm_kernels.h"
#include "tl_device/cpu/types.h"

namespace tl_cpu {
namespace detail {

/// Returns a 64-byte aligned per-thread buffer of at least n floats; `slot` keeps the buffers of
/// one call apart.  Buffers only grow, so steady-state calls do not allocate.
inline float* gemm_scratch(int slot, size_t n) {
  struct buffer {
    float* p = nullptr;
    size_t cap = 0;
    ~buffer() { ::operator delete(p, std::align_val_t(64)); }
  };
  thread_local buffer bufs[4];
  buffer& b = bufs[slot];
  if (b.cap < n) {
    ::operator delete(b.p, std::align_val_t(64));
    b.cap = std::max(n, size_t(4096));
    b.p = static_cast<float*>(::operator new(b.cap * sizeof(float), std::align_val_t(64)));
  }
  return b.p;
}

/// Packs columns [0, nr) of op(B) for k in [0, K) into Bp[k * NR + c] as float, zero-filling
/// c >= nr. !BTrans: element (k, c) is B[k * ldb + c];  BTrans: it is B[c * ldb + k].
/// Narrow types are widened on the way (convert_row: F16C for fp16, a shift for bf16).
template <bool BTrans, typename TB>
inline void pack_b_panel(const TB* __restrict B, long ldb, int K, int nr, float* __restrict Bp) {
  if (!BTrans) {
    for (int k = 0; k < K; ++k) {
      const TB* src = B + k * ldb;
      float* dst = Bp + k * kGemmNR;
      if constexpr (std::is_same<TB, float>::value) {
        if (nr == kGemmNR) {
#pragma GCC unroll 32
          for (int c = 0; c < kGemmNR; ++c) dst[c] = src[c];
          continue;
        }
      }
      convert_row<float, TB>(dst, src, nr);
      for (int c = nr; c < kGemmNR; ++c) dst[c] = 0.f;
    }
    return;
  }
  if constexpr (!std::is_same<TB, float>::value) {
    // Widen the nr stored rows (k contiguous) first, then transpose them as floats.
    float* w = gemm_scratch(3, size_t(kGemmNR) * size_t(K));
    for (int c = 0; c < nr; ++c) convert_row<float, TB>(w + size_t(c) * K, B + c * ldb, K);
    pack_b_panel<true, float>(w, K, K, nr, Bp);
  } else {
    int k0 = 0;
#if TL_CPU_ISA >= 2
    // Scalar gathers would cost about as much as the panel's FMAs; 8x8 register transposes do not.
    if (nr == kGemmNR)
      for (; k0 + 8 <= K; k0 += 8)
        for (int c = 0; c < kGemmNR; c += 8)
          transpose8x8(B + c * ldb + k0, ldb, Bp + k0 * kGemmNR + c, kGemmNR);
#endif
    for (int k = k0; k < K; ++k)
      for (int c = 0; c < kGemmNR; ++c) Bp[k * kGemmNR + c] = c < nr ? float(B[c * ldb + k]) : 0.f;
  }
}

/// float-accumulator GEMM driver: K slices outermost (C accumulates across them), then NR-column
/// panels of B (packed, widened to float), then MR-row blocks of A (float, read in place).
template <bool ATrans, bool BTrans, typename TB>
inline void gemm_f32(const float* A, long lda, const TB* B, long ldb, float* C, long ldc, int M, int N,
                     int K) {
  if (M <= 0 || N <= 0 || K <= 0) return;
  float* Bp = gemm_scratch(2, size_t(std::min(K, kGemmKC)) * kGemmNR);
  for (int k0 = 0; k0 < K; k0 += kGemmKC) {
    const int kc = std::min(kGemmKC, K - k0);
    const float* Ak = ATrans ? A + k0 * lda : A + k0;
    const TB* Bk = BTrans ? B + k0 : B + k0 * ldb;
    for (int j = 0; j < N; j += kGemmNR) {
      const int nr = std::min(kGemmNR, N - j);
      pack_b_panel<BTrans, TB>(BTrans ? Bk + j * ldb : Bk + j, ldb, kc, nr, Bp);
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

/// op(A) (M x K) as float: A itself, or narrow types widened once into dense scratch (then *lda
/// becomes that copy's row stride).
template <bool TransA, typename TA>
inline const float* a_as_float(const TA* A, long* lda, int M, int K) {
  if constexpr (std::is_same<TA, float>::value) {
    return A;
  } else {
    const long ld = *lda;
    *lda = TransA ? M : K;
    return widen_to_float(0, A, ld, TransA ? K : M, int(*lda));
  }
}

}  // namespace detail

/// Packs the K x N tile op(B) into NR-column float panels: element (k, c) goes to
/// Bp[(c / NR) * K * NR + k * NR + c % NR], for ceil(N / NR) panels. Only the part [k_lo, kv) x
/// [n_lo, nv) is read (the rest of the tile lies outside its tensor: a tile may start before it, at a
/// negative row or column) and everything else is zero. B points at element (k_lo, n_lo) of the tile.
/// !Trans: (k, c) is B[(k - k_lo) * ldb + c - n_lo];  Trans: B[(c - n_lo) * ldb + k - k_lo].
/// Bp: 64-byte aligned.
template <bool Trans, typename TB>
inline void pack_b_tile(const TB* B, long ldb, float* __restrict Bp, int K, int N, int kv, int nv,
                        int k_lo = 0, int n_lo = 0) {
  using detail::kGemmNR;
  kv = std::max(0, std::min(kv, K));
  nv = std::max(0, std::min(nv, N));
  if (k_lo > 0 || n_lo > 0) {  // a tile starting before its tensor: rare, element by element
    std::memset(Bp, 0, sizeof(float) * size_t((N + kGemmNR - 1) / kGemmNR) * size_t(K) * kGemmNR);
    for (int k = std::max(k_lo, 0); k < kv; ++k)
      for (int c = std::max(n_lo, 0); c < nv; ++c) {
        const TB* x = Trans ? B + long(c - n_lo) * ldb + (k - k_lo) : B + long(k - k_lo) * ldb + (c - n_lo);
        convert_row<float, TB>(
            Bp + size_t(c / kGemmNR) * size_t(K) * kGemmNR + size_t(k) * kGemmNR + c % kGemmNR, x, 1);
      }
    return;
  }
  for (int p = 0; p * kGemmNR < N; ++p) {
    float* dst = Bp + size_t(p) * size_t(K) * kGemmNR;
    const int nr = std::max(0, std::min(kGemmNR, nv - p * kGemmNR));
    int k0 = 0;
    if (nr > 0 && kv > 0) {
      detail::pack_b_panel<Trans, TB>(Trans ? B + long(p) * kGemmNR * ldb : B + p * kGemmNR, ldb, kv, nr,
                                      dst);
      k0 = kv;
    }
    std::memset(dst + size_t(k0) * kGemmNR, 0, sizeof(float) * size_t(K - k0) * kGemmNR);
  }
}

/// C[M,N] (row stride ldc) += op(A) * B, B given as pack_b_tile's panels of a K x N tile; float C.
template <bool TransA, typename TA>
inline void gemm_packed_b(const TA* A, long lda, const float* Bp, float* C, long ldc, int M, int N, int K) {
  using detail::kGemmKC;
  using detail::kGemmNR;
  if (M <= 0 || N <= 0 || K <= 0) return;
  long la = lda;
  const float* a = detail::a_as_float<TransA>(A, &la, M, K);
  for (int k0 = 0; k0 < K; k0 += kGemmKC) {
    const int kc = std::min(kGemmKC, K - k0);
    const float* Ak = TransA ? a + k0 * la : a + k0;
    for (int j = 0; j < N; j += kGemmNR)
      detail::gemm_panel<TransA>(Ak, la, Bp + size_t(j) * size_t(K) + size_t(k0) * kGemmNR, C + j, ldc, M, kc,
                                 std::min(kGemmNR, N - j));
  }
}

/// C[M,N] (row stride ldc) += op(A) * op(B); C is accumulated into, never cleared.
/// A: !TransA -> A[i*lda + k] (M x K);  TransA -> A[k*lda + i] (stored K x M).
/// B: !TransB -> B[k*ldb + j] (K x N);  TransB -> B[j*ldb + k] (stored N x K).
/// With a float accumulator any input type is widened to float and the SIMD kernel runs (bf16 x
/// bf16 runs AMX tdpbf16ps where the target has AMX-BF16 and Linux grants the tile state, else
/// vdpbf16ps where it has AVX512-BF16; int8 x int8 -> int32 runs AMX tdpbssd likewise);
/// int8 x int8 -> int32 runs vpmaddwd on k pairs where the target has AVX2 (gemm_int8.h); other
/// accumulators (double, int32 for other integer inputs, ...) use a straightforward loop.
template <bool TransA, bool TransB, typename TA, typename TB, typename TC>
inline void gemm(const TA* A, long lda, const TB* B, long ldb, TC* C, long ldc, int M, int N, int K) {
  if (M <= 0 || N <= 0 || K <= 0) return;
  if constexpr (std::is_same<TC, float>::value) {
#ifdef TL_CPU_GEMM_AMX_BF16
    if constexpr (std::is_same<TA, bfloat16_t>::value && std::is_same<TB, bfloat16_t>::value) {
      if (detail::AmxHw::usable_for(false)) {
        detail::gemm_amx<detail::AmxHw, uint16_t, TransA, TransB>(reinterpret_cast<const uint16_t*>(A), lda,
                                                                  reinterpret_cast<const uint16_t*>(B), ldb,
                                                                  C, ldc, M, N, K, detail::gemm_scratch);
        return;
      }
    }
#endif
#ifdef TL_CPU_GEMM_BF16_DOT
    if constexpr (std::is_same<TA, bfloat16_t>::value && std::is_same<TB, bfloat16_t>::value) {
      detail::gemm_bf16_dot<TransA, TransB>(A, lda, B, ldb, C, ldc, M, N, K, detail::gemm_scratch);
      return;
    }
#endif
    long la = lda;
    const float* a = detail::a_as_float<TransA>(A, &la, M, K);
    detail::gemm_f32<TransA, TransB, TB>(a, la, B, ldb, C, ldc, M, N, K);
  } else {
#ifdef TL_CPU_GEMM_AMX_INT8
    if constexpr (std::is_same<TA, int8_t>::value && std::is_same<TB, int8_t>::value &&
                  std::is_same<TC, int32_t>::value) {
      if (detail::AmxHw::usable_for(true)) {
        detail::gemm_amx<detail::AmxHw, int8_t, TransA, TransB>(A, lda, B, ldb, C, ldc, M, N, K,
                                                                detail::gemm_scratch);
        return;
      }
    }
#endif
#ifdef TL_CPU_GEMM_S8
    if constexpr (std::is_same<TA, int8_t>::value && std::is_same<TB, int8_t>::value &&
                  std::is_same<TC, int32_t>::value) {
      detail::gemm_s8<TransA, TransB>(A, lda, B, ldb, C, ldc, M, N, K, detail::gemm_scratch);
      return;
    }
#endif
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
