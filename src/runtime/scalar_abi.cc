// ConvertScalar and PackScalar; see scalar_abi.h.
#include "runtime/scalar_abi.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include "emulator/numeric.h"
#include "support/error.h"

namespace tl {
namespace {

std::string U64(uint64_t v) { return std::to_string(v); }
std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.9g", v);
  return buf;
}

[[noreturn]] void OutOfRange(const TensorArg& a, DataType t, const std::string& what,
                             const std::string& range) {
  std::string v = a.scalar_is_int ? (a.scalar_unsigned ? U64(static_cast<uint64_t>(a.scalar_int))
                                                       : std::to_string(a.scalar_int))
                                  : Num(a.scalar);
  throw UserError(ErrorKind::kArgument,
                  what + " is a scalar of type " + t.str() + " but " + v + " is out of its range " + range);
}

}  // namespace

TypedScalar ConvertScalar(const TensorArg& a, DataType t, const std::string& what) {
  if (a.is_tensor)
    throw UserError(ErrorKind::kArgument,
                    what + " is a scalar of type " + t.str() + " but a tensor was given");
  TypedScalar s;
  s.type = t;
  if (t.lanes() != 1 || t.is_handle() || t.is_void())
    throw UserError(ErrorKind::kArgument,
                    what + " has type " + t.str() + ", which cannot be passed as a scalar argument");
  if (t.is_integer() || t.is_bool()) {
    if (!a.scalar_is_int)
      throw UserError(ErrorKind::kArgument, what + " is a scalar of type " + t.str() +
                                                " but got the float value " + Num(a.scalar) +
                                                "; pass an integer");
    int bits = t.is_bool() ? 1 : t.bits();
    bool neg = !a.scalar_unsigned && a.scalar_int < 0;
    uint64_t mag = a.scalar_unsigned ? static_cast<uint64_t>(a.scalar_int)
                                     : (neg ? uint64_t(0) - static_cast<uint64_t>(a.scalar_int)
                                            : static_cast<uint64_t>(a.scalar_int));
    if (t.is_int()) {
      uint64_t max_pos = (uint64_t(1) << (bits - 1)) - 1, max_neg = uint64_t(1) << (bits - 1);
      if ((neg && mag > max_neg) || (!neg && mag > max_pos))
        OutOfRange(a, t, what, "[-" + U64(max_neg) + ", " + U64(max_pos) + "]");
    } else {
      uint64_t max = bits >= 64 ? ~uint64_t(0) : (uint64_t(1) << bits) - 1;
      if (neg || mag > max) OutOfRange(a, t, what, "[0, " + U64(max) + "]");
    }
    s.i = a.scalar_int;
    s.bits = static_cast<uint64_t>(a.scalar_int);
    // Narrower than a byte (int4, bool): stored in a whole byte, sign-extended for signed types.
    int stored = bits < 8 ? 8 : bits;
    if (stored < 64) s.bits &= (uint64_t(1) << stored) - 1;
    s.f = static_cast<double>(a.scalar_int);
    return s;
  }
  // A float type. An integer argument converts to it (exactly when representable).
  double v = a.scalar_is_int ? (a.scalar_unsigned ? static_cast<double>(static_cast<uint64_t>(a.scalar_int))
                                                  : static_cast<double>(a.scalar_int))
                             : a.scalar;
  if (t == DataType::Float(64)) {
    s.f = v;
    std::memcpy(&s.bits, &v, 8);
    return s;
  }
  if (t == DataType::Float(32)) {
    float x = static_cast<float>(v);
    if (std::isfinite(v) && !std::isfinite(x))
      OutOfRange(a, t, what,
                 "(the largest finite float32 is " + Num(std::numeric_limits<float>::max()) + ")");
    s.f = x;
    uint32_t b;
    std::memcpy(&b, &x, 4);
    s.bits = b;
    return s;
  }
  int E = 0, M = 0;
  bool finite_only = false;
  switch (t.code()) {
    case DataType::Code::kFloat:
      if (t.bits() != 16) break;
      E = 5;
      M = 10;
      break;
    case DataType::Code::kBFloat:
      E = 8;
      M = 7;
      break;
    case DataType::Code::kFloat8E4M3:
      E = 4;
      M = 3;
      finite_only = true;
      break;
    case DataType::Code::kFloat8E5M2:
      E = 5;
      M = 2;
      break;
    default: break;
  }
  if (E == 0)
    throw UserError(ErrorKind::kArgument,
                    what + " has type " + t.str() + ", which cannot be passed as a scalar argument");
  s.bits = emu::EncodeMinifloat(v, E, M, /*finite_only=*/false);
  s.f = emu::DecodeMinifloat(static_cast<uint32_t>(s.bits), E, M, false);
  if (std::isfinite(v) && !std::isfinite(s.f)) OutOfRange(a, t, what, "(it would round to infinity)");
  if (finite_only) {
    s.bits = emu::EncodeMinifloat(v, E, M, true);
    // e4m3fn saturates instead of overflowing: values that round past 448 are out of range.
    if (std::isfinite(v) && std::fabs(v) >= 464.0) OutOfRange(a, t, what, "[-448, 448]");
    s.f = emu::DecodeMinifloat(static_cast<uint32_t>(s.bits), E, M, true);
  }
  return s;
}

void PackScalar(const TypedScalar& s, void* slot) {
  unsigned char bytes[8] = {0};
  uint64_t b = s.bits;
  for (int k = 0; k < 8; ++k) bytes[k] = static_cast<unsigned char>(b >> (8 * k));
  std::memcpy(slot, bytes, 8);
}

}  // namespace tl
