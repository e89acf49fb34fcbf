// How scalar arguments cross the call boundary: each is checked against, then packed as, the
// type its parameter declares -- int8 ... uint64 exactly, float32 / float64, float16 / bfloat16 /
// float8 as their bit patterns, bool as one byte. No value goes through a double on the way
// (an int64 of 2^53 + 1 arrives as 2^53 + 1). The CPU runtime, the CUDA launcher and the
// emulator all take their scalars from here, so the three agree.
#pragma once
#include <cstdint>
#include <string>

#include "ir/dtype.h"
#include "runtime/module.h"

namespace tl {

/// A scalar argument converted to its parameter's type. Integers and bool: `i` holds the exact
/// value (uint64 as its bits). Floats: `f` holds the value rounded to the type (float16 rounded
/// to nearest even, as the kernel will see it), and `bits` its encoding.
struct TypedScalar {
  DataType type;
  int64_t i = 0;
  double f = 0;
  uint64_t bits = 0;  // the little-endian bytes the kernel reads (type.bytes() of them)
};

/// Converts `a` to `t`; throws UserError(kArgument) naming the parameter (`what`) when `a` is
/// not a scalar, is a float for an integer type, or is out of the type's range (a finite float
/// that would overflow to infinity included).
TypedScalar ConvertScalar(const TensorArg& a, DataType t, const std::string& what);

/// Writes the bytes of `s` at `slot` (at least 8 bytes; the rest is zeroed).
void PackScalar(const TypedScalar& s, void* slot);

}  // namespace tl
