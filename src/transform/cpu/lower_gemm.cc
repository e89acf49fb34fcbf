// LowerTileOpsCPU, T.gemm: a call of the register-blocked micro-kernel (tl_device/cpu/gemm.h).
#include "transform/cpu/tile_lowerer.h"

namespace tl {
namespace cpu_lowering {

namespace {
Stmt LowerGemm(CpuTileLowerer& L, const GemmNode* n) {
  auto ad = TileDims(n->A), bd = TileDims(n->B), cd = TileDims(n->C);
  auto mat = [&](const Region& r, std::vector<size_t> d, const char* what) {
    if (d.size() == 1) d.insert(d.begin(), r.ranges.size() - 2);  // a 1-row tile
    if (d.size() != 2)
      throw UserError(ErrorKind::kType, std::string("T.gemm operand ") + what + " must be a 2-D tile",
                      n->span);
    return d;
  };
  ad = mat(n->A, ad, "A");
  bd = mat(n->B, bd, "B");
  cd = mat(n->C, cd, "C");
  Expr M = n->C.ranges[cd[0]].extent, N = n->C.ranges[cd[1]].extent;
  Expr K = n->trans_A ? n->A.ranges[ad[0]].extent : n->A.ranges[ad[1]].extent;
  auto ptr = [](const Region& r) {
    std::vector<Expr> idx;
    for (auto& rg : r.ranges) idx.push_back(rg.min);
    return Call(DataType::Handle(), "address_of", {Load(r.buffer, idx)});
  };
  std::vector<Stmt> out;
  if (n->clear_accum) {
    auto fill = std::make_shared<FillNode>(n->C, Zero(n->C.buffer->dtype), n->span);
    out.push_back(L.VisitTileOp(fill));  // T.fill's lowering (lower_fill.cc)
  }
  auto pk = L.packed_.find(n->B.buffer.get());
  if (pk != L.packed_.end()) {  // B is already in panels (PackGemmTilesCPU)
    out.push_back(Evaluate(Call(DataType::Void(), "tl_cpu_gemm_packed_b",
                                {ptr(n->A), L.LeadingDim(n->A, ad[0]), L.AddressOf(pk->second.panels, {Int(0)}),
                                 ptr(n->C), L.LeadingDim(n->C, cd[0]), M, N, K, Bool(n->trans_A)}),
                           n->span));
    return Seq(out, n->span);
  }
  out.push_back(
      Evaluate(Call(DataType::Void(), "tl_cpu_gemm",
                    {ptr(n->A), L.LeadingDim(n->A, ad[0]), ptr(n->B), L.LeadingDim(n->B, bd[0]), ptr(n->C),
                     L.LeadingDim(n->C, cd[0]), M, N, K, Bool(n->trans_A), Bool(n->trans_B)}),
               n->span));
  return Seq(out, n->span);
}

const CpuOpLoweringRegistrar kLowerGemm("gemm", [](CpuTileLowerer& L, const TileOpNode& n) {
  return LowerGemm(L, static_cast<const GemmNode*>(&n));
});
}  // namespace
}  // namespace cpu_lowering
}  // namespace tl
