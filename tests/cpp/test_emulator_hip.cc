// The emulator's AMD MFMA semantics (src/emulator/intrinsics_hip.cc), on hand-worked lanes from the
// CDNA3 ISA guide's operand layouts and on a whole 16x16x16 product against a double reference. The
// kernels are written by hand in thread-level IR, independently of the compiler's MFMA layouts.
#include <gtest/gtest.h>

#include <vector>

#include "emulator_test_util.h"

namespace tl::emu {
namespace {

using namespace emu_test;

// One-hot A and B: D is zero but for one element, which the ISA layout puts in one lane's register.
// `al`/`av`: the lane and register holding the A one; `bl`/`bv` the same for B; `dl`/`dv` the lane
// and register that must read 1 afterwards.
void OneHot(const std::string& shape, int al, int av, int bl, int bv, int dl, int dv) {
  SCOPED_TRACE(shape);
  const int outs = shape == "16x16x16" ? 4 : 16;
  Kernel k;
  Buffer O = Global("O", kF32, {Int(64), Int(outs)});
  Buffer a = Local("a", kF16, 4), b = Local("b", kF16, 4), c = Local("c", kF32, outs);
  Var i = MakeVar("i");
  auto one_at = [&](int lane, int reg) {
    return Select(And(Eq(k.tx, Int(lane)), Eq(i, Int(reg))), FloatImm(kF16, 1.0), FloatImm(kF16, 0.0));
  };
  Stmt body = Seq({
      Unrolled(i, 4, Store(a, one_at(al, av), {i})),
      Unrolled(i, 4, Store(b, one_at(bl, bv), {i})),
      Unrolled(i, outs, Store(c, FloatImm(kF32, 0.0), {i})),
      Void("tl.mfma",
           {StringImm(shape), StringImm("f16"), Load(a, {Int(0)}), Load(b, {Int(0)}), Load(c, {Int(0)})}),
      Unrolled(i, outs, Store(O, Load(c, {i}), {k.tx, i})),
  });
  PrimFunc f = k.Make({P(O)}, {Int(1)}, 64, {a, b, c}, body);
  std::vector<float> o(64 * outs, -1);
  Result r = emu::Run(f, {o.data()}, {});
  EXPECT_TRUE(r.reports.empty()) << All(r);
  for (int l = 0; l < 64; ++l)
    for (int q = 0; q < outs; ++q)
      EXPECT_EQ(o[l * outs + q], (l == dl && q == dv) ? 1.0f : 0.0f) << l << " d" << q;
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
