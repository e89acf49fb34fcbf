// Device-side helpers included by generated CUDA code (sm_80 and newer). Self-contained: no CUDA
// toolkit headers, so NVRTC compiles it quickly; the instructions are inline PTX.
#pragma once

#ifdef __CUDACC_RTC__  // NVRTC: no system headers, declare the fixed-width types ourselves
typedef signed char int8_t;
typedef unsigned char uint8_t;
typedef short int16_t;
typedef unsigned short uint16_t;
typedef int int32_t;
typedef unsigned int uint32_t;
typedef long long int64_t;
typedef unsigned long long uint64_t;
#else  // nvcc (the fallback toolchain)
#include <cstdint>
#endif

namespace tl {

// ---- 16-bit floating point types (storage + conversion through float) -----------------------
struct half_t {
  unsigned short bits;
  half_t() = default;
  __device__ half_t(float f) { asm("cvt.rn.f16.f32 %0, %1;" : "=h"(bits) : "f"(f)); }
  __device__ operator float() const {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(bits));
    return f;
  }
};
struct bfloat16_t {
  unsigned short bits;
  bfloat16_t() = default;
  __device__ bfloat16_t(float f) { asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(bits) : "f"(f)); }
  __device__ operator float() const { return __uint_as_float(static_cast<unsigned>(bits) << 16); }
};

// ---- fp8 (OCP FP8: e4m3fn, e5m2): storage + conversion through float ---------------------------
// float -> fp8 rounds to nearest even and saturates (values past the largest finite one, and
// infinities, give +-448 / +-57344), NaN gives NaN: the `.satfinite` conversion of the PTX ISA,
// which is also what CUDA's __nv_fp8 constructors do. sm_89+ converts with cvt; older targets
// (sm_80/86, where fp8 tensors are still useful as storage) use the same rounding in integer code.
namespace detail {
template <int E, int M>
__device__ __forceinline__ unsigned char fp8_from_float_soft(float f) {
  constexpr int bias = (1 << (E - 1)) - 1;
  constexpr unsigned maxnorm = E == 4 ? 0x7Eu : 0x7Bu;  // 448 / 57344
  const unsigned u = __float_as_uint(f);
  const unsigned sign = (u >> 24) & 0x80u, a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return 0x7Fu;  // NaN (e4m3fn: S.1111.111; e5m2: a quiet NaN)
  if (a < static_cast<unsigned>(128 - bias) << 23) {
    // Below the smallest normal: a multiple of the subnormal quantum 2^(1-bias-M). Scaling by a power
    // of two is exact, and the float-to-int conversion rounds to nearest even.
    const float scaled =
        __uint_as_float(a) * __uint_as_float(static_cast<unsigned>(127 + bias - 1 + M) << 23);
    return static_cast<unsigned char>(sign | static_cast<unsigned>(__float2int_rn(scaled)));
  }
  // Normal: drop 23 - M mantissa bits with round-to-nearest-even on the float's bit pattern (a carry
  // into the exponent is the correct next binade), then rebias the exponent.
  constexpr int shift = 23 - M;
  unsigned r = a >> shift;
  const unsigned rem = a & ((1u << shift) - 1u), half = 1u << (shift - 1);
  if (rem > half || (rem == half && (r & 1u))) ++r;
  r -= static_cast<unsigned>(127 - bias) << M;
  return static_cast<unsigned char>(sign | (r > maxnorm ? maxnorm : r));
}
template <int E, int M>
__device__ __forceinline__ float fp8_to_float_soft(unsigned char b) {
  constexpr int bias = (1 << (E - 1)) - 1;
  const unsigned sign = static_cast<unsigned>(b & 0x80u) << 24, ex = (b >> M) & ((1u << E) - 1u),
                 man = b & ((1u << M) - 1u);
  if (E == 4 && (b & 0x7Fu) == 0x7Fu) return __uint_as_float(sign | 0x7fc00000u);
  if (E == 5 && ex == 31u) return __uint_as_float(sign | 0x7f800000u | (man ? 0x400000u : 0u));
  if (ex == 0) {  // subnormal: man * 2^(1-bias-M), exact in float
    const float v =
        static_cast<float>(man) * __uint_as_float(static_cast<unsigned>(127 + 1 - bias - M) << 23);
    return __uint_as_float(sign | __float_as_uint(v));
  }
  return __uint_as_float(sign | ((ex + 127u - bias) << 23) | (man << (23 - M)));
}
}  // namespace detail

struct float8_e4m3_t {
  unsigned char bits;
  float8_e4m3_t() = default;
  __device__ float8_e4m3_t(float f) {
#if __CUDA_ARCH__ >= 890
    unsigned short h;
    asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(h) : "f"(0.0f), "f"(f));
    bits = static_cast<unsigned char>(h);
#else
    bits = detail::fp8_from_float_soft<4, 3>(f);
#endif
  }
  __device__ operator float() const {
#if __CUDA_ARCH__ >= 890
    unsigned h2;
    asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(h2) : "h"(static_cast<unsigned short>(bits)));
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(static_cast<unsigned short>(h2)));
    return f;
#else
    return detail::fp8_to_float_soft<4, 3>(bits);
#endif
  }
};
struct float8_e5m2_t {
  unsigned char bits;
  float8_e5m2_t() = default;
  __device__ float8_e5m2_t(float f) {
#if __CUDA_ARCH__ >= 890
    unsigned short h;
    asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %2;" : "=h"(h) : "f"(0.0f), "f"(f));
    bits = static_cast<unsigned char>(h);
#else
    bits = detail::fp8_from_float_soft<5, 2>(f);
#endif
  }
  // e5m2 is the top byte of a float16, so widening is a shift and an exact half -> float.
  __device__ operator float() const {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(static_cast<unsigned short>(bits << 8)));
    return f;
  }
};

// OCP MX fp4 (float4_e2m1fn) in the low nibble of a byte: magnitudes 0, 0.5, 1, 1.5, 2, 3, 4, 6, no
// infinities or NaN. Conversions round to nearest even and saturate at 6; NaN gives -0 (code 8), as the
// CPU target, the emulators and ml_dtypes do (docs/semantics.md), so the conversion is done here in software
// rather than with sm_100's cvt.rn.satfinite.e2m1x2.
struct float4_e2m1_t {
  unsigned char bits;
  float4_e2m1_t() = default;
  __device__ float4_e2m1_t(float f) {
    const unsigned u = __float_as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) {
      bits = 8;
      return;
    }
    const float a = fabsf(f);
    const unsigned c = a <= 0.25f   ? 0u
                       : a < 0.75f  ? 1u
                       : a <= 1.25f ? 2u
                       : a < 1.75f  ? 3u
                       : a <= 2.5f  ? 4u
                       : a < 3.5f   ? 5u
                       : a <= 5.0f  ? 6u
                                    : 7u;
    bits = static_cast<unsigned char>(((u >> 28) & 8u) | c);
  }
  __device__ operator float() const {
    // the magnitude: (1 + m/2) * 2^(e-1) for e > 0, m/2 for e = 0
    const unsigned e = (bits >> 1) & 3u, m = bits & 1u;
    const float v = e ? static_cast<float>(2u + m) * __uint_as_float((e + 125u) << 23) : 0.5f * m;
    return (bits & 8u) ? -v : v;
  }
};

// OCP MX fp6 (float6_e2m3fn: E 2, M 3; float6_e3m2fn: E 3, M 2) in the low 6 bits of a byte: every code
// finite (bias 2^(E-1) - 1). Conversions round to nearest even and saturate; NaN gives -0 (code 32), as on
// every other target (docs/semantics.md); in software, like fp4.
template <int E, int M>
struct float6_t {
  unsigned char bits;
  static constexpr int bias = (1 << (E - 1)) - 1;
  float6_t() = default;
  __device__ static float decode(unsigned b) {
    const unsigned mag = b & 31u, ex = mag >> M, m = mag & ((1u << M) - 1);
    const float v =
        ex ? static_cast<float>((1u << M) + m) * exp2f(static_cast<float>(static_cast<int>(ex) - bias - M))
           : static_cast<float>(m) * exp2f(static_cast<float>(1 - bias - M));
    return (b & 32u) ? -v : v;
  }
  __device__ float6_t(float f) {
    const unsigned u = __float_as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) {
      bits = 32;
      return;
    }
    const unsigned s = (u >> 26) & 32u;
    const float a = fabsf(f);
    if (a >= decode(31u)) {
      bits = static_cast<unsigned char>(s | 31u);
      return;
    }
    // a's binade (at least the least normal one), and a in units of its last mantissa place, nearest even
    const int e2 = static_cast<int>((__float_as_uint(a) >> 23) & 255u) - 127;
    const int ex = e2 < 1 - bias ? 1 - bias : e2;
    const unsigned r = static_cast<unsigned>(rintf(a * exp2f(static_cast<float>(M - ex))));
    const unsigned code = e2 < 1 - bias ? r : (static_cast<unsigned>(ex + bias) << M) + r - (1u << M);
    bits = static_cast<unsigned char>(s | (code > 31u ? 31u : code));
  }
  __device__ operator float() const { return decode(bits); }
};
using float6_e2m3_t = float6_t<2, 3>;
using float6_e3m2_t = float6_t<3, 2>;

// OCP MX E8M0 (float8_e8m0fnu), the MX formats' scale: code c is 2^(c - 127), 255 NaN; no sign or zero.
// Conversions round to the nearest power of two, ties up (1.5 * 2^e gives 2^(e + 1)); below 2^-127 gives
// 2^-127; zero, negatives, NaN, infinities and values past 2^127 give NaN, as ml_dtypes does.
struct float8_e8m0_t {
  unsigned char bits;
  float8_e8m0_t() = default;
  __device__ float8_e8m0_t(float f) {
    if (!(f > 0.f) || isinf(f)) {
      bits = 255;
      return;
    }
    int e = 0;
    const float m = frexpf(f, &e);  // f = m 2^e, m in [0.5, 1)
    const int k = e - 1 + (m >= 0.75f ? 1 : 0);
    bits = static_cast<unsigned char>(k < -127 ? 0 : k > 127 ? 255 : k + 127);
  }
  __device__ operator float() const {
    return bits == 255 ? __int_as_float(0x7fffffff) : exp2f(static_cast<float>(bits) - 127.f);
  }
};

// T.reinterpret: the bits of `x` as a value of `T` (same size).
template <typename T, typename F>
__device__ __forceinline__ T bit_cast(F x) {
  static_assert(sizeof(T) == sizeof(F), "T.reinterpret between types of different sizes");
  T t;
  memcpy(&t, &x, sizeof(T));
  return t;
}
template <typename T, typename F>
__device__ __forceinline__ T cast(F x) {
  return static_cast<T>(x);
}
template <>
__device__ __forceinline__ half_t cast<half_t, half_t>(half_t x) {
  return x;
}
template <>
__device__ __forceinline__ half_t cast<half_t, bfloat16_t>(bfloat16_t x) {
  return half_t(float(x));
}
template <>
__device__ __forceinline__ bfloat16_t cast<bfloat16_t, half_t>(half_t x) {
  return bfloat16_t(float(x));
}
// Between fp8 and the 16-bit types: through float (exact widening, one rounding).
#define TL_CAST_VIA_FLOAT(T, F)                  \
  template <>                                    \
  __device__ __forceinline__ T cast<T, F>(F x) { \
    return T(float(x));                          \
  }
TL_CAST_VIA_FLOAT(half_t, float8_e4m3_t)
TL_CAST_VIA_FLOAT(half_t, float8_e5m2_t)
TL_CAST_VIA_FLOAT(bfloat16_t, float8_e4m3_t)
TL_CAST_VIA_FLOAT(bfloat16_t, float8_e5m2_t)
TL_CAST_VIA_FLOAT(float8_e4m3_t, half_t)
TL_CAST_VIA_FLOAT(float8_e4m3_t, bfloat16_t)
TL_CAST_VIA_FLOAT(float8_e4m3_t, float8_e5m2_t)
TL_CAST_VIA_FLOAT(float8_e5m2_t, half_t)
TL_CAST_VIA_FLOAT(float8_e5m2_t, bfloat16_t)
TL_CAST_VIA_FLOAT(float8_e5m2_t, float8_e4m3_t)
TL_CAST_VIA_FLOAT(float4_e2m1_t, half_t)
TL_CAST_VIA_FLOAT(float4_e2m1_t, bfloat16_t)
TL_CAST_VIA_FLOAT(float4_e2m1_t, float8_e4m3_t)
TL_CAST_VIA_FLOAT(float4_e2m1_t, float8_e5m2_t)
TL_CAST_VIA_FLOAT(half_t, float4_e2m1_t)
TL_CAST_VIA_FLOAT(bfloat16_t, float4_e2m1_t)
TL_CAST_VIA_FLOAT(float8_e4m3_t, float4_e2m1_t)
TL_CAST_VIA_FLOAT(float8_e5m2_t, float4_e2m1_t)
TL_CAST_VIA_FLOAT(float6_e2m3_t, half_t)
TL_CAST_VIA_FLOAT(float6_e2m3_t, bfloat16_t)
TL_CAST_VIA_FLOAT(float6_e3m2_t, half_t)
TL_CAST_VIA_FLOAT(float6_e3m2_t, bfloat16_t)
TL_CAST_VIA_FLOAT(half_t, float6_e2m3_t)
TL_CAST_VIA_FLOAT(bfloat16_t, float6_e2m3_t)
TL_CAST_VIA_FLOAT(half_t, float6_e3m2_t)
TL_CAST_VIA_FLOAT(bfloat16_t, float6_e3m2_t)
TL_CAST_VIA_FLOAT(float8_e8m0_t, half_t)
TL_CAST_VIA_FLOAT(float8_e8m0_t, bfloat16_t)
TL_CAST_VIA_FLOAT(half_t, float8_e8m0_t)
TL_CAST_VIA_FLOAT(bfloat16_t, float8_e8m0_t)
#undef TL_CAST_VIA_FLOAT

// Floating point to 8- and 16-bit integers saturates, NaN giving 0 (docs/semantics.md). C++ leaves an
// out-of-range conversion undefined and NVRTC converts through 32 bits and truncates (300.0f -> uint8 44: found
// by the PTX emulator); 32- and 64-bit conversions are cvt.rzi, which saturates.
#define TL_CAST_SATURATED(T, LO, HI)                                                         \
  template <>                                                                                 \
  __device__ __forceinline__ T cast<T, float>(float x) {                                      \
    return static_cast<T>(x != x ? 0.0f : fminf(fmaxf(x, LO), HI));                           \
  }                                                                                           \
  template <>                                                                                 \
  __device__ __forceinline__ T cast<T, double>(double x) {                                    \
    return static_cast<T>(x != x ? 0.0 : fmin(fmax(x, double(LO)), double(HI)));              \
  }                                                                                           \
  template <>                                                                                 \
  __device__ __forceinline__ T cast<T, half_t>(half_t x) { return cast<T, float>(float(x)); } \
  template <>                                                                                 \
  __device__ __forceinline__ T cast<T, bfloat16_t>(bfloat16_t x) {                            \
    return cast<T, float>(float(x));                                                          \
  }
TL_CAST_SATURATED(uint8_t, 0.0f, 255.0f)
TL_CAST_SATURATED(int8_t, -128.0f, 127.0f)
TL_CAST_SATURATED(uint16_t, 0.0f, 65535.0f)
TL_CAST_SATURATED(int16_t, -32768.0f, 32767.0f)
#undef TL_CAST_SATURATED

__device__ __forceinline__ double inf() { return __longlong_as_double(0x7ff0000000000000LL); }
__device__ __forceinline__ double nan() { return __longlong_as_double(0x7ff8000000000000LL); }
template <typename T>
__device__ __forceinline__ T lowest();
template <typename T>
__device__ __forceinline__ T highest();
template <>
__device__ __forceinline__ float lowest<float>() {
  return -3.402823466e38f;
}
template <>
__device__ __forceinline__ float highest<float>() {
  return 3.402823466e38f;
}
template <>
__device__ __forceinline__ int lowest<int>() {
  return -2147483647 - 1;
}
template <>
__device__ __forceinline__ int highest<int>() {
  return 2147483647;
}
// The other integer types and double (reductions and T.min_value / T.max_value of them).
#define TL_LIMITS(T, LO, HI)                  \
  template <>                                 \
  __device__ __forceinline__ T lowest<T>() {  \
    return LO;                                \
  }                                           \
  template <>                                 \
  __device__ __forceinline__ T highest<T>() { \
    return HI;                                \
  }
TL_LIMITS(signed char, -128, 127)
TL_LIMITS(unsigned char, 0, 255)
TL_LIMITS(short, -32768, 32767)
TL_LIMITS(unsigned short, 0, 65535)
TL_LIMITS(unsigned, 0u, 4294967295u)
TL_LIMITS(long, (-9223372036854775807L - 1), 9223372036854775807L)
TL_LIMITS(unsigned long, 0ul, 18446744073709551615ul)
TL_LIMITS(long long, (-9223372036854775807LL - 1), 9223372036854775807LL)
TL_LIMITS(unsigned long long, 0ull, 18446744073709551615ull)
TL_LIMITS(double, -1.7976931348623157e308, 1.7976931348623157e308)
#undef TL_LIMITS

// ---- integer and generic arithmetic ------------------------------------------------------------
// Integer division by zero gives 0 on every backend (docs/semantics.md); never undefined.
template <typename T>
__device__ __forceinline__ T floordiv(T a, T b) {
  if (b == 0) return T(0);
  if (b == T(-1)) return T(0) - a;
  T q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
template <typename T>
__device__ __forceinline__ T floormod(T a, T b) {
  return b == 0 ? T(0) : a - floordiv(a, b) * b;
}
// Floats: through floor (a % b on floats is floormod, as in Python).
__device__ __forceinline__ float floordiv(float a, float b) { return floorf(a / b); }
__device__ __forceinline__ double floordiv(double a, double b) { return ::floor(a / b); }
__device__ __forceinline__ float floormod(float a, float b) { return a - floorf(a / b) * b; }
__device__ __forceinline__ double floormod(double a, double b) { return a - ::floor(a / b) * b; }
__device__ __forceinline__ half_t floordiv(half_t a, half_t b) {
  return half_t(floordiv(float(a), float(b)));
}
__device__ __forceinline__ half_t floormod(half_t a, half_t b) {
  return half_t(floormod(float(a), float(b)));
}
__device__ __forceinline__ bfloat16_t floordiv(bfloat16_t a, bfloat16_t b) {
  return bfloat16_t(floordiv(float(a), float(b)));
}
__device__ __forceinline__ bfloat16_t floormod(bfloat16_t a, bfloat16_t b) {
  return bfloat16_t(floormod(float(a), float(b)));
}
template <typename A, typename B>
__device__ __forceinline__ auto min_(A a, B b) -> decltype(a + b) {
  return a < b ? a : b;
}
template <typename A, typename B>
__device__ __forceinline__ auto max_(A a, B b) -> decltype(a + b) {
  return a > b ? a : b;
}
__device__ __forceinline__ float min_(float a, float b) { return fminf(a, b); }
__device__ __forceinline__ float max_(float a, float b) { return fmaxf(a, b); }
__device__ __forceinline__ float fmod_(float a, float b) { return fmodf(a, b); }
__device__ __forceinline__ double fmod_(double a, double b) { return ::fmod(a, b); }

// ---- math: float and double; 16-bit types go through float ---------------------------------------
#define TL_UNARY(name, f32, f64)                                            \
  __device__ __forceinline__ float name(float x) { return f32(x); }         \
  __device__ __forceinline__ double name(double x) { return f64(x); }       \
  __device__ __forceinline__ float name(half_t x) { return f32(float(x)); } \
  __device__ __forceinline__ float name(bfloat16_t x) { return f32(float(x)); }
TL_UNARY(exp, expf, ::exp)
TL_UNARY(exp2, exp2f, ::exp2)
TL_UNARY(log, logf, ::log)
TL_UNARY(log2, log2f, ::log2)
TL_UNARY(sqrt, sqrtf, ::sqrt)
TL_UNARY(rsqrt, rsqrtf, ::rsqrt)
TL_UNARY(abs, fabsf, ::fabs)
TL_UNARY(tanh, tanhf, ::tanh)
TL_UNARY(sin, sinf, ::sin)
TL_UNARY(cos, cosf, ::cos)
TL_UNARY(floor, floorf, ::floor)
TL_UNARY(ceil, ceilf, ::ceil)
TL_UNARY(log10, log10f, ::log10)
TL_UNARY(erf, erff, ::erf)
TL_UNARY(round, rintf, ::rint)  // half to even, like the CPU backend and NumPy
TL_UNARY(trunc, truncf, ::trunc)
__device__ __forceinline__ float sigmoid_f32(float x) { return 1.f / (1.f + expf(-x)); }
__device__ __forceinline__ double sigmoid_f64(double x) { return 1.0 / (1.0 + ::exp(-x)); }
TL_UNARY(sigmoid, sigmoid_f32, sigmoid_f64)
#undef TL_UNARY
__device__ __forceinline__ int abs(int x) { return x < 0 ? -x : x; }
__device__ __forceinline__ float pow(float a, float b) { return powf(a, b); }
__device__ __forceinline__ double pow(double a, double b) { return ::pow(a, b); }
__device__ __forceinline__ float fma(float a, float b, float c) { return fmaf(a, b, c); }
__device__ __forceinline__ double fma(double a, double b, double c) { return ::fma(a, b, c); }

// ---- warp and memory primitives ------------------------------------------------------------------
__device__ __forceinline__ unsigned smem_addr(const void* p) {
  unsigned a;
  asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(a) : "l"(p));
  return a;
}

// The shared-memory operand of cp.async and ldmatrix is a 32-bit shared-window address. The code
// generator passes it as `smem_s + byte offset` (smem_s = smem_addr(smem) once per kernel), so the
// address arithmetic stays in 32 bits and needs no generic-to-shared conversion per access.
template <int Bytes>
__device__ __forceinline__ void cp_async(unsigned s, const void* gmem, bool valid) {
  int n = valid ? Bytes : 0;
  if (Bytes == 16)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(gmem), "r"(n) : "memory");
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(s), "l"(gmem), "n"(Bytes), "r"(n)
                 : "memory");
}
template <int Bytes>
__device__ __forceinline__ void cp_async(void* smem, const void* gmem, bool valid) {
  cp_async<Bytes>(smem_addr(smem), gmem, valid);
}
/// cp_async issued only where `run` holds, as one predicated instruction (no branch, so no divergent path
/// in a warp whose lanes differ).
template <int Bytes>
__device__ __forceinline__ void cp_async_if(unsigned s, const void* gmem, bool valid, bool run) {
  int n = valid ? Bytes : 0;
  if (Bytes == 16)
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %3, 0;\n@p cp.async.cg.shared.global [%0], [%1], 16, %2;\n}\n" ::"r"(s),
        "l"(gmem), "r"(n), "r"((int)run)
        : "memory");
  else
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\n@p cp.async.ca.shared.global [%0], [%1], %2, %3;\n}\n" ::"r"(s),
        "l"(gmem), "n"(Bytes), "r"(n), "r"((int)run)
        : "memory");
}
template <int Bytes>
__device__ __forceinline__ void cp_async_if(void* smem, const void* gmem, bool valid, bool run) {
  cp_async_if<Bytes>(smem_addr(smem), gmem, valid, run);
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

template <int Num, int Trans>
__device__ __forceinline__ void ldmatrix(void* dst, unsigned a) {
  unsigned* d = static_cast<unsigned*>(dst);
  if (Num == 4 && Trans)
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
                 : "r"(a));
  else if (Num == 4)
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
                 : "r"(a));
  else if (Num == 2 && Trans)
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];\n"
                 : "=r"(d[0]), "=r"(d[1])
                 : "r"(a));
  else if (Num == 2)
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];\n"
                 : "=r"(d[0]), "=r"(d[1])
                 : "r"(a));
  else if (Trans)
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];\n" : "=r"(d[0]) : "r"(a));
  else
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];\n" : "=r"(d[0]) : "r"(a));
}

template <int Num, int Trans>
__device__ __forceinline__ void ldmatrix(void* dst, const void* src) {
  ldmatrix<Num, Trans>(dst, smem_addr(src));
}

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
/// stmatrix (sm_90+): the inverse of ldmatrix. Lane 8q + r gives the shared address of row r of 8x8 matrix q;
/// register q of lane l holds its row l/4, columns 2*(l%4) and 2*(l%4)+1.
template <int Num, int Trans>
__device__ __forceinline__ void stmatrix(unsigned a, const void* src) {
  static_assert(Num == 4 && !Trans, "stmatrix: the .x4 form without .trans");
  const unsigned* s = static_cast<const unsigned*>(src);
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1,%2,%3,%4};\n" ::"r"(a), "r"(s[0]), "r"(s[1]),
               "r"(s[2]), "r"(s[3])
               : "memory");
}
#endif

// D = A * B + C for one m16n8k16 tile; C is updated in place.
__device__ __forceinline__ void mma_m16n8k16_f16(float* c, const void* a, const void* b) {
  const unsigned* A = static_cast<const unsigned*>(a);
  const unsigned* B = static_cast<const unsigned*>(b);
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(A[0]), "r"(A[1]), "r"(A[2]), "r"(A[3]), "r"(B[0]), "r"(B[1]));
}
// The same tile with float16 accumulators (mma .f16.f16.f16.f16): C's four elements are two f16x2 registers,
// at the positions of the float32 accumulator's c0..c3.
__device__ __forceinline__ void mma_m16n8k16_f16(half_t* c, const void* a, const void* b) {
  const unsigned* A = static_cast<const unsigned*>(a);
  const unsigned* B = static_cast<const unsigned*>(b);
  unsigned* Cr = reinterpret_cast<unsigned*>(c);
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, {%0,%1};\n"
      : "+r"(Cr[0]), "+r"(Cr[1])
      : "r"(A[0]), "r"(A[1]), "r"(A[2]), "r"(A[3]), "r"(B[0]), "r"(B[1]));
}
__device__ __forceinline__ void mma_m16n8k16_bf16(float* c, const void* a, const void* b) {
  const unsigned* A = static_cast<const unsigned*>(a);
  const unsigned* B = static_cast<const unsigned*>(b);
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(A[0]), "r"(A[1]), "r"(A[2]), "r"(A[3]), "r"(B[0]), "r"(B[1]));
}

// x rounded to TF32 (10-bit mantissa, round to nearest, ties away from zero: cvt.rna.tf32.f32), as a
// float whose low 13 bits are zero; the form mma.sync .tf32 operands take.
__device__ __forceinline__ float to_tf32(float x) {
  unsigned r;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
  return __uint_as_float(r);
}

// D = A * B + C for one m16n8k8 tile of TF32 operands (A 16x8 row-major: 4 floats, B 8x8 column-major:
// 2 floats, already rounded by to_tf32), float32 accumulators updated in place.
__device__ __forceinline__ void mma_m16n8k8_tf32(float* c, const void* a, const void* b) {
  const unsigned* A = static_cast<const unsigned*>(a);
  const unsigned* B = static_cast<const unsigned*>(b);
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(A[0]), "r"(A[1]), "r"(A[2]), "r"(A[3]), "r"(B[0]), "r"(B[1]));
}

// D = A * B + C for one m16n8k32 tile of int8 (A 16x32 row-major, B 32x8 column-major), int32
// accumulators updated in place; the fragments are the bytes of the m16n8k16 ones (PTX ISA).
__device__ __forceinline__ void mma_m16n8k32_s8(int* c, const void* a, const void* b) {
  const unsigned* A = static_cast<const unsigned*>(a);
  const unsigned* B = static_cast<const unsigned*>(b);
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
      : "r"(A[0]), "r"(A[1]), "r"(A[2]), "r"(A[3]), "r"(B[0]), "r"(B[1]));
}

// D = A * B + C for one m16n8k32 tile of fp8 (e4m3 / e5m2, A and B may differ), float32 accumulators
// updated in place; the fragments are those of int8 (sm_89 and newer).
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 890
#define TL_MMA_F8(TA, TB)                                                                            \
  __device__ __forceinline__ void mma_m16n8k32_##TA##_##TB(float* c, const void* a, const void* b) { \
    const unsigned* A = static_cast<const unsigned*>(a);                                             \
    const unsigned* B = static_cast<const unsigned*>(b);                                             \
    asm volatile("mma.sync.aligned.m16n8k32.row.col.f32." #TA "." #TB                                \
                 ".f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"                      \
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])                                    \
                 : "r"(A[0]), "r"(A[1]), "r"(A[2]), "r"(A[3]), "r"(B[0]), "r"(B[1]));                \
  }
TL_MMA_F8(e4m3, e4m3)
TL_MMA_F8(e4m3, e5m2)
TL_MMA_F8(e5m2, e4m3)
TL_MMA_F8(e5m2, e5m2)
#undef TL_MMA_F8
#endif

// D = (A * scale_A) (B * scale_B) + C for one m16n8k64 tile of NVFP4 or MXFP4 (sm_120a / sm_121a: mma.sync
// kind::mxf4nvf4 block_scale scale_vec::4X with ue4m3 scales, kind::mxf4 block_scale scale_vec::2X with ue8m0
// scales; e2m1 x e2m1), float32 accumulators updated in place. `a` / `b`: a lane's 4 / 2 registers of eight
// e2m1 values (the first in bits 0-3, PTX ISA "Matrix Fragments for mma.m16n8k64"); `sfa` / `sfb`: the lane's
// scale words, with the selectors {byte-id 0, thread-id TidA / TidB} (templates: instantiated, and assembled,
// only where used).
#define TL_MMA_K64_SCALED(NAME, KIND, STYPE)                                                                \
  template <int TidA, int TidB>                                                                             \
  __device__ __forceinline__ void mma_m16n8k64_##NAME##_packed(float* c, const void* a, const void* b,      \
                                                               uint32_t sfa, uint32_t sfb) {                \
    const uint32_t* A = static_cast<const uint32_t*>(a);                                                    \
    const uint32_t* B = static_cast<const uint32_t*>(b);                                                    \
    asm volatile(                                                                                           \
        "mma.sync.aligned.m16n8k64.row.col." KIND ".f32.e2m1.e2m1.f32." STYPE                               \
        " {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3}, {%10}, {%12,%13}, {%11}, {%12,%14};\n"      \
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])                                                    \
        : "r"(A[0]), "r"(A[1]), "r"(A[2]), "r"(A[3]), "r"(B[0]), "r"(B[1]), "r"(sfa), "r"(sfb),             \
          "h"(static_cast<uint16_t>(0)), "h"(static_cast<uint16_t>(TidA)),                                  \
          "h"(static_cast<uint16_t>(TidB)));                                                                \
  }                                                                                                         \
  /* the same from one code a byte: `a` / `b` hold a lane's 32 / 16 fp4 codes in register order (value      \
     8 r + e is nibble e of register r), packed here */                                                     \
  template <int TidA, int TidB>                                                                             \
  __device__ __forceinline__ void mma_m16n8k64_##NAME(float* c, const void* a, const void* b, uint32_t sfa, \
                                                      uint32_t sfb) {                                       \
    uint32_t A[4], B[2];                                                                                    \
    pack_e2m1_registers(static_cast<const unsigned char*>(a), A, 4);                                        \
    pack_e2m1_registers(static_cast<const unsigned char*>(b), B, 2);                                        \
    mma_m16n8k64_##NAME##_packed<TidA, TidB>(c, A, B, sfa, sfb);                                            \
  }

// n registers of eight e2m1 values (the first in bits 0-3) from 8 n codes one a byte (the low nibble)
__device__ __forceinline__ void pack_e2m1_registers(const unsigned char* p, uint32_t* r, int n) {
#pragma unroll
  for (int i = 0; i < n; ++i) {
    r[i] = 0;
#pragma unroll
    for (int e = 0; e < 8; ++e) r[i] |= static_cast<uint32_t>(p[8 * i + e] & 0xF) << (4 * e);
  }
}
TL_MMA_K64_SCALED(nvf4, "kind::mxf4nvf4.block_scale.scale_vec::4X", "ue4m3")
TL_MMA_K64_SCALED(mxf4, "kind::mxf4.block_scale.scale_vec::2X", "ue8m0")
#undef TL_MMA_K64_SCALED

// A .b32 register of kind::mxf8f6f4 (four values, one a byte) from four values as the tiles hold them (one a
// byte, low bits): 8-bit types as they are, fp6 in bits 0-5, fp4 moved from bits 0-3 to bits 2-5 (the byte
// containers the MMA reads; CUTLASS's SM120 traits shift e2m1 up by two and leave fp6 and fp8 alone).
template <int Bits>
__device__ __forceinline__ uint32_t f8f6f4_register(uint32_t w) {
  return Bits == 8 ? w : Bits == 6 ? (w & 0x3F3F3F3Fu) : ((w & 0x0F0F0F0Fu) << 2);
}

// D = (A * scale_A) (B * scale_B) + C for one m16n8k32 tile of MXFP8 / MXFP6 / MXFP4 in any mix (sm_120a /
// sm_121a: mma.sync kind::mxf8f6f4 block_scale scale_vec::1X with ue8m0 scales), float32 accumulators
// updated in place. `a` / `b`: a lane's 16 / 8 values in register order (the fragments of mma.m16n8k32 with
// 8-bit containers, four a register), one a byte; `sfa` / `sfb`: scale words whose byte 0 is the lane's E8M0
// scale (byte-id 0, thread-id TidA / TidB).
#define TL_MMA_MXF8F6F4(TA, BA, TB, BB)                                                                     \
  template <int TidA, int TidB>                                                                             \
  __device__ __forceinline__ void mma_m16n8k32_mxf8f6f4_##TA##_##TB(float* c, const void* a, const void* b, \
                                                                    uint32_t sfa, uint32_t sfb) {           \
    const uint32_t* A = static_cast<const uint32_t*>(a);                                                    \
    const uint32_t* B = static_cast<const uint32_t*>(b);                                                    \
    asm volatile(                                                                                           \
        "mma.sync.aligned.m16n8k32.row.col.kind::mxf8f6f4.block_scale.scale_vec::1X.f32." #TA "." #TB       \
        ".f32.ue8m0 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3}, {%10}, {%12,%13}, {%11}, "        \
        "{%12,%14};\n"                                                                                      \
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])                                                    \
        : "r"(f8f6f4_register<BA>(A[0])), "r"(f8f6f4_register<BA>(A[1])), "r"(f8f6f4_register<BA>(A[2])),   \
          "r"(f8f6f4_register<BA>(A[3])), "r"(f8f6f4_register<BB>(B[0])), "r"(f8f6f4_register<BB>(B[1])),   \
          "r"(sfa), "r"(sfb), "h"(static_cast<uint16_t>(0)), "h"(static_cast<uint16_t>(TidA)),              \
          "h"(static_cast<uint16_t>(TidB)));                                                                \
  }
#define TL_MMA_MXF8F6F4_A(TA, BA)  \
  TL_MMA_MXF8F6F4(TA, BA, e4m3, 8) \
  TL_MMA_MXF8F6F4(TA, BA, e5m2, 8) \
  TL_MMA_MXF8F6F4(TA, BA, e3m2, 6) \
  TL_MMA_MXF8F6F4(TA, BA, e2m3, 6) \
  TL_MMA_MXF8F6F4(TA, BA, e2m1, 4)
TL_MMA_MXF8F6F4_A(e4m3, 8)
TL_MMA_MXF8F6F4_A(e5m2, 8)
TL_MMA_MXF8F6F4_A(e3m2, 6)
TL_MMA_MXF8F6F4_A(e2m3, 6)
TL_MMA_MXF8F6F4_A(e2m1, 4)
#undef TL_MMA_MXF8F6F4_A
#undef TL_MMA_MXF8F6F4

/// The fence of an ordered T.atomic_add (a C++ memory order): fence.acq_rel.gpu (a release fence before a
/// relaxed read-modify-write makes it a release, an acquire fence after it an acquire: the PTX memory model's
/// fence-atomic synchronisation), fence.sc.gpu for seq_cst.
template <int Order>
__device__ __forceinline__ void memory_fence() {
  if (Order == 5)
    asm volatile("fence.sc.gpu;\n" ::: "memory");
  else if (Order != 0)
    asm volatile("fence.acq_rel.gpu;\n" ::: "memory");
}

/// T.atomic_load / T.atomic_store of a 32- or 64-bit element with a C++ memory order (0 relaxed, 2 acquire,
/// 3 release, 5 seq_cst), from the PTX memory consistency model: ld.relaxed / ld.acquire and st.relaxed /
/// st.release at gpu scope; seq_cst is a fence.sc before the acquire load or the relaxed store.
template <int Order, typename T>
__device__ __forceinline__ T atomic_load(const T* p) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "T.atomic_load takes 32- and 64-bit elements");
  if (Order == 5) asm volatile("fence.sc.gpu;\n" ::: "memory");
  if constexpr (sizeof(T) == 4) {
    unsigned v;
    if (Order == 0)
      asm volatile("ld.relaxed.gpu.b32 %0, [%1];\n" : "=r"(v) : "l"(p) : "memory");
    else
      asm volatile("ld.acquire.gpu.b32 %0, [%1];\n" : "=r"(v) : "l"(p) : "memory");
    return bit_cast<T>(v);
  } else {
    unsigned long long v;
    if (Order == 0)
      asm volatile("ld.relaxed.gpu.b64 %0, [%1];\n" : "=l"(v) : "l"(p) : "memory");
    else
      asm volatile("ld.acquire.gpu.b64 %0, [%1];\n" : "=l"(v) : "l"(p) : "memory");
    return bit_cast<T>(v);
  }
}
template <int Order, typename T>
__device__ __forceinline__ void atomic_store(T* p, T x) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "T.atomic_store takes 32- and 64-bit elements");
  if (Order == 5) asm volatile("fence.sc.gpu;\n" ::: "memory");
  if constexpr (sizeof(T) == 4) {
    const unsigned v = bit_cast<unsigned>(x);
    if (Order == 3)
      asm volatile("st.release.gpu.b32 [%0], %1;\n" ::"l"(p), "r"(v) : "memory");
    else
      asm volatile("st.relaxed.gpu.b32 [%0], %1;\n" ::"l"(p), "r"(v) : "memory");
  } else {
    const unsigned long long v = bit_cast<unsigned long long>(x);
    if (Order == 3)
      asm volatile("st.release.gpu.b64 [%0], %1;\n" ::"l"(p), "l"(v) : "memory");
    else
      asm volatile("st.relaxed.gpu.b64 [%0], %1;\n" ::"l"(p), "l"(v) : "memory");
  }
}

/// T.tvm_warp_shuffle: `v` of lane `lane` of the calling thread's group of `width` lanes.
template <typename T>
__device__ __forceinline__ T shfl_sync(unsigned mask, T v, int lane, int width) {
  return __shfl_sync(mask, v, lane, width);
}
/// Warp votes (T.any_sync / T.all_sync): non-zero where the predicate holds on any / every lane in `mask`.
__device__ __forceinline__ int any_sync(unsigned mask, bool p) { return __any_sync(mask, p); }
__device__ __forceinline__ int all_sync(unsigned mask, bool p) { return __all_sync(mask, p); }
__device__ __forceinline__ float shfl_xor(float v, int m) { return __shfl_xor_sync(0xffffffffu, v, m); }
__device__ __forceinline__ double shfl_xor(double v, int m) { return __shfl_xor_sync(0xffffffffu, v, m); }
__device__ __forceinline__ int shfl_xor(int v, int m) { return __shfl_xor_sync(0xffffffffu, v, m); }
// Unsigned and 64-bit integers have overloads of their own (uint32_t would match int, float and double
// equally: reductions of uint32 tiles did not compile).
__device__ __forceinline__ unsigned shfl_xor(unsigned v, int m) { return __shfl_xor_sync(0xffffffffu, v, m); }
__device__ __forceinline__ long shfl_xor(long v, int m) { return __shfl_xor_sync(0xffffffffu, v, m); }
__device__ __forceinline__ unsigned long shfl_xor(unsigned long v, int m) {
  return __shfl_xor_sync(0xffffffffu, v, m);
}
__device__ __forceinline__ long long shfl_xor(long long v, int m) {
  return __shfl_xor_sync(0xffffffffu, v, m);
}
__device__ __forceinline__ unsigned long long shfl_xor(unsigned long long v, int m) {
  return __shfl_xor_sync(0xffffffffu, v, m);
}

// T.atomic_add(..., return_prev=True): the element's value before the add (32- and 64-bit elements).
__device__ __forceinline__ int atomic_fetch_add(int* p, int v) { return atomicAdd(p, v); }
__device__ __forceinline__ unsigned atomic_fetch_add(unsigned* p, unsigned v) { return atomicAdd(p, v); }
__device__ __forceinline__ float atomic_fetch_add(float* p, float v) { return atomicAdd(p, v); }
__device__ __forceinline__ double atomic_fetch_add(double* p, double v) { return atomicAdd(p, v); }
__device__ __forceinline__ unsigned long long atomic_fetch_add(unsigned long long* p, unsigned long long v) {
  return atomicAdd(p, v);
}
template <typename T>  // the signed 64-bit spellings: two's complement
__device__ __forceinline__ T atomic_fetch_add_s64(T* p, T v) {
  return static_cast<T>(atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v)));
}
__device__ __forceinline__ long long atomic_fetch_add(long long* p, long long v) { return atomic_fetch_add_s64(p, v); }
__device__ __forceinline__ long atomic_fetch_add(long* p, long v) { return atomic_fetch_add_s64(p, v); }
__device__ __forceinline__ unsigned long atomic_fetch_add(unsigned long* p, unsigned long v) {
  return atomic_fetch_add_s64(p, v);
}

__device__ __forceinline__ void atomic_add(float* p, float v) { atomicAdd(p, v); }
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
/// 2 / 4 consecutive float32 atomic adds in one reduction (sm_90+; each element is added atomically on its
/// own). `p` is a global address aligned to the vector.
__device__ __forceinline__ void atomic_add_v2(float* p, float a, float b) {
  asm volatile("red.global.add.v2.f32 [%0], {%1, %2};" ::"l"(p), "f"(a), "f"(b) : "memory");
}
__device__ __forceinline__ void atomic_add_v4(float* p, float a, float b, float c, float d) {
  asm volatile("red.global.add.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(p), "f"(a), "f"(b), "f"(c), "f"(d) : "memory");
}
#endif
__device__ __forceinline__ void atomic_add(double* p, double v) { atomicAdd(p, v); }
__device__ __forceinline__ void atomic_add(int* p, int v) { atomicAdd(p, v); }
__device__ __forceinline__ void atomic_add(unsigned* p, unsigned v) { atomicAdd(p, v); }
// 64-bit integers: two's complement makes the signed addition the unsigned one.
__device__ __forceinline__ void atomic_add(unsigned long long* p, unsigned long long v) { atomicAdd(p, v); }
__device__ __forceinline__ void atomic_add(long long* p, long long v) {
  atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
}
__device__ __forceinline__ void atomic_add(long* p, long v) {  // int64_t under nvcc (LP64)
  atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
}
__device__ __forceinline__ void atomic_add(unsigned long* p, unsigned long v) {
  atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
}
template <int N>
struct AtomicBits;
template <>
struct AtomicBits<4> {
  using type = unsigned;
};
template <>
struct AtomicBits<8> {
  using type = unsigned long long;
};
// Atomic max / min of 32- and 64-bit elements by compare-and-swap on their bits: the element becomes v
// where v compares greater (less); a NaN never replaces a value and a NaN element stays.
template <typename T, bool Max>
__device__ __forceinline__ void atomic_extreme(T* p, T v) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "atomic max/min of 32- and 64-bit elements");
  using Bits = typename AtomicBits<sizeof(T)>::type;
  Bits* word = reinterpret_cast<Bits*>(p);
  Bits old = *reinterpret_cast<volatile Bits*>(word), assumed;
  do {
    assumed = old;
    T cur;
    memcpy(&cur, &assumed, sizeof(T));
    if (!(Max ? v > cur : v < cur)) return;
    Bits next;
    memcpy(&next, &v, sizeof(T));
    old = atomicCAS(word, assumed, next);
  } while (old != assumed);
}
template <typename T>
__device__ __forceinline__ void atomic_max(T* p, T v) {
  atomic_extreme<T, true>(p, v);
}
template <typename T>
__device__ __forceinline__ void atomic_min(T* p, T v) {
  atomic_extreme<T, false>(p, v);
}
// 8- and 16-bit integers: compare-and-swap on the aligned 32-bit word that holds the element;
// the sum wraps at the element's width.
template <typename T>
__device__ __forceinline__ void atomic_add_narrow(T* p, T v) {
  const unsigned long long addr = reinterpret_cast<unsigned long long>(p);
  unsigned* word = reinterpret_cast<unsigned*>(addr & ~3ull);
  const unsigned shift = static_cast<unsigned>(addr & 3ull) * 8u;
  const unsigned ones = (1u << (8u * sizeof(T))) - 1u, mask = ones << shift;
  unsigned old = *word, assumed;
  do {
    assumed = old;
    const T cur = static_cast<T>((assumed & mask) >> shift);
    const unsigned next = static_cast<unsigned>(static_cast<T>(cur + v)) & ones;
    old = atomicCAS(word, assumed, (assumed & ~mask) | (next << shift));
  } while (assumed != old);
}
__device__ __forceinline__ void atomic_add(signed char* p, signed char v) { atomic_add_narrow(p, v); }
__device__ __forceinline__ void atomic_add(unsigned char* p, unsigned char v) { atomic_add_narrow(p, v); }
__device__ __forceinline__ void atomic_add(short* p, short v) { atomic_add_narrow(p, v); }
__device__ __forceinline__ void atomic_add(unsigned short* p, unsigned short v) { atomic_add_narrow(p, v); }
__device__ __forceinline__ void atomic_add(half_t* p, float v) {
  half_t h(v);
  asm volatile("red.global.add.noftz.f16 [%0], %1;\n" ::"l"(p), "h"(h.bits) : "memory");
}

// T.print and T.device_assert (device printf; a failed assertion traps, which surfaces as a launch
// error after printing where it failed).
template <typename T>
__device__ __forceinline__ int print(const char* msg, T v) {
  printf("%s%.9g\n", msg, static_cast<double>(v));
  return 0;
}
__device__ __forceinline__ int print(const char* msg, half_t v) { return print(msg, float(v)); }
__device__ __forceinline__ int print(const char* msg, bfloat16_t v) { return print(msg, float(v)); }
__device__ __forceinline__ int device_assert(bool ok, const char* msg) {
  if (!ok) {
    printf("T.device_assert failed: %s (block %d %d %d, thread %d)\n", msg, (int)blockIdx.x, (int)blockIdx.y,
           (int)blockIdx.z, (int)threadIdx.x);
    __trap();
  }
  return 0;
}

// ---- vector global stores ----------------------------------------------------------------
/// One `N`-byte global store (N = 4, 8 or 16) of the register array at `src` to the N-aligned
/// global address `dst`, always as a single st.global(.v2/.v4) instruction.
template <int N>
__device__ __forceinline__ void st_global_vec(void* dst, const void* src);
template <>
__device__ __forceinline__ void st_global_vec<16>(void* dst, const void* src) {
  const uint32_t* s = reinterpret_cast<const uint32_t*>(src);
  asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(dst), "r"(s[0]), "r"(s[1]), "r"(s[2]),
               "r"(s[3])
               : "memory");
}
template <>
__device__ __forceinline__ void st_global_vec<8>(void* dst, const void* src) {
  const uint32_t* s = reinterpret_cast<const uint32_t*>(src);
  asm volatile("st.global.v2.b32 [%0], {%1, %2};" ::"l"(dst), "r"(s[0]), "r"(s[1]) : "memory");
}
template <>
__device__ __forceinline__ void st_global_vec<4>(void* dst, const void* src) {
  asm volatile("st.global.b32 [%0], %1;" ::"l"(dst), "r"(*reinterpret_cast<const uint32_t*>(src)) : "memory");
}

/// One `N`-byte shared store (N = 4, 8 or 16) of the register array at `src` to the N-aligned shared
/// address `dst` (a 32-bit shared-window offset), always as a single st.shared(.v2/.v4) instruction.
template <int N>
__device__ __forceinline__ void st_shared_vec(uint32_t dst, const void* src) {
  const uint32_t* s = reinterpret_cast<const uint32_t*>(src);
  if constexpr (N == 16)
    asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};" ::"r"(dst), "r"(s[0]), "r"(s[1]), "r"(s[2]),
                 "r"(s[3])
                 : "memory");
  else if constexpr (N == 8)
    asm volatile("st.shared.v2.b32 [%0], {%1, %2};" ::"r"(dst), "r"(s[0]), "r"(s[1]) : "memory");
  else
    asm volatile("st.shared.b32 [%0], %1;" ::"r"(dst), "r"(s[0]) : "memory");
}

/// tl.vector_store: the values `xs` (one per lane, converted to T) as one N-byte global store at
/// `dst` (N = sizeof(T) * lanes, N-aligned). A shared destination takes vector_store_shared: st.global
/// with the generic address of shared memory is not a shared store (the PTX emulator caught one).
template <int N, typename T, typename... Ts>
__device__ __forceinline__ void vector_store(T* dst, Ts... xs) {
  __align__(16) T lanes[sizeof...(Ts)] = {T(xs)...};
  if constexpr (N >= 8) {
    st_global_vec<N>(dst, lanes);
  } else {
    *reinterpret_cast<uint32_t*>(dst) = *reinterpret_cast<const uint32_t*>(lanes);
  }
}
/// tl.vector_store to a shared tile: the same as one N-byte st.shared.
template <int N, typename T, typename... Ts>
__device__ __forceinline__ void vector_store_shared(T* dst, Ts... xs) {
  __align__(16) T lanes[sizeof...(Ts)] = {T(xs)...};
  if constexpr (N >= 4) {
    st_shared_vec<N>(smem_addr(dst), lanes);
  } else {
    *reinterpret_cast<uint16_t*>(dst) = *reinterpret_cast<const uint16_t*>(lanes);
  }
}

/// tl.vector_load: N bytes from global `src` into the register chunk `dst` as one load, or zeros
/// when `valid` is false (a guarded tile load).
template <int N, typename T>
__device__ __forceinline__ void vector_load(T* dst, const T* src, bool valid) {
  if constexpr (N == 16) {
    *reinterpret_cast<uint4*>(dst) = valid ? *reinterpret_cast<const uint4*>(src) : uint4{0, 0, 0, 0};
  } else if constexpr (N == 8) {
    *reinterpret_cast<uint2*>(dst) = valid ? *reinterpret_cast<const uint2*>(src) : uint2{0, 0};
  } else {
    *reinterpret_cast<uint32_t*>(dst) = valid ? *reinterpret_cast<const uint32_t*>(src) : 0u;
  }
}

}  // namespace tl
