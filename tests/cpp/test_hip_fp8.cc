// The HIP device header's 8-bit floats (include/tl_device/hip/fp8.h), compiled for the host: every OCP
// byte re-encoded to FNUZ holds half its value (FNUZ decoded here from AMD's CDNA3 ISA definition, apart
// from the header), the four-bytes-at-once form agrees with the per-byte one, and the OCP conversions
// agree with the emulator's (src/emulator/numeric.h) on every byte and on random floats.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "emulator/numeric.h"
#include "tl_device/hip/fp8.h"

namespace {

// E4M3FNUZ (E = 4, bias 8) / E5M2FNUZ (E = 5, bias 16): no infinities, 0x80 the only NaN.
double Fnuz(uint8_t b, int E) {
  const int M = 7 - E, bias = 1 << (E - 1);
  if (b == 0x80) return NAN;
  const int ex = (b >> M) & ((1 << E) - 1), man = b & ((1 << M) - 1);
  double mag = ex == 0 ? std::ldexp(man, 1 - bias - M) : std::ldexp((1 << M) + man, ex - bias - M);
  return (b & 0x80) ? -mag : mag;
}

double Ocp(uint8_t b, bool e5m2) {
  return e5m2 ? tl::emu::DecodeMinifloat(b, 5, 2, false) : tl::emu::DecodeMinifloat(b, 4, 3, true);
}

TEST(HipFp8, EveryOcpByteIsHalfItsValueInFnuz) {
  for (bool e5m2 : {false, true}) {
    for (int b = 0; b < 256; ++b) {
      const uint8_t f = tl::fnuz_bits(static_cast<uint8_t>(b), e5m2);
      const double v = Ocp(static_cast<uint8_t>(b), e5m2), w = Fnuz(f, e5m2 ? 5 : 4);
      if (std::isnan(v) || std::isinf(v)) {
        EXPECT_EQ(f, 0x80) << b;  // NaN (and e5m2's infinities) -> FNUZ NaN
      } else {
        EXPECT_EQ(w, v / 2) << "byte " << b << (e5m2 ? " e5m2" : " e4m3");
        EXPECT_FALSE(std::signbit(w) && w == 0) << b;  // FNUZ has no -0: 0x80 became 0
      }
    }
  }
  EXPECT_EQ(tl::fnuz_bits(0x80, false), 0);
  EXPECT_EQ(tl::fnuz_bits(0x7e, false), 0x7e);  // 448 -> 224
}

TEST(HipFp8, FourBytesAtOnceAgreeWithOneByAtATime) {
  std::mt19937 rng(7);
  for (bool e5m2 : {false, true}) {
    for (int i = 0; i < 20000; ++i) {
      uint32_t w = rng();
      if (i < 256) w = 0x01010101u * static_cast<uint32_t>(i);  // every byte in every position
      uint32_t want = 0;
      for (int k = 0; k < 4; ++k)
        want |= static_cast<uint32_t>(tl::fnuz_bits(static_cast<uint8_t>(w >> (8 * k)), e5m2)) << (8 * k);
      ASSERT_EQ(tl::fnuz_bits4(w, e5m2), want) << std::hex << w;
    }
  }
  unsigned char op[16];
  for (int i = 0; i < 16; ++i) op[i] = static_cast<unsigned char>(0x78 + i);  // crosses 0x7c .. 0x80
  tl::fp8_to_fnuz<16, true>(op);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(op[i], tl::fnuz_bits(static_cast<uint8_t>(0x78 + i), true)) << i;
}

TEST(HipFp8, OcpConversionsMatchTheEmulator) {
  for (int b = 0; b < 256; ++b) {
    double e4 = Ocp(static_cast<uint8_t>(b), false), e5 = Ocp(static_cast<uint8_t>(b), true);
    float d4 = tl::fp8_decode<4, 3, true>(static_cast<unsigned char>(b));
    float d5 = tl::fp8_decode<5, 2, false>(static_cast<unsigned char>(b));
    EXPECT_TRUE(std::isnan(e4) ? std::isnan(d4) : d4 == e4) << b;
    EXPECT_TRUE(std::isnan(e5) ? std::isnan(d5) : d5 == e5) << b;
  }
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> exp2(-20, 18);
  for (int i = 0; i < 50000; ++i) {
    float x = static_cast<float>(std::exp2(exp2(rng)) * (rng() & 1 ? -1 : 1));
    if (i < 8) x = std::vector<float>{0.0f, -0.0f, 448.0f, 464.0f, 480.0f, 1e9f, 61440.0f, 57344.0f}[i];
    const unsigned e4 = tl::fp8_encode<4, 3, true>(x), e5 = tl::fp8_encode<5, 2, false>(x);
    ASSERT_EQ(e4, tl::emu::EncodeMinifloat(x, 4, 3, true)) << x;
    ASSERT_EQ(e5, tl::emu::EncodeMinifloat(x, 5, 2, false)) << x;
  }
}

}  // namespace
