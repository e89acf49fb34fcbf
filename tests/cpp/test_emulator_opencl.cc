// The emulator's OpenCL sub-groups (src/emulator/intrinsics_opencl.cc) on hand-worked work-groups: ids
// and counts under contiguous and strided mappings, sub_group_reduce_{add,max,min} over sub-groups of
// unequal sizes, and a reduction reached by part of a sub-group.
#include "emulator_test_util.h"

namespace tl::emu {
namespace {
using namespace emu_test;

Expr SgCall(const std::string& op) { return Call(kI32, op, {}); }

// O[t] = (sub-group id, local id, count) packed as id * 10000 + local * 100 + count.
std::vector<int32_t> Ids(int threads, int size, bool strided) {
  Kernel k;
  Buffer O = Global("O", kI32, {Int(threads)});
  Expr packed = Binary(BinaryOp::kAdd,
                       Binary(BinaryOp::kAdd, Binary(BinaryOp::kMul, SgCall("tl.subgroup_id"), Int(10000)),
                              Binary(BinaryOp::kMul, SgCall("tl.subgroup_local_id"), Int(100))),
                       SgCall("tl.num_subgroups"));
  PrimFunc f = k.Make({P(O)}, {Int(1)}, threads, {}, Store(O, packed, {k.tx}));
  std::vector<int32_t> o(threads, -1);
  Options opt;
  opt.subgroup_size = size;
  opt.subgroup_strided = strided;
  Result r = emu::Run(f, {o.data()}, {}, opt);
  EXPECT_TRUE(r.reports.empty()) << All(r);
  return o;
}

TEST(EmuSubgroup, ContiguousAndStridedIds) {
  std::vector<int32_t> c = Ids(10, 4, false);  // sub-groups {0..3}, {4..7}, {8, 9}
  for (int t = 0; t < 10; ++t) EXPECT_EQ(c[t], (t / 4) * 10000 + (t % 4) * 100 + 3) << t;
  std::vector<int32_t> s = Ids(10, 4, true);  // 3 sub-groups: {0, 3, 6, 9}, {1, 4, 7}, {2, 5, 8}
  for (int t = 0; t < 10; ++t) EXPECT_EQ(s[t], (t % 3) * 10000 + (t / 3) * 100 + 3) << t;
}

// O[t] = sub_group_reduce_<how>(X[t]) over 10 work-items in sub-groups of 4 (the last one of 2).
std::vector<int32_t> Reduce(const std::string& how, DataType t, const std::vector<int32_t>& x) {
  Kernel k;
  Buffer X = Global("X", kI32, {Int(10)}), O = Global("O", kI32, {Int(10)});
  Expr v = Cast(t, Load(X, {k.tx}));
  Expr red = Call(t, "tl.subgroup_reduce", {v, StringImm(how)});
  PrimFunc f = k.Make({P(X), P(O)}, {Int(1)}, 10, {}, Store(O, Cast(kI32, red), {k.tx}));
  std::vector<int32_t> in = x, o(10, -1);
  Options opt;
  opt.subgroup_size = 4;
  Result r = emu::Run(f, {in.data(), o.data()}, {}, opt);
  EXPECT_TRUE(r.reports.empty()) << All(r);
  return o;
}

TEST(EmuSubgroup, ReduceAddMaxMin) {
  std::vector<int32_t> x = {3, -7, 12, 1, 100, 5, -50, 9, 4, -4};
  std::vector<int32_t> add = Reduce("add", kI32, x), mx = Reduce("max", kI32, x), mn = Reduce("min", kI32, x);
  for (int t = 0; t < 10; ++t) {
    EXPECT_EQ(add[t], t < 4 ? 9 : t < 8 ? 64 : 0) << t;
    EXPECT_EQ(mx[t], t < 4 ? 12 : t < 8 ? 100 : 4) << t;
    EXPECT_EQ(mn[t], t < 4 ? -7 : t < 8 ? -50 : -4) << t;
  }
  // int8 sums wrap: 100 + 5 - 50 + 9 = 64, but 120 + 120 = 240 -> -16
  std::vector<int32_t> w = Reduce("add", DataType::Int(8), {120, 120, 0, 0, 0, 0, 0, 0, 0, 0});
  EXPECT_EQ(w[0], -16);
}

TEST(EmuSubgroup, PartOfASubgroupIsReported) {
  // Work-items 0..5 reach the reduction: sub-group {4..7} only half. Sub-group {0..3} is complete and
  // reduces; {4, 5} are reported and get 0.
  Kernel k;
  Buffer O = Global("O", kI32, {Int(8)});
  Stmt body =
      Seq({Store(O, Int(-1), {k.tx}),
           If(Lt(k.tx, Int(6)), Store(O, Call(kI32, "tl.subgroup_reduce", {k.tx, StringImm("add")}), {k.tx}),
              nullptr)});
  PrimFunc f = k.Make({P(O)}, {Int(1)}, 8, {}, body);
  std::vector<int32_t> o(8, -2);
  Options opt;
  opt.subgroup_size = 4;
  Result r = emu::Run(f, {o.data()}, {}, opt);
  EXPECT_EQ(Count(r, "inactive_lanes"), 1) << All(r);
  EXPECT_NE(All(r).find("only 2 of the 4 work-items of sub-group 1"), std::string::npos) << All(r);
  for (int t = 0; t < 4; ++t) EXPECT_EQ(o[t], 6) << t;
  EXPECT_EQ(o[4], 0);
  EXPECT_EQ(o[6], -1);
}

}  // namespace
}  // namespace tl::emu
