// Tests for the CPU device headers: low-precision scalar conversions (tl_device/cpu/types.h)
// and the tile GEMM (tl_device/cpu/gemm.h) against a double-precision reference; the tile cache
// (tile_cache.h) under contention.
//
// Standalone build: g++ -O2 -march=native -std=c++17 -Wall -Wextra -Iinclude
//                   tests/cpp/test_cpu_device_headers.cc -lgtest -lgtest_main -pthread
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "tl_device/cpu/gemm.h"
#include "tl_device/cpu/tile_cache.h"
#include "tl_device/cpu/types.h"

namespace {

using tl_cpu::bfloat16_t;
using tl_cpu::float8_e4m3_t;
using tl_cpu::float8_e5m2_t;
using tl_cpu::half_t;

float f32(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
uint32_t bits32(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
template <class T>
unsigned bits_of(T v) {
  return v.bits;
}

const float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

// ----------------------------------------------------------------------------------------------
// fp16

// Checks both the active conversion (F16C when available) and the software encoder.
#define EXPECT_HALF(value, expected)                                              \
  do {                                                                            \
    EXPECT_EQ(bits_of(half_t(value)), expected) << #value;                        \
    EXPECT_EQ(tl_cpu::detail::half_bits_soft(value), expected) << "soft " #value; \
  } while (0)

TEST(HalfType, HandWorkedEncodings) {
  EXPECT_HALF(1.0f, 0x3c00u);
  EXPECT_HALF(-2.0f, 0xc000u);
  EXPECT_HALF(-0.0f, 0x8000u);
  EXPECT_HALF(0.1f, 0x2e66u);
  EXPECT_HALF(65504.0f, 0x7bffu);                      // max finite
  EXPECT_HALF(65519.0f, 0x7bffu);                      // just below the rounding boundary
  EXPECT_HALF(65520.0f, 0x7c00u);                      // tie with 2^16 rounds to even = inf
  EXPECT_HALF(std::ldexp(1.0f, -14), 0x0400u);         // smallest normal
  EXPECT_HALF(1023 * std::ldexp(1.0f, -24), 0x03ffu);  // largest subnormal
  EXPECT_HALF(std::ldexp(1.0f, -24), 0x0001u);         // smallest subnormal
  EXPECT_HALF(std::ldexp(1.0f, -25), 0x0000u);         // tie -> even (0)
  EXPECT_HALF(1.5f * std::ldexp(1.0f, -25), 0x0001u);
  EXPECT_HALF(3 * std::ldexp(1.0f, -25), 0x0002u);  // 1.5 ulp tie -> 2
  EXPECT_HALF(-std::ldexp(1.0f, -26), 0x8000u);     // underflow keeps sign
  EXPECT_HALF(kInf, 0x7c00u);
  EXPECT_HALF(-kInf, 0xfc00u);
  EXPECT_HALF(1e10f, 0x7c00u);
}

TEST(HalfType, RoundsToNearestEven) {
  const float ulp = std::ldexp(1.0f, -10);
  EXPECT_HALF(1.0f + ulp / 2, 0x3c00u);               // tie, 0x3c00 even
  EXPECT_HALF(1.0f + 3 * ulp / 2, 0x3c02u);           // tie, 0x3c02 even
  EXPECT_HALF(1.0f + ulp / 2 + ulp / 1024, 0x3c01u);  // just above the tie
  EXPECT_HALF(1.0f + ulp / 2 - ulp / 1024, 0x3c00u);  // just below
  // A double must be rounded once: via float this value would become an exact tie.
  EXPECT_EQ(bits_of(half_t(1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40))), 0x3c01u);
}

TEST(HalfType, Decodes) {
  EXPECT_EQ(float(half_t::from_bits(0x0001)), std::ldexp(1.0f, -24));
  EXPECT_EQ(float(half_t::from_bits(0x03ff)), 1023 * std::ldexp(1.0f, -24));
  EXPECT_EQ(float(half_t::from_bits(0x3555)), 0.333251953125f);
  EXPECT_EQ(float(half_t::from_bits(0x7bff)), 65504.0f);
  EXPECT_EQ(float(half_t::from_bits(0xfc00)), -kInf);
  EXPECT_TRUE(std::isnan(float(half_t::from_bits(0x7e00))));
  EXPECT_TRUE(std::isnan(float(half_t::from_bits(0xfc01))));
  EXPECT_TRUE(std::isnan(half_t(kNaN)));
  const unsigned nan_bits = bits_of(half_t(kNaN));
  EXPECT_EQ(nan_bits & 0x7c00u, 0x7c00u);
  EXPECT_NE(nan_bits & 0x03ffu, 0u);
}

TEST(HalfType, EveryPatternRoundTripsAndMidpointsRoundToEven) {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    const float f = half_t::from_bits(uint16_t(b));
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(half_t(f))) << b;
      continue;
    }
    ASSERT_EQ(bits_of(half_t(f)), b) << b;
    // Midpoint to the next pattern of larger magnitude (exact in float) goes to the even one.
    if ((b & 0x7fff) < 0x7bff) {
      const float next = half_t::from_bits(uint16_t(b + 1));
      const float mid = f + (next - f) / 2;
      ASSERT_EQ(bits_of(half_t(mid)), (b & 1) ? b + 1 : b) << b;
      ASSERT_EQ(tl_cpu::detail::half_bits_soft(mid), (b & 1) ? b + 1 : b) << b;
      ASSERT_EQ(bits_of(half_t(std::nextafter(mid, next))), b + 1) << b;
      ASSERT_EQ(bits_of(half_t(std::nextafter(mid, f))), b) << b;
    }
  }
}

TEST(HalfType, HardwareAndSoftwarePathsAgree) {
  // With F16C this holds the intrinsic to the software encoder (NaN payloads included);
  // without it both sides are the software encoder and the test is vacuous but harmless.
  for (uint64_t u = 0; u < (uint64_t(1) << 32); u += 65521) {
    const float f = f32(uint32_t(u));
    ASSERT_EQ(bits_of(half_t(f)), tl_cpu::detail::half_bits_soft(f)) << std::hex << u;
  }
  for (uint32_t b = 0; b < 0x10000; ++b) {
    const float hw = half_t::from_bits(uint16_t(b));
    const float sw = tl_cpu::detail::decode_minifloat<5, 10, true>(b);
    ASSERT_EQ(bits32(hw), bits32(sw)) << b;
  }
}

TEST(HalfType, FromIntegers) {
  EXPECT_EQ(bits_of(half_t(3)), 0x4200u);
  EXPECT_EQ(bits_of(half_t(-65504)), 0xfbffu);
  EXPECT_EQ(bits_of(half_t(100000)), 0x7c00u);
  EXPECT_EQ(bits_of(half_t(2049)), bits_of(half_t(2048.0f)));  // tie -> even
  EXPECT_EQ(bits_of(half_t(int64_t(3) << 40)), 0x7c00u);
}

// ----------------------------------------------------------------------------------------------
// bf16

TEST(Bfloat16Type, HandWorkedEncodings) {
  EXPECT_EQ(bits_of(bfloat16_t(1.0f)), 0x3f80u);
  EXPECT_EQ(bits_of(bfloat16_t(0.1f)), 0x3dcdu);
  EXPECT_EQ(bits_of(bfloat16_t(1.0f / 3)), 0x3eabu);
  EXPECT_EQ(bits_of(bfloat16_t(f32(0x3f808000))), 0x3f80u);  // tie -> even
  EXPECT_EQ(bits_of(bfloat16_t(f32(0x3f818000))), 0x3f82u);  // tie -> even (up)
  EXPECT_EQ(bits_of(bfloat16_t(f32(0x3f808001))), 0x3f81u);
  EXPECT_EQ(bits_of(bfloat16_t(f32(0x00010000))), 0x0001u);  // subnormal
  EXPECT_EQ(bits_of(bfloat16_t(f32(0x00008000))), 0x0000u);  // tie -> 0
  EXPECT_EQ(bits_of(bfloat16_t(f32(0x00018000))), 0x0002u);
  EXPECT_EQ(bits_of(bfloat16_t(f32(0x807fffff))), 0x8080u);  // largest subnormal rounds to normal
  EXPECT_EQ(bits_of(bfloat16_t(kInf)), 0x7f80u);
  EXPECT_EQ(bits_of(bfloat16_t(-kInf)), 0xff80u);
  EXPECT_EQ(bits_of(bfloat16_t(f32(0x7f7fffff))), 0x7f80u);  // FLT_MAX overflows to inf
  EXPECT_EQ(bits_of(bfloat16_t(1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -30))), 0x3f81u);
  EXPECT_EQ(bits_of(bfloat16_t(1e300)), 0x7f80u);
  EXPECT_EQ(bits_of(bfloat16_t(-7)), 0xc0e0u);
}

TEST(Bfloat16Type, NaNIsPreserved) {
  EXPECT_EQ(bits_of(bfloat16_t(f32(0x7fc00000))), 0x7fc0u);
  EXPECT_EQ(bits_of(bfloat16_t(f32(0xffc12345))), 0xffc1u);
  EXPECT_EQ(bits_of(bfloat16_t(f32(0x7f800001))), 0x7fc0u);  // low payload must not round into inf
  EXPECT_EQ(bits32(bfloat16_t::from_bits(0x7fc1)), 0x7fc10000u);
  EXPECT_TRUE(std::isnan(bfloat16_t(std::nan(""))));
}

TEST(Bfloat16Type, EveryPatternRoundTripsAndDoublePathAgrees) {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    const float f = bfloat16_t::from_bits(uint16_t(b));
    ASSERT_EQ(bits32(f), b << 16);
    if (!std::isnan(f)) {
      ASSERT_EQ(bits_of(bfloat16_t(f)), b);
    }
  }
  // The float fast path and the generic double encoder must agree wherever both apply.
  for (uint64_t u = 0; u < (uint64_t(1) << 32); u += 65521) {
    const float f = f32(uint32_t(u));
    ASSERT_EQ(bits_of(bfloat16_t(f)), (tl_cpu::detail::encode_minifloat<8, 7, true>(f))) << std::hex << u;
  }
}

// ----------------------------------------------------------------------------------------------
// fp8

TEST(Float8E4M3Type, HandWorkedEncodings) {
  EXPECT_EQ(bits_of(float8_e4m3_t(1.0f)), 0x38u);
  EXPECT_EQ(bits_of(float8_e4m3_t(0.1f)), 0x1du);
  EXPECT_EQ(bits_of(float8_e4m3_t(240.0f)), 0x77u);
  EXPECT_EQ(bits_of(float8_e4m3_t(448.0f)), 0x7eu);  // max
  EXPECT_EQ(bits_of(float8_e4m3_t(-448.0f)), 0xfeu);
  EXPECT_EQ(bits_of(float8_e4m3_t(464.0f)), 0x7eu);  // tie -> even (448)
  EXPECT_EQ(bits_of(float8_e4m3_t(465.0f)), 0x7fu);  // overflow -> NaN (no inf)
  EXPECT_EQ(bits_of(float8_e4m3_t(kInf)), 0x7fu);
  EXPECT_EQ(bits_of(float8_e4m3_t(-kInf)), 0xffu);
  EXPECT_EQ(bits_of(float8_e4m3_t(kNaN)), 0x7fu);
  EXPECT_EQ(bits_of(float8_e4m3_t(1.0625f)), 0x38u);                   // tie -> even (1.0)
  EXPECT_EQ(bits_of(float8_e4m3_t(1.1875f)), 0x3au);                   // tie -> even (1.25)
  EXPECT_EQ(bits_of(float8_e4m3_t(std::ldexp(1.0f, -6))), 0x08u);      // smallest normal
  EXPECT_EQ(bits_of(float8_e4m3_t(7 * std::ldexp(1.0f, -9))), 0x07u);  // largest subnormal
  EXPECT_EQ(bits_of(float8_e4m3_t(std::ldexp(1.0f, -9))), 0x01u);      // smallest subnormal
  EXPECT_EQ(bits_of(float8_e4m3_t(std::ldexp(1.0f, -10))), 0x00u);     // tie -> 0
  EXPECT_EQ(bits_of(float8_e4m3_t(1.5f * std::ldexp(1.0f, -10))), 0x01u);
  EXPECT_EQ(bits_of(float8_e4m3_t(-0.0f)), 0x80u);
  EXPECT_EQ(bits_of(float8_e4m3_t(1e-30)), 0x00u);
  EXPECT_TRUE(std::isnan(float(float8_e4m3_t::from_bits(0x7f))));
  EXPECT_TRUE(std::isnan(float(float8_e4m3_t::from_bits(0xff))));
  EXPECT_EQ(float(float8_e4m3_t::from_bits(0x7e)), 448.0f);
  EXPECT_EQ(float(float8_e4m3_t::from_bits(0x01)), std::ldexp(1.0f, -9));
}

TEST(Float8E5M2Type, HandWorkedEncodings) {
  EXPECT_EQ(bits_of(float8_e5m2_t(1.0f)), 0x3cu);
  EXPECT_EQ(bits_of(float8_e5m2_t(0.1f)), 0x2eu);
  EXPECT_EQ(bits_of(float8_e5m2_t(57344.0f)), 0x7bu);  // max
  EXPECT_EQ(bits_of(float8_e5m2_t(61439.0f)), 0x7bu);
  EXPECT_EQ(bits_of(float8_e5m2_t(61440.0f)), 0x7cu);  // tie -> even = inf
  EXPECT_EQ(bits_of(float8_e5m2_t(kInf)), 0x7cu);
  EXPECT_EQ(bits_of(float8_e5m2_t(kNaN)), 0x7eu);
  EXPECT_EQ(bits_of(float8_e5m2_t(1.125f)), 0x3cu);  // tie -> even
  EXPECT_EQ(bits_of(float8_e5m2_t(1.375f)), 0x3eu);  // tie -> even
  EXPECT_EQ(bits_of(float8_e5m2_t(std::ldexp(1.0f, -16))), 0x01u);
  EXPECT_EQ(bits_of(float8_e5m2_t(std::ldexp(1.0f, -17))), 0x00u);
  EXPECT_EQ(bits_of(float8_e5m2_t(3 * std::ldexp(1.0f, -17))), 0x02u);
  EXPECT_EQ(float(float8_e5m2_t::from_bits(0x7c)), kInf);
  EXPECT_EQ(float(float8_e5m2_t::from_bits(0xfc)), -kInf);
  EXPECT_TRUE(std::isnan(float(float8_e5m2_t::from_bits(0x7d))));
}

/// Value of an fp8 pattern from the format's definition, independent of the header's decoder.
template <int E, int M>
double fp8_reference_value(unsigned b) {
  const int bias = (1 << (E - 1)) - 1;
  const unsigned ex = (b >> M) & ((1u << E) - 1), man = b & ((1u << M) - 1);
  const double mag = ex == 0 ? std::ldexp(double(man), 1 - bias - M)
                             : std::ldexp(1.0 + double(man) / (1 << M), int(ex) - bias);
  return (b & 0x80) ? -mag : mag;
}

TEST(Float8Types, EveryPatternDecodesAndRoundTrips) {
  for (unsigned b = 0; b < 256; ++b) {
    const float e4 = float8_e4m3_t::from_bits(uint8_t(b));
    if ((b & 0x7f) == 0x7f) {
      EXPECT_TRUE(std::isnan(e4));
    } else {
      EXPECT_EQ(double(e4), (fp8_reference_value<4, 3>(b))) << b;
      EXPECT_EQ(bits_of(float8_e4m3_t(e4)), b);
    }
    const float e5 = float8_e5m2_t::from_bits(uint8_t(b));
    if ((b & 0x7c) == 0x7c) {
      EXPECT_EQ(std::isnan(e5), (b & 3) != 0) << b;
      if ((b & 3) == 0) {
        EXPECT_EQ(e5, (b & 0x80) ? -kInf : kInf);
      }
    } else {
      EXPECT_EQ(double(e5), (fp8_reference_value<5, 2>(b))) << b;
      EXPECT_EQ(bits_of(float8_e5m2_t(e5)), b);
    }
  }
}

// ----------------------------------------------------------------------------------------------
// Arithmetic surface used by generated code

TEST(LowpArithmetic, MixedExpressionsCompileAndRunInFloat) {
  half_t x = 1.0f, y = 2, z = 0.5;
  bfloat16_t b = 3.0;
  float8_e4m3_t f8 = 2.0f;
  float8_e5m2_t g8 = x;
  float w = 0.25f;
  x = x + y * z;  // 2
  EXPECT_EQ(float(x), 2.0f);
  x = x * b + f8 - g8 * w;  // 6 + 2 - 0.25
  EXPECT_EQ(float(x), 7.75f);
  x = -x;
  EXPECT_EQ(float(x), -7.75f);
  x += b;
  x -= 1;
  x *= 2.0;
  x /= f8;
  EXPECT_EQ(float(x), -5.75f);
  b = x;          // cross-type assignment
  half_t h2 = b;  // cross-type copy-initialisation
  EXPECT_EQ(float(h2), -5.75f);
  EXPECT_TRUE(x < b + 1 && b == -5.75f && f8 != 1 && f8 >= y && w <= z);
  double d = x;
  int i = static_cast<int>(x);
  EXPECT_EQ(d, -5.75);
  EXPECT_EQ(i, -5);
  // Results are rounded only when stored: 1 + 2^-11 is not a half but the float sum keeps it.
  const half_t one = 1.0f, tiny = std::ldexp(1.0f, -11);
  EXPECT_EQ(one + tiny, 1.0f + std::ldexp(1.0f, -11));
  EXPECT_EQ(float(half_t(one + tiny)), 1.0f);
}

TEST(LowpArithmetic, TypeProperties) {
  static_assert(std::is_trivially_copyable<bfloat16_t>::value, "");
  static_assert(std::is_trivially_copyable<float8_e4m3_t>::value, "");
  static_assert(std::is_trivial<half_t>::value, "");
  static_assert(std::is_same<decltype(half_t() * float()), float>::value, "");
  static_assert(std::is_same<decltype(half_t() + bfloat16_t()), float>::value, "");
  SUCCEED();
}

// ----------------------------------------------------------------------------------------------
// convert_row

template <class Dst, class Src>
void expect_convert_row_matches_scalar(const std::vector<float>& values) {
  std::vector<Src> src;
  for (float v : values) src.push_back(static_cast<Src>(v));
  std::vector<Dst> dst(src.size() + 1), ref(src.size());
  std::memset(static_cast<void*>(dst.data()), 0x5a, dst.size() * sizeof(Dst));
  const Dst sentinel = dst.back();
  tl_cpu::convert_row<Dst, Src>(dst.data(), src.data(), int(src.size()));
  for (size_t i = 0; i < src.size(); ++i) {
    ref[i] = static_cast<Dst>(src[i]);
    ASSERT_EQ(std::memcmp(&dst[i], &ref[i], sizeof(Dst)), 0) << "element " << i;
  }
  EXPECT_EQ(std::memcmp(&dst.back(), &sentinel, sizeof(Dst)), 0) << "wrote past n";
}

TEST(ConvertRow, VectorPathsMatchScalarConversions) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-600.f, 600.f);
  std::vector<float> v = {0.f, -0.f, kInf, -kInf, kNaN, 1e-7f, -3e-8f, 65520.f, 448.f, 1e-39f};
  for (int i = 0; i < 47; ++i) v.push_back(dist(rng));
  expect_convert_row_matches_scalar<float, half_t>(v);
  expect_convert_row_matches_scalar<half_t, float>(v);
  expect_convert_row_matches_scalar<float, bfloat16_t>(v);
  expect_convert_row_matches_scalar<bfloat16_t, float>(v);
  expect_convert_row_matches_scalar<float, float8_e4m3_t>(v);
  expect_convert_row_matches_scalar<float, float8_e5m2_t>(v);
  expect_convert_row_matches_scalar<half_t, bfloat16_t>(v);
  expect_convert_row_matches_scalar<float, float>(v);
  std::vector<float> ints;
  for (int i = -60; i < 61; i += 3) ints.push_back(float(i));
  expect_convert_row_matches_scalar<float, int8_t>(ints);
  expect_convert_row_matches_scalar<double, half_t>(ints);
}

// ----------------------------------------------------------------------------------------------
// GEMM

/// Reference C += op(A) op(B) in double; elements are read through float so quantised inputs
/// are taken at their stored value.  Also returns sum |a||b| per element to scale tolerances.
template <bool TA, bool TB, class A, class B>
void reference_gemm(const A* a, long lda, const B* b, long ldb, std::vector<double>& c,
                    std::vector<double>& mag, long ldc, int M, int N, int K) {
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double s = 0, m = 0;
      for (int k = 0; k < K; ++k) {
        const double x = double(TA ? a[k * lda + i] : a[i * lda + k]);
        const double y = double(TB ? b[j * ldb + k] : b[k * ldb + j]);
        s += x * y;
        m += std::fabs(x * y);
      }
      c[i * ldc + j] += s;
      mag[i * ldc + j] = m;
    }
}

/// Runs gemm<TA,TB> on random [-1,1] data with padded leading dimensions and a non-zero C, and
/// checks every element against the reference; padding columns of C must be untouched.
template <bool TransA, bool TransB, class TA, class TB>
void check_gemm(int M, int N, int K, std::mt19937& rng, double rel_tol) {
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  const long lda = (TransA ? M : K) + 3, ldb = (TransB ? K : N) + 5, ldc = N + 2;
  std::vector<TA> a(size_t((TransA ? K : M) * lda + 1));
  std::vector<TB> b(size_t((TransB ? N : K) * ldb + 1));
  std::vector<float> c(size_t(M * ldc + 1));
  for (auto& x : a) x = static_cast<TA>(dist(rng));
  for (auto& x : b) x = static_cast<TB>(dist(rng));
  for (auto& x : c) x = dist(rng);
  std::vector<double> ref(c.begin(), c.end()), mag(c.size(), 0.0);
  reference_gemm<TransA, TransB>(a.data(), lda, b.data(), ldb, ref, mag, ldc, M, N, K);
  tl_cpu::gemm<TransA, TransB>(a.data(), lda, b.data(), ldb, c.data(), ldc, M, N, K);
  for (int i = 0; i < M; ++i)
    for (long j = 0; j < ldc; ++j) {
      const size_t idx = size_t(i * ldc + j);
      // float accumulation of K products: error grows ~linearly in K in the worst case.
      const double tol = rel_tol * (K + 2) * (mag[idx] + std::fabs(ref[idx])) + 1e-30;
      ASSERT_NEAR(c[idx], ref[idx], j < N ? tol : 0.0)
          << "M=" << M << " N=" << N << " K=" << K << " TransA=" << TransA << " TransB=" << TransB << " at ("
          << i << "," << j << ")";
    }
}

template <class TA, class TB>
void check_all_forms(int M, int N, int K, std::mt19937& rng) {
  const double eps = std::ldexp(1.0, -24);  // inputs are exact in float, only accumulation rounds
  check_gemm<false, false, TA, TB>(M, N, K, rng, eps);
  check_gemm<false, true, TA, TB>(M, N, K, rng, eps);
  check_gemm<true, false, TA, TB>(M, N, K, rng, eps);
  check_gemm<true, true, TA, TB>(M, N, K, rng, eps);
}

const int kSizes[] = {1, 5, 7, 16, 17, 33, 128};

TEST(Gemm, FloatAllFormsRaggedSizes) {
  std::mt19937 rng(1234);
  for (int M : kSizes)
    for (int N : kSizes)
      for (int K : kSizes) check_all_forms<float, float>(M, N, K, rng);
}

TEST(Gemm, HalfInputsAllFormsRaggedSizes) {
  std::mt19937 rng(99);
  for (int M : kSizes)
    for (int N : kSizes)
      for (int K : {1, 7, 17, 128}) check_all_forms<half_t, half_t>(M, N, K, rng);
}

TEST(Gemm, Bfloat16InputsAllFormsRaggedSizes) {
  std::mt19937 rng(5);
  for (int M : kSizes)
    for (int N : kSizes)
      for (int K : {1, 5, 33, 128}) check_all_forms<bfloat16_t, bfloat16_t>(M, N, K, rng);
}

TEST(Gemm, MixedAndNarrowInputs) {
  std::mt19937 rng(77);
  for (int s : {1, 7, 17, 64}) {
    check_all_forms<half_t, float>(s, s + 3, 2 * s + 1, rng);
    check_all_forms<float, bfloat16_t>(s + 1, s, s, rng);
    check_all_forms<float8_e4m3_t, float8_e5m2_t>(s, s, s + 9, rng);
    check_all_forms<double, half_t>(s, 2 * s, s, rng);
  }
}

TEST(Gemm, LongKCrossesSlicesAndShortcutsDoNothing) {
  std::mt19937 rng(3);
  check_all_forms<float, float>(13, 35, 600, rng);  // several K slices accumulate into C
  float c[4] = {1, 2, 3, 4};
  const float a[4] = {1, 1, 1, 1};
  tl_cpu::gemm<false, false>(a, 2, a, 2, c, 2, 2, 2, 0);
  tl_cpu::gemm<false, false>(a, 2, a, 2, c, 2, 0, 2, 2);
  tl_cpu::gemm<true, true>(a, 2, a, 2, c, 2, 2, 0, 2);
  EXPECT_EQ(c[0], 1.f);
  EXPECT_EQ(c[3], 4.f);
}

/// Quantisation error of low-precision inputs against the unrounded float values.
template <class T>
double quantised_gemm_error(int M, int N, int K, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<float> af(size_t(M) * K), bf(size_t(K) * N);
  for (float& x : af) x = dist(rng);
  for (float& x : bf) x = dist(rng);
  std::vector<T> aq(af.begin(), af.end()), bq(bf.begin(), bf.end());
  std::vector<float> c(size_t(M) * N, 0.f);
  tl_cpu::gemm<false, false>(aq.data(), K, bq.data(), N, c.data(), N, M, N, K);
  double worst = 0;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double s = 0, m = 0;
      for (int k = 0; k < K; ++k) {
        s += double(af[i * K + k]) * bf[k * N + j];
        m += std::fabs(double(af[i * K + k]) * bf[k * N + j]);
      }
      worst = std::max(worst, std::fabs(c[i * N + j] - s) / m);
    }
  return worst;  // error relative to sum |a||b|
}

TEST(Gemm, LowPrecisionErrorWithinUnitRoundoff) {
  std::mt19937 rng(11);
  // Each product carries at most two input roundings (2u), plus float accumulation.
  EXPECT_LT(quantised_gemm_error<half_t>(33, 40, 64, rng), 2.2 * std::ldexp(1.0, -11));
  EXPECT_LT(quantised_gemm_error<bfloat16_t>(33, 40, 64, rng), 2.2 * std::ldexp(1.0, -8));
  EXPECT_LT(quantised_gemm_error<float8_e4m3_t>(17, 20, 32, rng), 2.2 * std::ldexp(1.0, -4) + 1e-2);
}

TEST(Gemm, GenericAccumulators) {
  std::mt19937 rng(21);
  std::uniform_int_distribution<int> di(-128, 127);
  const int M = 7, N = 9, K = 33;
  std::vector<int8_t> a(M * K), bt(N * K);
  for (auto& x : a) x = int8_t(di(rng));
  for (auto& x : bt) x = int8_t(di(rng));
  std::vector<int32_t> c(M * N, 5);
  tl_cpu::gemm<false, true>(a.data(), K, bt.data(), K, c.data(), N, M, N, K);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      int32_t s = 5;
      for (int k = 0; k < K; ++k) s += int32_t(a[i * K + k]) * int32_t(bt[j * K + k]);
      ASSERT_EQ(c[i * N + j], s);
    }
  std::uniform_real_distribution<double> dd(-1, 1);
  std::vector<double> ad(K * M), bd(K * N), cd(M * N, 0.5);
  for (auto& x : ad) x = dd(rng);
  for (auto& x : bd) x = dd(rng);
  tl_cpu::gemm<true, false>(ad.data(), M, bd.data(), N, cd.data(), N, M, N, K);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double s = 0.5;
      for (int k = 0; k < K; ++k) s += ad[k * M + i] * bd[k * N + j];
      ASSERT_NEAR(cd[i * N + j], s, 1e-12);
    }
}

// int8 x int8 -> int32: the vpmaddwd kernel where the flags enable AVX2 (gemm_int8.h), the
// reference loop otherwise; exact in both, on every transpose, odd K, partial panels and row tails.
TEST(Gemm, Int8ExactOnEveryLayout) {
  std::mt19937 rng(22);
  std::uniform_int_distribution<int> di(-128, 127);
  int cases = 0;
  for (int M : {1, 5, 6, 13, 64})
    for (int N : {1, 15, 16, 33})
      for (int K : {1, 2, 7, 129})
        for (int layout = 0; layout < 4; ++layout) {
          const bool ta = layout & 1, tb = layout & 2;
          std::vector<int8_t> a(size_t(M) * K), b(size_t(K) * N);
          for (auto& x : a) x = int8_t(di(rng));
          for (auto& x : b) x = int8_t(di(rng));
          if (cases % 7 == 0)
            std::fill(a.begin(), a.end(), int8_t(-128)), std::fill(b.begin(), b.end(), int8_t(-128));
          const long lda = ta ? M : K, ldb = tb ? K : N;
          std::vector<int32_t> c(size_t(M) * N, -3);
          if (ta && tb) tl_cpu::gemm<true, true>(a.data(), lda, b.data(), ldb, c.data(), N, M, N, K);
          if (ta && !tb) tl_cpu::gemm<true, false>(a.data(), lda, b.data(), ldb, c.data(), N, M, N, K);
          if (!ta && tb) tl_cpu::gemm<false, true>(a.data(), lda, b.data(), ldb, c.data(), N, M, N, K);
          if (!ta && !tb) tl_cpu::gemm<false, false>(a.data(), lda, b.data(), ldb, c.data(), N, M, N, K);
          for (int i = 0; i < M; ++i)
            for (int j = 0; j < N; ++j) {
              int64_t s = -3;
              for (int k = 0; k < K; ++k)
                s += int64_t(ta ? a[k * lda + i] : a[i * lda + k]) *
                     int64_t(tb ? b[j * ldb + k] : b[k * ldb + j]);
              ASSERT_EQ(c[i * N + j], s) << "M=" << M << " N=" << N << " K=" << K << " layout " << layout;
            }
          ++cases;
        }
}

TEST(Gemm, ConcurrentThreadsUseSeparateScratch) {
  std::vector<std::thread> threads;
  std::vector<int> failures(4, 0);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([t, &failures] {
      std::mt19937 rng(100 + t);
      for (int it = 0; it < 20; ++it) {
        const int M = 20 + t, N = 33 + 2 * t, K = 40 + 3 * it;
        std::uniform_real_distribution<float> dist(-1.f, 1.f);
        std::vector<half_t> a(size_t(M) * K), b(size_t(N) * K);
        for (auto& x : a) x = dist(rng);
        for (auto& x : b) x = dist(rng);
        std::vector<float> c(size_t(M) * N, 0.f);
        tl_cpu::gemm<false, true>(a.data(), K, b.data(), K, c.data(), N, M, N, K);
        for (int i = 0; i < M; ++i)
          for (int j = 0; j < N; ++j) {
            double s = 0;
            for (int k = 0; k < K; ++k) s += double(a[i * K + k]) * double(b[j * K + k]);
            if (std::fabs(c[i * N + j] - s) > 1e-4) ++failures[t];
          }
      }
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(failures[t], 0) << "thread " << t;
}

/// pack_b_tile + gemm_packed_b against the reference on the tile's valid part (kv x nv of a K x N
/// tile; the rest of op(B) counts as zero, as a tile overhanging its tensor does).
template <bool TransA, bool TransB, class TA, class TB>
void check_packed_b(int M, int N, int K, int kv, int nv, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  const long lda = (TransA ? M : K) + 3, ldb = (TransB ? K : N) + 5, ldc = N + 2;
  std::vector<TA> a(size_t((TransA ? K : M) * lda + 1));
  std::vector<TB> b(size_t((TransB ? N : K) * ldb + 1));
  for (auto& x : a) x = static_cast<TA>(dist(rng));
  for (auto& x : b) x = static_cast<TB>(dist(rng));
  // op(B) outside the valid part is poisoned: packing must not read it.
  for (int k = 0; k < K; ++k)
    for (int j = 0; j < N; ++j)
      if (k >= kv || j >= nv) b[TransB ? j * ldb + k : k * ldb + j] = static_cast<TB>(kNaN);
  std::vector<float> c(size_t(M * ldc + 1));
  for (auto& x : c) x = dist(rng);
  std::vector<double> ref(c.begin(), c.end()), mag(c.size(), 0.0);
  std::vector<TB> bz(b);
  for (int k = 0; k < K; ++k)
    for (int j = 0; j < N; ++j)
      if (k >= kv || j >= nv) bz[TransB ? j * ldb + k : k * ldb + j] = static_cast<TB>(0.f);
  reference_gemm<TransA, TransB>(a.data(), lda, bz.data(), ldb, ref, mag, ldc, M, N, K);
  const int panels = (N + 31) / 32 * 32;
  float* bp = static_cast<float*>(std::aligned_alloc(64, size_t(K) * panels * sizeof(float) + 64));
  tl_cpu::pack_b_tile<TransB>(b.data(), ldb, bp, K, N, kv, nv);
  tl_cpu::gemm_packed_b<TransA>(a.data(), lda, bp, c.data(), ldc, M, N, K);
  std::free(bp);
  const double eps = std::ldexp(1.0, -24);
  for (int i = 0; i < M; ++i)
    for (long j = 0; j < ldc; ++j) {
      const size_t idx = size_t(i * ldc + j);
      const double tol = eps * (K + 2) * (mag[idx] + std::fabs(ref[idx])) + 1e-30;
      ASSERT_NEAR(c[idx], ref[idx], j < N ? tol : 0.0)
          << "M=" << M << " N=" << N << " K=" << K << " kv=" << kv << " nv=" << nv << " TransA=" << TransA
          << " TransB=" << TransB << " at (" << i << "," << j << ")";
    }
}

TEST(Gemm, PackedBMatchesReferenceOnRaggedAndClippedTiles) {
  std::mt19937 rng(2026);
  // M covers every tail of the 6-row blocks (1 and 2 run as 4 + 4 / 4 + 2 + 1 rows); K > 256
  // crosses a K slice inside a packed panel.
  for (int M : {1, 2, 7, 8, 13, 127, 128})
    for (int N : {5, 16, 33, 128})
      for (int K : {1, 31, 300}) {
        check_packed_b<false, false, float, float>(M, N, K, K, N, rng);
        check_packed_b<true, true, float, float>(M, N, K, K, N, rng);
        check_packed_b<false, true, half_t, half_t>(M, N, K, std::max(0, K - 3), std::max(0, N - 4), rng);
        check_packed_b<true, false, bfloat16_t, bfloat16_t>(M, N, K, K / 2, N / 2, rng);
      }
  check_packed_b<false, false, float, float8_e4m3_t>(9, 40, 70, 70, 40, rng);
  check_packed_b<false, false, float, float>(9, 40, 70, 0, 40, rng);  // a tile wholly outside: C unchanged
}

TEST(TileCache, EachSlotIsFilledOnceAndReadersSeeItFilled) {
  constexpr int kSlots = 257, kElems = 1000, kThreads = 4;
  tl_cpu::TileCache<int> cache(kSlots, kElems);
  ASSERT_TRUE(cache.ok());
  std::vector<int> fills(kSlots, 0);  // written only by the claimer of a slot
  std::vector<int> bad(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      std::mt19937 rng(7 + t);
      std::vector<int> order(kSlots);
      for (int i = 0; i < kSlots; ++i) order[i] = i;
      std::shuffle(order.begin(), order.end(), rng);
      for (int round = 0; round < 3; ++round)
        for (int s : order) {
          int* tile = cache.tile(s);
          if (cache.claim(s)) {
            ++fills[s];
            for (int i = 0; i < kElems; ++i) tile[i] = s * 7 + i;
            cache.publish(s);
          }
          for (int i = 0; i < kElems; ++i) bad[t] += tile[i] != s * 7 + i;
        }
    });
  for (auto& th : threads) th.join();
  for (int s = 0; s < kSlots; ++s) EXPECT_EQ(fills[s], 1) << "slot " << s;
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(bad[t], 0) << "thread " << t;
  // Tiles start 64-byte aligned (the micro-kernels load packed panels with aligned loads).
  EXPECT_EQ(reinterpret_cast<uintptr_t>(cache.tile(1)) % 64, 0u);
}

TEST(TileCache, BlocksAreReusedAcrossCalls) {
  void* first = nullptr;
  {
    tl_cpu::TileCache<float> c(64, 4096);
    ASSERT_TRUE(c.ok());
    first = c.data;
  }
  tl_cpu::TileCache<float> again(64, 4096);  // the same size: the parked block comes back
  EXPECT_EQ(static_cast<void*>(again.data), first);
  tl_cpu::TileCache<float> other(64, 4096);  // the block is taken: a fresh one
  EXPECT_NE(static_cast<void*>(other.data), first);
}

}  // namespace
