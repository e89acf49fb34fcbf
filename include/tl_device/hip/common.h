// TileLang-C++ device header for HIP on AMD CDNA (gfx90a, gfx940-942, gfx950): what the generated kernels
// call, built on clang's AMDGPU builtins only. The generated source is compiled with -nogpuinc
// (no hip_runtime.h: it alone is ~1.7 MB of preprocessed text), so this header declares the few
// things it needs itself.
#pragma once

typedef signed char int8_t;
typedef unsigned char uint8_t;
typedef short int16_t;
typedef unsigned short uint16_t;
typedef int int32_t;
typedef unsigned int uint32_t;
typedef long long int64_t;
typedef unsigned long long uint64_t;

#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __shared__ __attribute__((shared))
#define __launch_bounds__(n) __attribute__((amdgpu_flat_work_group_size(1, n)))
#define TL_DEV __attribute__((device)) __attribute__((always_inline)) inline

#include "fp8.h"

namespace tl {

// ---- registers and indices ------------------------------------------------------------------
/// threadIdx.x / blockIdx.{x,y,z}
// T.reinterpret: the bits of `x` as a value of `T` (same size).
template <typename T, typename F>
TL_DEV T bit_cast(F x) {
  static_assert(sizeof(T) == sizeof(F), "T.reinterpret between types of different sizes");
  T t;
  __builtin_memcpy(&t, &x, sizeof(T));
  return t;
}
TL_DEV int thread_x() { return static_cast<int>(__builtin_amdgcn_workitem_id_x()); }
TL_DEV int block_x() { return static_cast<int>(__builtin_amdgcn_workgroup_id_x()); }
TL_DEV int block_y() { return static_cast<int>(__builtin_amdgcn_workgroup_id_y()); }
TL_DEV int block_z() { return static_cast<int>(__builtin_amdgcn_workgroup_id_z()); }
/// __syncthreads: finish LDS and global traffic, then the work-group barrier.
TL_DEV void syncthreads() {
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}

// ---- 16-bit floats ----------------------------------------------------------------------------
/// float16 storage with round-to-nearest-even conversions (the hardware's v_cvt_f16_f32).
struct half_t {
  _Float16 v;
  half_t() = default;
  TL_DEV half_t(float f) : v(static_cast<_Float16>(f)) {}
  TL_DEV operator float() const { return static_cast<float>(v); }
};
/// bfloat16 storage; float -> bf16 rounds to nearest even (NaN stays NaN).
struct bfloat16_t {
  unsigned short bits;
  bfloat16_t() = default;
  TL_DEV bfloat16_t(float f) {
    unsigned u = __builtin_bit_cast(unsigned, f);
    if ((u & 0x7fffffffu) > 0x7f800000u)
      bits = static_cast<unsigned short>((u >> 16) | 0x40u);
    else
      bits = static_cast<unsigned short>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
  }
  TL_DEV operator float() const { return __builtin_bit_cast(float, static_cast<unsigned>(bits) << 16); }
};

template <typename T, typename F>
TL_DEV T cast(F x) {
  return static_cast<T>(x);
}
template <>
TL_DEV half_t cast<half_t, bfloat16_t>(bfloat16_t x) {
  return half_t(float(x));
}
template <>
TL_DEV bfloat16_t cast<bfloat16_t, half_t>(half_t x) {
  return bfloat16_t(float(x));
}

// Floating point to 8- and 16-bit integers saturates, NaN giving 0 (docs/semantics.md): C++ leaves an
// out-of-range conversion undefined, and the compilers convert through 32 bits and truncate (the CUDA header
// has the same specialisations; the PTX emulator showed the truncation there).
#define TL_CAST_SATURATED(T, LO, HI)                                                                \
  template <>                                                                                        \
  TL_DEV T cast<T, float>(float x) {                                                                 \
    return static_cast<T>(x != x ? 0.0f : __builtin_fminf(__builtin_fmaxf(x, LO), HI));              \
  }                                                                                                  \
  template <>                                                                                        \
  TL_DEV T cast<T, double>(double x) {                                                               \
    return static_cast<T>(x != x ? 0.0 : __builtin_fmin(__builtin_fmax(x, double(LO)), double(HI))); \
  }                                                                                                  \
  template <>                                                                                        \
  TL_DEV T cast<T, half_t>(half_t x) {                                                               \
    return cast<T, float>(float(x));                                                                 \
  }                                                                                                  \
  template <>                                                                                        \
  TL_DEV T cast<T, bfloat16_t>(bfloat16_t x) {                                                       \
    return cast<T, float>(float(x));                                                                 \
  }
TL_CAST_SATURATED(uint8_t, 0.0f, 255.0f)
TL_CAST_SATURATED(int8_t, -128.0f, 127.0f)
TL_CAST_SATURATED(uint16_t, 0.0f, 65535.0f)
TL_CAST_SATURATED(int16_t, -32768.0f, 32767.0f)
#undef TL_CAST_SATURATED

TL_DEV double inf() { return __builtin_inf(); }
TL_DEV double nan() { return __builtin_nan(""); }
template <typename T>
TL_DEV T lowest();
template <typename T>
TL_DEV T highest();
template <>
TL_DEV float lowest<float>() {
  return -3.402823466e38f;
}
template <>
TL_DEV float highest<float>() {
  return 3.402823466e38f;
}
template <>
TL_DEV int lowest<int>() {
  return -2147483647 - 1;
}
template <>
TL_DEV int highest<int>() {
  return 2147483647;
}
// The other integer types and double (reductions and T.min_value / T.max_value of them).
#define TL_LIMITS(T, LO, HI) \
  template <>                \
  TL_DEV T lowest<T>() {     \
    return LO;               \
  }                          \
  template <>                \
  TL_DEV T highest<T>() {    \
    return HI;               \
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

// ---- arithmetic (floor semantics of docs/semantics.md) --------------------------------------
template <typename T>
TL_DEV T floordiv(T a, T b) {
  if (b == 0) return T(0);
  if (b == T(-1)) return T(0) - a;
  T q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
template <typename T>
TL_DEV T floormod(T a, T b) {
  return b == 0 ? T(0) : a - floordiv(a, b) * b;
}
TL_DEV float floordiv(float a, float b) { return __builtin_floorf(a / b); }
TL_DEV double floordiv(double a, double b) { return __builtin_floor(a / b); }
TL_DEV float floormod(float a, float b) { return a - __builtin_floorf(a / b) * b; }
TL_DEV double floormod(double a, double b) { return a - __builtin_floor(a / b) * b; }
template <typename A, typename B>
TL_DEV auto min_(A a, B b) -> decltype(a + b) {
  return a < b ? a : b;
}
template <typename A, typename B>
TL_DEV auto max_(A a, B b) -> decltype(a + b) {
  return a > b ? a : b;
}
TL_DEV float min_(float a, float b) { return __builtin_fminf(a, b); }
TL_DEV float max_(float a, float b) { return __builtin_fmaxf(a, b); }
TL_DEV float fmod_(float a, float b) { return __builtin_fmodf(a, b); }
TL_DEV double fmod_(double a, double b) { return __builtin_fmod(a, b); }

// ---- math ------------------------------------------------------------------------------------
#ifndef TL_HIP_NO_DEVICE_LIBS
// The OCML device library (linked by hipcc from rocm-device-libs, by hand for gfx942).
extern "C" {
#define TL_OCML(name)                          \
  __device__ float __ocml_##name##_f32(float); \
  __device__ double __ocml_##name##_f64(double);
TL_OCML(exp)
TL_OCML(exp2)
TL_OCML(log)
TL_OCML(log2)
TL_OCML(log10)
TL_OCML(sqrt) TL_OCML(rsqrt) TL_OCML(fabs) TL_OCML(tanh) TL_OCML(sin) TL_OCML(cos) TL_OCML(floor)
    TL_OCML(ceil) TL_OCML(erf) TL_OCML(rint) TL_OCML(trunc)
#undef TL_OCML
        __device__ float __ocml_pow_f32(float, float);
__device__ double __ocml_pow_f64(double, double);
}
#define TL_UNARY(name, ocml)                                            \
  TL_DEV float name(float x) { return __ocml_##ocml##_f32(x); }         \
  TL_DEV double name(double x) { return __ocml_##ocml##_f64(x); }       \
  TL_DEV float name(half_t x) { return __ocml_##ocml##_f32(float(x)); } \
  TL_DEV float name(bfloat16_t x) { return __ocml_##ocml##_f32(float(x)); }
TL_UNARY(exp, exp)
TL_UNARY(exp2, exp2)
TL_UNARY(log, log)
TL_UNARY(log2, log2)
TL_UNARY(log10, log10)
TL_UNARY(sqrt, sqrt)
TL_UNARY(rsqrt, rsqrt)
TL_UNARY(abs, fabs)
TL_UNARY(tanh, tanh)
TL_UNARY(sin, sin)
TL_UNARY(cos, cos)
TL_UNARY(floor, floor)
TL_UNARY(ceil, ceil)
TL_UNARY(erf, erf)
TL_UNARY(round, rint)  // half to even, like the CPU backend and NumPy
TL_UNARY(trunc, trunc)
#undef TL_UNARY
TL_DEV float pow(float a, float b) { return __ocml_pow_f32(a, b); }
TL_DEV double pow(double a, double b) { return __ocml_pow_f64(a, b); }
#else
// No device libraries (gfx950, built by ziglang's clang): the backend's own lowerings and math.h.
}  // namespace tl
#include "math.h"
namespace tl {
#define TL_UNARY(name, f32, f64)                        \
  TL_DEV float name(float x) { return f32(x); }         \
  TL_DEV double name(double x) { return f64(x); }       \
  TL_DEV float name(half_t x) { return f32(float(x)); } \
  TL_DEV float name(bfloat16_t x) { return f32(float(x)); }
TL_UNARY(exp, __builtin_expf, hipmath::exp_f64)
TL_UNARY(exp2, __builtin_exp2f, hipmath::exp2_f64)
TL_UNARY(log, __builtin_logf, hipmath::log_f64)
TL_UNARY(log2, __builtin_log2f, hipmath::log2_f64)
TL_UNARY(log10, __builtin_log10f, hipmath::log10_f64)
TL_UNARY(sqrt, __builtin_sqrtf, __builtin_sqrt)
TL_UNARY(abs, __builtin_fabsf, __builtin_fabs)
TL_UNARY(tanh, hipmath::tanh_f32, hipmath::tanh_f64)
TL_UNARY(sin, hipmath::sin_f32, hipmath::sin_f64)
TL_UNARY(cos, hipmath::cos_f32, hipmath::cos_f64)
TL_UNARY(floor, __builtin_floorf, __builtin_floor)
TL_UNARY(ceil, __builtin_ceilf, __builtin_ceil)
TL_UNARY(erf, hipmath::erf_f32, hipmath::erf_f64)
TL_UNARY(round, __builtin_rintf, __builtin_rint)  // half to even, like the CPU backend and NumPy
TL_UNARY(trunc, __builtin_truncf, __builtin_trunc)
#undef TL_UNARY
TL_DEV float rsqrt(float x) { return 1.0f / __builtin_sqrtf(x); }
TL_DEV double rsqrt(double x) { return 1.0 / __builtin_sqrt(x); }
TL_DEV float rsqrt(half_t x) { return rsqrt(float(x)); }
TL_DEV float rsqrt(bfloat16_t x) { return rsqrt(float(x)); }
TL_DEV float pow(float a, float b) { return hipmath::pow_f32(a, b); }
TL_DEV double pow(double a, double b) { return hipmath::pow_f64(a, b); }
#endif
TL_DEV float sigmoid(float x) { return 1.f / (1.f + exp(-x)); }
TL_DEV double sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }
TL_DEV float sigmoid(half_t x) { return sigmoid(float(x)); }
TL_DEV float sigmoid(bfloat16_t x) { return sigmoid(float(x)); }
TL_DEV int abs(int x) { return x < 0 ? -x : x; }
TL_DEV float fma(float a, float b, float c) { return __builtin_fmaf(a, b, c); }
TL_DEV double fma(double a, double b, double c) { return __builtin_fma(a, b, c); }

// ---- MFMA (CDNA matrix cores), one wave64 each --------------------------------------------------
typedef _Float16 f16x4 __attribute__((ext_vector_type(4)));
typedef short i16x4 __attribute__((ext_vector_type(4)));
typedef float f32x4 __attribute__((ext_vector_type(4)));
typedef float f32x16 __attribute__((ext_vector_type(16)));
/// v_mfma_f32_16x16x16f16: c (4 floats per lane) += a (4 halves) * b (4 halves).
TL_DEV void mfma_16x16x16_f16(float* c, const void* a, const void* b) {
  f32x4 acc = *reinterpret_cast<const f32x4*>(c);
  acc = __builtin_amdgcn_mfma_f32_16x16x16f16(*reinterpret_cast<const f16x4*>(a),
                                              *reinterpret_cast<const f16x4*>(b), acc, 0, 0, 0);
  *reinterpret_cast<f32x4*>(c) = acc;
}
/// v_mfma_f32_16x16x16bf16_1k (gfx90a+): the bf16 form with 4 elements per lane.
TL_DEV void mfma_16x16x16_bf16(float* c, const void* a, const void* b) {
  f32x4 acc = *reinterpret_cast<const f32x4*>(c);
  acc = __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(*reinterpret_cast<const i16x4*>(a),
                                                  *reinterpret_cast<const i16x4*>(b), acc, 0, 0, 0);
  *reinterpret_cast<f32x4*>(c) = acc;
}
/// v_mfma_f32_32x32x8f16: c (16 floats per lane) += a (4 halves) * b (4 halves).
TL_DEV void mfma_32x32x8_f16(float* c, const void* a, const void* b) {
  f32x16 acc = *reinterpret_cast<const f32x16*>(c);
  acc = __builtin_amdgcn_mfma_f32_32x32x8f16(*reinterpret_cast<const f16x4*>(a),
                                             *reinterpret_cast<const f16x4*>(b), acc, 0, 0, 0);
  *reinterpret_cast<f32x16*>(c) = acc;
}
/// v_mfma_f32_32x32x8bf16_1k.
TL_DEV void mfma_32x32x8_bf16(float* c, const void* a, const void* b) {
  f32x16 acc = *reinterpret_cast<const f32x16*>(c);
  acc = __builtin_amdgcn_mfma_f32_32x32x8bf16_1k(*reinterpret_cast<const i16x4*>(a),
                                                 *reinterpret_cast<const i16x4*>(b), acc, 0, 0, 0);
  *reinterpret_cast<f32x16*>(c) = acc;
}

// v_mfma_f32_16x16x32_{fp8,bf8}_{fp8,bf8} (gfx940+): c (4 floats per lane) += a (8 bytes) * b (8 bytes)
// in the FNUZ formats (fp8 = E4M3FNUZ, bf8 = E5M2FNUZ); the lowering re-encodes OCP operands first
// (fp8_to_fnuz, fp8.h) and scales the accumulator.
#if defined(__gfx940__) || defined(__gfx941__) || defined(__gfx942__)
#define TL_MFMA_FP8(ab, AB)                                                                         \
  TL_DEV void mfma_16x16x32_##ab(float* c, const void* a, const void* b) {                          \
    f32x4 acc = *reinterpret_cast<const f32x4*>(c);                                                 \
    acc = __builtin_amdgcn_mfma_f32_16x16x32_##AB(*reinterpret_cast<const long*>(a),                \
                                                  *reinterpret_cast<const long*>(b), acc, 0, 0, 0); \
    *reinterpret_cast<f32x4*>(c) = acc;                                                             \
  }
TL_MFMA_FP8(fp8_fp8, fp8_fp8)
TL_MFMA_FP8(fp8_bf8, fp8_bf8)
TL_MFMA_FP8(bf8_fp8, bf8_fp8)
TL_MFMA_FP8(bf8_bf8, bf8_bf8)
#undef TL_MFMA_FP8
#endif

#if defined(__gfx950__)
// CDNA4: the f16 / bf16 MFMAs with 8 k a lane (c += a (8 elements) * b (8 elements)), and the fp8 ones
// reading the OCP formats the tensors hold (E4M3FN as "fp8", E5M2 as "bf8"; named e4m3 / e5m2 here).
typedef _Float16 f16x8 __attribute__((ext_vector_type(8)));
typedef __bf16 bf16x8 __attribute__((ext_vector_type(8)));
#define TL_MFMA_K8(SHAPE, ACC, ab, VEC)                                                             \
  TL_DEV void mfma_##SHAPE##_##ab(float* c, const void* a, const void* b) {                         \
    ACC acc = *reinterpret_cast<const ACC*>(c);                                                     \
    acc = __builtin_amdgcn_mfma_f32_##SHAPE##_##ab(*reinterpret_cast<const VEC*>(a),                \
                                                   *reinterpret_cast<const VEC*>(b), acc, 0, 0, 0); \
    *reinterpret_cast<ACC*>(c) = acc;                                                               \
  }
TL_MFMA_K8(16x16x32, f32x4, f16, f16x8)
TL_MFMA_K8(16x16x32, f32x4, bf16, bf16x8)
TL_MFMA_K8(32x32x16, f32x16, f16, f16x8)
TL_MFMA_K8(32x32x16, f32x16, bf16, bf16x8)
#undef TL_MFMA_K8
#define TL_MFMA_OCP(SHAPE, ACC, ab, AB)                                                              \
  TL_DEV void mfma_##SHAPE##_##ab(float* c, const void* a, const void* b) {                          \
    ACC acc = *reinterpret_cast<const ACC*>(c);                                                      \
    acc = __builtin_amdgcn_mfma_f32_##SHAPE##_##AB(*reinterpret_cast<const long*>(a),                \
                                                   *reinterpret_cast<const long*>(b), acc, 0, 0, 0); \
    *reinterpret_cast<ACC*>(c) = acc;                                                                \
  }
#define TL_MFMA_OCP_SHAPES(ab, AB)     \
  TL_MFMA_OCP(16x16x32, f32x4, ab, AB) \
  TL_MFMA_OCP(32x32x16, f32x16, ab, AB)
TL_MFMA_OCP_SHAPES(e4m3_e4m3, fp8_fp8)
TL_MFMA_OCP_SHAPES(e4m3_e5m2, fp8_bf8)
TL_MFMA_OCP_SHAPES(e5m2_e4m3, bf8_fp8)
TL_MFMA_OCP_SHAPES(e5m2_e5m2, bf8_bf8)
#undef TL_MFMA_OCP_SHAPES
#undef TL_MFMA_OCP
// The f8f6f4 family, unscaled (scale operands 0: the compiler selects
// v_mfma_f32_{16x16x128,32x32x64}_f8f6f4): 32 values a lane; cbsz / blgp give A's / B's format (0 E4M3,
// 1 E5M2: 32 bytes in 8 VGPRs; 4 E2M1: 16 bytes in the low 4 VGPRs, two values a byte, the lower k in the
// low nibble: tl.fp4_pack puts a fragment's one-a-byte fp4 values so).
typedef int i32x8 __attribute__((ext_vector_type(8)));
/// Four one-a-byte fp4 codes (low nibbles of a word) as 16 bits of nibbles, the first the lowest.
TL_DEV unsigned fp4_nibbles(unsigned w) {
  w &= 0x0f0f0f0fu;
  w = (w | (w >> 4)) & 0x00ff00ffu;
  return (w | (w >> 8)) & 0xffffu;
}
/// tl.fp4_pack: N one-a-byte fp4 codes of a lane's registers packed in place into N / 2 bytes, two a byte,
/// the other N / 2 bytes zero: the register format of the MFMA's FP4 operands. Ordered: value 2i in the low
/// nibble of byte i, 2i + 1 in the high one. Interleaved (used when both operands are fp4: the MFMA pairs A's
/// and B's value v, so packing both alike permutes k in both and leaves the sum): values i and i + 4 of each
/// 8 in byte i of their word, a mask and a shift-or a word. Done once per loaded fragment, not per MFMA.
template <int N, bool Interleaved>
TL_DEV void fp4_pack(void* p) {
  static_assert(N % 8 == 0, "fp4_pack packs whole words");
  unsigned w[N / 4];
  __builtin_memcpy(w, p, N);
  for (int q = 0; q < N / 4; ++q)
    w[q] = q >= N / 8    ? 0u
           : Interleaved ? (w[2 * q] & 0x0f0f0f0fu) | ((w[2 * q + 1] & 0x0f0f0f0fu) << 4)
                         : fp4_nibbles(w[2 * q]) | (fp4_nibbles(w[2 * q + 1]) << 16);
  __builtin_memcpy(p, w, N);
}
/// tl.fp6_pack: N one-a-byte fp6 codes (the low 6 bits of each byte) of a lane's registers packed in place
/// into a contiguous 6-bit stream of 3N / 4 bytes, value v at bits 6v .. 6v + 5 (four values in three bytes,
/// the first lowest), the rest zero: fp6 operands of the f8f6f4 MFMAs take 24 bytes in 6 VGPRs (formats 2 /
/// 3).
template <int N>
TL_DEV void fp6_pack(void* p) {
  static_assert(N % 16 == 0, "fp6_pack packs whole words");
  unsigned w[N / 4], o[N / 4];
  __builtin_memcpy(w, p, N);
  for (int q = 0; q < N / 4; ++q) o[q] = 0u;
  for (int q = 0; q < N / 4; ++q) {  // word q's four codes: 24 bits at bit 24 q of the stream
    const unsigned x = w[q] & 0x3f3f3f3fu;
    const unsigned b24 = (x & 0x3fu) | ((x >> 2) & 0xfc0u) | ((x >> 4) & 0x3f000u) | ((x >> 6) & 0xfc0000u);
    const int bit = 24 * q, wi = bit / 32, sh = bit % 32;
    o[wi] |= b24 << sh;
    if (sh > 8) o[wi + 1] |= b24 >> (32 - sh);
  }
  __builtin_memcpy(p, o, N);
}
/// A lane's 32 operand values (32 bytes; fp4 ones already packed into the first 16 by fp4_pack, fp6 ones into
/// the first 24 by fp6_pack, the rest zero: said again here so that the compiler knows it and keeps the
/// operand in 4 or 6 VGPRs).
template <int fmt>
TL_DEV i32x8 f8f6f4_operand(const void* p) {
  i32x8 v; /* (the operand arrays are 16-byte aligned: copied, not reinterpreted) */
  __builtin_memcpy(&v, p, 32);
  if (fmt == 4) v.hi = 0;
  if (fmt == 2 || fmt == 3) v.s67 = 0;
  return v;
}
#define TL_MFMA_F8F6F4(SHAPE, ACC, ab, FA, FB)                                               \
  TL_DEV void mfma_##SHAPE##_##ab(float* c, const void* a, const void* b) {                  \
    ACC acc = *reinterpret_cast<const ACC*>(c);                                              \
    const i32x8 av = f8f6f4_operand<FA>(a), bv = f8f6f4_operand<FB>(b);                      \
    acc = __builtin_amdgcn_mfma_scale_f32_##SHAPE##_f8f6f4(av, bv, acc, FA, FB, 0, 0, 0, 0); \
    *reinterpret_cast<ACC*>(c) = acc;                                                        \
  }
// v_mfma_scale_f32_*_f8f6f4 (T.mma_gemm_blockscaled): the same with each lane's scale word for its 32-value
// block of A and of B, the E8M0 scale its byte OA / OB (op_sel; 0 unless the IR names one).
#define TL_MFMA_SCALE(SHAPE, ACC, ab, FA, FB)                                                     \
  template <int OA = 0, int OB = 0>                                                               \
  TL_DEV void mfma_scale_##SHAPE##_##ab(float* c, const void* a, const void* b, int sa, int sb) { \
    ACC acc = *reinterpret_cast<const ACC*>(c);                                                   \
    const i32x8 av = f8f6f4_operand<FA>(a), bv = f8f6f4_operand<FB>(b);                           \
    acc = __builtin_amdgcn_mfma_scale_f32_##SHAPE##_f8f6f4(av, bv, acc, FA, FB, OA, sa, OB, sb);  \
    *reinterpret_cast<ACC*>(c) = acc;                                                             \
  }
#define TL_MFMA_F8F6F4_SHAPES(ab, FA, FB)      \
  TL_MFMA_F8F6F4(16x16x128, f32x4, ab, FA, FB) \
  TL_MFMA_F8F6F4(32x32x64, f32x16, ab, FA, FB) \
  TL_MFMA_SCALE(16x16x128, f32x4, ab, FA, FB)  \
  TL_MFMA_SCALE(32x32x64, f32x16, ab, FA, FB)
TL_MFMA_F8F6F4_SHAPES(e4m3_e4m3, 0, 0)
TL_MFMA_F8F6F4_SHAPES(e4m3_e5m2, 0, 1)
TL_MFMA_F8F6F4_SHAPES(e5m2_e4m3, 1, 0)
TL_MFMA_F8F6F4_SHAPES(e5m2_e5m2, 1, 1)
TL_MFMA_F8F6F4_SHAPES(e2m1_e2m1, 4, 4)
TL_MFMA_F8F6F4_SHAPES(e2m1_e4m3, 4, 0)
TL_MFMA_F8F6F4_SHAPES(e2m1_e5m2, 4, 1)
TL_MFMA_F8F6F4_SHAPES(e4m3_e2m1, 0, 4)
TL_MFMA_F8F6F4_SHAPES(e5m2_e2m1, 1, 4)
// fp6 (2 E2M3, 3 E3M2) with every format
TL_MFMA_F8F6F4_SHAPES(e2m3_e2m3, 2, 2)
TL_MFMA_F8F6F4_SHAPES(e2m3_e3m2, 2, 3)
TL_MFMA_F8F6F4_SHAPES(e3m2_e2m3, 3, 2)
TL_MFMA_F8F6F4_SHAPES(e3m2_e3m2, 3, 3)
TL_MFMA_F8F6F4_SHAPES(e2m3_e4m3, 2, 0)
TL_MFMA_F8F6F4_SHAPES(e2m3_e5m2, 2, 1)
TL_MFMA_F8F6F4_SHAPES(e2m3_e2m1, 2, 4)
TL_MFMA_F8F6F4_SHAPES(e3m2_e4m3, 3, 0)
TL_MFMA_F8F6F4_SHAPES(e3m2_e5m2, 3, 1)
TL_MFMA_F8F6F4_SHAPES(e3m2_e2m1, 3, 4)
TL_MFMA_F8F6F4_SHAPES(e4m3_e2m3, 0, 2)
TL_MFMA_F8F6F4_SHAPES(e5m2_e2m3, 1, 2)
TL_MFMA_F8F6F4_SHAPES(e2m1_e2m3, 4, 2)
TL_MFMA_F8F6F4_SHAPES(e4m3_e3m2, 0, 3)
TL_MFMA_F8F6F4_SHAPES(e5m2_e3m2, 1, 3)
TL_MFMA_F8F6F4_SHAPES(e2m1_e3m2, 4, 3)
#undef TL_MFMA_F8F6F4_SHAPES
#undef TL_MFMA_SCALE
#undef TL_MFMA_F8F6F4
#endif

// ---- cross-lane ---------------------------------------------------------------------------------
/// Wave votes (T.any_sync / T.all_sync) over the active lanes of the wave of 64 (the lowering takes only the
/// full lane mask here, which is unused): from the wave's ballot of the predicate, the
/// 64-bit mask of active lanes where `p != 0` (v_cmp_ne into an SGPR pair; 33 is LLVM's ICMP_NE).
TL_DEV unsigned long long ballot64(bool p) { return __builtin_amdgcn_uicmpl(p ? 1ull : 0ull, 0ull, 33); }
TL_DEV int any_sync(unsigned, bool p) { return ballot64(p) != 0; }
TL_DEV int all_sync(unsigned, bool p) { return ballot64(!p) == 0; }
/// __shfl_xor over a wave64: lane l reads lane l ^ m (ds_bpermute, addresses in bytes).
TL_DEV int shfl_xor(int v, int m) {
  int self = __builtin_amdgcn_mbcnt_hi(~0u, __builtin_amdgcn_mbcnt_lo(~0u, 0u));
  return __builtin_amdgcn_ds_bpermute((self ^ m) << 2, v);
}
/// T.tvm_warp_shuffle over a wave64: `v` of lane `lane` of the calling lane's group of `width` lanes (the
/// lowering takes only the full lane mask here, which is unused).
TL_DEV int shfl_sync(unsigned, int v, int lane, int width) {
  int self = __builtin_amdgcn_mbcnt_hi(~0u, __builtin_amdgcn_mbcnt_lo(~0u, 0u));
  int src = (self & ~(width - 1)) | (lane & (width - 1));
  return __builtin_amdgcn_ds_bpermute(src << 2, v);
}
TL_DEV unsigned shfl_sync(unsigned m, unsigned v, int lane, int width) {
  return static_cast<unsigned>(shfl_sync(m, static_cast<int>(v), lane, width));
}
TL_DEV float shfl_sync(unsigned m, float v, int lane, int width) {
  return __builtin_bit_cast(float, shfl_sync(m, __builtin_bit_cast(int, v), lane, width));
}
TL_DEV float shfl_xor(float v, int m) {
  return __builtin_bit_cast(float, shfl_xor(__builtin_bit_cast(int, v), m));
}
TL_DEV long long shfl_xor(long long u, int m) {
  int lo = shfl_xor(static_cast<int>(u), m), hi = shfl_xor(static_cast<int>(u >> 32), m);
  return (static_cast<long long>(hi) << 32) | static_cast<unsigned>(lo);
}
TL_DEV double shfl_xor(double v, int m) {
  return __builtin_bit_cast(double, shfl_xor(__builtin_bit_cast(long long, v), m));
}
// Unsigned and 64-bit integers by their bits (uint32_t would match int, float and double equally).
TL_DEV unsigned shfl_xor(unsigned v, int m) {
  return static_cast<unsigned>(shfl_xor(static_cast<int>(v), m));
}
TL_DEV long shfl_xor(long v, int m) { return static_cast<long>(shfl_xor(static_cast<long long>(v), m)); }
TL_DEV unsigned long shfl_xor(unsigned long v, int m) {
  return static_cast<unsigned long>(shfl_xor(static_cast<long long>(v), m));
}
TL_DEV unsigned long long shfl_xor(unsigned long long v, int m) {
  return static_cast<unsigned long long>(shfl_xor(static_cast<long long>(v), m));
}

// ---- atomics ------------------------------------------------------------------------------------
template <typename T>
TL_DEV void atomic_add(T* p, T v) {
  __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}
TL_DEV void atomic_add(float* p, float v) { __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }
// T.atomic_add(..., return_prev=True): the element's value before the add (32- and 64-bit elements).
template <typename T>
TL_DEV T atomic_fetch_add(T* p, T v) {
  return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}
TL_DEV void atomic_add(double* p, double v) { __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }
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
/// The fence of an ordered T.atomic_add (a C++ memory order): __atomic_thread_fence (system scope, which
/// includes the device).
template <int Order>
TL_DEV void memory_fence() {
  if constexpr (Order != 0) __atomic_thread_fence(Order);
}
/// T.atomic_load / T.atomic_store: a 32- or 64-bit element read / written atomically with a C++ memory
/// order (0 relaxed, 2 acquire, 3 release, 5 seq_cst), by clang's __atomic builtins on the element's bits.
template <int Order, typename T>
TL_DEV T atomic_load(const T* p) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "T.atomic_load takes 32- and 64-bit elements");
  using Bits = typename AtomicBits<sizeof(T)>::type;
  return __builtin_bit_cast(T, __atomic_load_n(reinterpret_cast<const Bits*>(p), Order));
}
template <int Order, typename T>
TL_DEV void atomic_store(T* p, T x) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "T.atomic_store takes 32- and 64-bit elements");
  using Bits = typename AtomicBits<sizeof(T)>::type;
  __atomic_store_n(reinterpret_cast<Bits*>(p), __builtin_bit_cast(Bits, x), Order);
}
/// Atomic max / min of 32- and 64-bit elements by compare-and-swap on their bits: the element becomes v
/// where v compares greater (less); a NaN never replaces a value and a NaN element stays.
template <typename T, bool Max>
TL_DEV void atomic_extreme(T* p, T v) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "atomic max/min of 32- and 64-bit elements");
  using Bits = typename AtomicBits<sizeof(T)>::type;
  Bits* word = reinterpret_cast<Bits*>(p);
  Bits old = __atomic_load_n(word, __ATOMIC_RELAXED);
  for (;;) {
    T cur = __builtin_bit_cast(T, old);
    if (!(Max ? v > cur : v < cur)) return;
    if (__atomic_compare_exchange_n(word, &old, __builtin_bit_cast(Bits, v), false, __ATOMIC_RELAXED,
                                    __ATOMIC_RELAXED))
      return;
  }
}
template <typename T>
TL_DEV void atomic_max(T* p, T v) {
  atomic_extreme<T, true>(p, v);
}
template <typename T>
TL_DEV void atomic_min(T* p, T v) {
  atomic_extreme<T, false>(p, v);
}
/// float16 by compare-and-swap of the enclosing 32-bit word.
TL_DEV void atomic_add(half_t* p, float v) {
  unsigned long long addr = reinterpret_cast<unsigned long long>(p);
  unsigned* word = reinterpret_cast<unsigned*>(addr & ~3ull);
  unsigned shift = static_cast<unsigned>(addr & 2ull) * 8u;
  unsigned old = __atomic_load_n(word, __ATOMIC_RELAXED), next;
  do {
    half_t cur;
    cur.v = __builtin_bit_cast(_Float16, static_cast<unsigned short>(old >> shift));
    half_t sum(float(cur) + v);
    next = (old & ~(0xffffu << shift)) |
           (static_cast<unsigned>(__builtin_bit_cast(unsigned short, sum.v)) << shift);
  } while (!__atomic_compare_exchange_n(word, &old, next, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
}

/// T.print: declared only. The backend refuses to build a kernel that prints (no device printf
/// without hip_runtime.h); the emulator runs it and prints per lane.
template <typename T>
__device__ int print(const char*, T);
TL_DEV int device_assert(bool ok, const char*) {
  if (!ok) __builtin_trap();
  return 0;
}

// ---- vectorised global / LDS accesses -----------------------------------------------------------
typedef unsigned u32x4 __attribute__((ext_vector_type(4)));
typedef unsigned u32x2 __attribute__((ext_vector_type(2)));
/// Two 16-bit lanes in one word, a in the low half.
template <typename T>
TL_DEV unsigned pack_halves(T a, T b) {
  return static_cast<unsigned>(__builtin_bit_cast(unsigned short, a)) |
         static_cast<unsigned>(__builtin_bit_cast(unsigned short, b)) << 16;
}
/// One N-byte store of the lanes, N-aligned.
template <int N, typename T, typename... Ts>
TL_DEV void vector_store(T* dst, Ts... xs) {
  if constexpr (N == 8 && sizeof(T) == 2) {
    // Four 16-bit lanes (an MFMA accumulator's row chunk) packed by value: reinterpreting the lane array
    // left hipcc 5.2 a scratch frame for it.
    const T x[4] = {T(xs)...};
    *reinterpret_cast<u32x2*>(dst) = u32x2{pack_halves(x[0], x[1]), pack_halves(x[2], x[3])};
  } else {
    alignas(16) T lanes[sizeof...(Ts)] = {T(xs)...};
    if constexpr (N == 16)
      *reinterpret_cast<u32x4*>(dst) = *reinterpret_cast<const u32x4*>(lanes);
    else if constexpr (N == 8)
      *reinterpret_cast<u32x2*>(dst) = *reinterpret_cast<const u32x2*>(lanes);
    else
      *reinterpret_cast<unsigned*>(dst) = *reinterpret_cast<const unsigned*>(lanes);
  }
}
/// tl.vector_store of N bytes of 1- or 2-byte lanes gathered from a register array: lane v is src[first + v *
/// Stride], Stride a whole number of words apart (the same byte or half of every (Stride sizeof(S) / 4)-th
/// word), as a transposing copy stores a column of its block. Each stored word takes its lanes out of their
/// source words by byte permutes (v_perm_b32): one a word for 16-bit lanes; for 8-bit lanes two levels, the
/// first pairing rows for two columns at once (bytes [lo.b, hi.b, lo.b + 1, hi.b + 1], b the even byte: the
/// same permute for columns 2i and 2i + 1, computed once), the second picking this column's halves. `first`
/// is a constant once the copy's loops are unrolled.
template <int N, int Stride, typename T, typename S>
TL_DEV void vector_store_column(T* dst, const S* src, int first) {
  constexpr int E = sizeof(S), L = N / E;  // lane bytes, lanes
  static_assert((E == 1 || E == 2) && (Stride * E) % 4 == 0 && (N == 4 || N == 8 || N == 16), "whole words");
  const unsigned at = static_cast<unsigned>(first) * E & 3u;  // the lanes' byte within their words
  unsigned w[L], out[N / 4];
  for (int v = 0; v < L; ++v)
    __builtin_memcpy(&w[v], reinterpret_cast<const unsigned char*>(src) + ((first * E) & ~3) + v * Stride * E,
                     4);
  if constexpr (E == 2) {
    const unsigned pick = at ? 0x07060302u : 0x05040100u;  // [lo.half, hi.half]
    for (int q = 0; q < N / 4; ++q) out[q] = __builtin_amdgcn_perm(w[2 * q + 1], w[2 * q], pick);
  } else {
    const unsigned b = at & ~1u, pairs = (5u + b) << 24 | (1u + b) << 16 | (4u + b) << 8 | b;
    const unsigned pick = at & 1u ? 0x07060302u : 0x05040100u;
    for (int q = 0; q < N / 4; ++q)
      out[q] = __builtin_amdgcn_perm(__builtin_amdgcn_perm(w[4 * q + 3], w[4 * q + 2], pairs),
                                     __builtin_amdgcn_perm(w[4 * q + 1], w[4 * q], pairs), pick);
  }
  if constexpr (N == 16)
    *reinterpret_cast<u32x4*>(dst) = u32x4{out[0], out[1], out[2], out[3]};
  else if constexpr (N == 8)
    *reinterpret_cast<u32x2*>(dst) = u32x2{out[0], out[1]};
  else
    *reinterpret_cast<unsigned*>(dst) = out[0];
}
/// tl.vector_store to an LDS tile: the same stores (the generic path serves both address spaces).
template <int N, typename T, typename... Ts>
TL_DEV void vector_store_shared(T* dst, Ts... xs) {
  vector_store<N>(dst, xs...);
}
/// One N-byte store of N bytes of registers (8-bit lanes held in one register array).
template <int N>
TL_DEV void vector_copy(void* dst, const void* regs) {
  if constexpr (N == 16)
    *reinterpret_cast<u32x4*>(dst) = *reinterpret_cast<const u32x4*>(regs);
  else if constexpr (N == 8)
    *reinterpret_cast<u32x2*>(dst) = *reinterpret_cast<const u32x2*>(regs);
  else
    *reinterpret_cast<unsigned*>(dst) = *reinterpret_cast<const unsigned*>(regs);
}
/// One N-byte load into registers, or zeros when not valid.
template <int N, typename T>
TL_DEV void vector_load(T* dst, const T* src, bool valid) {
  if constexpr (N == 16)
    *reinterpret_cast<u32x4*>(dst) = valid ? *reinterpret_cast<const u32x4*>(src) : u32x4{0, 0, 0, 0};
  else if constexpr (N == 8)
    *reinterpret_cast<u32x2*>(dst) = valid ? *reinterpret_cast<const u32x2*>(src) : u32x2{0, 0};
  else
    *reinterpret_cast<unsigned*>(dst) = valid ? *reinterpret_cast<const unsigned*>(src) : 0u;
}

/// The IR's tl.cp_async (a Bytes-wide global -> LDS copy, zeros when not valid) as a synchronous
/// copy: global_load_dwordx4 + ds_write_b128 for 16 bytes. The pipeline's commit / wait groups then
/// have nothing to wait for; its barriers still order the LDS buffers.
template <int Bytes>
TL_DEV void cp_async(void* smem, const void* gmem, bool valid) {
  if constexpr (Bytes == 16)
    *reinterpret_cast<u32x4*>(smem) = valid ? *reinterpret_cast<const u32x4*>(gmem) : u32x4{0, 0, 0, 0};
  else if constexpr (Bytes == 8)
    *reinterpret_cast<u32x2*>(smem) = valid ? *reinterpret_cast<const u32x2*>(gmem) : u32x2{0, 0};
  else
    *reinterpret_cast<unsigned*>(smem) = valid ? *reinterpret_cast<const unsigned*>(gmem) : 0u;
}

}  // namespace tl
