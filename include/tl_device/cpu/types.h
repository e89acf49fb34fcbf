// Low-precision scalar types (fp16, bf16, fp8 e4m3fn / e5m2) for generated CPU kernels.
//
// Every type stores its raw bits and converts implicitly to float; arithmetic and comparisons
// therefore run in float through the built-in operators (so `x = x + y * z` compiles for any mix
// of these types and float, and the result is rounded once, when it is stored back).  Conversions
// from float/double/integers round to nearest even.  The fp8 types follow ml_dtypes:
// float8_e4m3fn has no infinity (NaN = 0x7f/0xff, max 448, overflow -> NaN), float8_e5m2 is IEEE-like.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#if defined(__F16C__) || defined(__AVX2__)
#include <immintrin.h>
#endif

namespace tl_cpu {
namespace detail {

inline uint32_t f32_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float f32_from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline uint64_t f64_bits(double d) {
  uint64_t u;
  std::memcpy(&u, &d, 8);
  return u;
}

/// Rounds `x` (nearest even) to a binary format with E exponent and M mantissa bits and returns its
/// bit pattern.  IEEE formats have inf and quiet NaNs; the others ("fn") spend the all-ones pattern
/// on NaN, have no inf and map overflow to NaN, as ml_dtypes does.  Working from double means a
/// double input is rounded exactly once.
template <int E, int M, bool IEEE>
inline uint32_t encode_minifloat(double x) {
  constexpr int bias = (1 << (E - 1)) - 1;
  constexpr uint32_t exp_max = (1u << E) - 1;
  constexpr uint32_t nan_bits = (exp_max << M) | (IEEE ? 1u << (M - 1) : (1u << M) - 1);
  constexpr uint32_t max_finite = IEEE ? (exp_max << M) - 1 : nan_bits - 1;
  constexpr uint32_t overflow = IEEE ? exp_max << M : nan_bits;
  const uint64_t u = f64_bits(x);
  const uint32_t sign = uint32_t(u >> 63) << (E + M);
  const int dexp = int((u >> 52) & 0x7ff);
  const uint64_t frac = u & ((uint64_t(1) << 52) - 1);
  if (dexp == 0x7ff) {
    if (frac == 0) return sign | overflow;
    // Keep the top payload bits, like F16C does, so software and hardware paths agree.
    return sign | nan_bits | (IEEE ? uint32_t(frac >> (52 - M)) : 0u);
  }
  if (dexp == 0) return sign;  // double subnormals are far below any target's smallest value
  const int e = dexp - 1023;
  if (e > bias + 1) return sign | overflow;
  const uint64_t m = frac | (uint64_t(1) << 52);
  // Shift leaving M fraction bits; targets' subnormals lose one more bit per binade below 1-bias.
  int shift = 52 - M + (e < 1 - bias ? (1 - bias) - e : 0);
  if (shift >= 54) return sign;  // below half the smallest subnormal
  uint64_t q = m >> shift;
  const uint64_t rem = m & ((uint64_t(1) << shift) - 1), half = uint64_t(1) << (shift - 1);
  if (rem > half || (rem == half && (q & 1))) ++q;
  // Adding q (which includes the implicit bit) lets a mantissa round-up carry into the exponent,
  // and lets the largest subnormal round up into the smallest normal.
  const uint64_t bits = e < 1 - bias ? q : (uint64_t(e + bias - 1) << M) + q;
  return bits > max_finite ? sign | overflow : sign | uint32_t(bits);
}

/// Decodes a bit pattern of the format described above to float (exact: E < 8 fits in float).
template <int E, int M, bool IEEE>
inline float decode_minifloat(uint32_t b) {
  static_assert(E < 8, "subnormals of the format must be normal floats");
  constexpr int bias = (1 << (E - 1)) - 1;
  constexpr uint32_t exp_max = (1u << E) - 1, man_mask = (1u << M) - 1;
  const uint32_t sign = ((b >> (E + M)) & 1u) << 31;
  const uint32_t ex = (b >> M) & exp_max;
  uint32_t man = b & man_mask;
  if (IEEE && ex == exp_max)  // NaNs come back quiet, matching F16C
    return f32_from_bits(sign | 0x7f800000u | (man << (23 - M)) | (man ? 0x400000u : 0u));
  if (!IEEE && ex == exp_max && man == man_mask) return f32_from_bits(sign | 0x7fc00000u);
  if (ex != 0) return f32_from_bits(sign | (uint32_t(int(ex) - bias + 127) << 23) | (man << (23 - M)));
  if (man == 0) return f32_from_bits(sign);
  int e = 1 - bias;
  while (!(man & (1u << M))) {
    man <<= 1;
    --e;
  }
  return f32_from_bits(sign | (uint32_t(e + 127) << 23) | ((man & man_mask) << (23 - M)));
}

/// Software float -> fp16 bits; also the reference the tests hold F16C to.
inline uint16_t half_bits_soft(float f) { return uint16_t(encode_minifloat<5, 10, true>(f)); }

struct half_format {
  using storage = uint16_t;
  static float to_float(uint16_t b) {
#ifdef __F16C__
    return _cvtsh_ss(b);
#else
    return decode_minifloat<5, 10, true>(b);
#endif
  }
  static uint16_t from_float(float f) {
#ifdef __F16C__
    return uint16_t(_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT));
#else
    return half_bits_soft(f);
#endif
  }
  static uint16_t from_double(double d) {
    // Going through float would round twice; only values float holds exactly may take that path.
    const float f = float(d);
    return double(f) == d ? from_float(f) : uint16_t(encode_minifloat<5, 10, true>(d));
  }
};

struct bf16_format {
  using storage = uint16_t;
  static float to_float(uint16_t b) { return f32_from_bits(uint32_t(b) << 16); }
  static uint16_t from_float(float f) {
    const uint32_t u = f32_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 0x40u);  // NaN stays NaN
    return uint16_t((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
  }
  static uint16_t from_double(double d) {
    const float f = float(d);
    return double(f) == d ? from_float(f) : uint16_t(encode_minifloat<8, 7, true>(d));
  }
};

template <int E, int M, bool IEEE>
struct fp8_format {
  using storage = uint8_t;
  /// Decoding through a 256-entry table keeps bulk fp8 -> float conversion cheap.
  static const float* table() {
    struct lut {
      float v[256];
      lut() {
        for (int i = 0; i < 256; ++i) v[i] = decode_minifloat<E, M, IEEE>(uint32_t(i));
      }
    };
    static const lut t;
    return t.v;
  }
  static float to_float(uint8_t b) { return table()[b]; }
  static uint8_t from_float(float f) { return uint8_t(encode_minifloat<E, M, IEEE>(f)); }
  static uint8_t from_double(double d) { return uint8_t(encode_minifloat<E, M, IEEE>(d)); }
};

/// OCP MX fp4 (float4_e2m1fn): magnitudes 0, 0.5, 1, 1.5, 2, 3, 4, 6 in the low nibble of a byte, no
/// infinities or NaN. Rounds to nearest even, saturates at 6 (infinities too); NaN gives -0 (code 8), as
/// ml_dtypes does (docs/semantics.md).
struct e2m1_format {
  using storage = uint8_t;
  static float to_float(uint8_t b) {
    static const float mag[8] = {0.f, 0.5f, 1.f, 1.5f, 2.f, 3.f, 4.f, 6.f};
    const float v = mag[b & 7u];
    return (b & 8u) ? -v : v;
  }
  static uint8_t from_double(double d) {
    if (d != d) return 8u;
    const uint8_t sign = std::signbit(d) ? 8u : 0u;
    const double a = std::fabs(d);
    // the nearer neighbour; a tie goes to the even code
    const uint8_t c = a <= 0.25   ? 0
                      : a < 0.75  ? 1
                      : a <= 1.25 ? 2
                      : a < 1.75  ? 3
                      : a <= 2.5  ? 4
                      : a < 3.5   ? 5
                      : a <= 5.0  ? 6
                                  : 7;
    return uint8_t(sign | c);
  }
  static uint8_t from_float(float f) { return from_double(double(f)); }
};

/// OCP MX fp6 (float6_e2m3fn: E = 2, M = 3; float6_e3m2fn: E = 3, M = 2) in the low 6 bits of a byte: every
/// code finite (bias 2^(E-1) - 1), no infinities or NaN. Rounds to nearest even and saturates (infinities
/// too); NaN gives -0 (code 32), as for fp4 (docs/semantics.md).
template <int E, int M>
struct mx6_format {
  using storage = uint8_t;
  static constexpr int bias = (1 << (E - 1)) - 1;
  static float to_float(uint8_t b) {
    const unsigned mag = b & 31u, ex = mag >> M, m = mag & ((1u << M) - 1);
    const float v =
        ex ? std::ldexp(float((1u << M) + m), int(ex) - bias - M) : std::ldexp(float(m), 1 - bias - M);
    return (b & 32u) ? -v : v;
  }
  static uint8_t from_double(double d) {
    if (d != d) return 32u;
    const uint8_t s = std::signbit(d) ? 32u : 0u;
    const double a = std::fabs(d);
    if (a >= double(to_float(31u))) return uint8_t(s | 31u);
    if (a == 0) return s;
    int e2 = 0;
    std::frexp(a, &e2);
    const int ex = e2 - 1 < 1 - bias ? 1 - bias : e2 - 1;
    const double r = std::nearbyint(std::ldexp(a, M - ex));  // nearest even: the default rounding mode
    const unsigned code =
        e2 - 1 < 1 - bias ? unsigned(r) : (unsigned(ex + bias) << M) + unsigned(r) - (1u << M);
    return uint8_t(s | (code > 31u ? 31u : code));
  }
  static uint8_t from_float(float f) { return from_double(double(f)); }
};

/// OCP MX E8M0 (float8_e8m0fnu), the MX formats' scale: code c is 2^(c - 127), 255 NaN; no sign or zero.
/// Rounds to the nearest power of two, ties up (1.5 * 2^e gives 2^(e + 1)); below 2^-127 gives 2^-127; zero,
/// negatives, NaN, infinities and values past 2^127 give NaN, as ml_dtypes does.
struct e8m0_format {
  using storage = uint8_t;
  static float to_float(uint8_t b) {
    return b == 255 ? std::numeric_limits<float>::quiet_NaN() : std::ldexp(1.0f, int(b) - 127);
  }
  static uint8_t from_double(double d) {
    if (!(d > 0) || std::isinf(d)) return 255u;
    int e = 0;
    const double m = std::frexp(d, &e);  // d = m 2^e, m in [0.5, 1)
    const int k = e - 1 + (m >= 0.75 ? 1 : 0);
    return uint8_t(k < -127 ? 0 : k > 127 ? 255 : k + 127);
  }
  static uint8_t from_float(float f) { return from_double(double(f)); }
};

}  // namespace detail

/// A storage-only floating-point type whose value is `Fmt::to_float(bits)`.  It is trivial (so
/// generated code may memcpy it and leave arrays uninitialised) and all arithmetic promotes to float.
template <class Fmt>
struct lowp_float {
  using format = Fmt;
  using storage = typename Fmt::storage;
  storage bits;

  lowp_float() = default;
  /// Rounds any arithmetic value to nearest even (integers and doubles are rounded once).
  template <class T, std::enable_if_t<std::is_arithmetic<T>::value, int> = 0>
  lowp_float(T v) : bits(from_arith(v)) {}
  /// Converts from another low-precision type through float (exact widening, one rounding).
  template <class G, std::enable_if_t<!std::is_same<G, Fmt>::value, int> = 0>
  lowp_float(lowp_float<G> v) : bits(Fmt::from_float(float(v))) {}

  /// Reinterprets a raw bit pattern.
  static lowp_float from_bits(storage b) {
    lowp_float r;
    r.bits = b;
    return r;
  }

  operator float() const { return Fmt::to_float(bits); }

  // Built-in compound assignment needs an arithmetic lvalue, so these must be members.
  lowp_float& operator+=(float v) { return *this = lowp_float(float(*this) + v); }
  lowp_float& operator-=(float v) { return *this = lowp_float(float(*this) - v); }
  lowp_float& operator*=(float v) { return *this = lowp_float(float(*this) * v); }
  lowp_float& operator/=(float v) { return *this = lowp_float(float(*this) / v); }

 private:
  template <class T>
  static storage from_arith(T v) {
    if constexpr (std::is_same<T, float>::value)
      return Fmt::from_float(v);
    else
      return Fmt::from_double(double(v));
  }
};

using half_t = lowp_float<detail::half_format>;
using bfloat16_t = lowp_float<detail::bf16_format>;
using float8_e4m3_t = lowp_float<detail::fp8_format<4, 3, false>>;
using float8_e5m2_t = lowp_float<detail::fp8_format<5, 2, true>>;
using float4_e2m1_t = lowp_float<detail::e2m1_format>;
using float6_e2m3_t = lowp_float<detail::mx6_format<2, 3>>;
using float6_e3m2_t = lowp_float<detail::mx6_format<3, 2>>;
using float8_e8m0_t = lowp_float<detail::e8m0_format>;

static_assert(sizeof(half_t) == 2 && sizeof(bfloat16_t) == 2, "16-bit types must be 2 bytes");
static_assert(sizeof(float8_e4m3_t) == 1 && sizeof(float8_e5m2_t) == 1, "fp8 types must be 1 byte");
static_assert(std::is_trivially_copyable<half_t>::value, "generated code memcpys these");

struct nibble_tag {};

/// int4 / uint4: one value per byte, in the low nibble (upper bits zero), as ml_dtypes stores
/// them. Reads sign-extend (int4) or zero-extend (uint4) to int; writes keep the low 4 bits of
/// an integer (wrap-around, as for every integer type) and saturate a float (as casts do).
template <bool Signed>
struct nibble : nibble_tag {
  uint8_t bits;
  nibble() = default;
  template <typename T, typename std::enable_if<std::is_integral<T>::value, int>::type = 0>
  nibble(T v) : bits(static_cast<uint8_t>(static_cast<unsigned>(v) & 0xFu)) {}
  template <typename T, typename std::enable_if<std::is_floating_point<T>::value, int>::type = 0>
  nibble(T v) : bits(from_float(double(v))) {}
  operator int() const {
    return Signed ? static_cast<int>(static_cast<int8_t>(static_cast<uint8_t>(bits << 4))) >> 4
                  : (bits & 0xF);
  }

 private:
  static uint8_t from_float(double v) {
    const double lo = Signed ? -8 : 0, hi = Signed ? 7 : 15;
    if (v != v) return 0;
    v = v < lo ? lo : (v > hi ? hi : v);
    return static_cast<uint8_t>(static_cast<unsigned>(static_cast<int>(v)) & 0xFu);
  }
};
using int4_t = nibble<true>;
using uint4_t = nibble<false>;
static_assert(sizeof(int4_t) == 1, "4-bit types are stored one per byte");

/// Converts n elements src[0..n) to dst[0..n) with the same rounding as the scalar conversions;
/// the common widening/narrowing pairs use SIMD when the target has it.
template <typename Dst, typename Src>
inline void convert_row(Dst* __restrict dst, const Src* __restrict src, int n) {
  int i = 0;
  if constexpr (std::is_same<Dst, Src>::value) {
    if (n > 0) std::memcpy(dst, src, sizeof(Dst) * size_t(n));
    return;
  } else if constexpr (std::is_same<Dst, float>::value && std::is_same<Src, half_t>::value) {
#ifdef __F16C__
    for (; i + 8 <= n; i += 8)
      _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i))));
#endif
  } else if constexpr (std::is_same<Dst, half_t>::value && std::is_same<Src, float>::value) {
#ifdef __F16C__
    for (; i + 8 <= n; i += 8)
      _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i),
                       _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT));
#endif
  } else if constexpr (std::is_same<Dst, float>::value && std::is_same<Src, bfloat16_t>::value) {
    // bf16 is the top half of a float, so widening is a shift (NaN payloads survive untouched).
#ifdef __AVX2__
    for (; i + 8 <= n; i += 8) {
      const __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i)));
      _mm256_storeu_ps(dst + i, _mm256_castsi256_ps(_mm256_slli_epi32(w, 16)));
    }
#else
    for (; i < n; ++i) dst[i] = detail::f32_from_bits(uint32_t(src[i].bits) << 16);
#endif
  } else if constexpr (std::is_same<Dst, float>::value &&
                       (std::is_same<Src, float8_e4m3_t>::value || std::is_same<Src, float8_e5m2_t>::value)) {
    const float* t = Src::format::table();
    for (; i < n; ++i) dst[i] = t[src[i].bits];
  }
  for (; i < n; ++i) dst[i] = static_cast<Dst>(src[i]);
}

}  // namespace tl_cpu
