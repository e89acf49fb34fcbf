// The emulator's TMA (src/emulator/intrinsics_tma.cc) on hand-written thread-level IR: the box lands in
// shared memory only at the wait on its mbarrier, in the swizzle of address bits [4, 4+b) by [7, 7+b)
// (computed here from the PTX ISA's rule, independently of the emulator), out-of-bounds elements read as
// zero; missing transaction bytes are a deadlock, a copy nobody waits for and a misaligned destination
// are reported.
#include "emulator_test_util.h"

namespace tl::emu {
namespace {
using namespace emu_test;

Expr Map(const Buffer& g, std::vector<int64_t> box, int swizzle) {
  std::vector<Expr> b, zeros(g->shape.size(), Int(0));
  for (auto x : box) b.push_back(Int(x));
  return Call(DataType::Handle(), "tl.tensor_map",
              {Load(g, zeros), Call(DataType::Handle(), "list", b), Int(swizzle)});
}

// G [10, 16] f16; an 8 x 16 box (32-byte rows, 32B swizzle) at rows 4..11 (10 and 11 out of bounds) lands
// in S; `bytes`: the expect-tx count; `wait`: whether the threads wait; `dst`: the destination element.
struct TmaCase {
  Kernel k;
  Buffer G = Global("G", kF16, {Int(10), Int(16)});
  Buffer O = Global("O", kF32, {Int(2), Int(128)});
  Buffer S = Shared("S", kF16, 160);
  Buffer B = MakeBuffer("bar", DataType::UInt(64), {Int(1)}, Scope::kShared);
  std::vector<uint16_t> g = std::vector<uint16_t>(160);
  std::vector<float> o = std::vector<float>(256, -1);
  Result Run(int64_t bytes, bool wait, int64_t dst = 0) {
    Expr bar = Load(B, {Int(0)});
    auto probe = [&](int p, int line) {  // 32 threads copy the 128 physical elements of S to O[p]
      Var i = MakeVar("i");
      return Unrolled(
          i, 4, Store(O, Cast(kF32, Load(S, {k.tx * Int(4) + i})), {Int(p), k.tx * Int(4) + i}, L(line)));
    };
    std::vector<Stmt> body{
        If(Eq(k.tx, Int(0)), Void("tl.mbarrier_init", {bar, Int(1)}, 1)), Sync(),
        If(Eq(k.tx, Int(0)),
           Seq({Void("tl.mbarrier_arrive_expect_tx", {bar, Int(bytes)}, 2),
                Void("tl.tma_load", {Load(S, {Int(dst)}), bar, Map(G, {8, 16}, 32), Int(4), Int(0)}, 3)})),
        probe(0, 4)};
    if (wait) body.push_back(Void("tl.mbarrier_wait_parity", {bar, Int(0)}, 5));
    body.push_back(probe(1, 6));
    PrimFunc f = k.Make({P(G), P(O)}, {Int(1)}, 32, {S, B}, Seq(body));
    for (int x = 0; x < 160; ++x) g[x] = H(x + 1);
    Options opt;
    opt.max_reports = 1000;
    return emu::Run(f, {g.data(), o.data()}, {}, opt);
  }
};

// PTX ISA, 32B swizzle: the 16-byte chunk bit 4 of the byte address flips with bit 7.
int64_t Swizzle32(int64_t byte) { return byte ^ (((byte >> 7) & 1) << 4); }

TEST(EmuTma, BoxLandsAtTheWaitSwizzledWithZeroFill) {
  TmaCase c;
  Result r = c.Run(256, true);
  // Before the wait nothing has landed: 128 never-written elements are read, while the copy may be
  // writing them (a race); after the wait, nothing is reported.
  EXPECT_EQ(Count(r, "uninitialized_read"), 128) << All(r);
  EXPECT_GE(Count(r, "race"), 1) << All(r);
  EXPECT_EQ(static_cast<int>(r.reports.size()), 128 + Count(r, "race")) << All(r);
  for (auto& rep : r.reports)
    EXPECT_EQ(rep.message.find("emu_kernel.py:6"), std::string::npos) << rep.message;
  for (int e = 0; e < 128; ++e) {
    const int row = 4 + e / 16, col = e % 16;
    const double want = row < 10 ? row * 16 + col + 1 : 0.0;  // rows 10 and 11: out of bounds, zero
    const int64_t phys = Swizzle32(2 * e) / 2;
    EXPECT_EQ(c.o[static_cast<size_t>(128 + phys)], want) << "box element " << e;
    EXPECT_EQ(c.o[static_cast<size_t>(phys)], 0.0f) << "box element " << e << " before the wait";
  }
}

TEST(EmuTma, MissingTransactionBytesAreADeadlock) {
  TmaCase c;
  Result r = c.Run(512, true);
  ASSERT_EQ(Count(r, "deadlock"), 1) << All(r);
  for (auto& rep : r.reports)
    if (rep.kind == "deadlock") {
      EXPECT_NE(rep.message.find("256 transaction bytes are missing"), std::string::npos) << rep.message;
      EXPECT_NE(rep.message.find("emu_kernel.py:5"), std::string::npos) << rep.message;
    }
}

TEST(EmuTma, ACopyNobodyWaitsForIsReported) {
  TmaCase c;
  Result r = c.Run(256, false);
  ASSERT_EQ(Count(r, "tma_not_waited"), 1) << All(r);
  EXPECT_NE(All(r).find("emu_kernel.py:3"), std::string::npos) << All(r);
}

// The TMA formats 16U4_ALIGN16B and 16U6_ALIGN16B (tl.tensor_map's fourth operand, 1 and 2), from CUDA's
// cuda.h: "copies '16 x U4' packed values to memory aligned as 16 bytes. There are 8 byte gaps between every
// 8 byte chunk of packed values" ('16 x U6' ... "4 byte gaps between every 12 byte chunk"). G holds 3 rows of
// 128 values, 16 a group in n = 8 (fp4) or 12 (fp6) bytes (64 / 96 bytes a row); a box of 2 rows x 128 values
// at row 2 (row 3 out of bounds) fills S's 256 bytes: row r's group g at bytes 128 r + 16 g .. + n, the other
// 16 - n of each 16 unwritten. The transaction is the bytes read: 2 x 8 n (`expect`).
Result RunPackedTma(int format, int64_t expect, std::vector<uint8_t>* o) {
  const int n = format == 1 ? 8 : 12, row = 8 * n;
  Kernel k;
  Buffer G = Global("G", DataType::UInt(8), {Int(3), Int(row)});
  Buffer O = Global("O", DataType::UInt(8), {Int(16 * n)});
  Buffer S = Shared("S", DataType::UInt(8), 256);
  Buffer B = MakeBuffer("bar", DataType::UInt(64), {Int(1)}, Scope::kShared);
  Expr bar = Load(B, {Int(0)});
  Expr map = Call(
      DataType::Handle(), "tl.tensor_map",
      {Load(G, {Int(0), Int(0)}), Call(DataType::Handle(), "list", {Int(2), Int(128)}), Int(0), Int(format)});
  Var i = MakeVar("i");
  // threads t < 16 copy the n written bytes of group t of S (row t / 8, group t % 8) to O[n t ..]
  Stmt probe = If(Lt(k.tx, Int(16)),
                  Unrolled(i, n, Store(O, Load(S, {k.tx * Int(16) + i}), {k.tx * Int(n) + i}, L(4))));
  std::vector<Stmt> body{
      If(Eq(k.tx, Int(0)), Void("tl.mbarrier_init", {bar, Int(1)}, 1)), Sync(),
      If(Eq(k.tx, Int(0)), Seq({Void("tl.mbarrier_arrive_expect_tx", {bar, Int(expect)}, 2),
                                Void("tl.tma_load", {Load(S, {Int(0)}), bar, map, Int(2), Int(0)}, 3)})),
      Void("tl.mbarrier_wait_parity", {bar, Int(0)}, 5), probe};
  PrimFunc f = k.Make({P(G), P(O)}, {Int(1)}, 32, {S, B}, Seq(body));
  alignas(256) static uint8_t g[3 * 96];
  for (int x = 0; x < 3 * row; ++x) g[x] = static_cast<uint8_t>(x * 7 + 3);
  o->assign(static_cast<size_t>(16 * n), 0xEE);
  Options opt;
  opt.max_reports = 1000;
  return emu::Run(f, {g, o->data()}, {}, opt);
}

TEST(EmuTma, PackedFormatsFillTheFirstBytesOfEachSixteen) {
  for (int format : {1, 2}) {
    const int n = format == 1 ? 8 : 12;
    std::vector<uint8_t> o;
    Result r = RunPackedTma(format, 16 * n, &o);
    EXPECT_EQ(r.reports.size(), 0u) << All(r);
    for (int t = 0; t < 16; ++t)
      for (int b = 0; b < n; ++b) {  // row 2: bytes 16 n + n t + b of G; row 3 (t >= 8): out of bounds, zero
        const int want = t < 8 ? static_cast<uint8_t>((16 * n + n * t + b) * 7 + 3) : 0;
        EXPECT_EQ(o[static_cast<size_t>(n * t + b)], want)
            << "format " << format << " group " << t << " byte " << b;
      }
    // counting the 16-byte groups written (256) instead of the bytes read leaves the barrier short: a
    // deadlock
    Result r2 = RunPackedTma(format, 256, &o);
    EXPECT_EQ(Count(r2, "deadlock"), 1) << All(r2);
  }
}

// tile::gather4 (tl.tma_load_gather4(&dst, &bar, map, col, r0, r1, r2, r3)), from the PTX ISA: a 2-d map
// whose box is one row of 32 bytes; rows 4, 0, 9 and 2 of G [6, 32] (row 9 outside), columns 16 .. 47 (32 ..
// 47 outside), land as 4 rows of 32 bytes, what is outside reading as zero; the transaction is the 4 rows'
// 128 bytes.
TEST(EmuTma, Gather4LandsFourRowsWithZeroFill) {
  Kernel k;
  Buffer G = Global("G", DataType::UInt(8), {Int(6), Int(32)});
  Buffer O = Global("O", DataType::UInt(8), {Int(128)});
  Buffer S = Shared("S", DataType::UInt(8), 128);
  Buffer B = MakeBuffer("bar", DataType::UInt(64), {Int(1)}, Scope::kShared);
  Expr bar = Load(B, {Int(0)});
  Expr map = Call(DataType::Handle(), "tl.tensor_map",
                  {Load(G, {Int(0), Int(0)}), Call(DataType::Handle(), "list", {Int(1), Int(32)}), Int(0)});
  Var i = MakeVar("i");
  std::vector<Stmt> body{
      If(Eq(k.tx, Int(0)), Void("tl.mbarrier_init", {bar, Int(1)}, 1)), Sync(),
      If(Eq(k.tx, Int(0)),
         Seq({Void("tl.mbarrier_arrive_expect_tx", {bar, Int(128)}, 2),
              Void("tl.tma_load_gather4",
                   {Load(S, {Int(0)}), bar, map, Int(16), Int(4), Int(0), Int(9), Int(2)}, 3)})),
      Void("tl.mbarrier_wait_parity", {bar, Int(0)}, 5),
      Unrolled(i, 4, Store(O, Load(S, {k.tx * Int(4) + i}), {k.tx * Int(4) + i}, L(6)))};
  PrimFunc f = k.Make({P(G), P(O)}, {Int(1)}, 32, {S, B}, Seq(body));
  std::vector<uint8_t> g(192), o(128, 0xEE);
  for (int x = 0; x < 192; ++x) g[static_cast<size_t>(x)] = static_cast<uint8_t>(x + 1);
  Options opt;
  opt.max_reports = 1000;
  Result r = emu::Run(f, {g.data(), o.data()}, {}, opt);
  EXPECT_EQ(r.reports.size(), 0u) << All(r);
  const int rows[4] = {4, 0, 9, 2};
  for (int q = 0; q < 4; ++q)
    for (int c = 0; c < 32; ++c) {
      const int want = rows[q] < 6 && 16 + c < 32 ? rows[q] * 32 + 16 + c + 1 : 0;
      EXPECT_EQ(o[static_cast<size_t>(32 * q + c)], want) << "row " << q << " column " << c;
    }
}

TEST(EmuTma, MisalignedDestinationIsReported) {
  TmaCase c;
  Result r = c.Run(256, true, 8);  // 16 bytes into S
  EXPECT_EQ(Count(r, "misaligned"), 1) << All(r);
}

}  // namespace
}  // namespace tl::emu

namespace tl::emu {
namespace {
using namespace emu_test;

// tl.wgmma_desc / tl.wgmma_desc_add, from the PTX ISA's "Matrix Descriptor Format": bits 0-13 start
// address >> 4, 16-29 leading byte offset >> 4, 32-45 stride byte offset >> 4, 62-63 swizzle mode. The
// descriptor of S[0] (shared byte 0) with lbo 16, sbo 512, 64B swizzle (mode 2), moved on by `units`.
Result RunDesc(int64_t units, std::vector<uint64_t>* out) {
  Kernel k;
  Buffer O = Global("O", DataType::UInt(64), {Int(1)});
  Buffer S = Shared("S", kF16, 64);
  Expr d = Call(DataType::UInt(64), "tl.wgmma_desc", {Load(S, {Int(0)}), Int(16), Int(512), Int(2)});
  Expr moved =
      Call(DataType::UInt(64), "tl.wgmma_desc_add", {d, Cast(DataType::UInt(32), Int(units)), Int(0)});
  PrimFunc f = k.Make({P(O)}, {Int(1)}, 32, {S}, If(Eq(k.tx, Int(0)), Store(O, moved, {Int(0)}, L(1))));
  Options opt;
  opt.max_reports = 10;
  return emu::Run(f, {out->data()}, {}, opt);
}

TEST(EmuWgmmaDesc, AddMovesOnlyTheStartAddress) {
  std::vector<uint64_t> o(1, 0);
  Result r = RunDesc(0x2A, &o);
  EXPECT_TRUE(r.reports.empty()) << All(r);
  // start 0 + 0x2A units; lbo 16 >> 4 = 1 at bit 16; sbo 512 >> 4 = 0x20 at bit 32; mode 2 at bit 62
  EXPECT_EQ(o[0], 0x2Aull | (1ull << 16) | (0x20ull << 32) | (2ull << 62));
}

TEST(EmuWgmmaDesc, AStartAddressPastTheFieldIsReported) {
  std::vector<uint64_t> o(1, 0);
  Result r = RunDesc(0x4000, &o);  // 2^14 units = byte 2^18: outside the 14-bit field
  EXPECT_EQ(Count(r, "out_of_bounds"), 1) << All(r);
}

}  // namespace
}  // namespace tl::emu
