// A syntax and type check of generated Metal Shading Language with clang in C++ mode, on machines
// without a Metal compiler: it declares, after Apple's Metal Shading Language specification, the
// MSL types and builtins the TileLang-C++ Metal code generator uses (src/target/metal/codegen_metal.cc).
//
//   clang++ -fsyntax-only -std=c++17 -x c++ -Werror=unknown-attributes -I <this folder> kernel.metal
//
// `#include <metal_stdlib>` finds the shim next to this file. What it checks: every builtin called
// exists with the argument types given (simdgroup matrices against their element pointers,
// shuffles, barriers, atomics, math), the kernel attributes are the MSL ones, and the C++ is well
// formed. What it does not: address spaces are erased (device / threadgroup / thread pointers mix
// freely here), and `half` / `bfloat` are structs that compute in float.
#pragma once

#define __METAL_VERSION__ 310

// Address-space qualifiers and function qualifiers.
#define kernel
#define device
#define threadgroup
#define thread
#define constant const

// Kernel attributes: known names become clang annotations, any other name is an unknown attribute
// (an error with -Werror=unknown-attributes).
#define buffer(i) clang::annotate("metal_buffer", i)
#define threadgroup_position_in_grid clang::annotate("metal_threadgroup_position_in_grid")
#define thread_position_in_threadgroup clang::annotate("metal_thread_position_in_threadgroup")
#define thread_index_in_simdgroup clang::annotate("metal_thread_index_in_simdgroup")
#define simdgroup_index_in_threadgroup clang::annotate("metal_simdgroup_index_in_threadgroup")

// Scalar types (MSL spec, "Scalar data types"): the stdint aliases are MSL types too.
typedef signed char int8_t;
typedef unsigned char uint8_t;
typedef short int16_t;
typedef unsigned short uint16_t;
typedef int int32_t;
typedef unsigned int uint32_t;
typedef long int64_t;
typedef unsigned long uint64_t;
typedef unsigned char uchar;
typedef unsigned short ushort;
typedef unsigned int uint;
typedef unsigned long ulong;
typedef __SIZE_TYPE__ size_t;

/// 16-bit IEEE float (computed in float here).
struct half {
  float v_;
  half() = default;
  half(float x) : v_(x) {}
  operator float() const { return v_; }
};
/// 16-bit brain float (MSL 3.1; computed in float here).
struct bfloat {
  float v_;
  bfloat() = default;
  bfloat(float x) : v_(x) {}
  operator float() const { return v_; }
};

// Vector types the generated code names.
struct ulong2 {
  ulong x, y;
  ulong2(ulong a) : x(a), y(a) {}
  ulong2(ulong a, ulong b) : x(a), y(b) {}
};
struct uint3 {
  uint x, y, z;
};
struct float4 {
  float x, y, z, w;
};

#define INFINITY __builtin_inff()
#define NAN __builtin_nanf("")
#define MAXFLOAT 0x1.fffffep+127f
#define MAXHALF half(0x1.ffcp15f)

namespace metal {

// Math functions (MSL spec, "Math functions"), for float and half.
#define TL_MSL_UNARY(f)     \
  float f(float x);         \
  half f(half x);
TL_MSL_UNARY(exp)
TL_MSL_UNARY(exp2)
TL_MSL_UNARY(log)
TL_MSL_UNARY(log2)
TL_MSL_UNARY(log10)
TL_MSL_UNARY(sqrt)
TL_MSL_UNARY(rsqrt)
TL_MSL_UNARY(tanh)
TL_MSL_UNARY(sin)
TL_MSL_UNARY(cos)
TL_MSL_UNARY(floor)
TL_MSL_UNARY(ceil)
TL_MSL_UNARY(trunc)
TL_MSL_UNARY(rint)
TL_MSL_UNARY(round)
TL_MSL_UNARY(fabs)
TL_MSL_UNARY(sign)
#undef TL_MSL_UNARY
#define TL_MSL_BINARY(f)        \
  float f(float x, float y);    \
  half f(half x, half y);
TL_MSL_BINARY(pow)
TL_MSL_BINARY(fmod)
TL_MSL_BINARY(fmin)
TL_MSL_BINARY(fmax)
#undef TL_MSL_BINARY
float fma(float a, float b, float c);
half fma(half a, half b, half c);
// Integer functions.
int abs(int x);
short abs(short x);
signed char abs(signed char x);
long abs(long x);
template <typename T>
T min(T a, T b);
template <typename T>
T max(T a, T b);
// Bit counts in the argument type's width (MSL spec, "Integer functions").
template <typename T>
T popcount(T x);
template <typename T>
T clz(T x);

// Synchronization (MSL spec, "Synchronization functions").
enum class mem_flags { mem_none = 0, mem_device = 1, mem_threadgroup = 2, mem_texture = 4 };
inline mem_flags operator|(mem_flags a, mem_flags b) { return mem_flags(int(a) | int(b)); }
void threadgroup_barrier(mem_flags flags);
void simdgroup_barrier(mem_flags flags);

// SIMD-group functions (MSL spec, "SIMD-group functions"): the lane of the other value is
// this lane's index xor mask.
template <typename T>
T simd_shuffle_xor(T value, ushort mask);
// The value of the given lane of the SIMD-group.
template <typename T>
T simd_shuffle(T value, ushort lane);
// Whether the expression holds on any / every active lane of the SIMD-group.
bool simd_any(bool expr);
bool simd_all(bool expr);
// as_type<T>(x): the bits of x as a T of the same size (MSL 2.x, "Type Conversions and Re-interpreting Data").
template <typename T, typename F>
T as_type(F x);
template <typename T>
T simd_sum(T value);
template <typename T>
T simd_max(T value);
template <typename T>
T simd_min(T value);

// Atomics (MSL spec, "Atomic functions"): 32-bit int, uint and float.
enum memory_order { memory_order_relaxed };
struct atomic_int { int v_; };
struct atomic_uint { uint v_; };
struct atomic_float { float v_; };
int atomic_fetch_add_explicit(atomic_int* object, int operand, memory_order order);
uint atomic_fetch_add_explicit(atomic_uint* object, uint operand, memory_order order);
float atomic_fetch_add_explicit(atomic_float* object, float operand, memory_order order);
int atomic_load_explicit(atomic_int* object, memory_order order);
uint atomic_load_explicit(atomic_uint* object, memory_order order);
void atomic_store_explicit(atomic_int* object, int desired, memory_order order);
void atomic_store_explicit(atomic_uint* object, uint desired, memory_order order);

// SIMD-group matrices (MSL spec, "SIMD-group matrix functions"): 8x8 matrices of half, bfloat or
// float, loaded from and stored to memory by the whole SIMD-group.
template <typename T, int Cols, int Rows>
struct simdgroup_matrix {
  static_assert(Cols == 8 && Rows == 8, "simdgroup_matrix is 8x8");
};
typedef simdgroup_matrix<half, 8, 8> simdgroup_half8x8;
typedef simdgroup_matrix<bfloat, 8, 8> simdgroup_bfloat8x8;
typedef simdgroup_matrix<float, 8, 8> simdgroup_float8x8;

template <typename T, int Cols, int Rows>
void simdgroup_load(simdgroup_matrix<T, Cols, Rows>& d, const T* src, size_t elements_per_row = Cols,
                    ulong2 matrix_origin = ulong2(0), bool transpose_matrix = false);
template <typename T, int Cols, int Rows>
void simdgroup_store(simdgroup_matrix<T, Cols, Rows> a, T* dst, size_t elements_per_row = Cols,
                     ulong2 matrix_origin = ulong2(0), bool transpose_matrix = false);
/// d = a * b + c. A and B share an element type, and so do C and D (the code generator uses
/// half / bfloat operands with float accumulators).
template <typename TAB, typename TCD, int M, int N, int K>
void simdgroup_multiply_accumulate(simdgroup_matrix<TCD, N, M>& d, const simdgroup_matrix<TAB, K, M>& a,
                                   const simdgroup_matrix<TAB, N, K>& b, const simdgroup_matrix<TCD, N, M>& c);

}  // namespace metal
