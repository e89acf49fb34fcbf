// The CUDA code generator's hoisting of loop-invariant address arithmetic (issue 14;
// src/target/cuda/shared_address_hoist.h). The emulator runs the IR, not the generated source, so
// the split itself is checked here: for every cp.async / ldmatrix operand of the pipelined main
// loop, the hoisted terms plus the rest equal the original index for random values of every var,
// and the hoisted terms use no var that changes inside the loop (except the unrolled loops the
// group iterates over before the loop).
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "arith/eval.h"
#include "ir/functor.h"
#include "target/cuda/codegen_cuda.h"
#include "target/cuda/shared_address_hoist.h"
#include "target/cuda/target.h"
#include "transform/gpu_options.h"
#include "tile_gemm_fixture.h"

namespace tl {
namespace {

// The outermost loop that is neither unrolled nor vectorised and holds an ldmatrix: the main loop.
class MainLoop : public IRVisitor {
 public:
  const ForNode* loop = nullptr;

 protected:
  void VisitFor(const ForNode* n) override {
    if (!loop && n->for_kind != ForKind::kUnrolled && n->for_kind != ForKind::kVectorized) {
      candidate_ = n;
      found_ = false;
      IRVisitor::VisitFor(n);
      if (found_ && !loop) loop = n;
      candidate_ = nullptr;
      return;
    }
    IRVisitor::VisitFor(n);
  }
  void VisitCall(const CallNode* n) override {
    if (n->op == "tl.ldmatrix") found_ = true;
    IRVisitor::VisitCall(n);
  }

 private:
  const ForNode* candidate_ = nullptr;
  bool found_ = false;
};

// Vars bound inside `loop` by anything but an unrolled loop (its own var included).
class InnerVars : public IRVisitor {
 public:
  std::set<const VarNode*> inner, unrolled;

 protected:
  void VisitFor(const ForNode* n) override {
    (n->for_kind == ForKind::kUnrolled ? unrolled : inner).insert(n->var.get());
    IRVisitor::VisitFor(n);
  }
  void VisitLet(const LetNode* n) override {
    inner.insert(n->var.get());
    IRVisitor::VisitLet(n);
  }
};

bool Eval(const std::vector<Expr>& terms, const std::map<const VarNode*, int64_t>& env, int64_t* out) {
  *out = 0;
  for (auto& t : terms) {
    int64_t v = 0;
    if (!EvalInt(t, env, &v)) return false;
    *out += v;
  }
  return true;
}

struct Case {
  int64_t M, N, K, BM, BN, BK, threads, stages;
};

class AddressHoist : public ::testing::TestWithParam<Case> {};

TEST_P(AddressHoist, HoistedPlusRestIsTheIndexAndHoistedIsLoopInvariant) {
  Case c = GetParam();
  PrimFunc low = LowerForCUDA(TileGemm(c.M, c.N, c.K, c.BM, c.BN, c.BK, c.threads, c.stages),
                              ParseCudaTarget("cuda -arch=sm_80"), {}, nullptr);
  MainLoop finder;
  finder.VisitStmt(low->body);
  ASSERT_NE(finder.loop, nullptr);
  SharedAddressPlan plan = PlanSharedAddressHoist(finder.loop);
  InnerVars inner;
  inner.VisitStmt(Stmt(finder.loop->body));
  inner.inner.insert(finder.loop->var.get());

  // Every swizzled shared operand of ldmatrix and cp.async, and both global sources, are hoisted.
  int shared = 0, global = 0;
  for (auto& [load, use] : plan.uses) (load->buffer->scope == Scope::kShared ? shared : global)++;
  EXPECT_GE(shared, 4);
  EXPECT_GE(global, c.stages > 1 ? 2 : 0);

  unsigned seed = 2024;
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int64_t> val(0, 4095);
  for (auto& [load, use] : plan.uses) {
    const SharedAddressGroup& g = plan.groups.at(use.group);
    ASSERT_EQ(g.buffer, load->buffer);
    ASSERT_EQ(g.hoisted.size(), load->indices.size());
    ASSERT_EQ(use.rest.size(), load->indices.size());
    std::set<const VarNode*> group_loops;
    for (const ForNode* f : g.loops) group_loops.insert(f->var.get());
    for (size_t d = 0; d < load->indices.size(); ++d) {
      for (auto& t : g.hoisted[d]) {
        for (const VarNode* var : VarsOf(t).vars) {
          EXPECT_FALSE(inner.inner.count(var)) << load->buffer->name << ": hoisted term uses " << var->name;
          if (inner.unrolled.count(var)) {
            EXPECT_TRUE(group_loops.count(var)) << var->name << " is not iterated before the loop";
          }
        }
      }
      VarUses all = VarsOf(load->indices[d]);
      for (int trial = 0; trial < 50; ++trial) {
        std::map<const VarNode*, int64_t> env;
        for (const VarNode* var : all.vars) env[var] = val(rng);
        int64_t whole = 0, h = 0, r = 0;
        ASSERT_TRUE(EvalInt(load->indices[d], env, &whole));
        ASSERT_TRUE(Eval(g.hoisted[d], env, &h));
        ASSERT_TRUE(Eval(use.rest[d], env, &r));
        EXPECT_EQ(whole, h + r) << load->buffer->name << " index " << d << " (seed " << seed << ")";
      }
    }
  }

  // The generated main loop computes no swizzle or division: those moved before it.
  std::string src = CodegenCUDA(low, "sm_80");
  std::string loop = src.substr(src.find("for (int32_t k = 0"));
  loop = loop.substr(0, loop.find("tl::cp_async_wait<0>();\n    //"));
  EXPECT_EQ(loop.find('^'), std::string::npos) << loop;
  EXPECT_EQ(loop.find("floordiv"), std::string::npos) << loop;
  EXPECT_NE(src.find("_addr"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Shapes, AddressHoist,
                         ::testing::Values(Case{64, 64, 64, 64, 64, 32, 128, 2},    // whole tiles
                                           Case{72, 40, 48, 32, 32, 16, 64, 3},     // ragged M, N; 3 stages
                                           Case{32, 64, 96, 32, 64, 32, 128, 1}));  // no pipelining

}  // namespace
}  // namespace tl
