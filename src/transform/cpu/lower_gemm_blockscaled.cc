// LowerTileOpsCPU, T.mma_gemm_blockscaled: a loop nest over C's tile, each element summing its K products in
// order in float32, every product of A[m][k] and B[k][n] multiplied by their E8M0 scales 2^(s - 127) (255:
// NaN), or their UE4M3 scales (NVFP4 words); uint8 operand tiles hold e2m1 codes two a byte. The reference
// form of the op (src/op/gemm_blockscaled.h): no micro-kernel, exact scaling, one rounding per product and
// per addition.
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
  // uint8 tiles of e2m1 codes two a byte (PackedA / PackedB; K-major by the op's Check): K counts values
  const bool pa = n->PackedA(), pb = n->PackedB();
  if (pa) K = Binary(BinaryOp::kMul, K, Int(n->ValuesPerElement(false)));
  // the e2m1 code of value k in a packed byte (the low nibble first), read as fp4 (tl.reinterpret reads a
  // byte's low nibble, docs/semantics.md)
  auto e2m1 = [&](const Expr& byte, const Expr& k) {
    Expr shift =
        Cast(DataType::UInt(8), Binary(BinaryOp::kMul, Binary(BinaryOp::kFloorMod, k, Int(2)), Int(4)));
    return Cast(f32, Call(DataType(DataType::Code::kFloat4E2M1, 4), "tl.reinterpret",
                          {Binary(BinaryOp::kShr, byte, shift)}));
  };
  std::vector<Stmt> out;
  if (n->clear_accum) {
    auto fill = std::make_shared<FillNode>(n->C, Zero(n->C.buffer->dtype), n->span);
    out.push_back(L.VisitTileOp(fill));
  }
  auto scale = [&](const Region& sf, bool is_b, const Expr& row, const Expr& k) {
    auto [idx, shift] = n->ScaleAt(is_b, row, k);
    Expr s = GemmBlockScaledNode::ScaleBits(Load(sf.buffer, idx));
    if (!n->Nvf4Words()) {  // E8M0
      Expr e = Binary(BinaryOp::kSub, Cast(f32, s), FloatImm(f32, 127.0));
      return Select(Binary(BinaryOp::kEQ, s, IntImm(s->dtype, 255)), FloatImm(f32, std::nan("")),
                    Call(f32, "exp2", {e}));
    }
    // UE4M3, the byte `shift` of a uint32 word: 4 exponent bits (bias 7), 3 mantissa bits, the sign bit
    // ignored; exponent 0 is subnormal (m 2^-9), 0x7F is NaN
    const DataType u32 = DataType::UInt(32);
    Expr b = Binary(BinaryOp::kBitAnd, Binary(BinaryOp::kShr, s, Cast(u32, shift)), IntImm(u32, 0x7F));
    Expr e = Binary(BinaryOp::kBitAnd, Binary(BinaryOp::kShr, b, IntImm(u32, 3)), IntImm(u32, 15));
    Expr m = Binary(BinaryOp::kBitAnd, b, IntImm(u32, 7));
    Expr normal = Binary(BinaryOp::kMul, Cast(f32, Binary(BinaryOp::kAdd, m, IntImm(u32, 8))),
                         Call(f32, "exp2", {Binary(BinaryOp::kSub, Cast(f32, e), FloatImm(f32, 10.0))}));
    Expr sub = Binary(BinaryOp::kMul, Cast(f32, m), FloatImm(f32, std::ldexp(1.0, -9)));
    return Select(Binary(BinaryOp::kEQ, b, IntImm(u32, 0x7F)), FloatImm(f32, std::nan("")),
                  Select(Binary(BinaryOp::kEQ, e, IntImm(u32, 0)), sub, normal));
  };
  out.push_back(L.Nest({M, N}, n->span, [&](const std::vector<Expr>& t) {
    Var k = MakeVar("k");
    std::vector<Expr> ci = L.At(n->C, cd, t);
    Expr kb = Binary(BinaryOp::kFloorDiv, k, Int(2));  // a packed tile's byte: A [M, K / 2], B [N, K / 2]
    Expr a =
        pa ? e2m1(Load(n->A.buffer, L.At(n->A, ad, {t[0], kb})), k)
           : Cast(f32, Load(n->A.buffer, n->trans_A ? L.At(n->A, ad, {k, t[0]}) : L.At(n->A, ad, {t[0], k})));
    Expr b =
        pb ? e2m1(Load(n->B.buffer, L.At(n->B, bd, {t[1], kb})), k)
           : Cast(f32, Load(n->B.buffer, n->trans_B ? L.At(n->B, bd, {t[1], k}) : L.At(n->B, bd, {k, t[1]})));
    Expr prod = Binary(BinaryOp::kMul, Binary(BinaryOp::kMul, a, scale(n->SFA, false, t[0], k)),
                       Binary(BinaryOp::kMul, b, scale(n->SFB, true, t[1], k)));
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
