// AMX tile GEMM: bf16 x bf16 -> fp32 through tdpbf16ps (AMX-BF16) and int8 x int8 -> int32 through
// tdpbssd (AMX-INT8).
//
// One AMX tile holds 16 rows of 64 bytes. The driver keeps a 32 x 32 block of C in four tiles
// (tmm0-3), two 16-row tiles of A (tmm4-5) and two 16-column tiles of B (tmm6-7), and takes K in
// steps of one tile row: 32 bf16 or 64 int8 values. The instructions read A as rows of k-contiguous
// values and B as rows of k-groups ("VNNI" order): one 32-bit word holds the kw = 4 / sizeof(E)
// consecutive k of one column. So the driver packs
//   A:  Ap[r * Kp + k]               = A(r, k)             Mp x Kp elements, zero-padded
//   B:  Bp[(q * Np + c) * kw + i]    = B(q * kw + i, c)    (Kp / kw) x Np words, zero-padded
// with Mp, Np rounded up to 32 and Kp to a whole tile row, so every tile load stays inside the
// packed buffers; C is written only inside M x N.
//
// The tile instructions come from a policy class `Tiles` (the register numbers are part of each
// instruction, so each operation names its tiles itself):
//   configure()            all eight tiles 16 rows x 64 bytes (palette 1)
//   zero_c()               tmm0-3 = 0
//   load_a(a0, a1, s)      tmm4 = 16 rows at a0, tmm5 = 16 rows at a1, row stride s bytes
//   load_b(b0, b1, s)      tmm6, tmm7 likewise
//   dot<E>()               tmm0 += tmm4.tmm6, tmm1 += tmm4.tmm7, tmm2 += tmm5.tmm6, tmm3 += tmm5.tmm7
//   store_c(c, s)          tmm0-3 to the 32 x 32 block at c (tmm0 top left, tmm3 bottom right)
//   release()              tilerelease
// `AmxHw` is the hardware (defined where the target has AMX-TILE); tests run the same driver on a
// software model of the instructions (tests/cpp/amx_model.h).
//
// Linux grants a process the AMX register state only on request (arch_prctl ARCH_REQ_XCOMP_PERM
// for XTILEDATA); AmxHw::usable() asks once per process and also checks CPUID and XCR0, and the
// callers fall back to the AVX-512 / AVX2 kernels when it says no.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

// GCC and newer Clang spell the macros __AMX_TILE__, Clang up to 14 __AMXTILE__.
#if (defined(__AMX_TILE__) || defined(__AMXTILE__)) && defined(__x86_64__) && defined(__linux__)
#include <cpuid.h>
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>
#define TL_CPU_GEMM_AMX 1
#if defined(__AMX_BF16__) || defined(__AMXBF16__)
#define TL_CPU_GEMM_AMX_BF16 1
#endif
#if defined(__AMX_INT8__) || defined(__AMXINT8__)
#define TL_CPU_GEMM_AMX_INT8 1
#endif
#endif

namespace tl_cpu {
namespace detail {

/// C[M,N] (row stride ldc) += op(A) * op(B) on the AMX tiles of `Tiles`, for E = uint16_t (bf16
/// bits, TC = float) or int8_t (TC = int32_t). Layouts as tl_cpu::gemm: !ATrans -> A[i*lda + k],
/// ATrans -> A[k*lda + i]; !BTrans -> B[k*ldb + j], BTrans -> B[j*ldb + k]. `scratch(slot, n)`
/// returns 64-byte aligned room for n floats (slots 0 and 2 are used).
template <class Tiles, typename E, bool ATrans, bool BTrans, typename TC>
inline void gemm_amx(const E* A, long lda, const E* B, long ldb, TC* C, long ldc, int M, int N, int K,
                     float* (*scratch)(int, size_t)) {
  static_assert((std::is_same<E, uint16_t>::value && std::is_same<TC, float>::value) ||
                    (std::is_same<E, int8_t>::value && std::is_same<TC, int32_t>::value),
                "AMX tiles multiply bf16 into float or int8 into int32");
  if (M <= 0 || N <= 0 || K <= 0) return;
  constexpr int kw = 4 / int(sizeof(E));   // k values per 32-bit word
  constexpr int kt = 64 / int(sizeof(E));  // k values per tile row
  const int Mp = (M + 31) / 32 * 32, Np = (N + 31) / 32 * 32, Kp = (K + kt - 1) / kt * kt;
  E* Ap = reinterpret_cast<E*>(scratch(0, size_t(Mp) * size_t(Kp) * sizeof(E) / 4));
  E* Bp = reinterpret_cast<E*>(scratch(2, size_t(Kp / kw) * size_t(Np)));
  for (int r = 0; r < Mp; ++r) {
    E* dst = Ap + size_t(r) * Kp;
    int k = 0;
    if (r < M) {
      if (!ATrans) {
        std::memcpy(dst, A + r * lda, sizeof(E) * size_t(K));
        k = K;
      } else {
        for (; k < K; ++k) dst[k] = A[k * lda + r];
      }
    }
    std::memset(dst + k, 0, sizeof(E) * size_t(Kp - k));
  }
  for (int q = 0; q < Kp / kw; ++q) {
    E* dst = Bp + size_t(q) * Np * kw;
    for (int i = 0; i < kw; ++i) {
      const int k = q * kw + i;
      int c = 0;
      if (k < K) {
        if (!BTrans) {
          const E* src = B + k * ldb;  // row k: its columns go to every kw-th element
          for (; c < N; ++c) dst[c * kw + i] = src[c];
        } else {
          for (; c < N; ++c) dst[c * kw + i] = B[c * ldb + k];
        }
      }
      for (; c < Np; ++c) dst[c * kw + i] = E(0);
    }
  }
  const long a_stride = long(Kp) * long(sizeof(E)), b_stride = long(Np) * 4;
  alignas(64) TC ct[32 * 32];
  Tiles::configure();
  // Columns outermost: the 32-column strip of B (Kp / kw x 32 words) is reused by every row block.
  for (int j0 = 0; j0 < Np; j0 += 32) {
    for (int i0 = 0; i0 < Mp; i0 += 32) {
      Tiles::zero_c();
      const E* a = Ap + size_t(i0) * Kp;
      for (int k0 = 0; k0 < Kp; k0 += kt) {
        Tiles::load_a(a + k0, a + 16 * size_t(Kp) + k0, a_stride);
        const E* b = Bp + (size_t(k0 / kw) * Np + j0) * kw;
        Tiles::load_b(b, b + 16 * kw, b_stride);
        Tiles::template dot<E>();
      }
      Tiles::store_c(ct, 32 * long(sizeof(TC)));
      const int mr = M - i0 < 32 ? M - i0 : 32, nr = N - j0 < 32 ? N - j0 : 32;
      for (int r = 0; r < mr; ++r) {
        TC* c = C + (i0 + r) * ldc + j0;
        const TC* s = ct + r * 32;
        if constexpr (std::is_same<TC, int32_t>::value) {
          // Wrap-around like the tile accumulators (and the reference loop), not signed overflow.
          for (int j = 0; j < nr; ++j) c[j] = int32_t(uint32_t(c[j]) + uint32_t(s[j]));
        } else {
          for (int j = 0; j < nr; ++j) c[j] += s[j];
        }
      }
    }
  }
  Tiles::release();
}

#ifdef TL_CPU_GEMM_AMX
/// The AMX instructions themselves. GCC's tile intrinsics are asm statements that do not tell the
/// compiler which memory they read or write, hence the explicit memory clobbers.
struct AmxHw {
  /// CPUID says AMX-TILE (and the data type's dot product), XCR0 has the tile state, and Linux has
  /// granted this process the XTILEDATA state. Asked once per process.
  static bool usable_for(bool int8) {
    static const unsigned ok = [] {
      unsigned a = 0, b = 0, c1 = 0, d = 0, a7 = 0, b7 = 0, c7 = 0, d7 = 0;
      if (__get_cpuid_max(0, nullptr) < 7 || !__get_cpuid(1, &a, &b, &c1, &d)) return 0u;
      __cpuid_count(7, 0, a7, b7, c7, d7);
      if (!((c1 >> 27) & 1u) || !((d7 >> 24) & 1u)) return 0u;  // OSXSAVE, AMX-TILE
      unsigned lo = 0, hi = 0;
      __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
      if (((lo >> 17) & 3u) != 3u) return 0u;  // XTILECFG and XTILEDATA enabled by the OS
      constexpr long kReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
      if (syscall(SYS_arch_prctl, kReqXcompPerm, kXfeatureXtiledata) != 0) return 0u;
      return 1u | (((d7 >> 22) & 1u) << 1) | (((d7 >> 25) & 1u) << 2);  // bit 1: BF16, bit 2: INT8
    }();
    return (ok & 1u) && (ok & (int8 ? 4u : 2u));
  }
  static void configure() {
    alignas(64) unsigned char cfg[64] = {};
    cfg[0] = 1;  // palette 1
    for (int t = 0; t < 8; ++t) {
      cfg[16 + 2 * t] = 64;  // colsb (little-endian 16-bit)
      cfg[48 + t] = 16;      // rows
    }
    __asm__ volatile("" ::: "memory");
    _tile_loadconfig(cfg);
  }
  static void zero_c() {
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
  }
  static void load_a(const void* a0, const void* a1, long stride) {
    __asm__ volatile("" ::: "memory");
    _tile_loadd(4, a0, stride);
    _tile_loadd(5, a1, stride);
  }
  static void load_b(const void* b0, const void* b1, long stride) {
    _tile_loadd(6, b0, stride);
    _tile_loadd(7, b1, stride);
  }
  template <typename E>
  static void dot() {
    if constexpr (std::is_same<E, int8_t>::value) {
#ifdef TL_CPU_GEMM_AMX_INT8
      _tile_dpbssd(0, 4, 6);
      _tile_dpbssd(1, 4, 7);
      _tile_dpbssd(2, 5, 6);
      _tile_dpbssd(3, 5, 7);
#else
      static_assert(sizeof(E) == 0, "tdpbssd needs AMX-INT8 (-mamx-int8)");
#endif
    } else {
#ifdef TL_CPU_GEMM_AMX_BF16
      _tile_dpbf16ps(0, 4, 6);
      _tile_dpbf16ps(1, 4, 7);
      _tile_dpbf16ps(2, 5, 6);
      _tile_dpbf16ps(3, 5, 7);
#else
      static_assert(sizeof(E) == 0, "tdpbf16ps needs AMX-BF16 (-mamx-bf16)");
#endif
    }
  }
  static void store_c(void* c, long stride) {
    char* p = static_cast<char*>(c);
    _tile_stored(0, p, stride);
    _tile_stored(1, p + 64, stride);
    _tile_stored(2, p + 16 * stride, stride);
    _tile_stored(3, p + 16 * stride + 64, stride);
    __asm__ volatile("" ::: "memory");
  }
  static void release() { _tile_release(); }
};
#endif

}  // namespace detail
}  // namespace tl_cpu
