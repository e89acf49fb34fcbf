// Helpers the generated AscendC code calls besides the AscendC API (docs/ascend.md): scalar min / max, C-style
// casts and floor division for index arithmetic on the scalar unit. Shipped with the generated source; a CANN
// build compiles it with the kernel.
#pragma once

namespace tl_ascend {

template <typename T>
__aicore__ inline T min_(T a, T b) {
  return b < a ? b : a;
}
template <typename T>
__aicore__ inline T max_(T a, T b) {
  return a < b ? b : a;
}
template <typename To, typename From>
__aicore__ inline To cast(From v) {
  return static_cast<To>(v);
}
// Infinity and NaN as float (the compiler builtins; no <cmath> on the AI Core's scalar unit is assumed).
__aicore__ inline float inf() { return __builtin_huge_valf(); }
__aicore__ inline float nan() { return __builtin_nanf(""); }
// Floor division and modulo of integers (the IR's floordiv / floormod; C's / and % truncate).
template <typename T>
__aicore__ inline T floordiv(T a, T b) {
  T q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
template <typename T>
__aicore__ inline T floormod(T a, T b) {
  T r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

}  // namespace tl_ascend
