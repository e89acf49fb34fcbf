// The tile-level GEMM the C++ CUDA tests lower: built with the IR constructors (no Python).
#pragma once
#include <vector>

#include "ir/function.h"
#include "op/ops.h"

namespace tl {
namespace {

Expr I(int64_t v) { return Int(v); }

Region Tile(const Buffer& b, std::vector<Expr> mins, std::vector<int64_t> ext) {
  Region r{b, {}};
  for (size_t i = 0; i < mins.size(); ++i) r.ranges.push_back({mins[i], I(ext[i])});
  return r;
}

// C[M, N] (fp32) = A[M, K] @ B[K, N] (fp16), BMxBNxBK tiles, `threads` threads, `stages` stages.
PrimFunc TileGemm(int64_t M, int64_t N, int64_t K, int64_t BM, int64_t BN, int64_t BK, int64_t threads,
                  int64_t stages) {
  DataType f16 = DataType::Float(16), f32 = DataType::Float(32);
  Span sp{"tile_gemm.py", 7, 9};
  Buffer A = MakeBuffer("A", f16, {I(M), I(K)}, Scope::kGlobal);
  Buffer B = MakeBuffer("B", f16, {I(K), I(N)}, Scope::kGlobal);
  Buffer C = MakeBuffer("C", f32, {I(M), I(N)}, Scope::kGlobal);
  Buffer As = MakeBuffer("A_shared", f16, {I(BM), I(BK)}, Scope::kShared);
  Buffer Bs = MakeBuffer("B_shared", f16, {I(BK), I(BN)}, Scope::kShared);
  Buffer Cl = MakeBuffer("C_local", f32, {I(BM), I(BN)}, Scope::kFragment);
  Var bx = MakeVar("bx"), by = MakeVar("by"), k = MakeVar("k");
  Stmt body = Seq({
      std::make_shared<FillNode>(Region::Full(Cl), FloatImm(f32, 0.0), sp),
      For(k, I(0), I((K + BK - 1) / BK), ForKind::kPipelined,
          Seq({std::make_shared<CopyNode>(Tile(A, {Expr(by) * I(BM), Expr(k) * I(BK)}, {BM, BK}),
                                          Region::Full(As), false, sp),
               std::make_shared<CopyNode>(Tile(B, {Expr(k) * I(BK), Expr(bx) * I(BN)}, {BK, BN}),
                                          Region::Full(Bs), false, sp),
               std::make_shared<GemmNode>(Region::Full(As), Region::Full(Bs), Region::Full(Cl), false, false,
                                          GemmWarpPolicy::kSquare, false, 1, sp)}),
          {{"num_stages", I(stages)}}, sp),
      std::make_shared<CopyNode>(Region::Full(Cl), Tile(C, {Expr(by) * I(BM), Expr(bx) * I(BN)}, {BM, BN}),
                                 false, sp),
  });
  Stmt kernel = std::make_shared<KernelNode>(std::vector<Expr>{I((N + BN - 1) / BN), I((M + BM - 1) / BM)},
                                             std::vector<Var>{bx, by}, std::vector<Expr>{I(threads)},
                                             std::vector<Buffer>{As, Bs, Cl},
                                             std::vector<std::pair<Buffer, Expr>>{}, body, sp);
  std::vector<Param> params;
  for (auto& b : {A, B, C}) params.push_back({MakeVar(b->name, DataType::Handle()), b});
  return MakePrimFunc("tile_gemm", params, kernel);
}

}  // namespace
}  // namespace tl
