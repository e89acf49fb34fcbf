// 8-bit floats on CDNA3 (gfx940+): storage types in the OCP formats TileLang's float8_e4m3fn /
// float8_e5m2 name, and their re-encoding into the FNUZ formats gfx940's fp8 MFMA computes in.
// Included by common.h; also compiles as plain C++ (with <cstdint>) so that the host tests can check
// the conversions on every byte (tests/cpp/test_hip_fp8.cc).
//
// OCP E4M3FN: bias 7, no infinities, S.1111.111 is NaN, largest 448.   E5M2: bias 15, IEEE-like.
// FNUZ (AMD CDNA3 ISA, "fp8" = E4M3FNUZ bias 8, "bf8" = E5M2FNUZ bias 16): no infinities, no
// negative zero; 0x80 is the only NaN. The same bits therefore mean half the value in FNUZ, for
// every finite OCP byte except negative zero (0x80, NaN in FNUZ). fnuz_bits maps -0 to +0 and
// OCP NaN / infinity to 0x80; an MFMA of re-encoded A and B yields a * b / 4 exactly, which the
// lowering compensates by scaling the accumulator (src/transform/hip/lower_gemm_mfma.cc).
#pragma once

#ifndef TL_DEV
#define TL_DEV inline
#endif

namespace tl {

/// 2^k as a float for -126 <= k <= 127.
TL_DEV float fp8_pow2(int k) { return __builtin_bit_cast(float, static_cast<unsigned>(k + 127) << 23); }

/// float -> an OCP 8-bit float with E exponent and M mantissa bits, round to nearest even. FN (e4m3fn):
/// overflow saturates to the largest finite value and NaN is S.1111.111; otherwise overflow is infinity.
template <int E, int M, bool FN>
TL_DEV unsigned char fp8_encode(float f) {
  const unsigned u = __builtin_bit_cast(unsigned, f), mag = u & 0x7fffffffu;
  const unsigned char s = static_cast<unsigned char>((u >> 24) & 0x80u);
  const unsigned char top = static_cast<unsigned char>(FN ? 0x7e : (((1 << E) - 1) << M));  // max / inf
  if (mag > 0x7f800000u) return s | 0x7f;
  constexpr int bias = (1 << (E - 1)) - 1, emax = FN ? (1 << E) - 1 - bias : (1 << E) - 2 - bias;
  int e = static_cast<int>(mag >> 23) - 127;
  if (e < 1 - bias) e = 1 - bias;  // the subnormal range counts in units of 2^(1 - bias - M)
  if (e > emax) return s | top;
  float q = __builtin_rintf(__builtin_bit_cast(float, mag) * fp8_pow2(M - e));
  if (q >= static_cast<float>(2 << M)) {  // rounded up into the next binade
    q = static_cast<float>(1 << M);
    if (++e > emax) return s | top;
  }
  const unsigned qi = static_cast<unsigned>(q);
  unsigned bits = qi < (1u << M) ? qi : (static_cast<unsigned>(e + bias) << M) | (qi - (1u << M));
  if (FN && bits == 0x7f) bits = 0x7e;  // S.1111.111 is NaN in e4m3fn: saturate
  return static_cast<unsigned char>(s | bits);
}

/// An OCP 8-bit float's value.
template <int E, int M, bool FN>
TL_DEV float fp8_decode(unsigned char b) {
  constexpr int bias = (1 << (E - 1)) - 1;
  const int ex = (b >> M) & ((1 << E) - 1), man = b & ((1 << M) - 1);
  const float sign = (b & 0x80) ? -1.0f : 1.0f;
  if (FN ? (b & 0x7f) == 0x7f : ex == (1 << E) - 1)
    return man || FN ? __builtin_nanf("") : sign * __builtin_inff();
  if (ex == 0) return sign * static_cast<float>(man) * fp8_pow2(1 - bias - M);
  return sign * static_cast<float>((1 << M) + man) * fp8_pow2(ex - bias - M);
}

struct fp8_e4m3_t {
  unsigned char bits;
  fp8_e4m3_t() = default;
  TL_DEV fp8_e4m3_t(float f) : bits(fp8_encode<4, 3, true>(f)) {}
  TL_DEV operator float() const { return fp8_decode<4, 3, true>(bits); }
};
struct fp8_e5m2_t {
  unsigned char bits;
  fp8_e5m2_t() = default;
  TL_DEV fp8_e5m2_t(float f) : bits(fp8_encode<5, 2, false>(f)) {}
  TL_DEV operator float() const { return fp8_decode<5, 2, false>(bits); }
};

/// OCP MX fp4 (float4_e2m1fn) in the low nibble of a byte: round to nearest even, saturating at 6; NaN gives
/// -0 (code 8), as on every other target (docs/semantics.md).
struct fp4_e2m1_t {
  unsigned char bits;
  fp4_e2m1_t() = default;
  TL_DEV fp4_e2m1_t(float f) {
    const unsigned u = __builtin_bit_cast(unsigned, f);
    if ((u & 0x7fffffffu) > 0x7f800000u) {
      bits = 8;
      return;
    }
    const float a = __builtin_fabsf(f);
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
  TL_DEV operator float() const {
    const unsigned e = (bits >> 1) & 3u, m = bits & 1u;
    const float v = e ? static_cast<float>(2u + m) * fp8_pow2(static_cast<int>(e) - 2) : 0.5f * m;
    return (bits & 8u) ? -v : v;
  }
};

/// OCP MX fp6 (float6_e2m3fn: E 2, M 3; float6_e3m2fn: E 3, M 2) in the low 6 bits of a byte: every code
/// finite; round to nearest even, saturating; NaN gives -0 (code 32), as on every other target.
template <int E, int M>
struct fp6_t {
  unsigned char bits;
  static constexpr int bias = (1 << (E - 1)) - 1;
  fp6_t() = default;
  TL_DEV static float decode(unsigned b) {
    const unsigned mag = b & 31u, ex = mag >> M, m = mag & ((1u << M) - 1);
    const float v = ex ? static_cast<float>((1u << M) + m) * fp8_pow2(static_cast<int>(ex) - bias - M)
                       : static_cast<float>(m) * fp8_pow2(1 - bias - M);
    return (b & 32u) ? -v : v;
  }
  TL_DEV fp6_t(float f) {
    const unsigned u = __builtin_bit_cast(unsigned, f);
    if ((u & 0x7fffffffu) > 0x7f800000u) {
      bits = 32;
      return;
    }
    const unsigned s = (u >> 26) & 32u;
    const float a = __builtin_fabsf(f);
    if (a >= decode(31u)) {
      bits = static_cast<unsigned char>(s | 31u);
      return;
    }
    // a's binade (at least the least normal one), and a in units of its last mantissa place, nearest even
    const int e2 = static_cast<int>((__builtin_bit_cast(unsigned, a) >> 23) & 255u) - 127;
    const int ex = e2 < 1 - bias ? 1 - bias : e2;
    const unsigned r = static_cast<unsigned>(__builtin_rintf(a * fp8_pow2(M - ex)));
    const unsigned code = e2 < 1 - bias ? r : (static_cast<unsigned>(ex + bias) << M) + r - (1u << M);
    bits = static_cast<unsigned char>(s | (code > 31u ? 31u : code));
  }
  TL_DEV operator float() const { return decode(bits); }
};
using fp6_e2m3_t = fp6_t<2, 3>;
using fp6_e3m2_t = fp6_t<3, 2>;

/// OCP MX E8M0 (float8_e8m0fnu), the MX scale: code c is 2^(c - 127), 255 NaN; nearest power of two, ties
/// up; below 2^-127 gives 2^-127; zero, negatives, NaN, infinities and values past 2^127 give NaN.
struct fp8_e8m0_t {
  unsigned char bits;
  fp8_e8m0_t() = default;
  TL_DEV fp8_e8m0_t(float f) {
    if (!(f > 0.f) || __builtin_isinf(f)) {
      bits = 255;
      return;
    }
    const unsigned u = __builtin_bit_cast(unsigned, f);
    const int ex = static_cast<int>((u >> 23) & 255u);
    // a normal f: its exponent, one more when its mantissa is at least 1.5; a subnormal (below 2^-126): the
    // nearest of 2^-127 and 2^-126
    const int k = ex ? ex - 127 + ((u & 0x400000u) ? 1 : 0) : (f >= 0.75f * fp8_pow2(-126) ? -126 : -127);
    bits = static_cast<unsigned char>(k > 127 ? 255 : k + 127);
  }
  TL_DEV operator float() const {
    return bits == 255 ? __builtin_bit_cast(float, 0x7fffffffu)
                       : __builtin_ldexpf(1.0f, static_cast<int>(bits) - 127);
  }
};

/// The FNUZ byte holding half the value of the OCP byte `b` (E5M2 when e5m2, else E4M3FN): -0 -> 0,
/// NaN and infinity -> 0x80 (FNUZ NaN), every other byte unchanged.
TL_DEV unsigned char fnuz_bits(unsigned char b, bool e5m2) {
  if (b == 0x80) return 0;
  return (b & 0x7f) >= (e5m2 ? 0x7c : 0x7f) ? 0x80 : b;
}

/// fnuz_bits on the four bytes of a word at once (SWAR: no byte of the word carries into the next).
TL_DEV unsigned fnuz_bits4(unsigned x, bool e5m2) {
  const unsigned low = x & 0x7f7f7f7fu, top = 0x80808080u;
  const unsigned nan = (low + (e5m2 ? 0x04040404u : 0x01010101u)) & top;  // low 7 bits >= 0x7c / == 0x7f
  const unsigned neg0 = x & top & ~((low + 0x7f7f7f7fu) & top);           // 0x80: sign set, rest zero
  const unsigned clear = ((nan | neg0) >> 7) * 0xffu;
  return (x & ~clear) | nan;
}

/// In place: N bytes (a multiple of 8) of an MFMA operand from OCP to FNUZ (tl.fp8_to_fnuz), as 64-bit
/// words, the MFMA's own operand size, so that the operand stays in registers.
template <int N, bool E5M2>
TL_DEV void fp8_to_fnuz(void* p) {
  static_assert(N % 8 == 0, "fp8_to_fnuz converts whole 64-bit operands");
  unsigned char* b = static_cast<unsigned char*>(p);
  for (int i = 0; i < N; i += 8) {
    unsigned long long w;
    __builtin_memcpy(&w, b + i, 8);
    w = fnuz_bits4(static_cast<unsigned>(w), E5M2) |
        static_cast<unsigned long long>(fnuz_bits4(static_cast<unsigned>(w >> 32), E5M2)) << 32;
    __builtin_memcpy(b + i, &w, 8);
  }
}

}  // namespace tl
