// Scalar values of the emulator and their conversions: every lane value is an int64 or a double
// (chosen by the IR dtype); stores and casts round to the exact target format. The narrow float
// formats (float16, bfloat16, float8 e4m3fn / e5m2) are encoded and decoded here, by hand, with
// round-to-nearest-even.
#pragma once
#include <cstdint>

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

/// `x` rounded to the float dtype `t` (float16/bfloat16/float8/float32; float64 unchanged).
double RoundFloat(double x, DataType t);
/// `v` wrapped to the width and signedness of the integer dtype `t` (bool: != 0).
int64_t WrapInt(int64_t v, DataType t);

double AsDouble(Slot v, DataType t);
int64_t AsInt(Slot v, DataType t);
/// C-style conversion (float->int truncates toward zero, saturating; NaN gives 0).
Slot Convert(Slot v, DataType from, DataType to);

/// Encodes `v` (already a value of dtype t) into memory, and decodes it back.
void StoreScalar(void* p, DataType t, Slot v);
Slot LoadScalar(const void* p, DataType t);

}  // namespace tl::emu
