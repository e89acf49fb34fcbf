// The emulator's tcgen05 and tensor memory (src/emulator/intrinsics_tcgen05.cc) on hand-written thread-level
// IR, checked against values worked out here from the PTX ISA, independently of the emulator and the compiler:
// the 128B-swizzled K-major operand layout (16-byte chunk c of row r at chunk c ^ (r % 8), 8-row groups 1024
// bytes apart), the kind::f16 instruction descriptor (D type F32 at bits 4-5, N >> 3 at 17-22, M >> 4 at
// 24-28), D in tensor memory (row m at lane m, column n at column n for M = 128) and the .32x32b load (lane t of
// warp w reads lane 32 (w % 4) + t). The same IR is compiled for sm_100a by NVRTC and ptxas.
#include <cmath>
#include <functional>
#include <random>

#include "emulator_test_util.h"
#include "target/cuda/codegen_cuda.h"
#include "target/cuda/nvrtc.h"

namespace tl::emu {
namespace {
using namespace emu_test;

Expr Xor(Expr a, Expr b) { return Binary(BinaryOp::kBitXor, std::move(a), std::move(b)); }
Expr U32(int64_t v) { return IntImm(DataType::UInt(32), v); }

// Seeded normal float16 values into a and b, then the kernel f(a, b, o) in the emulator.
Result RunSeeded(const PrimFunc& f, std::vector<uint16_t>* a, std::vector<uint16_t>* b, std::vector<float>* o,
                 uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> nd;
  for (auto& x : *a) x = H(nd(rng));
  for (auto& x : *b) x = H(nd(rng));
  Options opt;
  opt.max_reports = 1000;
  return emu::Run(f, {a->data(), b->data(), o->data()}, {}, opt);
}

// The largest |o - a * b^T| (a: m x k, b: n x k, o: m x n row-major), the reference in double.
double WorstError(const std::vector<uint16_t>& a, const std::vector<uint16_t>& b, const std::vector<float>& o,
                  int64_t m, int64_t n, int64_t k) {
  double worst = 0;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double ref = 0;
      for (int64_t q = 0; q < k; ++q) ref += FromH(a[i * k + q]) * FromH(b[j * k + q]);
      worst = std::max(worst, std::abs(ref - o[i * n + j]));
    }
  return worst;
}

// D[128, N] = A[128, 64] * B[N, 64]^T: A and B copied by the threads into their 128B-swizzled K-major shared
// layout, four tcgen05.mma (k = 16 each) by thread 0 into 64-column tensor memory, a commit to the mbarrier,
// then every warp loads its 32 lanes and stores them to O. `variant` breaks it on purpose for the reports.
// kRelay: only thread 0 waits for the commit, then arrives on a second mbarrier that every thread waits on
// before reading D; kRelayUnwaited: thread 32, which never waited for the commit, arrives there instead.
enum class Variant {
  kRight,
  kNoCommit,
  kNoDealloc,
  kDoubleDealloc,
  kWrongQuarter,
  kAllocAfterRelinquish,
  kRelay,
  kRelayUnwaited
};

struct MmaCase {
  static constexpr int64_t N = 64, K = 64;
  Kernel k;
  Buffer Ag = Global("A", kF16, {Int(128 * K)});
  Buffer Bg = Global("B", kF16, {Int(N * K)});
  Buffer O = Global("O", kF32, {Int(128 * N)});
  // one shared byte buffer: A at 0 (16 KB), B at 16384 (8 KB), the mbarrier at 24576, the TMEM address at 24584,
  // the relay mbarrier at 24592
  Buffer smem = MakeBuffer("smem", DataType::UInt(8), {Int(24600)}, Scope::kShared);
  Buffer As = MakeBufferView(Shared("As", kF16, 128 * K), smem, 0);
  Buffer Bs = MakeBufferView(Shared("Bs", kF16, N * K), smem, 16384);
  Buffer bar = MakeBufferView(Shared("bar", DataType::UInt(64), 1), smem, 24576);
  Buffer slot = MakeBufferView(Shared("tslot", DataType::UInt(32), 1), smem, 24584);
  Buffer relay = MakeBufferView(Shared("relay", DataType::UInt(64), 1), smem, 24592);
  Buffer regs = Local("regs", kF32, N);

  PrimFunc Make(Variant v) {
    Var i = MakeVar("i"), kk = MakeVar("kk"), taddr = MakeVar("taddr", DataType::UInt(32));
    // element (r, c) of a 64-half (128-byte) row in the 128B swizzle: chunk c / 8 moves to (c / 8) ^ (r % 8)
    auto swz = [](Expr r, Expr c) {
      return r * Int(64) + Xor(Div(c, Int(8)), Mod(r, Int(8))) * Int(8) + Mod(c, Int(8));
    };
    const int64_t idesc = (1 << 4) | ((N >> 3) << 17) | ((128 >> 4) << 24);  // F32 D, F16 A and B, K-major
    auto desc = [&](const Buffer& b, Expr elem) {
      return Call(DataType::UInt(64), "tl.tcgen05_desc", {Load(b, {std::move(elem)}), Int(16), Int(1024), Int(2)});
    };
    Expr warp_lane = Binary(BinaryOp::kShl, Cast(DataType::UInt(32), Div(k.tx, Int(32))) * U32(32), U32(16));
    if (v == Variant::kWrongQuarter) warp_lane = U32(0);
    Stmt mma = Seq({
        For(kk, Int(0), Int(K / 16), ForKind::kSerial,
            Void("tl.tcgen05_mma_f16", {taddr, desc(As, kk * Int(16)), desc(Bs, kk * Int(16)), U32(idesc),
                                        Cast(kI32, Binary(BinaryOp::kGT, kk, Int(0)))},
                 4)),
    });
    if (v != Variant::kNoCommit) mma = Seq({mma, Void("tl.tcgen05_commit", {Load(bar, {Int(0)})}, 5)});
    Stmt dealloc = If(Lt(k.tx, Int(32)), Void("tl.tcgen05_dealloc", {taddr, Int(64)}, 9));
    std::vector<Stmt> tail{Sync()};
    if (v != Variant::kNoDealloc) tail.push_back(dealloc);
    if (v == Variant::kDoubleDealloc) tail.push_back(dealloc);
    // how the readers learn that the MMA completed: the commit's mbarrier, or a relay through a second one
    Stmt wait = Void("tl.mbarrier_wait_parity", {Load(bar, {Int(0)}), Int(0)}, 6);
    if (v == Variant::kRelay || v == Variant::kRelayUnwaited) {
      Stmt arrive = Void("tl.mbarrier_arrive", {Load(relay, {Int(0)})}, 6);
      wait = Seq({v == Variant::kRelay ? If(Eq(k.tx, Int(0)), Seq({wait, arrive})) : If(Eq(k.tx, Int(32)), arrive),
                  Void("tl.mbarrier_wait_parity", {Load(relay, {Int(0)}), Int(0)}, 6)});
    }
    std::vector<Stmt> pre;
    if (v == Variant::kAllocAfterRelinquish)
      pre.push_back(If(Lt(k.tx, Int(32)), Void("tl.tcgen05_relinquish_alloc_permit", {}, 1)));
    Stmt body = Seq({
        Seq(pre),
        Unrolled(i, K, Store(As, Load(Ag, {k.tx * Int(K) + i}), {swz(k.tx, i)})),
        If(Lt(k.tx, Int(N)), Unrolled(i, K, Store(Bs, Load(Bg, {k.tx * Int(K) + i}), {swz(k.tx, i)}))),
        If(Lt(k.tx, Int(32)), Void("tl.tcgen05_alloc", {Load(slot, {Int(0)}), Int(64)}, 2)),
        If(Eq(k.tx, Int(0)), Seq({Void("tl.mbarrier_init", {Load(bar, {Int(0)}), Int(1)}, 2),
                                  Void("tl.mbarrier_init", {Load(relay, {Int(0)}), Int(1)}, 2)})),
        Void("tl.fence_proxy_async", {}),
        Sync(3),
        Let(taddr, Load(slot, {Int(0)}),
            Seq({
                If(Eq(k.tx, Int(0)), mma),
                v == Variant::kNoCommit ? Seq({}) : wait,
                Void("tl.tcgen05_fence_after_thread_sync", {}),
                Void("tl.tcgen05_ld", {Load(regs, {Int(0)}), Binary(BinaryOp::kBitOr, taddr, warp_lane), Int(N)}, 7),
                Void("tl.tcgen05_wait_ld", {}),
                Unrolled(i, N, Store(O, Load(regs, {i}), {k.tx * Int(N) + i}, L(8))),
                Seq(tail),
            })),
    });
    return k.Make({P(Ag), P(Bg), P(O)}, {Int(1)}, 128, {smem, As, Bs, bar, slot, relay, regs}, body);
  }

  std::vector<uint16_t> a = std::vector<uint16_t>(128 * K), b = std::vector<uint16_t>(N * K);
  std::vector<float> o = std::vector<float>(128 * N, -1.f);
  Result Run(Variant v, uint32_t seed) { return RunSeeded(Make(v), &a, &b, &o, seed); }
};

TEST(EmuTcgen05, MmaIntoTensorMemoryMatchesDoubleReference) {
  const uint32_t seed = 20261206;
  MmaCase c;
  Result r = c.Run(Variant::kRight, seed);
  EXPECT_TRUE(r.reports.empty()) << All(r);
  const double worst = WorstError(c.a, c.b, c.o, 128, MmaCase::N, MmaCase::K);
  EXPECT_LT(worst, 1e-4) << "seed " << seed;  // four fp32 roundings of sums of magnitude ~8
}

// A thread that waited for the commit's phase and then arrives on another mbarrier passes what it knows to that
// barrier's waiters (the arrival releases, the wait acquires: PTX ISA memory model); an arrival by a thread that
// never waited passes nothing, and every warp's read is reported.
TEST(EmuTcgen05, KnowledgeOfACompletedMmaTravelsThroughAnMbarrierArrival) {
  MmaCase c;
  Result r = c.Run(Variant::kRelay, 7);
  EXPECT_TRUE(r.reports.empty()) << All(r);
  EXPECT_LT(WorstError(c.a, c.b, c.o, 128, MmaCase::N, MmaCase::K), 1e-4) << "seed 7";
  MmaCase d;
  Result u = d.Run(Variant::kRelayUnwaited, 7);
  EXPECT_EQ(Count(u, "tcgen05_not_waited"), 4) << All(u);  // once a warp
}

TEST(EmuTcgen05, ReadingBeforeTheCommitIsReported) {
  MmaCase c;
  Result r = c.Run(Variant::kNoCommit, 1);
  EXPECT_GT(Count(r, "tcgen05_not_committed"), 0) << All(r);
}

TEST(EmuTcgen05, ColumnsNeverFreedAreALeak) {
  MmaCase c;
  Result r = c.Run(Variant::kNoDealloc, 1);
  EXPECT_EQ(Count(r, "tmem_leak"), 1) << All(r);
  EXPECT_EQ(r.reports.size(), 1u) << All(r);
}

TEST(EmuTcgen05, ADoubleFreeIsReported) {
  MmaCase c;
  Result r = c.Run(Variant::kDoubleDealloc, 1);
  EXPECT_EQ(Count(r, "tmem_bad_free"), 1) << All(r);
}

TEST(EmuTcgen05, AWarpReachesItsOwnQuarterOfTheLanesOnly) {
  MmaCase c;
  Result r = c.Run(Variant::kWrongQuarter, 1);
  EXPECT_EQ(Count(r, "tmem_lane_access"), 96) << All(r);  // warps 1-3 at lane 0: each of their threads
}

TEST(EmuTcgen05, AllocationAfterRelinquishingIsReported) {
  MmaCase c;
  Result r = c.Run(Variant::kAllocAfterRelinquish, 1);
  EXPECT_EQ(Count(r, "tmem_alloc_after_relinquish"), 1) << All(r);
}

// M = 64 with a float16 D, from the PTX ISA's data-path layout F (cta_group::1, M = 64: rows 16 q .. 16 q + 15
// in lanes 32 q .. 32 q + 15, lanes 32 q + 16 .. untouched), the F16 D type (instruction descriptor bits 4-5 =
// 0: a value a 32-bit column, bits 0-15) and the .16x32bx2 load (lanes t < 16 of warp w read lane 32 w + t from
// the address's column, lanes t >= 16 lane 32 w + t - 16 from the column + immHalfSplitoff).
// A[64, 64] and B[16, 64] are zero but for: A[m][0] = m, A[m][1] = 1, B[n][0] = 1, B[n][1] = 64 n (the first
// k16 instruction: D = m + 64 n, exact); A[m][16] = 32, B[n][16] = 64 (the second: + 2048); A[m][32] = 1,
// B[n][32] = 1 (the third: + 1). Each instruction's result is a float16: in [2048, 4096) the even integers.
struct M64Case {
  static constexpr int64_t M = 64, N = 16, K = 64;
  Kernel k;
  Buffer Ag = Global("A", kF16, {Int(M * K)});
  Buffer Bg = Global("B", kF16, {Int(N * K)});
  Buffer O = Global("O", kF16, {Int(128 * 8)});
  Buffer smem = MakeBuffer("smem", DataType::UInt(8), {Int(10256)}, Scope::kShared);
  Buffer As = MakeBufferView(Shared("As", kF16, M * K), smem, 0);
  Buffer Bs = MakeBufferView(Shared("Bs", kF16, N * K), smem, 8192);
  Buffer bar = MakeBufferView(Shared("bar", DataType::UInt(64), 1), smem, 10240);
  Buffer slot = MakeBufferView(Shared("tslot", DataType::UInt(32), 1), smem, 10248);
  Buffer regs = Local("regs", kF16, 8);
  Buffer wide = Local("wide", kF32, 8);

  // instrs: k16 instructions issued (1 or 3); read32: every lane of each quarter read with .32x32b instead
  PrimFunc Make(int64_t instrs, bool read32) {
    Var i = MakeVar("i"), kk = MakeVar("kk"), taddr = MakeVar("taddr", DataType::UInt(32));
    auto swz = [](Expr r, Expr c) {
      return r * Int(64) + Xor(Div(c, Int(8)), Mod(r, Int(8))) * Int(8) + Mod(c, Int(8));
    };
    const int64_t idesc = (0 << 4) | ((N >> 3) << 17) | ((M >> 4) << 24);  // F16 D, F16 A and B, K-major
    auto desc = [&](const Buffer& b, Expr elem) {
      return Call(DataType::UInt(64), "tl.tcgen05_desc", {Load(b, {std::move(elem)}), Int(16), Int(1024), Int(2)});
    };
    Stmt mma = Seq({For(kk, Int(0), Int(instrs), ForKind::kSerial,
                        Void("tl.tcgen05_mma_f16", {taddr, desc(As, kk * Int(16)), desc(Bs, kk * Int(16)),
                                                    U32(idesc), Cast(kI32, Binary(BinaryOp::kGT, kk, Int(0)))},
                             4)),
                    Void("tl.tcgen05_commit", {Load(bar, {Int(0)})}, 5)});
    Expr quarter = Binary(BinaryOp::kShl, Cast(DataType::UInt(32), Div(k.tx, Int(32))) * U32(32), U32(16));
    Stmt read =
        read32
            ? Seq({Void("tl.tcgen05_ld",
                        {Load(wide, {Int(0)}), Binary(BinaryOp::kBitOr, taddr, quarter), Int(8)}, 7),
                   Void("tl.tcgen05_wait_ld", {}),
                   Unrolled(i, 8, Store(O, Cast(kF16, Load(wide, {i})), {k.tx * Int(8) + i}, L(8)))})
            : Seq({Void("tl.tcgen05_ld_16x32bx2_lo16",
                        {Load(regs, {Int(0)}), Binary(BinaryOp::kBitOr, taddr, quarter), Int(8), Int(8)}, 7),
                   Void("tl.tcgen05_wait_ld", {}),
                   Unrolled(i, 8, Store(O, Load(regs, {i}), {k.tx * Int(8) + i}, L(8)))});
    Stmt body = Seq({
        If(Lt(k.tx, Int(M)), Unrolled(i, K, Store(As, Load(Ag, {k.tx * Int(K) + i}), {swz(k.tx, i)}))),
        If(Lt(k.tx, Int(N)), Unrolled(i, K, Store(Bs, Load(Bg, {k.tx * Int(K) + i}), {swz(k.tx, i)}))),
        If(Lt(k.tx, Int(32)), Void("tl.tcgen05_alloc", {Load(slot, {Int(0)}), Int(32)}, 2)),
        If(Eq(k.tx, Int(0)), Void("tl.mbarrier_init", {Load(bar, {Int(0)}), Int(1)}, 2)),
        Void("tl.fence_proxy_async", {}),
        Sync(3),
        Let(taddr, Load(slot, {Int(0)}),
            Seq({If(Eq(k.tx, Int(0)), mma), Void("tl.mbarrier_wait_parity", {Load(bar, {Int(0)}), Int(0)}, 6),
                 Void("tl.tcgen05_fence_after_thread_sync", {}), read, Sync(),
                 If(Lt(k.tx, Int(32)), Void("tl.tcgen05_dealloc", {taddr, Int(32)}, 9))})),
    });
    return k.Make({P(Ag), P(Bg), P(O)}, {Int(1)}, 128, {smem, As, Bs, bar, slot, regs, wide}, body);
  }

  std::vector<uint16_t> a = std::vector<uint16_t>(M * K, 0), b = std::vector<uint16_t>(N * K, 0);
  std::vector<uint16_t> o = std::vector<uint16_t>(128 * 8, 0xFFFF);
  Result Run(int64_t instrs, bool read32, bool check_uninit = true) {
    for (int64_t m = 0; m < M; ++m) {
      a[m * K + 0] = H(static_cast<double>(m));
      a[m * K + 1] = H(1);
      a[m * K + 16] = H(32);
      a[m * K + 32] = H(1);
    }
    for (int64_t n = 0; n < N; ++n) {
      b[n * K + 0] = H(1);
      b[n * K + 1] = H(static_cast<double>(64 * n));
      b[n * K + 16] = H(64);
      b[n * K + 32] = H(1);
    }
    Options opt;
    opt.max_reports = 5000;
    opt.check_uninit = check_uninit;
    return emu::Run(Make(instrs, read32), {a.data(), b.data(), o.data()}, {}, opt);
  }
};

// An integer v in [2048, 4096) as float16: the even integers there, an odd v a tie to the one whose mantissa
// is even (a multiple of 4).
int64_t RoundToF16Above2048(int64_t v) { return v % 2 == 0 ? v : (v + 1) % 4 == 0 ? v + 1 : v - 1; }

// Register i of thread t after the .16x32bx2 load with immHalfSplitoff 8 holds D[16 (t / 32) + t % 16][col],
// col = i (lanes 0-15) or 8 + i (lanes 16-31): each must equal want(D's value m + 64 n at that place).
void ExpectEveryRegister(const M64Case& c, const std::function<int64_t(int64_t)>& want) {
  for (int64_t t = 0; t < 128; ++t)
    for (int64_t i = 0; i < 8; ++i) {
      const int64_t row = 16 * (t / 32) + t % 16, col = (t % 32 >= 16 ? 8 : 0) + i;
      EXPECT_EQ(FromH(c.o[t * 8 + i]), static_cast<double>(want(row + 64 * col)))
          << "thread " << t << " register " << i;
    }
}

TEST(EmuTcgen05, M64LayoutFPutsEachWarpsSixteenRowsInTheFirstHalfOfItsLanes) {
  M64Case c;
  Result r = c.Run(1, false);
  EXPECT_TRUE(r.reports.empty()) << All(r);
  ExpectEveryRegister(c, [](int64_t d) { return d; });
}

TEST(EmuTcgen05, AFloat16AccumulatorRoundsEachInstructionsResult) {
  M64Case c;
  Result r = c.Run(3, false);
  EXPECT_TRUE(r.reports.empty()) << All(r);
  ExpectEveryRegister(c, [](int64_t d) { return RoundToF16Above2048(RoundToF16Above2048(d + 2048) + 1); });
}

TEST(EmuTcgen05, M64LeavesTheSecondHalfOfEachQuartersLanesUnwritten) {
  M64Case c;
  Result r = c.Run(1, true);  // .32x32b: lanes 32 q + 16 .. 32 q + 31 hold nothing
  // each of the 8 columns of lanes 32 q + 16 .. 32 q + 31 once (64 threads), none of the written lanes
  EXPECT_EQ(Count(r, "uninitialized"), 4 * 16 * 8) << All(r);
  EXPECT_EQ(r.reports.size(), size_t{4 * 16 * 8}) << All(r);
}

// emulator.check_uninit off: the same reads are not reported, and tensor memory nothing wrote reads as
// all-ones bits (NaN), so a program whose output depended on it would show NaN rather than a plausible zero.
TEST(EmuTcgen05, UnwrittenTensorMemoryReadsAsNanWhenItsReadsAreNotReported) {
  M64Case c;
  Result r = c.Run(1, true, false);
  EXPECT_TRUE(r.reports.empty()) << All(r);
  for (int64_t t = 0; t < 128; ++t)
    for (int64_t i = 0; i < 8; ++i)
      if (t % 32 >= 16) EXPECT_TRUE(std::isnan(FromH(c.o[t * 8 + i]))) << "thread " << t << " register " << i;
}

// The 2-CTA MMA (cta_group::2) on a cluster of two blocks, from the PTX ISA's CTA-pair rules: the
// instruction's M = 256 rows are A's and D's rows [0, 128) in the even block and [128, 256) in the odd one,
// each block holding its own A rows and D in its own tensor memory; B's N columns are [0, N / 2) from the
// even block's shared memory and [N / 2, N) from the odd block's, both at the descriptor's offset. Block r
// copies A rows [128 r, +128) and B rows [32 r, +32) (B is [N, K], K-major); thread 0 of block 0 issues and
// commits to the barrier of both blocks
// (.multicast::cluster, mask 3); every warp of both blocks then loads its lanes: O = A[256, 64] * B[64,
// 64]^T.
enum class PairVariant { kRight, kNoCluster, kCommitToLeaderOnly };

struct PairCase {
  static constexpr int64_t N = 64, K = 64, NH = N / 2;
  Kernel k;
  Buffer Ag = Global("A", kF16, {Int(256 * K)});
  Buffer Bg = Global("B", kF16, {Int(N * K)});
  Buffer O = Global("O", kF32, {Int(256 * N)});
  Buffer smem = MakeBuffer("smem", DataType::UInt(8), {Int(24592)}, Scope::kShared);
  Buffer As = MakeBufferView(Shared("As", kF16, 128 * K), smem, 0);
  Buffer Bs = MakeBufferView(Shared("Bs", kF16, NH* K), smem, 16384);
  Buffer bar = MakeBufferView(Shared("bar", DataType::UInt(64), 1), smem, 24576);
  Buffer slot = MakeBufferView(Shared("tslot", DataType::UInt(32), 1), smem, 24584);
  Buffer relay = MakeBufferView(Shared("relay", DataType::UInt(64), 1), smem, 24592);
  Buffer regs = Local("regs", kF32, N);

  PrimFunc Make(PairVariant v) {
    Var i = MakeVar("i"), kk = MakeVar("kk"), taddr = MakeVar("taddr", DataType::UInt(32));
    Expr bx = k.block[0], rank = Call(kI32, "tl.cluster_ctarank", {});
    auto swz = [](Expr r, Expr c) {
      return r * Int(64) + Xor(Div(c, Int(8)), Mod(r, Int(8))) * Int(8) + Mod(c, Int(8));
    };
    const int64_t idesc = (1 << 4) | ((N >> 3) << 17) | ((256 >> 4) << 24);  // F32 D, F16, K-major, M = 256
    auto desc = [&](const Buffer& b, Expr elem) {
      return Call(DataType::UInt(64), "tl.tcgen05_desc",
                  {Load(b, {std::move(elem)}), Int(16), Int(1024), Int(2)});
    };
    Expr warp_lane = Binary(BinaryOp::kShl, Cast(DataType::UInt(32), Div(k.tx, Int(32))) * U32(32), U32(16));
    Stmt issue = Seq({
        For(kk, Int(0), Int(K / 16), ForKind::kSerial,
            Void("tl.tcgen05_mma_f16_cg2",
                 {taddr, desc(As, kk * Int(16)), desc(Bs, kk * Int(16)), U32(idesc),
                  Cast(kI32, Binary(BinaryOp::kGT, kk, Int(0)))},
                 4)),
        Void("tl.tcgen05_commit_cg2",
             {Load(bar, {Int(0)}), Int(v == PairVariant::kCommitToLeaderOnly ? 1 : 3)}, 5),
    });
    Stmt body = Seq({
        Unrolled(i, K, Store(As, Load(Ag, {(bx * Int(128) + k.tx) * Int(K) + i}), {swz(k.tx, i)})),
        If(Lt(k.tx, Int(NH)),
           Unrolled(i, K, Store(Bs, Load(Bg, {(bx * Int(NH) + k.tx) * Int(K) + i}), {swz(k.tx, i)}))),
        If(Lt(k.tx, Int(32)), Void("tl.tcgen05_alloc_cg2", {Load(slot, {Int(0)}), Int(64)}, 2)),
        If(Eq(k.tx, Int(0)), Void("tl.mbarrier_init", {Load(bar, {Int(0)}), Int(1)}, 2)),
        Void("tl.fence_proxy_async", {}),
        Sync(3),
        Void("tl.cluster_sync", {}, 3),  // the peer has started and initialised its barrier
        Let(taddr, Load(slot, {Int(0)}),
            Seq({
                If(Binary(BinaryOp::kAnd, Eq(rank, Int(0)), Eq(k.tx, Int(0))), issue),
                Void("tl.mbarrier_wait_parity", {Load(bar, {Int(0)}), Int(0)}, 6),
                Void("tl.tcgen05_fence_after_thread_sync", {}),
                Void("tl.tcgen05_ld",
                     {Load(regs, {Int(0)}), Binary(BinaryOp::kBitOr, taddr, warp_lane), Int(N)}, 7),
                Void("tl.tcgen05_wait_ld", {}),
                Unrolled(i, N, Store(O, Load(regs, {i}), {(bx * Int(128) + k.tx) * Int(N) + i}, L(8))),
                Void("tl.cluster_sync", {}, 9),
                If(Lt(k.tx, Int(32)), Void("tl.tcgen05_dealloc_cg2", {taddr, Int(64)}, 9)),
            })),
    });
    if (v != PairVariant::kNoCluster)
      body = AttrStmt(nullptr, "tl.cluster_dims", Call(DataType::Handle(), "list", {Int(2), Int(1), Int(1)}),
                      body);
    return k.Make({P(Ag), P(Bg), P(O)}, {Int(2)}, 128, {smem, As, Bs, bar, slot, regs}, body);
  }

  std::vector<uint16_t> a = std::vector<uint16_t>(256 * K), b = std::vector<uint16_t>(N * K);
  std::vector<float> o = std::vector<float>(256 * N, -1.f);
  Result Run(PairVariant v, uint32_t seed) { return RunSeeded(Make(v), &a, &b, &o, seed); }
};

// Block-scaled MXFP8 (kind::mxf8f6f4.block_scale.scale_vec::1X) and tcgen05.cp.32x128b.warpx4, from the PTX
// ISA: the cp's shared descriptor without swizzle puts row r (16 bytes) of its 32 rows at start + (r / 8) SBO
// + (r % 8) 16 and each row into lanes r, r + 32, r + 64, r + 96 of 4 columns; the MMA scales row m of A by
// the E8M0 byte (2^(e - 127)) of lane m, column m / 32 of its scale address that the instruction descriptor's
// A scale id (bits 29-30) names, column n of B likewise (bits 4-5), one scale a k32 step; the block-scaled
// descriptor has the scale type at bit 23 (1: UE8M0) and no D type. Here the scale of row m for step kk is
// written (by thread m) into byte kk of word 4 (m % 32) + m / 32 of a 128-word shared tile, which the cp
// places at lane m, column m / 32; four MMAs (K = 128 in k32 steps, ids kk) accumulate D = sum_kk sa sb A_kk
// B_kk^T. A and B are e4m3 codes of small exact values (+-0.5, 1, 1.5, 2, 3, 0) in the 128B swizzle (rows of
// 128 bytes: chunk c ^ (r % 8)). NVFP4 (`nvf4`: kind::mxf4nvf4.block_scale.block16): the same rows hold K =
// 256 fp4 values two a byte (the first in the low nibble), four k64 steps; step kk scales k in [64 kk + 16 j,
// + 16) by UE4M3 byte j (an e4m3 code, sign clear) of the word of word group kk: A's group kk a chunk of its
// own at columns 64 + 4 kk (row m at lane m, column m / 32), B's two groups a chunk at columns 80 + 2 kk (the
// instruction's N / 32 = 2 a group; column n at column n / 32 of its group), the scale ids 0.
struct ScaledCase {
  static constexpr int64_t N = 64, K = 128;  // K bytes of a row: 128 e4m3 values, or 256 fp4
  explicit ScaledCase(bool nv = false, bool mx4 = false) : nvf4(nv), mxf4(mx4), two(nv || mx4) {}
  const bool nvf4, mxf4, two;  // two: fp4 two values a byte in k64 steps (NVFP4, MXFP4)
  Kernel k;
  Buffer Ag = Global("A", DataType::UInt(8), {Int(128 * K)});
  Buffer Bg = Global("B", DataType::UInt(8), {Int(N * K)});
  // row m's four step scales, byte kk (nvf4: word 128 kk + m, step kk's four block scales)
  Buffer SAg = Global("SA", DataType::UInt(32), {Int(two ? 512 : 128)});
  Buffer SBg =
      Global("SB", DataType::UInt(32), {Int(two ? 512 : 128)});  // column n's (n < N; the rest unused)
  Buffer O = Global("O", kF32, {Int(128 * N)});
  // A at 0 (16 KB), B at 16384 (8 KB), the scale tiles at 24576 and 25088, the mbarrier at 25600, the address
  // at 25608 (nvf4: the scale tiles 2 KB each, at 24576 and 26624; the mbarrier at 28672, the address at
  // 28680)
  const int64_t sfb_at = two ? 26624 : 25088, bar_at = two ? 28672 : 25600;
  Buffer smem = MakeBuffer("smem", DataType::UInt(8), {Int(bar_at + 16)}, Scope::kShared);
  Buffer As = MakeBufferView(Shared("As", DataType::UInt(8), 128 * K), smem, 0);
  Buffer Bs = MakeBufferView(Shared("Bs", DataType::UInt(8), N * K), smem, 16384);
  Buffer SAs = MakeBufferView(Shared("SAs", DataType::UInt(32), two ? 512 : 128), smem, 24576);
  Buffer SBs = MakeBufferView(Shared("SBs", DataType::UInt(32), two ? 512 : 128), smem, sfb_at);
  Buffer bar = MakeBufferView(Shared("bar", DataType::UInt(64), 1), smem, bar_at);
  Buffer slot = MakeBufferView(Shared("tslot", DataType::UInt(32), 1), smem, bar_at + 8);
  Buffer regs = Local("regs", kF32, N);

  PrimFunc Make(bool copy_scales) {
    Var i = MakeVar("i"), kk = MakeVar("kk"), taddr = MakeVar("taddr", DataType::UInt(32));
    auto swz = [](Expr r, Expr c) {  // byte c of a 128-byte row in the 128B swizzle
      return r * Int(128) + Xor(Div(c, Int(16)), Mod(r, Int(8))) * Int(16) + Mod(c, Int(16));
    };
    // (bit 23: UE8M0 scales; A and B E4M3 (0); K-major; N >> 3; M >> 4. nvf4: bit 23 clear (UE4M3), A and B
    // E2M1 (1))
    // (mxf4: E2M1 (1) A and B with bit 23 set (UE8M0))
    const int64_t idesc = (two ? (int64_t{1} << 7) | (int64_t{1} << 10) : 0) | (nvf4 ? 0 : int64_t{1} << 23) |
                          ((N >> 3) << 17) | ((128 >> 4) << 24);
    auto desc = [&](const Buffer& b, Expr elem, int64_t lbo, int64_t sbo, int64_t mode) {
      return Call(DataType::UInt(64), "tl.tcgen05_desc", {Load(b, {std::move(elem)}), Int(lbo), Int(sbo), Int(mode)});
    };
    Expr id = Cast(DataType::UInt(32), kk);
    Expr warp_lane = Binary(BinaryOp::kShl, Cast(DataType::UInt(32), Div(k.tx, Int(32))) * U32(32), U32(16));
    // D at columns [0, 64), A's scales at [64, 68), B's at [68, 72)
    // (nvf4: A's four chunks at [64, 80), B's two at [80, 88))
    std::vector<Stmt> cp_list;
    for (int64_t q = 0; q < (two ? 4 : 1); ++q)
      cp_list.push_back(
          Void("tl.tcgen05_cp_warpx4", {taddr + U32(64 + 4 * q), desc(SAs, Int(128 * q), 0, 128, 0)}, 4));
    for (int64_t q = 0; q < (two ? 2 : 1); ++q)
      cp_list.push_back(Void("tl.tcgen05_cp_warpx4",
                             {taddr + U32((two ? 80 : 68) + 4 * q), desc(SBs, Int(128 * q), 0, 128, 0)}, 4));
    Stmt cps = Seq(cp_list);
    Expr u = Cast(DataType::UInt(32), kk);
    // mxf4: step kk reads word group kk / 2 with scale ids 2 (kk % 2), the half-word of its two 32-value
    // groups
    Expr half = Cast(DataType::UInt(32), Mod(kk, Int(2)) * Int(2)),
         grp = Cast(DataType::UInt(32), Div(kk, Int(2)));
    Stmt issue = Seq({
        copy_scales ? cps : Seq({}),
        For(kk, Int(0), Int(K / 32), ForKind::kSerial,
            Void(nvf4   ? "tl.tcgen05_mma_mxf4nvf4"
                 : mxf4 ? "tl.tcgen05_mma_mxf4"
                        : "tl.tcgen05_mma_mxf8f6f4",
                 {taddr, desc(As, kk * Int(32), 16, 1024, 2), desc(Bs, kk * Int(32), 16, 1024, 2),
                  nvf4   ? U32(idesc)
                  : mxf4 ? U32(idesc) + half * U32(16) + half * U32(int64_t{1} << 29)
                         : U32(idesc) + id * U32(16) + id * U32(int64_t{1} << 29),
                  Cast(kI32, Binary(BinaryOp::kGT, kk, Int(0))),
                  nvf4   ? taddr + U32(64) + u * U32(4)
                  : mxf4 ? taddr + U32(64) + grp * U32(4)
                         : taddr + U32(64),
                  nvf4   ? taddr + U32(80) + u * U32(2)
                  : mxf4 ? taddr + U32(80) + grp * U32(2)
                         : taddr + U32(68)},
                 5)),
        Void("tl.tcgen05_commit", {Load(bar, {Int(0)})}, 6),
    });
    Expr m = k.tx;  // thread m writes row m's scale word where the cp puts it at lane m, column m / 32
    Expr sf_word = Mod(m, Int(32)) * Int(4) + Div(m, Int(32));
    // nvf4: A's group q in chunk q; B's group q (words w = 64 (q % 2) + n of chunk q / 2) at word 4 (w % 32)
    // + w / 32
    std::vector<Stmt> nv_words;
    for (int64_t q = 0; q < 4 && two; ++q) {
      nv_words.push_back(Store(SAs, Load(SAg, {Int(128 * q) + m}), {Int(128 * q) + sf_word}));
      Expr w = Int(64 * (q % 2)) + m;
      nv_words.push_back(
          If(Lt(m, Int(N)), Store(SBs, Load(SBg, {Int(128 * q) + m}),
                                  {Int(128 * (q / 2)) + Mod(w, Int(32)) * Int(4) + Div(w, Int(32))})));
    }
    Stmt body = Seq({
        Unrolled(i, K, Store(As, Load(Ag, {k.tx * Int(K) + i}), {swz(k.tx, i)})),
        If(Lt(k.tx, Int(N)), Unrolled(i, K, Store(Bs, Load(Bg, {k.tx * Int(K) + i}), {swz(k.tx, i)}))),
        two ? Seq(nv_words)
            : Seq({Store(SAs, Load(SAg, {m}), {sf_word}), Store(SBs, Load(SBg, {m}), {sf_word})}),
        If(Lt(k.tx, Int(32)), Void("tl.tcgen05_alloc", {Load(slot, {Int(0)}), Int(128)}, 2)),
        If(Eq(k.tx, Int(0)), Void("tl.mbarrier_init", {Load(bar, {Int(0)}), Int(1)}, 2)),
        Void("tl.fence_proxy_async", {}),
        Sync(3),
        Let(taddr, Load(slot, {Int(0)}),
            Seq({
                If(Eq(k.tx, Int(0)), issue),
                Void("tl.mbarrier_wait_parity", {Load(bar, {Int(0)}), Int(0)}, 7),
                Void("tl.tcgen05_fence_after_thread_sync", {}),
                Void("tl.tcgen05_ld",
                     {Load(regs, {Int(0)}), Binary(BinaryOp::kBitOr, taddr, warp_lane), Int(N)}, 8),
                Void("tl.tcgen05_wait_ld", {}),
                Unrolled(i, N, Store(O, Load(regs, {i}), {k.tx * Int(N) + i}, L(9))),
                Sync(10),
                If(Lt(k.tx, Int(32)), Void("tl.tcgen05_dealloc", {taddr, Int(128)}, 10)),
            })),
    });
    return k.Make({P(Ag), P(Bg), P(SAg), P(SBg), P(O)}, {Int(1)}, 128, {smem, As, Bs, SAs, SBs, bar, slot, regs},
                  body);
  }

  std::vector<uint8_t> a = std::vector<uint8_t>(128 * K), b = std::vector<uint8_t>(N * K);
  std::vector<uint32_t> sa = std::vector<uint32_t>(512), sb = std::vector<uint32_t>(512);
  std::vector<float> o = std::vector<float>(128 * N, -1.f);
  // e4m3 codes and their values (sign bit 0x80)
  static double E4m3(uint8_t c) {
    const double mag = c & 0x7F ? std::ldexp(1.0 + ((c & 7) / 8.0), ((c >> 3) & 15) - 7) : 0.0;
    return c & 0x80 ? -mag : mag;
  }
  Result Run(bool copy_scales, uint32_t seed) {
    std::mt19937 rng(seed);
    const uint8_t codes[] = {0x00, 0x30, 0x38, 0x3C, 0x40, 0x44, 0xB0, 0xB8, 0xBC, 0xC0};
    for (auto& x : a) x = two ? static_cast<uint8_t>(rng() & 0xFF) : codes[rng() % 10];  // fp4: any two codes
    for (auto& x : b) x = two ? static_cast<uint8_t>(rng() & 0xFF) : codes[rng() % 10];
    if (two) {  // UE4M3 codes 0x30 .. 0x40 (0.5 .. 2), each byte its own; mxf4: E8M0 2^-3 .. 2^3 in word
                // groups 0 and 1 (K values [0, 128), [128, 256): a byte a 32), 0xFF (NaN) in the unread 2 and
                // 3
      for (size_t w = 0; w < 512; ++w) {
        sa[w] = sb[w] = 0;
        for (uint32_t j = 0; j < 4; ++j) {
          sa[w] |= (mxf4 ? (w < 256 ? 124u + (rng() % 7) : 0xFFu) : 0x30u + (rng() % 17)) << (8 * j);
          sb[w] |= (mxf4 ? (w < 256 ? 124u + (rng() % 7) : 0xFFu) : 0x30u + (rng() % 17)) << (8 * j);
        }
      }
      Options opt;
      opt.max_reports = 1000;
      return emu::Run(Make(copy_scales), {a.data(), b.data(), sa.data(), sb.data(), o.data()}, {}, opt);
    }
    for (size_t r = 0; r < 128; ++r) {
      sa[r] = sb[r] = 0;
      for (uint32_t q = 0; q < 4; ++q) {
        sa[r] |= (127u + (r + q) % 5 - 2) << (8 * q);      // 2^-2 .. 2^2
        sb[r] |= (127u + (3 * r + q) % 4 - 1) << (8 * q);  // 2^-1 .. 2^2
      }
    }
    Options opt;
    opt.max_reports = 1000;
    return emu::Run(Make(copy_scales), {a.data(), b.data(), sa.data(), sb.data(), o.data()}, {}, opt);
  }
  // e2m1 codes (PTX ISA / OCP MX: 0, 0.5, 1, 1.5, 2, 3, 4, 6, sign bit 8)
  static double E2m1(uint8_t c) {
    static const double mag[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
    return c & 8 ? -mag[c & 7] : mag[c & 7];
  }
  double Worst() const {
    double worst = 0;
    auto fp4 = [](const std::vector<uint8_t>& v, int64_t row, int64_t x) {
      return E2m1(static_cast<uint8_t>((v[static_cast<size_t>(row * K + x / 2)] >> (4 * (x % 2))) & 0xF));
    };
    auto ue4m3 = [](uint32_t word, int64_t j) {
      return E4m3(static_cast<uint8_t>((word >> (8 * j)) & 0x7F));
    };
    for (int64_t m = 0; m < 128; ++m)
      for (int64_t n = 0; n < N; ++n) {
        double ref = 0;
        for (int64_t q = 0; q < 4 && nvf4; ++q)
          for (int64_t j = 0; j < 4; ++j) {
            double part = 0;
            for (int64_t x = 64 * q + 16 * j; x < 64 * q + 16 * j + 16; ++x)
              part += fp4(a, m, x) * fp4(b, n, x);
            ref += part * ue4m3(sa[static_cast<size_t>(128 * q + m)], j) *
                   ue4m3(sb[static_cast<size_t>(128 * q + n)], j);
          }
        for (int64_t q = 0; q < 2 && mxf4; ++q)  // word group q: byte j scales K values [128 q + 32 j, + 32)
          for (int64_t j = 0; j < 4; ++j) {
            double part = 0;
            for (int64_t x = 128 * q + 32 * j; x < 128 * q + 32 * j + 32; ++x)
              part += fp4(a, m, x) * fp4(b, n, x);
            auto e8m0 = [&](uint32_t word) {
              return std::ldexp(1.0, static_cast<int>((word >> (8 * j)) & 255) - 127);
            };
            ref += part * e8m0(sa[static_cast<size_t>(128 * q + m)]) *
                   e8m0(sb[static_cast<size_t>(128 * q + n)]);
          }
        if (two) {
          worst = std::max(worst, std::abs(ref - o[m * N + n]));
          continue;
        }
        for (int64_t q = 0; q < K / 32; ++q) {
          double part = 0;
          for (int64_t x = 32 * q; x < 32 * q + 32; ++x) part += E4m3(a[m * K + x]) * E4m3(b[n * K + x]);
          ref += part * std::ldexp(1.0, static_cast<int>((sa[m] >> (8 * q)) & 255) - 127) *
                 std::ldexp(1.0, static_cast<int>((sb[n] >> (8 * q)) & 255) - 127);
        }
        worst = std::max(worst, std::abs(ref - o[m * N + n]));
      }
    return worst;
  }
};

TEST(EmuTcgen05, BlockScaledMmaTakesEachStepsScaleByteFromTheCpLayout) {
  const uint32_t seed = 20261207;
  ScaledCase c;
  Result r = c.Run(true, seed);
  EXPECT_TRUE(r.reports.empty()) << All(r);
  EXPECT_LT(c.Worst(), 1e-3) << "seed " << seed;  // products exact, four fp32 roundings
}

TEST(EmuTcgen05, Nvf4MmaTakesFourUe4m3ScalesAStepFromItsWordGroup) {
  const uint32_t seed = 20261207;
  ScaledCase c(true);
  Result r = c.Run(true, seed);
  EXPECT_TRUE(r.reports.empty()) << All(r);
  EXPECT_LT(c.Worst(), 1e-3) << "seed " << seed;  // products exact, four fp32 roundings
}

// MXFP4 (kind::mxf4.block_scale.scale_vec::2X, PTX ISA 9.7.16.10.7: two E8M0 scales a row a k64 step in a
// 2-byte aligned sub-column, the scale id the half-word offset): the NVFP4 case's operands and word groups,
// step kk taking group kk / 2 with ids 2 (kk % 2); groups 2 and 3 hold NaN scales, which must not be read.
TEST(EmuTcgen05, Mxf4MmaTakesTwoE8m0ScalesAStepFromTheHalfWordItsIdsName) {
  const uint32_t seed = 20261207;
  ScaledCase c(false, true);
  Result r = c.Run(true, seed);
  EXPECT_TRUE(r.reports.empty()) << All(r);
  EXPECT_LT(c.Worst(), 1e-3) << "seed " << seed;  // products exact, four fp32 roundings
  for (float v : c.o) ASSERT_FALSE(std::isnan(v));
}

TEST(EmuTcgen05, ScalesNeverCopiedIntoTensorMemoryAreReported) {
  ScaledCase c;
  Result r = c.Run(false, 1);
  EXPECT_GT(Count(r, "uninitialized"), 0) << All(r);
}

// T.tcgen05_sf_warp_transpose's call: one warp moves word 32 c + r of 128 words to word 4 r + c.
TEST(EmuTcgen05, TheScaleTransposeMovesWord32cPlusRToWord4rPlusC) {
  Kernel k;
  Buffer O = Global("O", DataType::UInt(32), {Int(128)});
  Buffer S = Shared("S", DataType::UInt(32), 128);
  Var i = MakeVar("i");
  Stmt body = Seq({
      Unrolled(i, 4, Store(S, Cast(DataType::UInt(32), i * Int(32) + k.tx), {i * Int(32) + k.tx})),
      Void("tl.tcgen05_sf_warp_transpose", {Load(S, {Int(0)})}, 2),
      Unrolled(i, 4, Store(O, Load(S, {i * Int(32) + k.tx}), {i * Int(32) + k.tx})),
  });
  std::vector<uint32_t> o(128, 0xFFFFFFFFu);
  Result r = emu::Run(k.Make({P(O)}, {Int(1)}, 32, {S}, body), {o.data()}, {}, {});
  EXPECT_TRUE(r.reports.empty()) << All(r);
  for (uint32_t rr = 0; rr < 32; ++rr)
    for (uint32_t c = 0; c < 4; ++c) EXPECT_EQ(o[4 * rr + c], 32 * c + rr) << "word " << 4 * rr + c;
}

TEST(EmuTcgen05, PairMmaSplitsAAndDByBlockAndBByColumns) {
  const uint32_t seed = 20261207;
  PairCase c;
  Result r = c.Run(PairVariant::kRight, seed);
  EXPECT_TRUE(r.reports.empty()) << All(r);
  const double worst = WorstError(c.a, c.b, c.o, 256, PairCase::N, PairCase::K);
  EXPECT_LT(worst, 1e-4) << "seed " << seed;
}

TEST(EmuTcgen05, PairInstructionsOutsideAClusterAreReported) {
  PairCase c;
  Result r = c.Run(PairVariant::kNoCluster, 1);
  EXPECT_GT(Count(r, "tcgen05_pair"), 0) << All(r);
}

TEST(EmuTcgen05, APairCommitThatMissesTheOddBlockLeavesItWaiting) {
  PairCase c;
  Result r = c.Run(PairVariant::kCommitToLeaderOnly, 1);
  EXPECT_GT(Count(r, "deadlock"), 0) << All(r);
}

TEST(EmuTcgen05, ThePairKernelCompilesForSm100a) {
  PairCase c;
  const std::string src = CodegenCUDA(c.Make(PairVariant::kRight), "sm_100a");
  cuda::CompileResult cr = cuda::Compile(src, "sm_100a", {TL_TEST_INCLUDE_DIR}, {});
  for (const char* s :
       {"tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32", "tcgen05.mma.cta_group::2.kind::f16",
        "tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64",
        "tcgen05.dealloc.cta_group::2.sync.aligned.b32", ".reqnctapercluster 2, 1, 1"})
    EXPECT_NE(cr.ptx.find(s), std::string::npos) << s;
  EXPECT_FALSE(cr.cubin.empty());
}

// The same kernel through the CUDA code generator (include/tl_device/cuda/blackwell.h), NVRTC and ptxas for
// sm_100a: the PTX holds the tcgen05 instructions the IR names.
TEST(EmuTcgen05, TheKernelCompilesForSm100a) {
  MmaCase c;
  const std::string src = CodegenCUDA(c.Make(Variant::kRight), "sm_100a");
  EXPECT_NE(src.find("tl_device/cuda/blackwell.h"), std::string::npos);
  cuda::CompileResult cr = cuda::Compile(src, "sm_100a", {TL_TEST_INCLUDE_DIR}, {});
  for (const char* s : {"tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32",
                        "tcgen05.mma.cta_group::1.kind::f16",
                        "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64",
                        "tcgen05.ld.sync.aligned.32x32b.x8.b32", "tcgen05.wait::ld.sync.aligned",
                        "tcgen05.dealloc.cta_group::1.sync.aligned.b32"})
    EXPECT_NE(cr.ptx.find(s), std::string::npos) << s;
  EXPECT_FALSE(cr.cubin.empty());
}

}  // namespace
}  // namespace tl::emu
