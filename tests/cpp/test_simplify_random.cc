// The simplifier's randomized properties: idempotence, canonical affine forms and preserved
// semantics on random expressions and statements (seeded; TL_FUZZ_SCALE / TL_FUZZ_SEED scale them).
#include <gtest/gtest.h>
#include <cstdlib>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>
#include "arith/simplify.h"
#include "ir/expr.h"
#include "ir/printer.h"
#include "ir/stmt.h"
#include "ir/structural.h"
#include "simplify_test_util.h"

namespace tl {
namespace {

using namespace simplify_test;

// ------------------------------------------------------------------ randomized properties

// Random integer expressions over a few vars, using +, -, *, floordiv and floormod (and their
// truncating forms) by positive constants, min and max; built from a fixed seed so failures reproduce.
class ExprGen {
 public:
  explicit ExprGen(uint32_t seed) : rng_(seed) {}
  int Rand(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }

  Expr Affine(const std::vector<Var>& vars, int depth) {
    if (depth == 0 || Rand(0, 4) == 0) return Leaf(vars);
    switch (Rand(0, 4)) {
      case 0: return Affine(vars, depth - 1) + Affine(vars, depth - 1);
      case 1: return Affine(vars, depth - 1) - Affine(vars, depth - 1);
      case 2: return Affine(vars, depth - 1) * Int(Rand(-4, 8));
      case 3: return Int(Rand(-3, 5)) * Affine(vars, depth - 1);
      default: return Affine(vars, depth - 1) + Int(Rand(-64, 64));
    }
  }

  Expr Full(const std::vector<Var>& vars, int depth) {
    if (depth == 0 || Rand(0, 5) == 0) return Leaf(vars);
    int divisors[] = {1, 2, 3, 4, 8, 16, 32, 7};
    switch (Rand(0, 11)) {
      case 0: return Full(vars, depth - 1) + Full(vars, depth - 1);
      case 1: return Full(vars, depth - 1) - Full(vars, depth - 1);
      case 2: return Full(vars, depth - 1) * Int(Rand(-3, 4));
      case 3: return Full(vars, depth - 1) * Full(vars, depth - 1);
      case 4: return FDiv(Full(vars, depth - 1), Int(divisors[Rand(0, 7)]));
      case 5: return FMod(Full(vars, depth - 1), Int(divisors[Rand(0, 7)]));
      case 6: return Min(Full(vars, depth - 1), Full(vars, depth - 1));
      case 7: return Max(Full(vars, depth - 1), Full(vars, depth - 1));
      case 8: {
        // The tiling idiom: (k * c + i) // c and % c.
        int c = divisors[Rand(1, 6)];
        Expr e = Full(vars, depth - 1) * Int(c) + Full(vars, depth - 1);
        return Rand(0, 1) ? FDiv(e, Int(c)) : FMod(e, Int(c));
      }
      case 9: return Full(vars, depth - 1) + Int(Rand(-40, 40));
      // Truncating division and modulus (T.truncdiv / T.truncmod) by positive constants.
      case 10: return TDiv(Full(vars, depth - 1), Int(divisors[Rand(0, 7)]));
      default: return TMod(Full(vars, depth - 1), Int(divisors[Rand(0, 7)]));
    }
  }

 private:
  Expr Leaf(const std::vector<Var>& vars) {
    if (Rand(0, 3) == 0) return Int(Rand(-10, 40));
    return vars[Rand(0, static_cast<int>(vars.size()) - 1)];
  }
  std::mt19937 rng_;
};

// Iteration counts scale with TL_FUZZ_SCALE (default 1) for longer local fuzzing runs; the seed
// offset TL_FUZZ_SEED (default 0) explores other fixed sequences.
int Iters(int n) {
  const char* s = std::getenv("TL_FUZZ_SCALE");
  int k = s ? std::atoi(s) : 1;
  return n * (k > 0 ? k : 1);
}
uint32_t Seed(uint32_t base) {
  const char* s = std::getenv("TL_FUZZ_SEED");
  return base + (s ? static_cast<uint32_t>(std::atoi(s)) : 0u);
}

struct RandomSetup {
  std::vector<Var> vars = {MakeVar("x"), MakeVar("y"), MakeVar("i"),
                           MakeVar("j"), MakeVar("k"), MakeVar("t")};
  // i, j, k and t are bounded; x and y are not.
  BoundMap bounds{
      {vars[2].get(), {0, 31}}, {vars[3].get(), {0, 7}}, {vars[4].get(), {-5, 5}}, {vars[5].get(), {3, 10}}};

  Env RandomEnv(std::mt19937& rng) const {
    Env env;
    std::uniform_int_distribution<int> free(-60, 60);
    for (auto& v : vars) {
      auto it = bounds.find(v.get());
      if (it == bounds.end()) {
        env[v.get()] = free(rng);
      } else {
        env[v.get()] = std::uniform_int_distribution<int64_t>(*it->second.lo, *it->second.hi)(rng);
      }
    }
    return env;
  }
};

TEST(SimplifyRandomTest, IdempotentOnAffineExpressions) {
  RandomSetup rs;
  ExprGen gen(Seed(12345));
  for (int n = 0; n < Iters(400); ++n) {
    Expr e = gen.Affine(rs.vars, 5);
    Expr s1 = Simplify(e);
    Expr s2 = Simplify(s1);
    ASSERT_TRUE(StructuralEqual(s1, s2))
        << "input " << PrintExpr(e) << "\nonce  " << PrintExpr(s1) << "\ntwice " << PrintExpr(s2);
    Expr b1 = Simplify(e, rs.bounds);
    ASSERT_TRUE(StructuralEqual(b1, Simplify(b1, rs.bounds))) << PrintExpr(e);
  }
}

TEST(SimplifyRandomTest, AffineFormsAreCanonical) {
  // Expressions equal as affine forms but built differently (operands swapped, a term added and
  // taken away, a product distributed) simplify to structurally equal trees.
  RandomSetup rs;
  ExprGen gen(Seed(777));
  for (int n = 0; n < Iters(200); ++n) {
    Expr a = gen.Affine(rs.vars, 4), b = gen.Affine(rs.vars, 4);
    ASSERT_TRUE(StructuralEqual(Simplify(a + b), Simplify(b + a))) << PrintExpr(a) << " | " << PrintExpr(b);
    ASSERT_TRUE(StructuralEqual(Simplify(a - b + b), Simplify(a))) << PrintExpr(a) << " | " << PrintExpr(b);
    ASSERT_TRUE(StructuralEqual(Simplify((a + b) * Int(3)), Simplify(b * Int(3) + a * Int(2) + a)))
        << PrintExpr(a) << " | " << PrintExpr(b);
  }
}

TEST(SimplifyRandomTest, IdempotentOnFullExpressions) {
  RandomSetup rs;
  ExprGen gen(Seed(2024));
  for (int n = 0; n < Iters(400); ++n) {
    Expr e = gen.Full(rs.vars, 4);
    for (const BoundMap& b : {BoundMap{}, rs.bounds}) {
      Expr s1 = Simplify(e, b);
      Expr s2 = Simplify(s1, b);
      ASSERT_TRUE(StructuralEqual(s1, s2))
          << "input " << PrintExpr(e) << "\nonce  " << PrintExpr(s1) << "\ntwice " << PrintExpr(s2);
    }
  }
}

TEST(SimplifyRandomTest, PreservesSemantics) {
  RandomSetup rs;
  ExprGen gen(Seed(99));
  std::mt19937 rng(Seed(4242));
  int checked = 0;
  for (int n = 0; n < Iters(600); ++n) {
    Expr e = n % 3 == 0 ? gen.Affine(rs.vars, 5) : gen.Full(rs.vars, 4);
    Expr plain = Simplify(e);
    Expr bounded = Simplify(e, rs.bounds);
    ASSERT_EQ(plain->dtype, e->dtype);
    ASSERT_EQ(bounded->dtype, e->dtype);
    for (int trial = 0; trial < 12; ++trial) {
      Env env = rs.RandomEnv(rng);
      int64_t want = Eval(e, env);
      ASSERT_EQ(Eval(plain, env), want)
          << "input      " << PrintExpr(e) << "\nsimplified " << PrintExpr(plain);
      ASSERT_EQ(Eval(bounded, env), want)
          << "input      " << PrintExpr(e) << "\nwith bounds " << PrintExpr(bounded);
      ++checked;
    }
  }
  EXPECT_EQ(checked, Iters(600) * 12);
}

TEST(SimplifyRandomTest, PreservesSemanticsOfComparisons) {
  RandomSetup rs;
  ExprGen gen(Seed(31337));
  std::mt19937 rng(Seed(7));
  const BinaryOp ops[] = {BinaryOp::kEQ, BinaryOp::kNE, BinaryOp::kLT,
                          BinaryOp::kLE, BinaryOp::kGT, BinaryOp::kGE};
  for (int n = 0; n < Iters(400); ++n) {
    Expr e = Cmp(ops[n % 6], gen.Full(rs.vars, 3), gen.Full(rs.vars, 3));
    if (n % 5 == 0) e = Select(e, gen.Full(rs.vars, 2), gen.Full(rs.vars, 2));
    Expr s = Simplify(e, rs.bounds);
    for (int trial = 0; trial < 10; ++trial) {
      Env env = rs.RandomEnv(rng);
      ASSERT_EQ(Eval(s, env), Eval(e, env)) << "input " << PrintExpr(e) << "\nsimplified " << PrintExpr(s);
    }
  }
}

TEST(SimplifyRandomTest, StatementSimplificationPreservesIndexValues) {
  // Loop-range bounds are used inside loops: check the simplified index of a store against the
  // original for every iteration of small loop nests.
  ExprGen gen(Seed(5150));
  Buffer A = MakeBuffer("A", DataType::Int(32), {Int(1 << 20)}, Scope::kGlobal);
  for (int n = 0; n < Iters(60); ++n) {
    Var i = MakeVar("i"), j = MakeVar("j");
    int ei = gen.Rand(1, 6), ej = gen.Rand(1, 5), mi = gen.Rand(-3, 3);
    Expr idx = gen.Full({i, j}, 4);
    Stmt s = For(i, Int(mi), Int(ei), ForKind::kSerial,
                 For(j, Int(0), Int(ej), ForKind::kParallel, Store(A, Int(0), {idx})));
    Stmt r = Simplify(s);
    auto* fi = As<ForNode>(r);
    ASSERT_NE(fi, nullptr);
    auto* fj = As<ForNode>(fi->body);
    ASSERT_NE(fj, nullptr);
    auto* st = As<StoreNode>(fj->body);
    ASSERT_NE(st, nullptr);
    for (int64_t vi = mi; vi < mi + ei; ++vi) {
      for (int64_t vj = 0; vj < ej; ++vj) {
        Env env{{i.get(), vi}, {j.get(), vj}};
        ASSERT_EQ(Eval(st->indices[0], env), Eval(idx, env))
            << "i=" << vi << " j=" << vj << "\ninput " << PrintExpr(idx) << "\nsimplified "
            << PrintExpr(st->indices[0]);
      }
    }
  }
}

}  // namespace
}  // namespace tl
