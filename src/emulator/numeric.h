// Scalar values of the emulator and their conversions: every lane value is an int64 or a double
// (chosen by the IR dtype); stores and casts round to the exact target format. The narrow float
// formats (float16, bfloat16, float8 e4m3fn / e5m2) are encoded and decoded here, by hand, with
// round-to-nearest-even.
#pragma once
#include <cstdint>
#include <cstring>

#include "ir/dtype.h"

namespace tl::emu {

/// One lane's value: `f` for float dtypes, `i` for integers and bool (bool is 0 or 1).
union Slot {
  int64_t i;
  double f;
};

/// Bits of `x` in a binary float format with E exponent and M mantissa bits (bias 2^(E-1)-1),
/// rounded to nearest even. `finite_only` selects the e4m3fn convention: no infinities, the
/// all-ones pattern is NaN, and overflow saturates to the largest finite value (PTX only offers
/// `.satfinite` conversions to e4m3). Otherwise overflow gives infinity.
uint32_t EncodeMinifloat(double x, int E, int M, bool finite_only);
double DecodeMinifloat(uint32_t bits, int E, int M, bool finite_only);

/// OCP MX fp4 (float4_e2m1fn): 1 sign, 2 exponent (bias 1), 1 mantissa bit, no infinities or NaN; the
/// magnitudes 0, 0.5, 1, 1.5, 2, 3, 4, 6. Encoding rounds to nearest even and saturates at 6 (infinities
/// too); NaN encodes as -0 (code 8), as ml_dtypes does. The code is the low nibble of a byte.
uint32_t EncodeE2M1(double x);
double DecodeE2M1(uint32_t code);
/// OCP MX floats without infinities or NaN (fp6 e2m3 / e3m2, fp4 e2m1), `E` exponent bits (bias 2^(E-1) - 1)
/// and `M` mantissa bits under a sign bit: every code is finite, the largest magnitude all ones. Encoding
/// rounds to nearest even and saturates (infinities too); NaN encodes as -0, as for fp4.
uint32_t EncodeMx(double x, int E, int M);
double DecodeMx(uint32_t code, int E, int M);
/// OCP MX E8M0 (float8_e8m0fnu): code c is 2^(c - 127) for c < 255, 255 is NaN; no sign, zero or infinity.
/// Encoding rounds to the nearest power of two with ties up (1.5 * 2^e gives 2^(e + 1)), values below 2^-127
/// give 2^-127; zero, negatives, NaN, infinities and values rounding past 2^127 give NaN, as ml_dtypes does.
uint32_t EncodeE8M0(double x);
double DecodeE8M0(uint32_t code);
/// (E, M) of an fp6 dtype; false for others.
bool Fp6Format(DataType t, int* E, int* M);

/// `x` rounded to the float dtype `t` (float16/bfloat16/float8/float32; float64 unchanged).
double RoundFloat(double x, DataType t);
/// `v` wrapped to the width and signedness of the integer dtype `t` (bool: != 0). Inline: it runs for
/// every lane of every integer operation.
inline int64_t WrapInt(int64_t v, DataType t) {
  if (t.is_bool()) return v != 0;
  const int bits = t.bits();
  if (bits >= 64) return v;
  if (bits == 32) return t.is_int() ? static_cast<int32_t>(v) : static_cast<int64_t>(static_cast<uint32_t>(v));
  const uint64_t m = (1ull << bits) - 1;
  uint64_t u = static_cast<uint64_t>(v) & m;
  if (t.is_int() && (u >> (bits - 1))) u |= ~m;  // sign-extend
  return static_cast<int64_t>(u);
}

double AsDouble(Slot v, DataType t);
int64_t AsInt(Slot v, DataType t);
/// C-style conversion (float->int truncates toward zero, saturating; NaN gives 0).
Slot Convert(Slot v, DataType from, DataType to);

/// Encodes `v` (already a value of dtype t) into memory, and decodes it back.
void StoreScalar(void* p, DataType t, Slot v);
Slot LoadScalar(const void* p, DataType t);
/// *dst += *src for one element of type t (floats rounded once, integers wrapped): TMA reductions.
inline void AddInto(void* dst, const void* src, DataType t) {
  Slot a = LoadScalar(dst, t), b = LoadScalar(src, t), r;
  if (t.is_float())
    r.f = RoundFloat(a.f + b.f, t);
  else
    r.i = WrapInt(a.i + b.i, t);
  StoreScalar(dst, t, r);
}

/// The bits of a float32 and back.
inline uint32_t BitsOfFloat(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float FloatOfBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

/// A float16 (bf16 false) or bfloat16 element as a double, exactly: a normal float16's fields re-biased into
/// a double's, a bfloat16 widened as the high half of a float32. Inline: every 16-bit mma operand is one.
inline double LoadHalf(const void* p, bool bf16) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  if (bf16) {
    const uint32_t w = static_cast<uint32_t>(h) << 16;
    float x;
    std::memcpy(&x, &w, 4);
    return x;
  }
  const uint32_t ex = (h >> 10) & 0x1f;
  if (ex == 0 || ex == 0x1f) return DecodeMinifloat(h, 5, 10, false);  // zero, subnormal, inf, NaN
  const uint64_t d = (static_cast<uint64_t>(h >> 15) << 63) | (static_cast<uint64_t>(ex - 15 + 1023) << 52) |
                     (static_cast<uint64_t>(h & 0x3ff) << 42);
  double r;
  std::memcpy(&r, &d, 8);
  return r;
}

}  // namespace tl::emu
