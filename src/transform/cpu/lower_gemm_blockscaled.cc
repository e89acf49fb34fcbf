// LowerTileOpsCPU, T.mma_gemm_blockscaled: a loop nest over C's tile, each element summing its K products in
// order in float32, every product of A[m][k] and B[k][n] multiplied by their E8M0 scales 2^(s - 127) (255:
// NaN). The reference form of the op (src/op/gemm_blockscaled.h): no micro-kernel, exact scaling, one
// rounding per product and per addition.
#include "op/gemm_blockscaled.h"
#include <cmath>

#include "transform/cpu/tile_lowerer.h"

namespace tl {
namespace cpu_lowering {

namespace {
Stmt LowerGemmBlockScaled(CpuTileLowerer& L, const GemmBlockScaledNode* n) {
  auto dims2 = [&](const Region& r, const char* what) {
    auto d = TileDims(r);
    if (d.size() == 1) d.insert(d.begin(), r.ranges.size() - 2);
    if (d.size() != 2)
      throw UserError(ErrorKind::kType,
                      std::string("T.mma_gemm_blockscaled operand ") + what + " must be a 2-D tile", n->span);
    return d;
  };
  auto ad = dims2(n->A, "A"), bd = dims2(n->B, "B"), cd = dims2(n->C, "C");
  Expr M = n->C.ranges[cd[0]].extent, N = n->C.ranges[cd[1]].extent;
  Expr K = n->trans_A ? n->A.ranges[ad[0]].extent : n->A.ranges[ad[1]].extent;
  const DataType f32 = DataType::Float(32);
  std::vector<Stmt> out;
  if (n->clear_accum) {
    auto fill = std::make_shared<FillNode>(n->C, Zero(n->C.buffer->dtype), n->span);
    out.push_back(L.VisitTileOp(fill));
  }
  auto scale = [&](const Region& sf, bool is_b, const Expr& row, const Expr& k) {
    std::vector<Expr> idx;
    for (auto& rg : sf.ranges) idx.push_back(rg.min);
    idx[idx.size() - 2] = Binary(BinaryOp::kAdd, idx[idx.size() - 2], row);
    idx.back() = n->ScaleColumn(is_b, k);
    Expr s = Load(sf.buffer, idx);
    Expr e = Binary(BinaryOp::kSub, Cast(f32, s), FloatImm(f32, 127.0));
    return Select(Binary(BinaryOp::kEQ, s, IntImm(sf.buffer->dtype, 255)), FloatImm(f32, std::nan("")),
                  Call(f32, "exp2", {e}));
  };
  out.push_back(L.Nest({M, N}, n->span, [&](const std::vector<Expr>& t) {
    Var k = MakeVar("k");
    std::vector<Expr> ci = L.At(n->C, cd, t);
    Expr a = Load(n->A.buffer, n->trans_A ? L.At(n->A, ad, {k, t[0]}) : L.At(n->A, ad, {t[0], k}));
    Expr b = Load(n->B.buffer, n->trans_B ? L.At(n->B, bd, {t[1], k}) : L.At(n->B, bd, {k, t[1]}));
    Expr prod = Binary(BinaryOp::kMul, Binary(BinaryOp::kMul, Cast(f32, a), scale(n->SFA, false, t[0], k)),
                       Binary(BinaryOp::kMul, Cast(f32, b), scale(n->SFB, true, t[1], k)));
    Stmt acc = Store(n->C.buffer, Binary(BinaryOp::kAdd, Load(n->C.buffer, ci), prod), ci, n->span);
    return For(k, Int(0), K, ForKind::kSerial, acc, {}, n->span);
  }));
  return Seq(out, n->span);
}

const CpuOpLoweringRegistrar kLowerGemmBlockScaled("gemm_blockscaled", [](CpuTileLowerer& L,
                                                                          const TileOpNode& n) {
  return LowerGemmBlockScaled(L, static_cast<const GemmBlockScaledNode*>(&n));
});
}  // namespace
}  // namespace cpu_lowering
}  // namespace tl
