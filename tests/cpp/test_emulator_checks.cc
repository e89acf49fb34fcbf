// The emulator's checks: races between barriers, out-of-bounds accesses, uninitialised reads,
// barriers in divergent code, warp-collective operations with inactive lanes, report capping.
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

TEST(EmuChecks, RaceWithoutBarrierAndNoneWithOne) {
  Kernel k;
  Buffer O = Global("O", kF32, {Int(1)});
  Buffer S = Shared("S", kF32, 4);
  auto run = [&](bool barrier) {
    Stmt body = Seq({
        If(Eq(k.tx, Int(3)), Store(S, FloatImm(kF32, 1.0), {Int(2)}, L(1))),
        barrier ? Sync(2) : Stmt(),
        If(Eq(k.tx, Int(7)), Store(S, FloatImm(kF32, 2.0), {Int(2)}, L(3))),
        Sync(4),
        If(Eq(k.tx, Int(0)), Store(O, Load(S, {Int(2)}), {Int(0)}, L(5))),
    });
    std::vector<float> o(1);
    Result r = emu::Run(k.Make({P(O)}, {Int(1)}, 64, {S}, body), {o.data()}, {});
    EXPECT_EQ(o[0], 2.0f);
    return r;
  };
  Result racy = run(false);
  ASSERT_EQ(racy.reports.size(), 1u) << All(racy);
  EXPECT_EQ(racy.reports[0].kind, "race");
  const std::string& msg = racy.reports[0].message;
  EXPECT_NE(msg.find("thread 7"), std::string::npos) << msg;
  EXPECT_NE(msg.find("thread 3"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'S' index [2]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("emu_kernel.py:3"), std::string::npos) << msg;
  EXPECT_TRUE(run(true).reports.empty()) << All(run(true));
}

TEST(EmuChecks, ReadWriteRaceAndAtomicsAreNotARace) {
  Kernel k;
  Buffer O = Global("O", kI32, {Int(2)});
  Buffer S = Shared("S", kI32, 2);
  Stmt body = Seq({
      If(Eq(k.tx, Int(0)), Seq({Store(S, Int(0), {Int(0)}), Store(S, Int(5), {Int(1)})})),
      Sync(),
      Void("tl.atomic_add", {Load(S, {Int(0)}), k.tx}, 1),                 // all 64 threads, no race
      If(Eq(k.tx, Int(40)), Store(O, Load(S, {Int(1)}), {Int(1)}, L(2))),  // reads S[1] ...
      If(Eq(k.tx, Int(41)), Store(S, Int(6), {Int(1)}, L(3))),             // ... another writes it
      Sync(),
      If(Eq(k.tx, Int(0)), Store(O, Load(S, {Int(0)}), {Int(0)})),
  });
  std::vector<int32_t> o(2);
  Result r = emu::Run(k.Make({P(O)}, {Int(1)}, 64, {S}, body), {o.data()}, {});
  EXPECT_EQ(o[0], 64 * 63 / 2);
  EXPECT_EQ(o[1], 5);
  ASSERT_EQ(r.reports.size(), 1u) << All(r);
  EXPECT_EQ(r.reports[0].kind, "race");
  EXPECT_NE(r.reports[0].message.find("read by thread 40"), std::string::npos) << r.reports[0].message;
}

TEST(EmuChecks, OutOfBoundsIsReportedAndNotPerformed) {
  Kernel k;
  Buffer A = Global("A", kF32, {Int(2), Int(8)});
  Buffer O = Global("O", kF32, {Int(16)});
  Buffer S = Shared("S", kF32, 8);
  Buffer l = Local("l", kF32, 2);
  Stmt body = Seq({
      Store(A, FloatImm(kF32, 1.0), {Int(1), k.tx}, L(1)),  // tx >= 8 is out of the row (per-dim check)
      Store(S, FloatImm(kF32, 3.0), {k.tx}, L(2)),          // tx >= 8 out of bounds
      Store(l, FloatImm(kF32, 4.0), {Int(0)}),
      Store(O, Load(l, {Int(0)}) + Load(l, {Int(2) + Div(k.tx, Int(15))}), {k.tx},
            L(3)),  // thread 15 reads l[3]
  });
  std::vector<float> a(32, -5.0f), o(16, -1);
  Options opt;
  opt.max_reports = 100;
  opt.check_uninit = false;
  Result r = emu::Run(k.Make({P(A), P(O)}, {Int(1)}, 16, {S, l}, body), {a.data(), o.data()}, {}, opt);
  EXPECT_EQ(Count(r, "out_of_bounds"), 8 + 8 + 15 + 1) << All(r);  // l[2] is outside for tx < 15 too
  for (int x = 0; x < 8; ++x) EXPECT_EQ(a[x], -5.0f);
  for (int x = 8; x < 16; ++x) EXPECT_EQ(a[x], 1.0f);
  for (int x = 16; x < 32; ++x) EXPECT_EQ(a[x], -5.0f) << "memory past the buffer was written";
  for (int t = 0; t < 16; ++t) EXPECT_EQ(o[t], 4.0f);  // out-of-bounds loads give 0
  EXPECT_NE(r.reports[0].message.find("'A' index [1, 8] outside shape [2, 8]"), std::string::npos)
      << r.reports[0].message;
  Options quiet = opt;
  quiet.check_bounds = false;
  Result q = emu::Run(k.Make({P(A), P(O)}, {Int(1)}, 16, {S, l}, body), {a.data(), o.data()}, {}, quiet);
  EXPECT_TRUE(q.reports.empty());
  for (int x = 16; x < 32; ++x) EXPECT_EQ(a[x], -5.0f);
}

TEST(EmuChecks, UninitializedSharedAndLocalReads) {
  Kernel k;
  Buffer O = Global("O", kF32, {Int(32)});
  Buffer S = Shared("S", kF32, 32);
  Buffer l = Local("l", kF32, 2);
  Stmt body = Seq({
      If(Lt(k.tx, Int(16)), Store(S, FloatImm(kF32, 1.0), {k.tx})),
      Store(l, FloatImm(kF32, 2.0), {Int(0)}),
      Sync(),
      Store(O, Load(S, {k.tx}) + Load(l, {Mod(k.tx, Int(2))}), {k.tx}, L(7)),
  });
  std::vector<float> o(32);
  Options opt;
  opt.max_reports = 100;
  Result r = emu::Run(k.Make({P(O)}, {Int(1)}, 32, {S, l}, body), {o.data()}, {}, opt);
  // 16 shared elements never written, and l[1] of the 16 odd threads.
  EXPECT_EQ(Count(r, "uninitialized_read"), 32) << All(r);
  EXPECT_EQ(r.reports.size(), 32u);
  EXPECT_NE(All(r).find("shared buffer 'S' index [16] is read but was never written"), std::string::npos)
      << All(r);
  EXPECT_NE(All(r).find("local buffer 'l' index [1]"), std::string::npos) << All(r);
  Options off = opt;
  off.check_uninit = false;
  EXPECT_TRUE(emu::Run(k.Make({P(O)}, {Int(1)}, 32, {S, l}, body), {o.data()}, {}, off).reports.empty());
}

TEST(EmuChecks, BarrierInDivergentCode) {
  Kernel k;
  Buffer O = Global("O", kF32, {Int(1)});
  float dummy = 0;
  Var j = MakeVar("j");
  RegisterSource("emu_kernel.py", "line1\nline2\n    if tx < 16: T.sync_threads()\nline4\nline5\n");
  PrimFunc divergent_if = k.Make({P(O)}, {Int(1)}, 64, {}, If(Lt(k.tx, Int(16)), Sync(3)));
  Result r = emu::Run(divergent_if, {&dummy}, {});
  ASSERT_EQ(r.reports.size(), 1u) << All(r);
  EXPECT_EQ(r.reports[0].kind, "barrier_divergence");
  EXPECT_NE(r.reports[0].message.find("thread 16"), std::string::npos) << r.reports[0].message;
  EXPECT_NE(r.reports[0].message.find("16 of 64"), std::string::npos) << r.reports[0].message;
  EXPECT_NE(r.reports[0].message.find("if tx < 16: T.sync_threads()"), std::string::npos)
      << r.reports[0].message;
  // A loop whose trip count depends on the thread: iterations past the shortest diverge.
  PrimFunc divergent_loop = k.Make({P(O)}, {Int(1)}, 64, {},
                                   For(j, Int(0), Div(k.tx, Int(32)) + Int(1), ForKind::kSerial, Sync(4)));
  Result r2 = emu::Run(divergent_loop, {&dummy}, {});
  EXPECT_EQ(Count(r2, "barrier_divergence"), 1) << All(r2);
  PrimFunc uniform = k.Make({P(O)}, {Int(1)}, 64, {}, For(j, Int(0), Int(3), ForKind::kSerial, Sync(4)));
  EXPECT_TRUE(emu::Run(uniform, {&dummy}, {}).reports.empty());
}

TEST(EmuChecks, ShuffleNeedsTheWholeWarp) {
  Kernel k;
  Buffer O = Global("O", kI32, {Int(64)});
  auto shfl = [&] { return Call(kI32, "tl.shfl_xor", {k.tx * Int(10), Int(5)}); };
  // Warp 0 shuffles with all lanes; in warp 1 only lanes 32..47 do.
  Stmt body = If(Lt(k.tx, Int(48)), Store(O, shfl(), {k.tx}, L(2)));
  std::vector<int32_t> o(64, -1);
  Result r = emu::Run(k.Make({P(O)}, {Int(1)}, 64, {}, body), {o.data()}, {});
  ASSERT_EQ(r.reports.size(), 1u) << All(r);
  EXPECT_EQ(r.reports[0].kind, "inactive_lanes");
  EXPECT_NE(r.reports[0].message.find("16 of the 32 lanes of warp 1"), std::string::npos)
      << r.reports[0].message;
  for (int t = 0; t < 32; ++t) EXPECT_EQ(o[t], (t ^ 5) * 10) << t;
}

TEST(EmuChecks, MmaWithInactiveLanesIsReportedAndSkipped) {
  Kernel k;
  Buffer O = Global("O", kF32, {Int(32)});
  Buffer a = Local("a", kF16, 8), b = Local("b", kF16, 4), c = Local("c", kF32, 4);
  Var i = MakeVar("i");
  Stmt body = Seq({
      Unrolled(i, 8, Store(a, FloatImm(kF16, 1.0), {i})),
      Unrolled(i, 4, Store(b, FloatImm(kF16, 1.0), {i})),
      Unrolled(i, 4, Store(c, FloatImm(kF32, 0.0), {i})),
      If(Ge(k.tx, Int(1)), Void("tl.mma_sync",
                                {StringImm("m16n8k16"), StringImm("f16"), Load(a, {Int(0)}),
                                 Load(b, {Int(0)}), Load(c, {Int(0)})},
                                6)),
      Store(O, Load(c, {Int(0)}), {k.tx}),
  });
  std::vector<float> o(32, -1);
  Result r = emu::Run(k.Make({P(O)}, {Int(1)}, 32, {a, b, c}, body), {o.data()}, {});
  EXPECT_EQ(Count(r, "inactive_lanes"), 1) << All(r);
  for (int t = 0; t < 32; ++t) EXPECT_EQ(o[t], 0.0f);
}

TEST(EmuChecks, ReportsAreCappedButCounted) {
  Kernel k;
  Buffer O = Global("O", kF32, {Int(4)});
  Stmt body = Store(O, FloatImm(kF32, 1.0), {k.tx});
  std::vector<float> o(4);
  Options opt;
  opt.max_reports = 3;
  Result r = emu::Run(k.Make({P(O)}, {Int(2)}, 128, {}, body), {o.data()}, {}, opt);
  EXPECT_EQ(r.reports.size(), 3u);
  EXPECT_EQ(r.total_reports, 2 * 124);
  EXPECT_NE(r.reports[0].message.find("block (0, 0, 0) thread 4"), std::string::npos) << r.reports[0].message;
}

}  // namespace
}  // namespace tl::emu
