// The emulator's AMD MFMA semantics (src/emulator/intrinsics_hip.cc), on hand-worked lanes from the
// CDNA3 and CDNA4 ISA guides' operand layouts and on whole products against a double reference. The
// kernels are written by hand in thread-level IR, independently of the compiler's MFMA layouts.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "emulator_test_util.h"

namespace tl::emu {
namespace {

using namespace emu_test;

// One-hot A and B: D is zero but for one element, which the ISA layout puts in one lane's register.
// `al`/`av`: the lane and register holding the A one; `bl`/`bv` the same for B; `dl`/`dv` the lane
// and register that must read 1 afterwards.
// `ab`: the operand type ("f16", "bf16", or an 8-bit pair whose one is the byte `one8`); `kv` the k values
// a lane supplies (4, or 8 for the 16x16x32 / 32x32x16 shapes). Returns D's one-hot value.
// With `sa` >= 0 the MFMA is the scaled form: lane `al`'s A scale is sa and lane `bl`'s B scale is sb (E8M0
// bytes); every other lane's scales are `other`.
float OneHot(const std::string& shape, int al, int av, int bl, int bv, int dl, int dv,
             const std::string& ab = "f16", int kv = 4, int one8 = 0, int one8_b = -1, int sa = -1,
             int sb = 127, int other = 127, int opsel_a = -1, int opsel_b = 0) {
  SCOPED_TRACE(shape + " " + ab);
  const int outs = shape.rfind("16x16", 0) == 0 ? 4 : 16;
  const bool eight = ab.find('_') != std::string::npos;
  const DataType t = eight ? DataType::UInt(8) : ab == "bf16" ? kBF16 : kF16;
  Kernel k;
  Buffer O = Global("O", kF32, {Int(64), Int(outs)});
  Buffer a = Local("a", t, kv), b = Local("b", t, kv), c = Local("c", kF32, outs);
  Var i = MakeVar("i");
  auto one_at = [&](int lane, int reg, int bits) {
    Expr one = eight ? IntImm(t, bits) : FloatImm(t, 1.0), zero = eight ? IntImm(t, 0) : FloatImm(t, 0.0);
    return Select(And(Eq(k.tx, Int(lane)), Eq(i, Int(reg))), one, zero);
  };
  Stmt body = Seq({
      Unrolled(i, kv, Store(a, one_at(al, av, one8), {i})),
      Unrolled(i, kv, Store(b, one_at(bl, bv, one8_b < 0 ? one8 : one8_b), {i})),
      Unrolled(i, outs, Store(c, FloatImm(kF32, 0.0), {i})),
      Void("tl.mfma",
           opsel_a >= 0
               ? std::vector<Expr>{StringImm(shape), StringImm(ab), Load(a, {Int(0)}), Load(b, {Int(0)}),
                                   Load(c, {Int(0)}), Select(Eq(k.tx, Int(al)), Int(sa), Int(other)),
                                   Select(Eq(k.tx, Int(bl)), Int(sb), Int(other)), Int(opsel_a), Int(opsel_b)}
           : sa < 0 ? std::vector<Expr>{StringImm(shape), StringImm(ab), Load(a, {Int(0)}), Load(b, {Int(0)}),
                                        Load(c, {Int(0)})}
                    : std::vector<Expr>{StringImm(shape), StringImm(ab), Load(a, {Int(0)}), Load(b, {Int(0)}),
                                        Load(c, {Int(0)}), Select(Eq(k.tx, Int(al)), Int(sa), Int(other)),
                                        Select(Eq(k.tx, Int(bl)), Int(sb), Int(other))}),
      Unrolled(i, outs, Store(O, Load(c, {i}), {k.tx, i})),
  });
  PrimFunc f = k.Make({P(O)}, {Int(1)}, 64, {a, b, c}, body);
  std::vector<float> o(64 * outs, -1);
  Result r = emu::Run(f, {o.data()}, {});
  EXPECT_TRUE(r.reports.empty()) << All(r);
  float d = o[dl * outs + dv];
  // (an infinite or NaN one makes its whole row NaN: 0 * inf)
  for (int l = 0; l < 64 && std::isfinite(d); ++l)
    for (int q = 0; q < outs; ++q) {
      if (l != dl || q != dv) {
        EXPECT_EQ(o[l * outs + q], 0.0f) << l << " d" << q;
      }
    }
  if (!eight) {
    EXPECT_EQ(d, 1.0f) << "lane " << dl << " d" << dv;
  }
  return d;
}

TEST(EmuMfma, HandWorked16x16x16) {
  // A[9][10] = 1, B[10][3] = 1, so D[9][3] = 1. A: row 9 = lane % 16, k 10 = 4 * (lane / 16) + v:
  // lane 32 + 9 = 41, a2. B: k 10 -> lane group 2, v 2; col 3 = lane % 16: lane 35, b2.
  // D: row 9 = 4 * (lane / 16) + v -> group 2, v 1; col 3: lane 35, d1.
  OneHot("16x16x16", 41, 2, 35, 2, 35, 1);
}

TEST(EmuMfma, HandWorked32x32x8) {
  // A[20][5] = 1, B[5][7] = 1, so D[20][7] = 1. A: row 20 = lane % 32, k 5 = 4 * (lane / 32) + v:
  // lane 52, a1. B: k 5 -> lane group 1, v 1; col 7: lane 39, b1. D: col 7 = lane % 32; row 20 =
  // 8 * (r / 4) + 4 * (lane / 32) + r % 4 -> lane group 1 (row 4 of block 2), r = 8: lane 39, d8.
  OneHot("32x32x8", 52, 1, 39, 1, 39, 8);
}

TEST(EmuMfma, HandWorked16x16x32F16) {
  // CDNA4 v_mfma_f32_16x16x32_f16: 8 k a lane. A[9][21] = 1, B[21][3] = 1, so D[9][3] = 1. A: row 9 =
  // lane % 16, k 21 = 8 * (lane / 16) + v -> group 2, v 5: lane 41, a5. B: k 21 -> group 2, v 5; col 3:
  // lane 35, b5. D as for 16x16x16: row 9 -> group 2, v 1; col 3: lane 35, d1.
  OneHot("16x16x32", 41, 5, 35, 5, 35, 1, "f16", 8);
  OneHot("16x16x32", 41, 5, 35, 5, 35, 1, "bf16", 8);
}

TEST(EmuMfma, HandWorked32x32x16F16) {
  // v_mfma_f32_32x32x16_{f16,bf16}: A[20][13] = 1, B[13][7] = 1, so D[20][7] = 1. A: row 20, k 13 =
  // 8 * (lane / 32) + v -> group 1, v 5: lane 52, a5. B: k 13 -> group 1, v 5; col 7: lane 39, b5. D as for
  // 32x32x8: lane 39, d8.
  OneHot("32x32x16", 52, 5, 39, 5, 39, 8, "f16", 8);
  OneHot("32x32x16", 52, 5, 39, 5, 39, 8, "bf16", 8);
}

TEST(EmuMfma, EightBitFormatsFnuzOnCdna3OcpOnCdna4) {
  // The byte 0x38 is 1.0 in OCP E4M3 (exponent 7, bias 7) and 0.5 in E4M3FNUZ (bias 8); 0x3C is 1.0 in
  // OCP E5M2 (bias 15) and 0.5 in E5M2FNUZ (bias 16). Same lanes as HandWorked16x16x32F16.
  EXPECT_EQ(OneHot("16x16x32", 41, 5, 35, 5, 35, 1, "e4m3_e4m3", 8, 0x38), 1.0f);
  EXPECT_EQ(OneHot("16x16x32", 41, 5, 35, 5, 35, 1, "fp8_fp8", 8, 0x38), 0.25f);
  EXPECT_EQ(OneHot("16x16x32", 41, 5, 35, 5, 35, 1, "e4m3_e5m2", 8, 0x38, 0x3C), 1.0f);
  EXPECT_EQ(OneHot("16x16x32", 41, 5, 35, 5, 35, 1, "fp8_bf8", 8, 0x38, 0x3C), 0.25f);
  // 0x7E: 448, OCP E4M3's largest (S.1111.110); 0x7B: 57344, E5M2's largest (S.11110.11); 0xFC is -inf in
  // E5M2, and 0x7F is NaN in OCP E4M3 but 240 in E4M3FNUZ.
  EXPECT_EQ(OneHot("32x32x16", 52, 5, 39, 5, 39, 8, "e4m3_e4m3", 8, 0x7E, 0x38), 448.0f);
  EXPECT_EQ(OneHot("32x32x16", 52, 5, 39, 5, 39, 8, "e5m2_e5m2", 8, 0x7B, 0x3C), 57344.0f);
  EXPECT_EQ(OneHot("32x32x16", 52, 5, 39, 5, 39, 8, "e5m2_e4m3", 8, 0xFC, 0x38), -INFINITY);
  EXPECT_TRUE(std::isnan(OneHot("16x16x32", 41, 5, 35, 5, 35, 1, "e4m3_e4m3", 8, 0x7F, 0x38)));
  EXPECT_EQ(OneHot("16x16x32", 41, 5, 35, 5, 35, 1, "fp8_fp8", 8, 0x7F, 0x40), 240.0f);  // 0x40 = 1.0 FNUZ
}

TEST(EmuMfma, HandWorkedF8F6F4PairsLaneGroupBlocks) {
  // CDNA4's v_mfma_f32_32x32x64_f8f6f4 / 16x16x128_f8f6f4: 32 values a lane, lane group g = lane / R holding
  // the g-th 32-value block of K; A's value v of a lane meets B's value v of the same lane group. 32x32x64:
  // A[20][37] = 1 (block 1, value 5: lane 32 + 20 = 52, a5), B[37][7] = 1 (lane 32 + 7 = 39, b5): D[20][7],
  // lane 39 d8 as for 32x32x8.
  EXPECT_EQ(OneHot("32x32x64", 52, 5, 39, 5, 39, 8, "e4m3_e4m3", 32, 0x38), 1.0f);
  // 16x16x128: A[9][85] = 1 (block 2, value 21: lane 32 + 9 = 41), B[85][3] = 1 (lane 32 + 3 = 35): D[9][3],
  // lane 35 d1; E5M2 operands (0x3C is 1.0).
  EXPECT_EQ(OneHot("16x16x128", 41, 21, 35, 21, 35, 1, "e5m2_e5m2", 32, 0x3C), 1.0f);
  EXPECT_EQ(OneHot("16x16x128", 41, 21, 35, 21, 35, 1, "e4m3_e5m2", 32, 0x40, 0x3C),
            2.0f);  // 0x40: 2.0 in E4M3
}

TEST(EmuMfma, F8F6F4ValuesOfOtherPositionsDoNotMeet) {
  // A's one at value 5 of lane group 1 and B's at value 6 of lane group 1 (k 37 and k 38): D stays 0
  // everywhere; and lane group 0 of B (k 5) does not meet lane group 1 of A.
  EXPECT_EQ(OneHot("32x32x64", 52, 5, 39, 6, 39, 8, "e4m3_e4m3", 32, 0x38), 0.0f);
  EXPECT_EQ(OneHot("32x32x64", 52, 5, 7, 5, 7, 0, "e4m3_e4m3", 32, 0x38), 0.0f);
}

TEST(EmuMfma, HandWorkedScaledF8F6F4) {
  // v_mfma_scale_f32_*_f8f6f4: the one of A (lane 52, block 1 of 32x32x64) scaled by lane 52's A scale, B's
  // by lane 39's B scale: 2^(128 - 127) * 2^(124 - 127) = 1/4. Other lanes' scales (0: 2^-127) touch nothing
  // here.
  EXPECT_EQ(OneHot("32x32x64", 52, 5, 39, 5, 39, 8, "e4m3_e4m3", 32, 0x38, -1, 128, 124, 0), 0.25f);
  // 16x16x128, the scales at their extremes: 2^127 * 2^-126 = 2
  EXPECT_EQ(OneHot("16x16x128", 41, 21, 35, 21, 35, 1, "e5m2_e5m2", 32, 0x3C, -1, 254, 1), 2.0f);
  // E8M0 255 is NaN: lane 52's whole block (its zeros too) is NaN, so row 20 of D is
  EXPECT_TRUE(std::isnan(OneHot("32x32x64", 52, 5, 39, 5, 39, 8, "e4m3_e4m3", 32, 0x38, -1, 255, 127)));
}

TEST(EmuMfma, HandWorkedF8F6F4WithFp4) {
  // E2M1 (format 4) operands of the f8f6f4 shapes: a lane's 32 values packed two a byte in 16 bytes (value v
  // in byte v / 2, the low nibble for even v; the rest of the 32-byte operand zero), codes 0..7 = 0, 0.5,
  // 1, 1.5, 2, 3, 4, 6, bit 3 the sign. One-hot values: byte 2 of lane 52 = 0x70 is its value 5 (odd: high
  // nibble) = code 7 = 6, times lane 39's value 5 = code 2 = 1: D as for e4m3 above.
  EXPECT_EQ(OneHot("32x32x64", 52, 2, 39, 2, 39, 8, "e2m1_e2m1", 32, 0x70, 0x20), 6.0f);
  // value 4 (even: low nibble of byte 2), -1.5 = code 8 | 3, times e4m3 1.0 at value 4; 16x16x128, lanes 41 /
  // 35
  EXPECT_EQ(OneHot("16x16x128", 41, 2, 35, 4, 35, 1, "e2m1_e4m3", 32, 0x0B, 0x38), -1.5f);
  // scaled: 6 * 1 * 2^(128 - 127) * 2^(124 - 127) = 1.5
  EXPECT_EQ(OneHot("32x32x64", 52, 2, 39, 2, 39, 8, "e2m1_e2m1", 32, 0x70, 0x20, 128, 124, 0), 1.5f);
  // op_sel picks the scale word's byte: A's word 0x8105 with op_sel 1 is byte 0x81 = 129 (2^2), B's 0x7D0011
  // with op_sel 2 byte 0x7D = 125 (2^-2): 6 * 1 * 2^2 * 2^-2 = 6 (bytes 0 would give 2^-122 * 2^-110)
  EXPECT_EQ(OneHot("32x32x64", 52, 2, 39, 2, 39, 8, "e2m1_e2m1", 32, 0x70, 0x20, 0x8105, 0x7D0011, 0, 1, 2),
            6.0f);
  // bytes 16..31 of a packed operand are not read: a nonzero one changes nothing
  EXPECT_EQ(OneHot("32x32x64", 52, 20, 39, 20, 39, 8, "e2m1_e2m1", 32, 0x77, 0x22), 0.0f);
  // nor are they touched: operands of 16-byte registers (read as stored from tiles of two codes a byte) give
  // the same D with no out-of-bounds or uninitialized-read report (OneHot checks there is none)
  EXPECT_EQ(OneHot("32x32x64", 52, 2, 39, 2, 39, 8, "e2m1_e2m1", 16, 0x70, 0x20), 6.0f);
}

TEST(EmuMfma, HandWorkedF8F6F4WithFp6) {
  // FP6 (E2M3 format 2, E3M2 format 3) operands of the f8f6f4 shapes: a lane's 32 values as a 6-bit stream in
  // 24 bytes (value v at bits 6v .. 6v + 5, the lowest first; the rest of the 32-byte operand zero). E2M3:
  // bias 1, codes s eem mm; E3M2: bias 3, s eee mm. Value 4 of a lane is bits 24..29, the low 6 bits of
  // byte 3. A: lane 41's value 4 = E2M3 0x2C (1 01 100: -(1 + 4/8) * 2^0 = -1.5), B: lane 35's e4m3 value 4
  // (byte 4) 1.0: D as for the fp4 case above.
  EXPECT_EQ(OneHot("16x16x128", 41, 3, 35, 4, 35, 1, "e2m3_e4m3", 32, 0x2C, 0x38), -1.5f);
  // E3M2 0x1F (0 111 11: 1.75 * 2^4 = 28, the largest) times E3M2 0x04 (0 001 00: 2^-2) = 7; 32x32x64, value
  // 4
  EXPECT_EQ(OneHot("32x32x64", 52, 3, 39, 3, 39, 8, "e3m2_e3m2", 32, 0x1F, 0x04), 7.0f);
  // value 5 straddles bytes 3 (its low 2 bits in bits 6, 7) and 4 (its high 4 bits in bits 0..3): byte 4 =
  // 0x02 alone is code 0b001000 = E2M3 1.0 (and E3M2 0b001000 = 2^(2 - 3) = 0.5); lanes 52 / 39 as for fp4's
  // value 5
  EXPECT_EQ(OneHot("32x32x64", 52, 4, 39, 4, 39, 8, "e2m3_e3m2", 32, 0x02, 0x02), 0.5f);
  // byte 3 = 0xC0 alone: value 5's low bits 0b11 (code 3: E2M3 subnormal 3/8) and value 4 = 0; times 1.0 at
  // B's value 5
  EXPECT_EQ(OneHot("32x32x64", 52, 3, 39, 4, 39, 8, "e2m3_e2m3", 32, 0xC0, 0x02), 0.375f);
  // scaled: -1.5 * 1 * 2^(129 - 127) * 2^(125 - 127) = -1.5
  EXPECT_EQ(OneHot("16x16x128", 41, 3, 35, 4, 35, 1, "e2m3_e4m3", 32, 0x2C, 0x38, 129, 125, 0), -1.5f);
  // bytes 24..31 of a packed operand are not read
  EXPECT_EQ(OneHot("32x32x64", 52, 26, 39, 26, 39, 8, "e3m2_e3m2", 32, 0x1F, 0x1F), 0.0f);
}

// tl.fp6_pack of 32 one-a-byte codes 0, 1, ..., 31 (the upper two bits set, which are not values): value e at
// bits 6e .. 6e + 5 of a 24-byte stream, then 8 zero bytes. By hand, values 0..3 are 000000 100000 010000
// 110000 read lowest bit first: bytes 0x40 (bits 6, 7 = value 1's low bits 01), 0x20, 0x0C.
TEST(EmuMfma, Fp6PackPacksFourValuesInThreeBytes) {
  Kernel k;
  Buffer O = Global("O", DataType::UInt(8), {Int(64), Int(32)});
  Buffer r = Local("r", DataType::UInt(8), 32);
  Var i = MakeVar("i");
  Stmt body = Seq({
      Unrolled(i, 32, Store(r, Cast(DataType::UInt(8), Expr(i) + Int(0xC0)), {i})),
      Void("tl.fp6_pack", {Load(r, {Int(0)}), Int(32)}),
      Unrolled(i, 32, Store(O, Load(r, {i}), {k.tx, i})),
  });
  std::vector<uint8_t> o(64 * 32, 0xEE);
  Result res = emu::Run(k.Make({P(O)}, {Int(1)}, 64, {r}, body), {o.data()}, {});
  EXPECT_TRUE(res.reports.empty()) << All(res);
  std::vector<uint8_t> want(32, 0);
  for (int e = 0; e < 32; ++e)
    for (int b = 0; b < 6; ++b)
      if ((e >> b) & 1) want[(6 * e + b) / 8] |= static_cast<uint8_t>(1u << ((6 * e + b) % 8));
  EXPECT_EQ(want[0], 0x40);
  EXPECT_EQ(want[1], 0x20);
  EXPECT_EQ(want[2], 0x0C);
  for (int l = 0; l < 64; ++l)
    EXPECT_EQ(std::vector<uint8_t>(o.begin() + l * 32, o.begin() + l * 32 + 32), want) << l;
}

// tl.fp4_pack of 8 one-a-byte codes 1, 2, ..., 8 (upper nibbles set, which are not values): ordered gives
// 0x21 0x43 0x65 0x87 (value 2i low, 2i + 1 high), interleaved 0x51 0x62 0x73 0x84 (values i and i + 4); then
// four zero bytes.
void Fp4Pack(const char* mode, const std::vector<uint8_t>& want) {
  SCOPED_TRACE(mode);
  Kernel k;
  Buffer O = Global("O", DataType::UInt(8), {Int(64), Int(8)});
  Buffer r = Local("r", DataType::UInt(8), 8);
  Var i = MakeVar("i");
  Stmt body = Seq({
      Unrolled(i, 8, Store(r, Cast(DataType::UInt(8), Expr(i) + Int(0xF1)), {i})),
      Void("tl.fp4_pack", {Load(r, {Int(0)}), Int(8), StringImm(mode)}),
      Unrolled(i, 8, Store(O, Load(r, {i}), {k.tx, i})),
  });
  std::vector<uint8_t> o(64 * 8, 0xEE);
  Result res = emu::Run(k.Make({P(O)}, {Int(1)}, 64, {r}, body), {o.data()}, {});
  EXPECT_TRUE(res.reports.empty()) << All(res);
  for (int l = 0; l < 64; ++l)
    EXPECT_EQ(std::vector<uint8_t>(o.begin() + l * 8, o.begin() + l * 8 + 8), want) << l;
}

TEST(EmuMfma, Fp4PackPacksTwoValuesAByte) {
  Fp4Pack("ordered", {0x21, 0x43, 0x65, 0x87, 0, 0, 0, 0});
  Fp4Pack("interleaved", {0x51, 0x62, 0x73, 0x84, 0, 0, 0, 0});
}

// A whole 16x16x16 product: every lane loads its operands from global memory with the ISA's
// formulas, the result is stored back the same way and compared with a double matmul.
void Full16(const std::string& ab, DataType t) {
  SCOPED_TRACE(ab);
  Kernel k;
  Buffer A = Global("A", t, {Int(16), Int(16)}), B = Global("B", t, {Int(16), Int(16)});
  Buffer D = Global("D", kF32, {Int(16), Int(16)});
  Buffer a = Local("a", t, 4), b = Local("b", t, 4), c = Local("c", kF32, 4);
  Var i = MakeVar("i");
  Expr row = Mod(k.tx, Int(16)), grp = Div(k.tx, Int(16));
  Stmt body = Seq({
      Unrolled(i, 4, Store(a, Load(A, {row, grp * Int(4) + i}), {i})),
      Unrolled(i, 4, Store(b, Load(B, {grp * Int(4) + i, row}), {i})),
      Unrolled(i, 4, Store(c, FloatImm(kF32, 0.5), {i})),
      Void("tl.mfma",
           {StringImm("16x16x16"), StringImm(ab), Load(a, {Int(0)}), Load(b, {Int(0)}), Load(c, {Int(0)})}),
      Unrolled(i, 4, Store(D, Load(c, {i}), {grp * Int(4) + i, row})),
  });
  PrimFunc f = k.Make({P(A), P(B), P(D)}, {Int(1)}, 64, {a, b, c}, body);
  std::vector<uint16_t> ha(256), hb(256);
  std::vector<double> da(256), db(256);
  std::vector<float> hd(256, -1.0f);
  for (int x = 0; x < 256; ++x) {
    da[x] = ((x * 7) % 11) - 5 + 0.25 * (x % 3);  // exact in both formats
    db[x] = ((x * 5) % 9) - 4 + 0.5 * (x % 2);
    ha[x] = t == kF16 ? H(da[x]) : BH(da[x]);
    hb[x] = t == kF16 ? H(db[x]) : BH(db[x]);
  }
  Result res = emu::Run(f, {ha.data(), hb.data(), hd.data()}, {});
  EXPECT_TRUE(res.reports.empty()) << All(res);
  for (int r = 0; r < 16; ++r)
    for (int n = 0; n < 16; ++n) {
      double ref = 0.5;
      for (int q = 0; q < 16; ++q) ref += da[r * 16 + q] * db[q * 16 + n];
      EXPECT_EQ(hd[r * 16 + n], static_cast<float>(ref)) << "D[" << r << "][" << n << "]";
    }
}

TEST(EmuMfma, F16MatchesReference) { Full16("f16", kF16); }
TEST(EmuMfma, BF16MatchesReference) { Full16("bf16", kBF16); }

TEST(EmuMfma, HalfAWaveIsReported) {
  // Only lanes 0..31 of the 64-lane wave reach the MFMA: reported, not performed.
  Kernel k;
  Buffer O = Global("O", kF32, {Int(64)});
  Buffer a = Local("a", kF16, 4), b = Local("b", kF16, 4), c = Local("c", kF32, 4);
  Var i = MakeVar("i");
  Stmt body = Seq({
      Unrolled(i, 4, Store(a, FloatImm(kF16, 1.0), {i})),
      Unrolled(i, 4, Store(b, FloatImm(kF16, 1.0), {i})),
      Unrolled(i, 4, Store(c, FloatImm(kF32, 0.0), {i})),
      If(Lt(k.tx, Int(32)),
         Void("tl.mfma", {StringImm("16x16x16"), StringImm("f16"), Load(a, {Int(0)}), Load(b, {Int(0)}),
                          Load(c, {Int(0)})}),
         nullptr),
      Store(O, Load(c, {Int(0)}), {k.tx}),
  });
  PrimFunc f = k.Make({P(O)}, {Int(1)}, 64, {a, b, c}, body);
  std::vector<float> o(64, -1);
  Result r = emu::Run(f, {o.data()}, {});
  EXPECT_EQ(Count(r, "inactive_lanes"), 1) << All(r);
  EXPECT_NE(All(r).find("wave-collective (64 lanes)"), std::string::npos) << All(r);
  EXPECT_EQ(o[0], 0.0f);  // skipped
}

TEST(EmuShfl, Width64ExchangesAcrossHalves) {
  // tl.shfl_xor(v, 32, 64): lane l reads lane l ^ 32 of its wave (a 32-lane warp could not).
  Kernel k;
  Buffer O = Global("O", kI32, {Int(128)});
  Stmt body = Store(O, Call(kI32, "tl.shfl_xor", {k.tx, Int(32), Int(64)}), {k.tx});
  PrimFunc f = k.Make({P(O)}, {Int(1)}, 128, {}, body);
  std::vector<int32_t> o(128, -1);
  Result r = emu::Run(f, {o.data()}, {});
  EXPECT_TRUE(r.reports.empty()) << All(r);
  for (int l = 0; l < 128; ++l) EXPECT_EQ(o[l], l ^ 32) << l;
}

}  // namespace
}  // namespace tl::emu
