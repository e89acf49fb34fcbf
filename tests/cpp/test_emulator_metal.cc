// Hand-worked cases of the emulator's Metal simdgroup_matrix semantics (src/emulator/intrinsics_metal.cc),
// from the MSL specification: simdgroup_load / simdgroup_store with elements_per_row and
// transpose_matrix, simdgroup_multiply_accumulate, and what the emulator reports; and of Metal 4's
// cooperative tensors and matmul2d (EmuCoop), from the MetalPerformancePrimitives API description.
#include "emulator_test_util.h"

namespace tl::emu {
namespace {
using namespace emu_test;

// Shared S[e] = e (float32). Load the 8x8 matrix at S[origin] with `stride` elements per row
// (transposed or not) and store it to O (8 per row, transposed or not).
std::vector<float> LoadStore(bool tload, bool tstore, int64_t origin, int64_t stride, Result* res) {
  Kernel k;
  Buffer O = Global("O", kF32, {Int(64)});
  Buffer S = Shared("S", kF32, 256);
  Buffer m = Local("m", kF32, 2);
  Var i = MakeVar("i");
  Stmt body = Seq({
      Unrolled(i, 8, Store(S, Cast(kF32, k.tx * Int(8) + i), {k.tx * Int(8) + i})),
      Sync(),
      Void("tl.simdgroup_load", {Load(m, {Int(0)}), Load(S, {Int(origin)}), Int(stride), Int(tload)}, 7),
      Void("tl.simdgroup_store", {Load(O, {Int(0)}), Load(m, {Int(0)}), Int(8), Int(tstore)}, 8),
  });
  PrimFunc f = k.Make({P(O)}, {Int(1)}, 32, {S, m}, body);
  std::vector<float> o(64, -1);
  *res = emu::Run(f, {o.data()}, {});
  return o;
}

TEST(EmuSimdgroup, LoadAndStoreWithStrideAndTranspose) {
  for (bool tl : {false, true})
    for (bool ts : {false, true}) {
      SCOPED_TRACE(std::string(tl ? "load.T " : "load ") + (ts ? "store.T" : "store"));
      Result res;
      std::vector<float> o = LoadStore(tl, ts, 3, 16, &res);
      EXPECT_TRUE(res.reports.empty()) << All(res);
      for (int r = 0; r < 8; ++r)
        for (int c = 0; c < 8; ++c) {
          // matrix element (r, c): S[3 + r*16 + c], or S[3 + c*16 + r] when loaded transposed
          float v = static_cast<float>(tl ? 3 + c * 16 + r : 3 + r * 16 + c);
          EXPECT_EQ(o[ts ? c * 8 + r : r * 8 + c], v) << r << "," << c;
        }
    }
}

TEST(EmuSimdgroup, MultiplyAccumulate) {
  // A(r, k) = r * 8 + k and B(k, c) = (k == c) + (c == 0) as float16, C(r, c) = 0.5 as float32:
  // D(r, c) = A(r, c) + [c == 0] * sum_k A(r, k) + 0.5 = r*8 + c + [c == 0] * (64 r + 28) + 0.5.
  Kernel k;
  Buffer O = Global("O", kF32, {Int(64)});
  Buffer SA = Shared("SA", kF16, 64), SB = Shared("SB", kF16, 64), SC = Shared("SC", kF32, 64);
  Buffer a = Local("a", kF16, 2), b = Local("b", kF16, 2), c = Local("c", kF32, 2);
  Var i = MakeVar("i");
  Expr e = k.tx * Int(2) + i, r = Div(e, Int(8)), col = Mod(e, Int(8));
  Expr one = Cast(kF16, Int(1)), zero = Cast(kF16, Int(0));
  Stmt body = Seq({
      Unrolled(i, 2,
               Seq({Store(SA, Cast(kF16, e), {e}),
                    Store(SB, Select(Eq(r, col), one, zero) + Select(Eq(col, Int(0)), one, zero), {e}),
                    Store(SC, FloatImm(kF32, 0.5), {e})})),
      Sync(),
      Void("tl.simdgroup_load", {Load(a, {Int(0)}), Load(SA, {Int(0)}), Int(8), Int(0)}),
      Void("tl.simdgroup_load", {Load(b, {Int(0)}), Load(SB, {Int(0)}), Int(8), Int(0)}),
      Void("tl.simdgroup_load", {Load(c, {Int(0)}), Load(SC, {Int(0)}), Int(8), Int(0)}),
      Void("tl.simdgroup_mma", {Load(c, {Int(0)}), Load(a, {Int(0)}), Load(b, {Int(0)}), Load(c, {Int(0)})}),
      Void("tl.simdgroup_store", {Load(O, {Int(0)}), Load(c, {Int(0)}), Int(8), Int(0)}),
  });
  PrimFunc f = k.Make({P(O)}, {Int(1)}, 32, {SA, SB, SC, a, b, c}, body);
  std::vector<float> o(64, -1);
  Result res = emu::Run(f, {o.data()}, {});
  EXPECT_TRUE(res.reports.empty()) << All(res);
  for (int rr = 0; rr < 8; ++rr)
    for (int cc = 0; cc < 8; ++cc)
      EXPECT_EQ(o[rr * 8 + cc], rr * 8 + cc + (cc == 0 ? 64 * rr + 28 : 0) + 0.5f) << rr << "," << cc;
}

TEST(EmuSimdgroup, ReportsOutOfBoundsDivergentPointersAndPartialGroups) {
  Result res;
  LoadStore(false, false, 200, 16, &res);  // rows past S[255]
  EXPECT_GT(Count(res, "out_of_bounds"), 0) << All(res);
  EXPECT_NE(All(res).find("simdgroup_load"), std::string::npos) << All(res);

  Kernel k;
  Buffer O = Global("O", kF32, {Int(64)});
  Buffer S = Shared("S", kF32, 256);
  Buffer m = Local("m", kF32, 2);
  Var i = MakeVar("i");
  auto run = [&](Expr origin, Stmt load) {
    Stmt body = Seq(
        {Unrolled(i, 8, Store(S, Cast(kF32, k.tx * Int(8) + i), {k.tx * Int(8) + i})), Sync(),
         load ? load : Void("tl.simdgroup_load", {Load(m, {Int(0)}), Load(S, {origin}), Int(8), Int(0)}, 9)});
    std::vector<float> o(64, -1);
    return emu::Run(k.Make({P(O)}, {Int(1)}, 32, {S, m}, body), {o.data()}, {});
  };
  Result d = run(k.tx, nullptr);  // every lane a different pointer
  EXPECT_EQ(Count(d, "simdgroup_divergence"), 1) << All(d);
  Stmt half = If(Lt(k.tx, Int(16)),
                 Void("tl.simdgroup_load", {Load(m, {Int(0)}), Load(S, {Int(0)}), Int(8), Int(0)}, 9));
  Result p = run(Int(0), half);  // half of the SIMD-group
  EXPECT_GT(Count(p, "inactive_lanes"), 0) << All(p);
  // a matrix never loaded is an uninitialised read
  Stmt st = Void("tl.simdgroup_store", {Load(O, {Int(0)}), Load(m, {Int(0)}), Int(8), Int(0)}, 9);
  Result u = run(Int(0), st);
  EXPECT_GT(Count(u, "uninitialized_read"), 0) << All(u);
}

// ---- Metal 4 cooperative tensors (matmul2d) ---------------------------------------------------------------
// From the API description (intrinsics_metal.cc): matmul2d_descriptor(m, n, k, ta, tb) computes D(m x n) +=
// A(m x k) B(k x n); A stored transposed is k x m, B stored transposed n x k; cooperative tensors are loaded
// from and stored to tensors whose rows are `stride` elements apart.
std::vector<Expr> Desc(std::vector<Expr> args, int64_t m, int64_t n, int64_t k, int64_t ta, int64_t tb) {
  for (int64_t v : {m, n, k, ta, tb}) args.push_back(Int(v));
  return args;
}

// Shared S[e] = e, float32. A 16x32 destination cooperative tensor loaded from S[3 + r*40 + c] and stored to
// O[r*32 + c]; each lane also writes its own 16 elements, raw, to R[lane*16 + j].
TEST(EmuCoop, DestinationLoadStoreRoundTripAndAnOpaqueLayout) {
  Kernel k;
  Buffer O = Global("O", kF32, {Int(512)}), R = Global("R", kF32, {Int(512)});
  Buffer S = Shared("S", kF32, 1024);
  Buffer t = Local("t", kF32, 16);
  Var i = MakeVar("i"), j = MakeVar("j");
  Stmt body = Seq({
      Unrolled(i, 32, Store(S, Cast(kF32, k.tx * Int(32) + i), {k.tx * Int(32) + i})),
      Sync(),
      Void("tl.coop_load", Desc({Load(t, {Int(0)}), Load(S, {Int(3)}), Int(40), Int(2)}, 16, 32, 16, 0, 0),
           7),
      Void("tl.coop_store", Desc({Load(O, {Int(0)}), Load(t, {Int(0)}), Int(32), Int(2)}, 16, 32, 16, 0, 0),
           8),
      Unrolled(j, 16, Store(R, Load(t, {j}), {k.tx * Int(16) + j})),
  });
  PrimFunc f = k.Make({P(O), P(R)}, {Int(1)}, 32, {S, t}, body);
  std::vector<float> o(512, -1), raw(512, -1);
  Result res = emu::Run(f, {o.data(), raw.data()}, {});
  EXPECT_TRUE(res.reports.empty()) << All(res);
  for (int r = 0; r < 16; ++r)
    for (int c = 0; c < 32; ++c) EXPECT_EQ(o[r * 32 + c], 3 + r * 40 + c) << r << "," << c;
  // Every element is held exactly once, and not where a layout a program might assume puts it: element
  // (r, c) in lane (r*32 + c) % 32 (row-major over lanes) or in lane r*2 + c/16 (a lane per half row).
  std::vector<int> seen(16 * 40 + 32 + 3, 0);
  int row_major = 0, half_rows = 0;
  for (int lane = 0; lane < 32; ++lane)
    for (int q = 0; q < 16; ++q) {
      const int v = static_cast<int>(raw[lane * 16 + q]) - 3, r = v / 40, c = v % 40;
      ASSERT_TRUE(v >= 0 && c < 32 && r < 16) << v;
      ++seen[v];
      row_major += (r * 32 + c) % 32 == lane && (r * 32 + c) / 32 == q;
      half_rows += r * 2 + c / 16 == lane && c % 16 == q;
    }
  for (int r = 0; r < 16; ++r)
    for (int c = 0; c < 32; ++c) EXPECT_EQ(seen[r * 40 + c], 1);
  EXPECT_LT(row_major, 32);
  EXPECT_LT(half_rows, 32);
}

// D(16 x 32) = C + A B with A(r, q) = 16 r + q (float16, 16 x 16, stored transposed when ta), B(q, c) =
// [q == c % 16] (stored 32 x 16 when tb) and C = 0.5: D(r, c) = 0.5 + 16 r + c % 16.
TEST(EmuCoop, MatmulWithTransposedOperands) {
  for (int ta : {0, 1})
    for (int tb : {0, 1}) {
      SCOPED_TRACE("ta " + std::to_string(ta) + " tb " + std::to_string(tb));
      Kernel k;
      Buffer O = Global("O", kF32, {Int(512)});
      Buffer SA = Shared("SA", kF16, 16 * 24), SB = Shared("SB", kF16, 32 * 40), SC = Shared("SC", kF32, 512);
      Buffer a = Local("a", kF16, 8), d = Local("d", kF32, 16);
      Var i = MakeVar("i");
      // A: 16x16 with rows 24 apart (logical (r, q) at r*24 + q, or q*24 + r stored transposed)
      Expr e = k.tx * Int(8) + i, r = Div(e, Int(16)), q = Mod(e, Int(16));
      Expr a_at = ta ? q * Int(24) + r : r * Int(24) + q;
      // B: logical (q, c) for c < 32, q < 16, rows 40 apart (transposed: (c, q) at c*40 + q)
      Var j = MakeVar("j");
      Expr eb = k.tx * Int(16) + j, bq = Div(eb, Int(32)), bc = Mod(eb, Int(32));
      Expr b_at = tb ? bc * Int(40) + bq : bq * Int(40) + bc;
      Expr one = Cast(kF16, Int(1)), zero = Cast(kF16, Int(0));
      Stmt body = Seq({
          Unrolled(i, 8, Store(SA, Cast(kF16, r * Int(16) + q), {a_at})),
          Unrolled(j, 16, Store(SB, Select(Eq(bq, Mod(bc, Int(16))), one, zero), {b_at})),
          Unrolled(j, 16, Store(SC, FloatImm(kF32, 0.5), {eb})),
          Sync(),
          Void("tl.coop_load",
               Desc({Load(a, {Int(0)}), Load(SA, {Int(0)}), Int(24), Int(0)}, 16, 32, 16, ta, tb)),
          Void("tl.coop_load",
               Desc({Load(d, {Int(0)}), Load(SC, {Int(0)}), Int(32), Int(2)}, 16, 32, 16, ta, tb)),
          Void("tl.coop_mma",
               Desc({Load(d, {Int(0)}), Load(a, {Int(0)}), Load(SB, {Int(0)}), Int(40)}, 16, 32, 16, ta, tb)),
          Void("tl.coop_store",
               Desc({Load(O, {Int(0)}), Load(d, {Int(0)}), Int(32), Int(2)}, 16, 32, 16, ta, tb)),
      });
      std::vector<float> o(512, -1);
      Result res = emu::Run(k.Make({P(O)}, {Int(1)}, 32, {SA, SB, SC, a, d}, body), {o.data()}, {});
      EXPECT_TRUE(res.reports.empty()) << All(res);
      for (int rr = 0; rr < 16; ++rr)
        for (int cc = 0; cc < 32; ++cc)
          EXPECT_EQ(o[rr * 32 + cc], 0.5f + 16 * rr + cc % 16) << rr << "," << cc;
    }
}

// int8 x int8 -> int32 wraps: C = INT32_MAX everywhere, A(r, q) = [q == 0], B(q, c) = [q == 0] * 1: D =
// INT32_MIN. And what the emulator reports: a destination never loaded (an uninitialised read), a pointer
// that differs between the lanes, a tensor reaching past its buffer.
TEST(EmuCoop, Int8WrapsAndReports) {
  const DataType i8 = DataType::Int(8);
  auto run = [&](int64_t b_origin, bool diverge, bool load_d) {
    Kernel k;
    Expr c_origin = diverge ? Expr(k.tx) : Int(0);
    Buffer O = Global("O", kI32, {Int(512)});
    Buffer SA = Shared("SA", i8, 512), SB = Shared("SB", i8, 1024), SC = Shared("SC", kI32, 512);
    Buffer a = Local("a", i8, 16), d = Local("d", kI32, 16);
    Var i = MakeVar("i");
    Expr e = k.tx * Int(16) + i;  // A 16x32 (k = 32), B 32x32, C 16x32
    Stmt fill = Seq({Store(SA, Cast(i8, Select(Eq(Mod(e, Int(32)), Int(0)), Int(1), Int(0))), {e}),
                     Store(SB, Cast(i8, Select(Lt(e, Int(32)), Int(1), Int(0))), {e}),
                     Store(SB, Cast(i8, Int(0)), {e + Int(512)}), Store(SC, Int(2147483647), {e})});
    std::vector<Stmt> body = {
        Unrolled(i, 16, fill), Sync(),
        Void("tl.coop_load",
             Desc({Load(a, {Int(0)}), Load(SA, {Int(0)}), Int(32), Int(0)}, 16, 32, 32, 0, 0))};
    if (load_d)
      body.push_back(Void("tl.coop_load", Desc({Load(d, {Int(0)}), Load(SC, {c_origin}), Int(32), Int(2)}, 16,
                                               32, 32, 0, 0)));
    body.push_back(Void(
        "tl.coop_mma",
        Desc({Load(d, {Int(0)}), Load(a, {Int(0)}), Load(SB, {Int(b_origin)}), Int(32)}, 16, 32, 32, 0, 0)));
    body.push_back(Void("tl.coop_store",
                        Desc({Load(O, {Int(0)}), Load(d, {Int(0)}), Int(32), Int(2)}, 16, 32, 32, 0, 0)));
    std::vector<int32_t> o(512, -1);
    Result res = emu::Run(k.Make({P(O)}, {Int(1)}, 32, {SA, SB, SC, a, d}, Seq(body)), {o.data()}, {});
    return std::make_pair(o, res);
  };
  auto [o, res] = run(0, false, true);
  EXPECT_TRUE(res.reports.empty()) << All(res);
  for (int e = 0; e < 512; ++e) EXPECT_EQ(o[e], INT32_MIN) << e;
  EXPECT_GT(Count(run(0, false, false).second, "uninitialized_read"), 0);
  EXPECT_EQ(Count(run(0, true, true).second, "simdgroup_divergence"), 1);
  EXPECT_GT(Count(run(100, false, true).second, "out_of_bounds"), 0);  // B's last rows past SB[1023]
}

}  // namespace
}  // namespace tl::emu
