// Tests of the GPU emulator (src/emulator): number formats, hand-worked mma.sync / ldmatrix
// fragments from the PTX ISA figures, cp.async group visibility, a complete thread-level GEMM
// against a double reference, and every check (race, bounds, uninitialised read, divergent
// barrier, inactive lanes). Kernels are written by hand in thread-level IR (docs/thread_ir.md).
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "emulator/emulator.h"
#include "emulator/numeric.h"
#include "ir/function.h"

#include "emulator_test_util.h"

namespace tl::emu {
namespace {

using namespace emu_test;

TEST(EmuNumeric, Float16Bits) {
  EXPECT_EQ(H(1.0), 0x3C00);
  EXPECT_EQ(H(-2.0), 0xC000);
  EXPECT_EQ(H(65504.0), 0x7BFF);
  EXPECT_EQ(H(65520.0), 0x7C00);                         // rounds up past the largest finite value
  EXPECT_EQ(H(std::ldexp(1.0, -24)), 0x0001);            // smallest subnormal
  EXPECT_EQ(H(std::ldexp(1.0, -25)), 0x0000);            // tie to even (zero)
  EXPECT_EQ(H(1.0 + std::ldexp(1.0, -11)), 0x3C00);      // tie to even, down
  EXPECT_EQ(H(1.0 + 3 * std::ldexp(1.0, -11)), 0x3C02);  // tie to even, up
  EXPECT_EQ(FromH(0x3555), 0.333251953125);
  EXPECT_TRUE(std::isnan(FromH(0x7E00)));
  EXPECT_EQ(RoundFloat(0.1, kF16), FromH(0x2E66));
}

TEST(EmuNumeric, BFloat16AndFloat8) {
  EXPECT_EQ(BH(1.0), 0x3F80);
  EXPECT_EQ(BH(1.0 + std::ldexp(1.0, -8)), 0x3F80);  // tie to even
  EXPECT_EQ(BH(1.0 + 3 * std::ldexp(1.0, -8)), 0x3F82);
  EXPECT_EQ(EncodeMinifloat(448.0, 4, 3, true), 0x7Eu);
  EXPECT_EQ(EncodeMinifloat(1000.0, 4, 3, true), 0x7Eu);  // e4m3fn saturates
  EXPECT_EQ(DecodeMinifloat(0x01, 4, 3, true), std::ldexp(1.0, -9));
  EXPECT_TRUE(std::isnan(DecodeMinifloat(0x7F, 4, 3, true)));
  EXPECT_EQ(EncodeMinifloat(1.0, 5, 2, false), 0x3Cu);
  EXPECT_EQ(EncodeMinifloat(1e6, 5, 2, false), 0x7Cu);  // e5m2 overflows to inf
  // Conversions to e5m2 saturate (PTX cvt .satfinite, the only f32 -> e5m2 form); NaN stays NaN.
  DataType e5m2;
  ASSERT_TRUE(DataType::Parse("float8_e5m2", &e5m2));
  EXPECT_EQ(RoundFloat(1e6, e5m2), 57344.0);
  EXPECT_EQ(RoundFloat(-std::numeric_limits<double>::infinity(), e5m2), -57344.0);
  EXPECT_EQ(RoundFloat(1.125, e5m2), 1.0);
  EXPECT_TRUE(std::isnan(RoundFloat(std::nan(""), e5m2)));
  EXPECT_EQ(RoundFloat(1.0 + 1e-9, kF32), 1.0);
  EXPECT_EQ(WrapInt(int64_t{1} << 31, kI32), INT32_MIN);
  EXPECT_EQ(WrapInt(-1, DataType::UInt(8)), 255);
}

// Loads of every 16-bit pattern (the fast paths: float16 re-biased into a double, bfloat16 widened as a
// float32) against IEEE 754's definition of the binary16 / bfloat16 value, written out with ldexp.
TEST(EmuNumeric, EverySixteenBitPatternLoads) {
  for (uint32_t b = 0; b < 65536; ++b) {
    const uint16_t h = static_cast<uint16_t>(b);
    const double sign = (b >> 15) ? -1.0 : 1.0;
    const int e16 = (b >> 10) & 0x1f, m16 = b & 0x3ff;
    const double f16 = e16 == 0 ? sign * std::ldexp(m16, -24) : sign * std::ldexp(1024 + m16, e16 - 25);
    const int eb = (b >> 7) & 0xff, mb = b & 0x7f;
    const double bf = eb == 0 ? sign * std::ldexp(mb, -133) : sign * std::ldexp(128 + mb, eb - 134);
    const double x16 = LoadScalar(&h, kF16).f, xb = LoadScalar(&h, kBF16).f;
    if (e16 == 31) {
      EXPECT_TRUE(m16 ? std::isnan(x16) : x16 == sign * HUGE_VAL) << std::hex << b;
    } else {
      EXPECT_EQ(x16, f16) << std::hex << b;
      EXPECT_EQ(std::signbit(x16), (b >> 15) != 0) << std::hex << b;  // -0 stays -0
    }
    if (eb == 255)
      EXPECT_TRUE(mb ? std::isnan(xb) : xb == sign * HUGE_VAL) << std::hex << b;
    else
      EXPECT_EQ(xb, bf) << std::hex << b;
  }
  EXPECT_EQ(WrapInt(int64_t{1} << 32 | 7, DataType::UInt(32)), 7);
  EXPECT_EQ(WrapInt(0xFFFFFFFFll, kI32), -1);
  EXPECT_EQ(WrapInt(-1, DataType::UInt(32)), 0xFFFFFFFFll);
}

// ------------------------------------------------------------------------------- basics

TEST(EmuBasic, ElementwiseWithSymbolicShapeGuardsAndIntSemantics) {
  Kernel k;
  Var n = MakeVar("n");
  Buffer A = Global("A", kF32, {n}), B = Global("B", kF32, {n}), Q = Global("Q", kI32, {Int(64), Int(4)});
  Expr i = k.block[0] * Int(32) + k.tx;
  Expr neg = k.tx - Int(20);  // -20 .. 11
  Stmt body = Seq({
      If(Lt(i, n), Store(B, Load(A, {i}) * FloatImm(kF32, 2.0) + FloatImm(kF32, 1.0), {i}, L(1))),
      If(Eq(k.block[0], Int(0)),
         Seq({Store(Q, Div(neg, Int(3)), {k.tx, Int(0)}), Store(Q, Mod(neg, Int(3)), {k.tx, Int(1)}),
              Store(Q, Binary(BinaryOp::kDiv, neg, Int(3)), {k.tx, Int(2)}),
              Store(Q, (k.tx + Int(0x7fffffff)) * Int(1), {k.tx, Int(3)})})),
  });
  PrimFunc f = k.Make({P(A), P(B), P(Q), Param{n, nullptr}}, {Div(n + Int(31), Int(32))}, 32, {}, body);
  const int N = 70;
  std::vector<float> a(N), b(N + 4, -7.0f);
  std::vector<int32_t> q(64 * 4, 0);
  for (int x = 0; x < N; ++x) a[x] = 0.5f * x;
  // Symbolic dims come from syms; the grid is ceil(70/32) = 3 blocks.
  Result r = emu::Run(f, {a.data(), b.data(), q.data(), nullptr}, {{n.get(), N}});
  EXPECT_TRUE(r.reports.empty()) << All(r);
  for (int x = 0; x < N; ++x) EXPECT_EQ(b[x], 2 * a[x] + 1) << x;
  for (int x = N; x < N + 4; ++x) EXPECT_EQ(b[x], -7.0f);  // guarded lanes wrote nothing
  for (int t = 0; t < 32; ++t) {
    int v = t - 20;
    EXPECT_EQ(q[t * 4 + 0], static_cast<int>(std::floor(v / 3.0))) << v;
    EXPECT_EQ(q[t * 4 + 1], ((v % 3) + 3) % 3) << v;
    EXPECT_EQ(q[t * 4 + 2], v / 3) << v;                                                    // C truncation
    EXPECT_EQ(q[t * 4 + 3], static_cast<int32_t>(0x7fffffffu + static_cast<uint32_t>(t)));  // int32 wraps
  }
  EXPECT_GT(r.lane_ops, 3 * 32 * 5);
}

TEST(EmuBasic, LoopWithThreadDependentTripCountAndFloat16Rounding) {
  Kernel k;
  Buffer O = Global("O", kF16, {Int(32)});
  Buffer acc = Local("acc", kF16, 1);
  Var j = MakeVar("j");
  // acc = sum_{j < tx} 0.1 in float16 arithmetic (rounded after every add).
  Stmt body = Seq({Store(acc, FloatImm(kF16, 0.0), {Int(0)}),
                   For(j, Int(0), k.tx, ForKind::kSerial,
                       Store(acc, Load(acc, {Int(0)}) + FloatImm(kF16, 0.1), {Int(0)})),
                   Store(O, Load(acc, {Int(0)}), {k.tx})});
  PrimFunc f = k.Make({P(O)}, {Int(1)}, 32, {acc}, body);
  std::vector<uint16_t> o(32);
  Result r = emu::Run(f, {o.data()}, {});
  EXPECT_TRUE(r.reports.empty()) << All(r);
  double ref = 0;
  for (int t = 0; t < 32; ++t) {
    EXPECT_EQ(o[t], H(ref)) << t;
    ref = FromH(H(ref + FromH(H(0.1))));
  }
}

TEST(EmuBasic, MathIntrinsicsLocalVarInitsAndCasts) {
  Kernel k;
  Buffer O = Global("O", kF32, {Int(32), Int(6)});
  Buffer I = Global("I", kI32, {Int(32), Int(2)});
  Buffer cnt = MakeBuffer("cnt", kI32, {Int(1)}, Scope::kLocalVar);
  Expr x = Cast(kF32, k.tx) * FloatImm(kF32, 0.25);
  Stmt body = Seq({
      Store(cnt, Load(cnt, {Int(0)}) + k.tx, {Int(0)}),
      Store(O, Call(kF32, "exp2", {x}), {k.tx, Int(0)}),
      Store(O, Call(kF32, "rsqrt", {x + FloatImm(kF32, 1.0)}), {k.tx, Int(1)}),
      Store(O, Call(kF32, "fma", {x, x, FloatImm(kF32, -1.0)}), {k.tx, Int(2)}),
      Store(O, Call(kF32, "max_value", {}), {k.tx, Int(3)}),
      Store(O, Call(kF32, "tanh", {x - FloatImm(kF32, 4.0)}), {k.tx, Int(4)}),
      Store(O, Cast(kF32, Cast(kF16, x * FloatImm(kF32, 1000.0))), {k.tx, Int(5)}),  // fp16 overflow -> inf
      Store(I, Load(cnt, {Int(0)}), {k.tx, Int(0)}),
      Store(I, Cast(kI32, Cast(kF32, k.tx) * FloatImm(kF32, 1e9f) - FloatImm(kF32, 2.5)), {k.tx, Int(1)}),
  });
  auto kn = std::make_shared<KernelNode>(std::vector<Expr>{Int(1)}, std::vector<Var>{MakeVar("bx")},
                                         std::vector<Expr>{Int(32)}, std::vector<Buffer>{cnt},
                                         std::vector<std::pair<Buffer, Expr>>{{cnt, Int(100)}},
                                         Let(k.tx, Call(kI32, "tl.thread_idx", {}), body), Span{});
  PrimFunc f = MakePrimFunc("math", {P(O), P(I)}, kn);
  std::vector<float> o(32 * 6);
  std::vector<int32_t> iv(64);
  Result r = emu::Run(f, {o.data(), iv.data()}, {});
  EXPECT_TRUE(r.reports.empty()) << All(r);
  for (int t = 0; t < 32; ++t) {
    float xf = 0.25f * t;
    EXPECT_EQ(o[t * 6 + 0], static_cast<float>(std::exp2(static_cast<double>(xf))));
    EXPECT_EQ(o[t * 6 + 1], static_cast<float>(1.0 / std::sqrt(xf + 1.0)));
    EXPECT_EQ(o[t * 6 + 2], static_cast<float>(std::fma(xf, xf, -1.0)));
    EXPECT_EQ(o[t * 6 + 3], std::numeric_limits<float>::max());
    EXPECT_EQ(o[t * 6 + 4], static_cast<float>(std::tanh(xf - 4.0)));
    double big = xf * 1000.0;
    EXPECT_EQ(o[t * 6 + 5], big >= 65520 ? INFINITY : FromH(H(big))) << t;
    EXPECT_EQ(iv[t * 2 + 0], 100 + t);                                   // var_inits then += tx, per thread
    double c = static_cast<float>(static_cast<float>(t * 1e9f) - 2.5f);  // float32 arithmetic
    EXPECT_EQ(iv[t * 2 + 1], c > 2147483647.0 ? 2147483647 : static_cast<int32_t>(c)) << t;  // saturating cvt
  }
}

// ------------------------------------------------------------------------------- mma.sync

// Each lane loads its A/B/C fragments straight from global memory with the ISA's formulas
// (groupID = lane>>2, threadID_in_group = lane%4), runs one mma and stores D the same way.
void RunMmaFromGlobal(const std::string& ab, DataType t) {
  Kernel k;
  Buffer A = Global("A", t, {Int(16), Int(16)}), B = Global("B", t, {Int(16), Int(8)});
  Buffer C = Global("C", kF32, {Int(16), Int(8)}), D = Global("D", kF32, {Int(16), Int(8)});
  Buffer a = Local("a", t, 8), b = Local("b", t, 4), c = Local("c", kF32, 4);
  Var i = MakeVar("i");
  Expr g = Div(k.tx, Int(4)), tg = Mod(k.tx, Int(4));
  Expr lo = Mod(i, Int(2));
  Stmt body = Seq({
      Unrolled(i, 8,
               Store(a,
                     Load(A, {g + Int(8) * Mod(Div(i, Int(2)), Int(2)),
                              tg * Int(2) + lo + Int(8) * Div(i, Int(4))}),
                     {i})),
      Unrolled(i, 4, Store(b, Load(B, {tg * Int(2) + lo + Int(8) * Div(i, Int(2)), g}), {i})),
      Unrolled(i, 4, Store(c, Load(C, {g + Int(8) * Div(i, Int(2)), tg * Int(2) + lo}), {i})),
      Void("tl.mma_sync",
           {StringImm("m16n8k16"), StringImm(ab), Load(a, {Int(0)}), Load(b, {Int(0)}), Load(c, {Int(0)})}),
      Unrolled(i, 4, Store(D, Load(c, {i}), {g + Int(8) * Div(i, Int(2)), tg * Int(2) + lo})),
  });
  PrimFunc f = k.Make({P(A), P(B), P(C), P(D)}, {Int(1)}, 32, {a, b, c}, body);
  std::vector<uint16_t> ha(256), hb(128);
  std::vector<double> da(256), db(128);
  std::vector<float> hc(128), hd(128, -1.0f);
  auto enc = [&](double x) { return t == kF16 ? H(x) : BH(x); };
  for (int r = 0; r < 16; ++r)
    for (int q = 0; q < 16; ++q) {
      da[r * 16 + q] = ((r * 7 + q * 3) % 11) - 5 + 0.25 * (q % 3);  // exact in both formats
      ha[r * 16 + q] = enc(da[r * 16 + q]);
    }
  for (int q = 0; q < 16; ++q)
    for (int n = 0; n < 8; ++n) {
      db[q * 8 + n] = ((q * 5 + n * 2) % 9) - 4 + 0.5 * (n % 2);
      hb[q * 8 + n] = enc(db[q * 8 + n]);
    }
  for (int x = 0; x < 128; ++x) hc[x] = 0.125f * x;
  Result res = emu::Run(f, {ha.data(), hb.data(), hc.data(), hd.data()}, {});
  EXPECT_TRUE(res.reports.empty()) << All(res);
  for (int r = 0; r < 16; ++r)
    for (int n = 0; n < 8; ++n) {
      double ref = hc[r * 8 + n];
      for (int q = 0; q < 16; ++q) ref += da[r * 16 + q] * db[q * 8 + n];
      EXPECT_EQ(hd[r * 8 + n], static_cast<float>(ref)) << ab << " D[" << r << "][" << n << "]";
    }
  // Hand-worked from the ISA figure: lane 5 (groupID 1, threadID_in_group 1) holds
  // c0 = D[1][2], c1 = D[1][3], c2 = D[9][2], c3 = D[9][3]; D[9][3] is checked above, and the
  // fragment formulas are the same ones the kernel used to place it there.
}

TEST(EmuMma, F16FragmentsMatchReferenceMatmul) { RunMmaFromGlobal("f16", kF16); }
TEST(EmuMma, BF16FragmentsMatchReferenceMatmul) { RunMmaFromGlobal("bf16", kBF16); }

TEST(EmuMma, HandWorkedLaneFragments) {
  // A = one-hot at (9, 10), B = one-hot at (10, 3): D is zero except D[9][3] = 1, which the ISA
  // figure places in lane 4*9%8.. : row 9 = groupID 1 + 8 -> c2/c3 of lanes 4..7; col 3 =
  // 2*1 + 1 -> threadID_in_group 1, c3. So only lane 5's c3 is 1. A[9][10]: row 9 -> a2,a3,a6,a7
  // of groupID 1; col 10 = 2*1 + 0 + 8 -> threadID_in_group 1, a6. B[10][3]: row 10 = 2*1+0+8 ->
  // threadID_in_group 1, b2; col 3 -> groupID 3: lane 13's b2.
  Kernel k;
  Buffer O = Global("O", kF32, {Int(32), Int(4)});
  Buffer a = Local("a", kF16, 8), b = Local("b", kF16, 4), c = Local("c", kF32, 4);
  Var i = MakeVar("i");
  Stmt body = Seq({
      Unrolled(
          i, 8,
          Store(a, Select(And(Eq(k.tx, Int(5)), Eq(i, Int(6))), FloatImm(kF16, 1.0), FloatImm(kF16, 0.0)),
                {i})),
      Unrolled(
          i, 4,
          Store(b, Select(And(Eq(k.tx, Int(13)), Eq(i, Int(2))), FloatImm(kF16, 1.0), FloatImm(kF16, 0.0)),
                {i})),
      Unrolled(i, 4, Store(c, FloatImm(kF32, 0.0), {i})),
      Void("tl.mma_sync", {StringImm("m16n8k16"), StringImm("f16"), Load(a, {Int(0)}), Load(b, {Int(0)}),
                           Load(c, {Int(0)})}),
      Unrolled(i, 4, Store(O, Load(c, {i}), {k.tx, i})),
  });
  PrimFunc f = k.Make({P(O)}, {Int(1)}, 32, {a, b, c}, body);
  std::vector<float> o(128, -1);
  Result r = emu::Run(f, {o.data()}, {});
  EXPECT_TRUE(r.reports.empty()) << All(r);
  for (int l = 0; l < 32; ++l)
    for (int q = 0; q < 4; ++q) EXPECT_EQ(o[l * 4 + q], (l == 5 && q == 3) ? 1.0f : 0.0f) << l << " c" << q;
}

TEST(EmuMma, Tf32HandWorkedLaneFragmentsAndRounding) {
  // mma.m16n8k8 .tf32 (PTX ISA figures, g = lane>>2, tg = lane%4): a_i at (g + 8*(i&1), tg + 4*(i>>1)),
  // b_i at (k = tg + 4*i, n = g), c_i at (g + 8*(i>=2), 2*tg + (i&1)). A one-hot at (9, 2): row 9 -> g 1,
  // i&1 = 1; col 2 -> tg 2, i>>1 = 0: lane 6's a1 (a2 would be (1, 6)). B one-hot at (2, 3): k 2 -> tg 2, b0;
  // n 3 -> g 3: lane 14's b0. D[9][3]: row 9 -> c2/c3 of g 1, col 3 -> tg 1, c3: lane 5's c3. The A value 1 +
  // 2^-11 is a tie for TF32 and cvt.rna rounds it away from zero to 1 + 2^-10; B = 3 is exact.
  Kernel k;
  Buffer O = Global("O", kF32, {Int(32), Int(4)});
  Buffer a = Local("a", kF32, 4), b = Local("b", kF32, 2), c = Local("c", kF32, 4);
  Var i = MakeVar("i");
  const double tie = 1.0 + std::ldexp(1.0, -11);
  auto tf32 = [](Expr x) { return Call(kF32, "tl.to_tf32", {std::move(x)}); };
  Stmt body = Seq({
      Unrolled(
          i, 4,
          Store(a,
                tf32(Select(And(Eq(k.tx, Int(6)), Eq(i, Int(1))), FloatImm(kF32, tie), FloatImm(kF32, 0.0))),
                {i})),
      Unrolled(
          i, 2,
          Store(b,
                tf32(Select(And(Eq(k.tx, Int(14)), Eq(i, Int(0))), FloatImm(kF32, 3.0), FloatImm(kF32, 0.0))),
                {i})),
      Unrolled(i, 4, Store(c, FloatImm(kF32, 0.0), {i})),
      Void("tl.mma_sync", {StringImm("m16n8k8"), StringImm("tf32"), Load(a, {Int(0)}), Load(b, {Int(0)}),
                           Load(c, {Int(0)})}),
      Unrolled(i, 4, Store(O, Load(c, {i}), {k.tx, i})),
  });
  PrimFunc f = k.Make({P(O)}, {Int(1)}, 32, {a, b, c}, body);
  std::vector<float> o(128, -1);
  Result r = emu::Run(f, {o.data()}, {});
  EXPECT_TRUE(r.reports.empty()) << All(r);
  const float want = static_cast<float>(3.0 * (1.0 + std::ldexp(1.0, -10)));
  for (int l = 0; l < 32; ++l)
    for (int q = 0; q < 4; ++q) EXPECT_EQ(o[l * 4 + q], (l == 5 && q == 3) ? want : 0.0f) << l << " c" << q;
}

// ------------------------------------------------------------------------------- ldmatrix

// Shared S holds S[e] = e. Matrix q's row r starts at element rowaddr(q, r) = (r * 4 + q) * 8 + 256
// (rows of the four matrices interleaved). Lanes past 8*num supply an out-of-range address that
// must not be read.
void RunLdmatrix(int num, bool trans) {
  SCOPED_TRACE("x" + std::to_string(num) + (trans ? " trans" : ""));
  Kernel k;
  Buffer O = Global("O", kF32, {Int(32), Int(8)});
  Buffer S = Shared("S", kF16, 512);
  Buffer d = Local("d", kF16, 8);
  Var i = MakeVar("i");
  Expr q = Div(k.tx, Int(8)), r = Mod(k.tx, Int(8));
  Expr addr = Select(Lt(k.tx, Int(8 * num)), (r * Int(4) + q) * Int(8) + Int(256), Int(100000));
  Stmt body = Seq({
      Unrolled(i, 16, Store(S, Cast(kF16, k.tx * Int(16) + i), {k.tx * Int(16) + i})),
      Sync(),
      Void("tl.ldmatrix", {Int(trans), Int(num), Load(d, {Int(0)}), Load(S, {addr})}),
      Unrolled(i, 2 * num, Store(O, Cast(kF32, Load(d, {i})), {k.tx, i})),
  });
  PrimFunc f = k.Make({P(O)}, {Int(1)}, 32, {S, d}, body);
  std::vector<float> o(256, -1);
  Result res = emu::Run(f, {o.data()}, {});
  EXPECT_TRUE(res.reports.empty()) << All(res);
  auto rowaddr = [](int qq, int rr) { return (rr * 4 + qq) * 8 + 256; };
  for (int l = 0; l < 32; ++l)
    for (int qq = 0; qq < num; ++qq)
      for (int j = 0; j < 2; ++j) {
        int row = l / 4, col = 2 * (l % 4) + j;
        int expect = trans ? rowaddr(qq, col) + row : rowaddr(qq, row) + col;
        EXPECT_EQ(o[l * 8 + 2 * qq + j], expect) << "lane " << l << " reg " << qq << " half " << j;
      }
}

TEST(EmuLdmatrix, X1) { RunLdmatrix(1, false); }
TEST(EmuLdmatrix, X2) { RunLdmatrix(2, false); }
TEST(EmuLdmatrix, X4) { RunLdmatrix(4, false); }
TEST(EmuLdmatrix, X1Trans) { RunLdmatrix(1, true); }
TEST(EmuLdmatrix, X2Trans) { RunLdmatrix(2, true); }
TEST(EmuLdmatrix, X4Trans) { RunLdmatrix(4, true); }

// ------------------------------------------------------------------------------- stmatrix

// The inverse of ldmatrix (PTX ISA, stmatrix, sm_90): lane l's register q holds 8*l + 2*q + j (j = 0, 1:
// its low and high half); lane 8q + r gives the address of row r of matrix q, rowaddr(q, r) = (r*4 + q)*8 + 256
// as above. Afterwards row r, column c of matrix q holds the value of lane 4r + c/2, register q, half c%2.
TEST(EmuStmatrix, X4) {
  Kernel k;
  Buffer O = Global("O", kF32, {Int(512)});
  Buffer S = Shared("S", kF16, 512);
  Buffer d = Local("d", kF16, 8);
  Var i = MakeVar("i");
  Expr q = Div(k.tx, Int(8)), r = Mod(k.tx, Int(8));
  Expr addr = (r * Int(4) + q) * Int(8) + Int(256);
  Stmt body = Seq({
      Unrolled(i, 16, Store(S, Cast(kF16, Int(-1)), {k.tx * Int(16) + i})),
      Unrolled(i, 8, Store(d, Cast(kF16, k.tx * Int(8) + i), {i})),
      Sync(),
      Void("tl.stmatrix", {Int(0), Int(4), Load(S, {addr}), Load(d, {Int(0)})}),
      Sync(),
      Unrolled(i, 16, Store(O, Cast(kF32, Load(S, {k.tx * Int(16) + i})), {k.tx * Int(16) + i})),
  });
  PrimFunc f = k.Make({P(O)}, {Int(1)}, 32, {S, d}, body);
  std::vector<float> o(512, -2);
  Result res = emu::Run(f, {o.data()}, {});
  EXPECT_TRUE(res.reports.empty()) << All(res);
  for (int e = 0; e < 256; ++e) EXPECT_EQ(o[e], -1) << "element " << e << " is outside every matrix";
  for (int qq = 0; qq < 4; ++qq)
    for (int rr = 0; rr < 8; ++rr)
      for (int c = 0; c < 8; ++c) {
        const int lane = 4 * rr + c / 2;
        EXPECT_EQ(o[(rr * 4 + qq) * 8 + 256 + c], 8 * lane + 2 * qq + c % 2)
            << "matrix " << qq << " row " << rr << " col " << c;
      }
}

// ------------------------------------------------------------------------------- cp.async

TEST(EmuCpAsync, DataLandsOnlyAtTheCoveringWait) {
  // 32 threads, each copies 16 bytes (8 halves) twice: group 0 into S[0:256], group 1 into
  // S[256:512]. Reads: before any wait (P0), after wait_group 1 (P1: group 0 landed, group 1 not),
  // after wait_group 0 (P2).
  Kernel k;
  Buffer G = Global("G", kF16, {Int(512)});
  Buffer O = Global("O", kF32, {Int(3), Int(2), Int(32)});
  Buffer S = Shared("S", kF16, 512);
  auto probe = [&](int p, int line) {
    return Seq({Store(O, Cast(kF32, Load(S, {k.tx * Int(8)})), {Int(p), Int(0), k.tx}, L(line)),
                Store(O, Cast(kF32, Load(S, {Int(256) + k.tx * Int(8)})), {Int(p), Int(1), k.tx}, L(line))});
  };
  Stmt body = Seq({
      Void("tl.cp_async", {Load(S, {k.tx * Int(8)}), Load(G, {k.tx * Int(8)}), Int(16), Bool(true)}, 1),
      Void("tl.cp_async_commit", {}),
      Void("tl.cp_async",
           {Load(S, {Int(256) + k.tx * Int(8)}), Load(G, {Int(256) + k.tx * Int(8)}), Int(16), Bool(true)},
           2),
      Void("tl.cp_async_commit", {}),
      probe(0, 3),
      Void("tl.cp_async_wait", {Int(1)}),
      probe(1, 4),
      Void("tl.cp_async_wait", {Int(0)}),
      probe(2, 5),
  });
  PrimFunc f = k.Make({P(G), P(O)}, {Int(1)}, 32, {S}, body);
  std::vector<uint16_t> g(512);
  for (int x = 0; x < 512; ++x) g[x] = H(x + 1);
  std::vector<float> o(3 * 2 * 32, -1);
  Options opt;
  opt.max_reports = 1000;
  Result r = emu::Run(f, {g.data(), o.data()}, {}, opt);
  // P0 reads 64 never-written elements (P1's reads of group 1 hit elements already reported:
  // each element is reported once). Nothing else is reported.
  EXPECT_EQ(Count(r, "uninitialized_read"), 64) << All(r);
  EXPECT_EQ(static_cast<int>(r.reports.size()), 64) << All(r);
  for (int t = 0; t < 32; ++t) {
    EXPECT_EQ(o[(0 * 2 + 0) * 32 + t], 0.0f);
    EXPECT_EQ(o[(0 * 2 + 1) * 32 + t], 0.0f);
    EXPECT_EQ(o[(1 * 2 + 0) * 32 + t], t * 8 + 1);
    EXPECT_EQ(o[(1 * 2 + 1) * 32 + t], 0.0f);
    EXPECT_EQ(o[(2 * 2 + 0) * 32 + t], t * 8 + 1);
    EXPECT_EQ(o[(2 * 2 + 1) * 32 + t], 256 + t * 8 + 1);
  }
  EXPECT_NE(r.reports[0].message.find("emu_kernel.py:3"), std::string::npos) << r.reports[0].message;
}

TEST(EmuCpAsync, ReadBeforeWaitSeesStaleDataAndInvalidZeroFills) {
  Kernel k;
  Buffer G = Global("G", kF32, {Int(64)});
  Buffer O = Global("O", kF32, {Int(2), Int(32)});
  Buffer S = Shared("S", kF32, 32 * 4);
  Var i = MakeVar("i");
  Expr valid = Lt(k.tx, Int(16));
  Stmt body = Seq({
      Unrolled(i, 4, Store(S, FloatImm(kF32, 7.0), {k.tx * Int(4) + i})),
      // Threads >= 16 copy from an address past the end of G, but with valid=false: no read,
      // no report, zero fill.
      Void("tl.cp_async", {Load(S, {k.tx * Int(4)}), Load(G, {k.tx * Int(4)}), Int(16), valid}, 1),
      Void("tl.cp_async_commit", {}),
      Store(O, Load(S, {k.tx * Int(4) + Int(1)}), {Int(0), k.tx}, L(2)),  // stale: 7
      Void("tl.cp_async_wait", {Int(0)}),
      Store(O, Load(S, {k.tx * Int(4) + Int(1)}), {Int(1), k.tx}, L(3)),
  });
  PrimFunc f = k.Make({P(G), P(O)}, {Int(1)}, 32, {S}, body);
  std::vector<float> g(64), o(64, -1);
  for (int x = 0; x < 64; ++x) g[x] = 100.0f + x;
  Result r = emu::Run(f, {g.data(), o.data()}, {});
  EXPECT_TRUE(r.reports.empty()) << All(r);
  for (int t = 0; t < 32; ++t) {
    EXPECT_EQ(o[t], 7.0f) << t;
    EXPECT_EQ(o[32 + t], t < 16 ? 100.0f + t * 4 + 1 : 0.0f) << t;
  }
}

// ------------------------------------------------------------------------------- a GEMM

// C[M][N] (float32) = A[M][K] (fp16, row-major) * B[K][N] (fp16, row-major). One warp per 16x8 tile
// of C; per 16-wide k step: cp.async the A tile (16x16) and B tile (16x8) into shared, wait,
// barrier, ldmatrix.x4 for A, ldmatrix.x2.trans for B, mma.sync, barrier.
PrimFunc GemmKernel(int M, int N, int K, bool forget_second_barrier) {
  Kernel k;
  Buffer A = Global("A", kF16, {Int(M), Int(K)}), B = Global("B", kF16, {Int(K), Int(N)});
  Buffer C = Global("C", kF32, {Int(M), Int(N)});
  Buffer As = Shared("As", kF16, 256), Bs = Shared("Bs", kF16, 128);
  Buffer a = Local("a", kF16, 8), b = Local("b", kF16, 4), c = Local("c", kF32, 4);
  Var ko = MakeVar("ko"), i = MakeVar("i");
  Expr bx = k.block[0], by = k.block[1], tx = k.tx;
  Expr g = Div(tx, Int(4)), tg = Mod(tx, Int(4));
  Expr lq = Div(tx, Int(8)), lr = Mod(tx, Int(8));
  Stmt step = Seq({
      // A tile: lane copies row tx/2, columns (tx%2)*8 .. +8.
      Void("tl.cp_async",
           {Load(As, {Div(tx, Int(2)) * Int(16) + Mod(tx, Int(2)) * Int(8)}),
            Load(A, {by * Int(16) + Div(tx, Int(2)), ko * Int(16) + Mod(tx, Int(2)) * Int(8)}), Int(16),
            Bool(true)},
           10),
      // B tile: lanes 0..15 copy row k = tx (8 halves).
      If(Lt(tx, Int(16)),
         Void("tl.cp_async",
              {Load(Bs, {tx * Int(8)}), Load(B, {ko * Int(16) + tx, bx * Int(8)}), Int(16), Bool(true)}, 11)),
      Void("tl.cp_async_commit", {}, 12),
      Void("tl.cp_async_wait", {Int(0)}, 13),
      Sync(14),
      // A: matrix q = (rows 8*(q%2).., k 8*(q/2)..) gives a0a1, a2a3, a4a5, a6a7.
      Void("tl.ldmatrix",
           {Int(0), Int(4), Load(a, {Int(0)}),
            Load(As, {(lr + Int(8) * Mod(lq, Int(2))) * Int(16) + Int(8) * Div(lq, Int(2))})},
           15),
      // B: matrix q = k rows 8q..8q+7 of the [k][n] tile, transposed.
      Void("tl.ldmatrix",
           {Int(1), Int(2), Load(b, {Int(0)}), Load(Bs, {(Int(8) * Mod(lq, Int(2)) + lr) * Int(8)})}, 16),
      Void("tl.mma_sync",
           {StringImm("m16n8k16"), StringImm("f16"), Load(a, {Int(0)}), Load(b, {Int(0)}), Load(c, {Int(0)})},
           17),
      forget_second_barrier ? Stmt() : Sync(18),
  });
  Stmt body = Seq({
      Unrolled(i, 4, Store(c, FloatImm(kF32, 0.0), {i})),
      For(ko, Int(0), Int(K / 16), ForKind::kSerial, step),
      Unrolled(i, 4,
               Store(C, Load(c, {i}),
                     {by * Int(16) + g + Int(8) * Div(i, Int(2)), bx * Int(8) + tg * Int(2) + Mod(i, Int(2))},
                     L(19))),
  });
  return k.Make({P(A), P(B), P(C)}, {Int(N / 8), Int(M / 16)}, 32, {As, Bs, a, b, c}, body);
}

TEST(EmuGemm, ThreadLevelGemmMatchesDoubleReference) {
  const int M = 64, N = 32, K = 128;
  std::mt19937 rng(42);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<uint16_t> a(M * K), b(K * N);
  for (auto& x : a) x = H(dist(rng));
  for (auto& x : b) x = H(dist(rng));
  std::vector<float> c(M * N, -1);
  auto start = std::chrono::steady_clock::now();
  Result r = emu::Run(GemmKernel(M, N, K, false), {a.data(), b.data(), c.data()}, {});
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_TRUE(r.reports.empty()) << All(r);
  double max_err = 0;
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      double ref = 0, mag = 0;
      for (int q = 0; q < K; ++q) {
        ref += FromH(a[m * K + q]) * FromH(b[q * N + n]);
        mag += std::fabs(FromH(a[m * K + q]) * FromH(b[q * N + n]));
      }
      double err = std::fabs(c[m * N + n] - ref);
      max_err = std::max(max_err, err);
      ASSERT_LE(err, 1e-6 * mag + 1e-6) << "C[" << m << "][" << n << "]";
    }
  std::printf("[ emu gemm ] %dx%dx%d: %lld lane ops in %.4f s = %.1f M lane ops/s, max |err| %.3g\n", M, N, K,
              static_cast<long long>(r.lane_ops), secs, r.lane_ops / secs / 1e6, max_err);
}

TEST(EmuGemm, MissingBarrierBeforeOverwriteIsARace) {
  // Without the trailing barrier, the next step's cp.async overwrites As/Bs while other lanes of
  // the previous step may still be reading them through ldmatrix.
  const int M = 16, N = 8, K = 32;
  std::vector<uint16_t> a(M * K, H(1.0)), b(K * N, H(1.0));
  std::vector<float> c(M * N);
  Result r = emu::Run(GemmKernel(M, N, K, true), {a.data(), b.data(), c.data()}, {});
  EXPECT_GT(Count(r, "race"), 0) << All(r);
  EXPECT_NE(r.reports[0].message.find("emu_kernel.py:10"), std::string::npos) << r.reports[0].message;
}

// ------------------------------------------------------------------------------- checks

}  // namespace
}  // namespace tl::emu
