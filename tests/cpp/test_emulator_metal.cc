// Hand-worked cases of the emulator's Metal simdgroup_matrix semantics (src/emulator/intrinsics_metal.cc),
// from the MSL specification: simdgroup_load / simdgroup_store with elements_per_row and
// transpose_matrix, simdgroup_multiply_accumulate, and what the emulator reports.
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

}  // namespace
}  // namespace tl::emu
