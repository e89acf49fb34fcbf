// Float format encoding and dtype conversions of the emulator.
#include "emulator/numeric.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "support/error.h"

namespace tl::emu {

uint32_t EncodeMinifloat(double x, int E, int M, bool finite_only) {
  const int bias = (1 << (E - 1)) - 1;
  const uint32_t exp_all = (1u << E) - 1;
  const uint32_t mant_all = (1u << M) - 1;
  const uint32_t sign = std::signbit(x) ? 1u << (E + M) : 0u;
  const uint32_t max_finite = finite_only ? (exp_all << M) | (mant_all - 1) : ((exp_all - 1) << M) | mant_all;
  if (std::isnan(x))
    return finite_only ? (sign | (exp_all << M) | mant_all) : ((exp_all << M) | (1u << (M - 1)));
  double a = std::fabs(x);
  if (std::isinf(a)) return sign | (finite_only ? max_finite : exp_all << M);
  if (a == 0) return sign;
  int e;
  std::frexp(a, &e);
  int ex = e - 1;                    // a is in [2^ex, 2^(ex+1))
  if (ex < 1 - bias) ex = 1 - bias;  // subnormals share the smallest exponent's quantum
  // Scaling by a power of two is exact; nearbyint rounds to nearest even in the default mode.
  uint64_t q = static_cast<uint64_t>(std::nearbyint(std::ldexp(a, M - ex)));
  if (q >= (2ull << M)) {  // rounding carried into the next binade
    ++ex;
    q >>= 1;
  }
  uint32_t biased = q < (1ull << M) ? 0u : static_cast<uint32_t>(ex + bias);
  uint32_t bits = (biased << M) | static_cast<uint32_t>(q & mant_all);
  if (finite_only) {
    if (biased > exp_all || bits > max_finite) bits = max_finite;
  } else if (biased >= exp_all) {
    bits = exp_all << M;
  }
  return sign | bits;
}

namespace {
// 2^e as a double, built from its bits (exact; e within the normal double range). Faster than ldexp,
// which the decoding of every 16-bit element went through.
inline double Pow2(int e) {
  const uint64_t b = static_cast<uint64_t>(e + 1023) << 52;
  double d;
  std::memcpy(&d, &b, 8);
  return d;
}
}  // namespace

double DecodeMinifloat(uint32_t bits, int E, int M, bool finite_only) {
  const int bias = (1 << (E - 1)) - 1;
  const uint32_t exp_all = (1u << E) - 1;
  const uint32_t mant_all = (1u << M) - 1;
  bool neg = (bits >> (E + M)) & 1u;
  uint32_t ex = (bits >> M) & exp_all, mant = bits & mant_all;
  double v;
  if (!finite_only && ex == exp_all) {
    v = mant ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  } else if (finite_only && ex == exp_all && mant == mant_all) {
    v = std::numeric_limits<double>::quiet_NaN();
  } else if (ex == 0) {
    v = static_cast<double>(mant) * Pow2(1 - bias - M);
  } else {
    v = static_cast<double>(mant | (1u << M)) * Pow2(static_cast<int>(ex) - bias - M);
  }
  return neg ? -v : v;
}

uint32_t EncodeE2M1(double x) {
  const uint32_t sign = std::signbit(x) ? 8u : 0u;
  if (std::isnan(x)) return 8u;
  const double a = std::fabs(x);
  // between neighbours the nearer; a tie goes to the even code (its mantissa bit clear)
  const uint32_t c = a <= 0.25   ? 0
                     : a < 0.75  ? 1
                     : a <= 1.25 ? 2
                     : a < 1.75  ? 3
                     : a <= 2.5  ? 4
                     : a < 3.5   ? 5
                     : a <= 5.0  ? 6
                                 : 7;
  return sign | c;
}

double DecodeE2M1(uint32_t code) {
  static const double mag[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
  const double v = mag[code & 7u];
  return (code & 8u) ? -v : v;
}

double DecodeMx(uint32_t code, int E, int M) {
  const int bias = (1 << (E - 1)) - 1;
  const uint32_t mag = code & ((1u << (E + M)) - 1), ex = mag >> M, m = mag & ((1u << M) - 1);
  const double v = ex ? std::ldexp(static_cast<double>((1u << M) + m), static_cast<int>(ex) - bias - M)
                      : std::ldexp(static_cast<double>(m), 1 - bias - M);
  return (code >> (E + M)) & 1u ? -v : v;
}

uint32_t EncodeMx(double x, int E, int M) {
  const uint32_t sign = 1u << (E + M), maxcode = sign - 1;
  if (std::isnan(x)) return sign;
  const uint32_t s = std::signbit(x) ? sign : 0u;
  const double a = std::fabs(x);
  if (a >= DecodeMx(maxcode, E, M)) return s | maxcode;  // saturates
  if (a == 0) return s;
  const int bias = (1 << (E - 1)) - 1, minex = 1 - bias;
  int e2 = 0;
  std::frexp(a, &e2);
  const int ex = std::max(e2 - 1, minex);  // a's binade, or the subnormals' step below the normals
  // a in steps of the binade's last mantissa place (exact: a power-of-two scaling), rounded to nearest even
  const double r = std::nearbyint(std::ldexp(a, M - ex));
  const uint32_t code = e2 - 1 < minex
                            ? static_cast<uint32_t>(r)  // subnormal (2^M: the least normal)
                            : (static_cast<uint32_t>(ex + bias) << M) + static_cast<uint32_t>(r) - (1u << M);
  return s | std::min(code, maxcode);
}

uint32_t EncodeE8M0(double x) {
  if (!(x > 0) || std::isinf(x)) return 255u;
  int e = 0;
  const double m = std::frexp(x, &e);  // x = m 2^e, m in [0.5, 1): 2m 2^(e - 1)
  const int k = e - 1 + (2 * m >= 1.5 ? 1 : 0);
  if (k < -127) return 0u;
  return k > 127 ? 255u : static_cast<uint32_t>(k + 127);
}

double DecodeE8M0(uint32_t code) {
  code &= 0xFFu;
  return code == 255u ? std::numeric_limits<double>::quiet_NaN()
                      : std::ldexp(1.0, static_cast<int>(code) - 127);
}

bool Fp6Format(DataType t, int* E, int* M) {
  if (t.code() == DataType::Code::kFloat6E2M3) {
    *E = 2;
    *M = 3;
    return true;
  }
  if (t.code() == DataType::Code::kFloat6E3M2) {
    *E = 3;
    *M = 2;
    return true;
  }
  return false;
}

namespace {
struct Format {
  int E, M;
  bool finite_only;
};
bool MinifloatOf(DataType t, Format* f) {
  switch (t.code()) {
    case DataType::Code::kFloat:
      if (t.bits() != 16) return false;
      *f = {5, 10, false};
      return true;
    case DataType::Code::kBFloat: *f = {8, 7, false}; return true;
    case DataType::Code::kFloat8E4M3: *f = {4, 3, true}; return true;
    case DataType::Code::kFloat8E5M2: *f = {5, 2, false}; return true;
    default: return false;
  }
}
// Conversions to e5m2 saturate as those to e4m3fn do: the PTX ISA converts f32 to e5m2 only with
// `.satfinite` (CUDA's __nv_fp8_e5m2 too), so values past 57344 and infinities give +-57344. Only
// conversions (RoundFloat) saturate: storing a value that already is an e5m2 infinity keeps it.
double SatFinite(double x, DataType t) {
  if (t.code() == DataType::Code::kFloat8E5M2 && std::fabs(x) > 57344.0) return std::copysign(57344.0, x);
  return x;
}
}  // namespace

double RoundFloat(double x, DataType t) {
  if (t.code() == DataType::Code::kFloat4E2M1) return DecodeE2M1(EncodeE2M1(x));
  if (t.code() == DataType::Code::kFloat8E8M0) return DecodeE8M0(EncodeE8M0(x));
  int fe = 0, fm = 0;
  if (Fp6Format(t, &fe, &fm)) return DecodeMx(EncodeMx(x, fe, fm), fe, fm);
  Format f;
  if (MinifloatOf(t, &f))
    return DecodeMinifloat(EncodeMinifloat(SatFinite(x, t), f.E, f.M, f.finite_only), f.E, f.M,
                           f.finite_only);
  if (t.bits() == 32) return static_cast<double>(static_cast<float>(x));
  return x;
}

double AsDouble(Slot v, DataType t) {
  if (t.is_float()) return v.f;
  if (t.is_uint() && t.bits() == 64) return static_cast<double>(static_cast<uint64_t>(v.i));
  return static_cast<double>(v.i);
}

int64_t AsInt(Slot v, DataType t) {
  if (!t.is_float()) return v.i;
  double x = std::trunc(v.f);
  if (std::isnan(x)) return 0;
  if (x >= 9.2233720368547758e18) return std::numeric_limits<int64_t>::max();
  if (x <= -9.2233720368547758e18) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(x);
}

Slot Convert(Slot v, DataType from, DataType to) {
  Slot r;
  if (to.is_float()) {
    r.f = RoundFloat(AsDouble(v, from), to);
  } else if (to.is_bool()) {
    r.i = from.is_float() ? v.f != 0 : v.i != 0;
  } else if (from.is_float()) {
    // Saturate to the target range, as cvt.rzi.sat does, instead of wrapping a huge value.
    double x = std::trunc(v.f);
    if (std::isnan(x)) {
      r.i = 0;
    } else {
      int bits = to.bits();
      double lo = to.is_int() ? -std::ldexp(1.0, bits - 1) : 0.0;
      double hi = to.is_int() ? std::ldexp(1.0, bits - 1) - 1 : std::ldexp(1.0, bits) - 1;
      if (x < lo) x = lo;
      if (x > hi) x = hi;
      if (to.is_uint() && bits == 64 && x >= 9.2233720368547758e18)
        r.i = static_cast<int64_t>(static_cast<uint64_t>(x));
      else
        r.i = WrapInt(static_cast<int64_t>(x), to);
    }
  } else {
    r.i = WrapInt(v.i, to);
  }
  return r;
}

void StoreScalar(void* p, DataType t, Slot v) {
  if (t.code() == DataType::Code::kFloat8E8M0) {
    const uint8_t q = static_cast<uint8_t>(EncodeE8M0(v.f));
    std::memcpy(p, &q, 1);
    return;
  }
  if (t.code() == DataType::Code::kFloat4E2M1) {  // the low nibble; the upper one zero
    const uint8_t q = static_cast<uint8_t>(EncodeE2M1(v.f));
    std::memcpy(p, &q, 1);
    return;
  }
  int fe = 0, fm = 0;
  if (Fp6Format(t, &fe, &fm)) {  // the low 6 bits; the upper two zero
    const uint8_t q = static_cast<uint8_t>(EncodeMx(v.f, fe, fm));
    std::memcpy(p, &q, 1);
    return;
  }
  Format f;
  if (MinifloatOf(t, &f)) {
    uint32_t b = EncodeMinifloat(v.f, f.E, f.M, f.finite_only);
    if (t.bits() == 16) {
      uint16_t h = static_cast<uint16_t>(b);
      std::memcpy(p, &h, 2);
    } else {
      uint8_t q = static_cast<uint8_t>(b);
      std::memcpy(p, &q, 1);
    }
    return;
  }
  if (t.is_float()) {
    if (t.bits() == 32) {
      float x = static_cast<float>(v.f);
      std::memcpy(p, &x, 4);
    } else {
      std::memcpy(p, &v.f, 8);
    }
    return;
  }
  switch (t.bytes()) {
    case 1: {
      int8_t x = static_cast<int8_t>(v.i);
      std::memcpy(p, &x, 1);
      return;
    }
    case 2: {
      int16_t x = static_cast<int16_t>(v.i);
      std::memcpy(p, &x, 2);
      return;
    }
    case 4: {
      int32_t x = static_cast<int32_t>(v.i);
      std::memcpy(p, &x, 4);
      return;
    }
    case 8: std::memcpy(p, &v.i, 8); return;
  }
  throw InternalError("emulator: cannot store dtype " + t.str());
}

Slot LoadScalar(const void* p, DataType t) {
  Slot r;
  if (t.bits() == 16 && (t.code() == DataType::Code::kFloat || t.code() == DataType::Code::kBFloat)) {
    r.f = LoadHalf(p, t.code() == DataType::Code::kBFloat);
    return r;
  }
  if (t.code() == DataType::Code::kFloat4E2M1) {  // the low nibble (the upper one is ignored)
    uint8_t q;
    std::memcpy(&q, p, 1);
    r.f = DecodeE2M1(q);
    return r;
  }
  if (t.code() == DataType::Code::kFloat8E8M0) {
    uint8_t q;
    std::memcpy(&q, p, 1);
    r.f = DecodeE8M0(q);
    return r;
  }
  int fe = 0, fm = 0;
  if (Fp6Format(t, &fe, &fm)) {  // the low 6 bits (the upper two are ignored)
    uint8_t q;
    std::memcpy(&q, p, 1);
    r.f = DecodeMx(q & 0x3f, fe, fm);
    return r;
  }
  Format f;
  if (MinifloatOf(t, &f)) {
    uint32_t b;
    if (t.bits() == 16) {
      uint16_t h;
      std::memcpy(&h, p, 2);
      b = h;
    } else {
      uint8_t q;
      std::memcpy(&q, p, 1);
      b = q;
    }
    r.f = DecodeMinifloat(b, f.E, f.M, f.finite_only);
    return r;
  }
  if (t.is_float()) {
    if (t.bits() == 32) {
      float x;
      std::memcpy(&x, p, 4);
      r.f = x;
    } else {
      std::memcpy(&r.f, p, 8);
    }
    return r;
  }
  int64_t raw = 0;
  switch (t.bytes()) {
    case 1: {
      int8_t x;
      std::memcpy(&x, p, 1);
      raw = x;
      break;
    }
    case 2: {
      int16_t x;
      std::memcpy(&x, p, 2);
      raw = x;
      break;
    }
    case 4: {
      int32_t x;
      std::memcpy(&x, p, 4);
      raw = x;
      break;
    }
    case 8: std::memcpy(&raw, p, 8); break;
    default: throw InternalError("emulator: cannot load dtype " + t.str());
  }
  r.i = WrapInt(raw, t);  // zero-extends unsigned types, normalises bool
  return r;
}

}  // namespace tl::emu
