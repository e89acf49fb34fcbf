// Hand-worked cases of the emulator's Ascend AI Core (src/emulator/intrinsics_ascend.cc): instruction streams
// written here with parameters derived by hand from the public AscendC guide's data formats (not by the
// compiler's lowering), and what the pipe model reports.
#include "emulator_test_util.h"

namespace tl::emu {
namespace {
using namespace emu_test;

Stmt Flag(const char* p, const char* q, int line = 0) {
  std::vector<Expr> a = {StringImm(p), StringImm(q), Int(0)};
  return Seq({Void("ascend.set_flag", a, line), Void("ascend.wait_flag", a, line)});
}

PrimFunc OneBlock(std::vector<Param> params, std::vector<Buffer> allocs, Stmt body) {
  return Kernel().Make(std::move(params), {Int(1)}, 1, std::move(allocs), std::move(body));
}

// C = A (3 x 20) * B (20 x 5), float16 in, float32 out, through L1 (NZ), L0A (ZZ), L0B (ZN), L0C (NZ).
// Parameters by hand: C0 = 16 halves (32 bytes). A in L1 with 16 NZ rows: A(r, c) at (c / 16) * 256 + r * 16
// + c % 16, so its two column blocks are fractals 0 and 1 and L0A's one row of fractals (m <= 16, k = 20 ->
// 2) is one LoadData of 2 fractals, stride 1. B in L1 with 32 NZ rows: B(k, c) at k * 16 + c (n = 5 < 16):
// its fractals (kb = 0, 1) are 0 and 1, each transposed into L0B's column-major fractals. L0C holds C in NZ
// with ceil(3 / 16) * 16 = 16 rows per column block: Fixpipe's source stride 16.
std::vector<float> SmallGemm(bool flags, Result* res) {
  Buffer A = Global("A", kF16, {Int(3), Int(20)}), B = Global("B", kF16, {Int(20), Int(5)});
  Buffer O = Global("O", kF32, {Int(3), Int(5)});
  Buffer a1 = Shared("a1", kF16, 16 * 32), b1 = Shared("b1", kF16, 32 * 16);
  Buffer a0 = Shared("a0", kF16, 512), b0 = Shared("b0", kF16, 512), c0 = Shared("c0", kF32, 256);
  auto at = [](const Buffer& b) { return Load(b, {Int(0)}); };
  auto g = [](const Buffer& b) { return Load(b, {Int(0), Int(0)}); };
  std::vector<Stmt> s = {
      Void("ascend.copy_gm_to_l1", {at(a1), g(A), Int(3), Int(20), Int(20), Int(16)}, 10),
      Void("ascend.copy_gm_to_l1", {at(b1), g(B), Int(20), Int(5), Int(5), Int(32)}, 11),
  };
  if (flags) s.push_back(Flag("MTE2", "MTE1"));
  s.push_back(Void("ascend.load2d", {at(a0), at(a1), Int(2), Int(1), Int(0)}, 12));
  s.push_back(Void("ascend.load2d", {at(b0), at(b1), Int(2), Int(1), Int(1)}, 13));
  if (flags) s.push_back(Flag("MTE1", "M"));
  s.push_back(Void("ascend.mmad", {at(c0), at(a0), at(b0), Int(3), Int(5), Int(20), Int(1), Int(0)}, 14));
  if (flags) s.push_back(Flag("M", "FIX"));
  s.push_back(Void("ascend.fixpipe", {g(O), at(c0), Int(3), Int(5), Int(16), Int(5)}, 15));
  PrimFunc f = OneBlock({P(A), P(B), P(O)}, {a1, b1, a0, b0, c0}, Seq(s));
  std::vector<uint16_t> a(60), b(100);
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 20; ++c) a[r * 20 + c] = H(r + c % 3 - 1);
  for (int k = 0; k < 20; ++k)
    for (int c = 0; c < 5; ++c) b[k * 5 + c] = H((k * c) % 5 - 2);
  std::vector<float> o(15, -7);
  *res = emu::Run(f, {a.data(), b.data(), o.data()}, {});
  return o;
}

TEST(EmuAscend, NzZzZnGemmWithHandDerivedParameters) {
  Result res;
  std::vector<float> o = SmallGemm(true, &res);
  EXPECT_TRUE(res.reports.empty()) << All(res);
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 5; ++c) {
      double want = 0;
      for (int k = 0; k < 20; ++k) want += (r + k % 3 - 1) * ((k * c) % 5 - 2);
      EXPECT_EQ(o[static_cast<size_t>(r * 5 + c)], want) << r << "," << c;
    }
}

// int8: C = A (3 x 40) * B^T, B^T given as 5 x 40 (n x k), int32 out. Fractals are 16 rows of 32 int8 values
// (32 bytes). A in L1 (NZ, 16 rows): A(r, c) at (c / 32) * 512 + r * 32 + c % 32: its two k blocks are
// fractals 0 and 1, and L0A's one row of fractals (m <= 16, k = 40 -> 2) is one LoadData of 2 fractals,
// stride 1, untransposed. B^T in L1 (NZ, 16 rows): B^T(c, q) at (q / 32) * 512 + c * 32 + q % 32, which is
// L0B's ZN layout already (fractal kb at kb * 512, (c % 16) * 32 + q % 32 inside): one LoadData of 2
// fractals, no transpose. L0C: int32 NZ with 16 rows a column block.
TEST(EmuAscend, Int8GemmWithHandDerivedParameters) {
  const DataType kI8 = DataType::Int(8);
  Buffer A = Global("A", kI8, {Int(3), Int(40)}), B = Global("B", kI8, {Int(5), Int(40)});
  Buffer O = Global("O", kI32, {Int(3), Int(5)});
  Buffer a1 = Shared("a1", kI8, 16 * 64), b1 = Shared("b1", kI8, 16 * 64);
  Buffer a0 = Shared("a0", kI8, 1024), b0 = Shared("b0", kI8, 1024), c0 = Shared("c0", kI32, 256);
  auto at = [](const Buffer& b) { return Load(b, {Int(0)}); };
  auto g = [](const Buffer& b) { return Load(b, {Int(0), Int(0)}); };
  Stmt body = Seq({
      Void("ascend.copy_gm_to_l1", {at(a1), g(A), Int(3), Int(40), Int(40), Int(16)}, 10),
      Void("ascend.copy_gm_to_l1", {at(b1), g(B), Int(5), Int(40), Int(40), Int(16)}, 11),
      Flag("MTE2", "MTE1"),
      Void("ascend.load2d", {at(a0), at(a1), Int(2), Int(1), Int(0)}, 12),
      Void("ascend.load2d", {at(b0), at(b1), Int(2), Int(1), Int(0)}, 13),
      Flag("MTE1", "M"),
      Void("ascend.mmad", {at(c0), at(a0), at(b0), Int(3), Int(5), Int(40), Int(1), Int(0)}, 14),
      Flag("M", "FIX"),
      Void("ascend.fixpipe", {g(O), at(c0), Int(3), Int(5), Int(16), Int(5)}, 15),
  });
  std::vector<int8_t> a(120), b(200);
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 40; ++c)
      a[static_cast<size_t>(r * 40 + c)] = static_cast<int8_t>((r * 37 + c * 11) % 255 - 127);
  for (int n = 0; n < 5; ++n)
    for (int c = 0; c < 40; ++c)
      b[static_cast<size_t>(n * 40 + c)] = static_cast<int8_t>((n * 53 + c * 7) % 251 - 125);
  std::vector<int32_t> o(15, -7);
  Result res =
      emu::Run(OneBlock({P(A), P(B), P(O)}, {a1, b1, a0, b0, c0}, body), {a.data(), b.data(), o.data()}, {});
  EXPECT_TRUE(res.reports.empty()) << All(res);
  for (int r = 0; r < 3; ++r)
    for (int n = 0; n < 5; ++n) {
      int64_t want = 0;
      for (int c = 0; c < 40; ++c)
        want += int64_t{a[static_cast<size_t>(r * 40 + c)]} * b[static_cast<size_t>(n * 40 + c)];
      EXPECT_EQ(o[static_cast<size_t>(r * 5 + n)], want) << r << "," << n;
    }
}

TEST(EmuAscend, MissingFlagsAreRacesAtBothLines) {
  Result res;
  SmallGemm(false, &res);
  ASSERT_GE(Count(res, "race"), 3) << All(res);
  // the first: MTE1's LoadData reads a1 while MTE2's DataCopy of it is not ordered before
  EXPECT_NE(res.reports[0].message.find("pipe MTE1 reads 'a1'"), std::string::npos) << All(res);
  EXPECT_NE(res.reports[0].message.find("pipe MTE2's write of it (at emu_kernel.py:10:5)"), std::string::npos)
      << All(res);
  EXPECT_NE(res.reports[0].message.find("emu_kernel.py:12"), std::string::npos) << All(res);
}

// One flag pair MTE2 -> MTE1, then MTE1 -> M: the cube's read of what MTE2 wrote is ordered through MTE1.
TEST(EmuAscend, FlagsOrderTransitively) {
  Buffer A = Global("A", kF16, {Int(16), Int(16)}), O = Global("O", kF32, {Int(16), Int(16)});
  Buffer a1 = Shared("a1", kF16, 256), b1 = Shared("b1", kF16, 256), a0 = Shared("a0", kF16, 256),
         b0 = Shared("b0", kF16, 256), c0 = Shared("c0", kF32, 256);
  auto at = [](const Buffer& b, int64_t o = 0) { return Load(b, {Int(o)}); };
  Stmt body = Seq({
      Void("ascend.copy_gm_to_l1", {at(a1), Load(A, {Int(0), Int(0)}), Int(16), Int(16), Int(16), Int(16)},
           1),
      Void("ascend.copy_gm_to_l1", {at(b1), Load(A, {Int(0), Int(0)}), Int(16), Int(16), Int(16), Int(16)},
           2),
      Flag("MTE2", "MTE1"),
      Void("ascend.load2d", {at(a0), at(a1), Int(1), Int(1), Int(0)}, 3),
      Void("ascend.load2d", {at(b0), at(b1), Int(1), Int(1), Int(0)}, 4),
      Flag("MTE1", "M"),
      Void("ascend.mmad", {at(c0), at(a0), at(b0), Int(16), Int(16), Int(16), Int(1), Int(0)}, 5),
      Flag("M", "FIX"),
      Void("ascend.fixpipe", {Load(O, {Int(0), Int(0)}), at(c0), Int(16), Int(16), Int(16), Int(16)}, 6),
      // MTE2 overwrites a1: MTE1's read of it was ordered before M (MTE1 -> M) and M before FIX, but nothing
      // orders MTE1 before this MTE2 write
      Void("ascend.copy_gm_to_l1", {at(a1), Load(A, {Int(0), Int(0)}), Int(16), Int(16), Int(16), Int(16)},
           7),
  });
  std::vector<uint16_t> a(256, H(1));
  std::vector<float> o(256);
  Result res = emu::Run(OneBlock({P(A), P(O)}, {a1, b1, a0, b0, c0}, body), {a.data(), o.data()}, {});
  ASSERT_EQ(Count(res, "race"), 1) << All(res);
  EXPECT_NE(res.reports[0].message.find("pipe MTE2 writes 'a1' element 0 while pipe MTE1's read"),
            std::string::npos)
      << All(res);
  EXPECT_EQ(o[17], 16.0f);  // a row of ones times a column of ones, 16 deep
}

TEST(EmuAscend, WaitWithoutSetIsADeadlockAndFlagsMustBalance) {
  Buffer O = Global("O", kF32, {Int(8)});
  std::vector<Expr> mv = {StringImm("MTE2"), StringImm("V"), Int(0)};
  std::vector<Expr> vm = {StringImm("V"), StringImm("MTE3"), Int(1)};
  Stmt body = Seq({
      Void("ascend.wait_flag", mv, 3),                                 // nothing set it
      Void("ascend.set_flag", vm, 4), Void("ascend.set_flag", vm, 5),  // still set: an event is lost
  });
  std::vector<float> o(8);
  Result res = emu::Run(OneBlock({P(O)}, {}, body), {o.data()}, {});
  ASSERT_EQ(Count(res, "deadlock"), 1) << All(res);
  EXPECT_NE(res.reports[0].message.find("WaitFlag<MTE2_V>(0) with no SetFlag before it"), std::string::npos)
      << All(res);
  EXPECT_EQ(Count(res, "flag_set_twice"), 1) << All(res);
  EXPECT_EQ(Count(res, "unbalanced_flag"), 1) << All(res);  // the flag set at line 5 is never waited for
}

// DataCopyPad of 3 rows x 5 halves into rows of 16 (32 bytes): the rest of each row's 32-byte block is padded
// with zeros; Add of two such tiles; back to global memory. Row 3 was never written: copying it out is
// reported, and what the vector unit computed from it stays unwritten.
TEST(EmuAscend, VectorRowsPadAndUnwrittenValuesReachingGlobalMemoryAreReported) {
  Buffer X = Global("X", kF16, {Int(3), Int(5)}), Y = Global("Y", kF16, {Int(4), Int(5)});
  Buffer u = Shared("u", kF16, 64), v = Shared("v", kF16, 64);
  auto at = [](const Buffer& b) { return Load(b, {Int(0)}); };
  Stmt body = Seq({
      Void("ascend.copy_gm_to_ub", {at(u), Load(X, {Int(0), Int(0)}), Int(3), Int(5), Int(5), Int(16)}, 1),
      Flag("MTE2V", "V"),
      Void("ascend.vbin", {StringImm("Add"), at(v), at(u), at(u), Int(64)}, 2),
      Flag("V", "MTE3"),
      Void("ascend.copy_ub_to_gm", {Load(Y, {Int(0), Int(0)}), at(v), Int(4), Int(5), Int(5), Int(16)}, 3),
  });
  std::vector<uint16_t> x(15), y(20, H(-1));
  for (int i = 0; i < 15; ++i) x[static_cast<size_t>(i)] = H(i);
  Result res = emu::Run(OneBlock({P(X), P(Y)}, {u, v}, body), {x.data(), y.data()}, {});
  EXPECT_EQ(Count(res, "race"), 0) << All(res);
  EXPECT_EQ(Count(res, "uninitialized_read"), 5) << All(res);  // row 3, columns 0..4
  for (int i = 0; i < 15; ++i) EXPECT_EQ(FromH(y[static_cast<size_t>(i)]), 2.0 * i) << i;
}

// A vector instruction must start at a 32-byte aligned address of the Unified Buffer; one row value (4 bytes)
// further on is reported, the aligned one is not.
TEST(EmuAscend, MisalignedVectorOperandsAreReported) {
  Buffer X = Global("X", kF32, {Int(16)});
  Buffer u = Shared("u", kF32, 64);
  Stmt body = Seq({
      Void("ascend.copy_gm_to_ub", {Load(u, {Int(0)}), Load(X, {Int(0)}), Int(1), Int(16), Int(16), Int(16)},
           1),
      Flag("MTE2V", "V"),
      Void("ascend.vscalar",
           {StringImm("Muls"), Load(u, {Int(32)}), Load(u, {Int(8)}), FloatImm(kF32, 2), Int(8)}, 2),
      Void("ascend.vscalar",
           {StringImm("Muls"), Load(u, {Int(40)}), Load(u, {Int(1)}), FloatImm(kF32, 2), Int(8)}, 3),
  });
  std::vector<float> x(16, 1);
  Result res = emu::Run(OneBlock({P(X)}, {u}, body), {x.data()}, {});
  ASSERT_EQ(Count(res, "misaligned"), 1) << All(res);
  EXPECT_NE(res.reports[0].message.find("operand 2 of vscalar starts at byte 4 of 'u', not a multiple of 32"),
            std::string::npos)
      << All(res);
  EXPECT_NE(res.reports[0].message.find("emu_kernel.py:3"), std::string::npos) << All(res);
}

// Compare (mode LT) of 64 floats (one 256-byte repeat) X[e] = e against 10: bit e % 8 of byte e / 8 is set
// for e < 10, so the mask's bytes are 0xFF, 0x03, then zeros (worked by hand from the guide's "one bit per
// element, lowest element first"); Select with VSEL_TENSOR_TENSOR_MODE takes X where the bit is set, else
// -1. A count of 60 floats is not whole 256-byte repeats: reported.
TEST(EmuAscend, CompareBitsAndSelectWorkedByHand) {
  const DataType kU8 = DataType::UInt(8);
  Buffer X = Global("X", kF32, {Int(64)}), M = Global("M", kU8, {Int(8)}), Y = Global("Y", kF32, {Int(64)});
  Buffer x = Shared("x", kF32, 64), t = Shared("t", kF32, 64), z = Shared("z", kF32, 64),
         y = Shared("y", kF32, 64), m = Shared("m", kU8, 32);
  auto at = [](const Buffer& b) { return Load(b, {Int(0)}); };
  auto g = [](const Buffer& b) { return Load(b, {Int(0)}); };
  auto body = [&](int count) {
    return Seq({
        Void("ascend.copy_gm_to_ub", {at(x), g(X), Int(1), Int(64), Int(64), Int(64)}, 1),
        Void("ascend.vdup", {at(t), FloatImm(kF32, 10), Int(64)}, 2),
        Void("ascend.vdup", {at(z), FloatImm(kF32, -1), Int(64)}, 3),
        Flag("MTE2V", "V"),
        Void("ascend.vcmp", {StringImm("LT"), at(m), at(x), at(t), Int(count)}, 4),
        Void("ascend.vsel", {at(y), at(m), at(x), at(z), Int(count)}, 5),
        Flag("V", "MTE3"),
        Void("ascend.copy_ub_to_gm", {g(M), at(m), Int(1), Int(8), Int(8), Int(32)}, 6),
        Void("ascend.copy_ub_to_gm", {g(Y), at(y), Int(1), Int(64), Int(64), Int(64)}, 7),
    });
  };
  std::vector<float> xv(64), yv(64, 7);
  for (int e = 0; e < 64; ++e) xv[static_cast<size_t>(e)] = static_cast<float>(e);
  std::vector<uint8_t> mv(8, 0x55);
  Result res = emu::Run(OneBlock({P(X), P(M), P(Y)}, {x, t, z, y, m}, body(64)),
                        {xv.data(), mv.data(), yv.data()}, {});
  EXPECT_TRUE(res.reports.empty()) << All(res);
  const std::vector<uint8_t> want = {0xFF, 0x03, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(mv, want);
  for (int e = 0; e < 64; ++e) EXPECT_EQ(yv[static_cast<size_t>(e)], e < 10 ? e : -1.0f) << e;
  Options quiet;
  quiet.check_uninit = false;
  Result bad = emu::Run(OneBlock({P(X), P(M), P(Y)}, {x, t, z, y, m}, body(60)),
                        {xv.data(), mv.data(), yv.data()}, {}, quiet);
  EXPECT_EQ(Count(bad, "misaligned"), 2) << All(bad);  // the Compare and the Select
  EXPECT_NE(All(bad).find("vcmp over 60 elements of 4 bytes: not whole 256-byte repeats"), std::string::npos)
      << All(bad);
}

}  // namespace
}  // namespace tl::emu
