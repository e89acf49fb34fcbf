// Math the host compiler can vectorise inside T.Parallel loops and row reductions:
//   exp2_f32   float 2^x without a libm call (branch-free, so `#pragma GCC ivdep` loops vectorise)
//   reduce_row a T.reduce over a contiguous axis with 16 independent partial results
#pragma once
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

namespace tl_cpu {

/// 2^x in float, within 1 ulp of the correctly rounded value over the whole range (subnormal
/// results included); exp2(-inf) = 0, exp2(+inf) = inf, NaN stays NaN. x = i + f with i = round(x),
/// |f| <= 1/2; 2^f by its Taylor series in f*ln2 to degree 7 (truncation < 6e-9 relative); the
/// scale 2^i is applied as two exponent-field multiplies so results down to 2^-149 come out right.
/// Every step is a select, not a branch, so GCC (with -fno-trapping-math, which the CPU target
/// passes) and Clang vectorise loops that call it; out-of-range x is fixed up by the last selects.
inline float exp2_f32(float x) {
  const float r = __builtin_floorf(x + 0.5f);
  const float t = (x - r) * 0.693147180559945309f;
  float p = 1.f / 5040.f;
  p = p * t + 1.f / 720.f;
  p = p * t + 1.f / 120.f;
  p = p * t + 1.f / 24.f;
  p = p * t + 1.f / 6.f;
  p = p * t + 0.5f;
  p = p * t + 1.f;
  p = p * t + 1.f;
  // |r| may exceed int range (or be NaN) only where a select below replaces the result.
  int32_t i = static_cast<int32_t>(r > -256.f && r < 256.f ? r : 0.f);
  i = i < -151 ? -151 : i;
  i = i > 129 ? 129 : i;
  const int32_t i1 = i / 2, i2 = i - i1;  // each in [-76, 65]: normal scales
  float s1, s2;
  const uint32_t b1 = uint32_t(i1 + 127) << 23, b2 = uint32_t(i2 + 127) << 23;
  std::memcpy(&s1, &b1, 4);
  std::memcpy(&s2, &b2, 4);
  float y = p * s1 * s2;
  y = x < -151.f ? 0.f : y;
  y = x > 129.f ? std::numeric_limits<float>::infinity() : y;
  return x != x ? x : y;
}

enum ReduceRowKind {
  kReduceRowSum = 0,
  kReduceRowMax = 1,
  kReduceRowMin = 2,
  kReduceRowAbsSum = 3,
  kReduceRowAbsMax = 4
};

/// *dst = reduce(src[0..n)) (clear) or reduce(*dst, src[0..n)); float or double. The sum is
/// reassociated into 16 lanes (as NumPy's pairwise sum reassociates); max/min give the same result
/// as the sequential loop.
template <int Kind, typename T>
inline void reduce_row(const T* __restrict src, int n, T* __restrict dst, bool clear) {
  static_assert(std::is_floating_point<T>::value, "reduce_row takes float or double");
  constexpr int L = 16;
  constexpr bool is_sum = Kind == kReduceRowSum || Kind == kReduceRowAbsSum;
  const T init = is_sum ? T(0)
                        : (Kind == kReduceRowMin
                               ? std::numeric_limits<T>::infinity()
                               : (Kind == kReduceRowAbsMax ? T(0) : -std::numeric_limits<T>::infinity()));
  auto elem = [](T x) {
    return Kind == kReduceRowAbsSum || Kind == kReduceRowAbsMax ? (x < T(0) ? -x : x) : x;
  };
  auto comb = [](T a, T b) {
    if (is_sum) return a + b;
    if (Kind == kReduceRowMin) return b < a ? b : a;
    return a < b ? b : a;
  };
  T acc[L];
  for (int l = 0; l < L; ++l) acc[l] = init;
  int i = 0;
  for (; i + L <= n; i += L)
    for (int l = 0; l < L; ++l) acc[l] = comb(acc[l], elem(src[i + l]));
  for (int w = L / 2; w > 0; w /= 2)
    for (int l = 0; l < w; ++l) acc[l] = comb(acc[l], acc[l + w]);
  T r = acc[0];
  for (; i < n; ++i) r = comb(r, elem(src[i]));
  *dst = clear ? r : comb(*dst, r);
}

}  // namespace tl_cpu
