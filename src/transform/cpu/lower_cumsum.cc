// LowerTileOpsCPU, T.cumsum: a sequential scan per line (op/reduce_math.h).
#include "transform/cpu/tile_lowerer.h"

namespace tl {
namespace cpu_lowering {

namespace {
Stmt LowerCumsum(CpuTileLowerer& L, const CumsumNode* n) {
  size_t ax = n->dim;
  std::vector<size_t> other;
  for (size_t d = 0; d < n->src.ranges.size(); ++d)
    if (d != ax) other.push_back(d);
  std::vector<Expr> ext;
  for (size_t d : other) ext.push_back(n->src.ranges[d].extent);
  Expr len = n->src.ranges[ax].extent;
  DataType t = n->dst.buffer->dtype;
  return L.Nest(
      ext, n->span,
      [&](const std::vector<Expr>& ti) {
        auto index = [&](const Region& rg, Expr pos) {
          std::vector<Expr> idx;
          for (auto& r : rg.ranges) idx.push_back(r.min);
          for (size_t i = 0; i < other.size(); ++i)
            idx[other[i]] = Binary(BinaryOp::kAdd, idx[other[i]], ti[i]);
          idx[ax] = Binary(BinaryOp::kAdd, idx[ax], pos);
          return idx;
        };
        // pos runs 0..len-1 forward, len-1..0 in reverse; each element adds its predecessor's sum.
        Var r = MakeVar("r");
        Expr pos = n->reverse ? Binary(BinaryOp::kSub, Binary(BinaryOp::kSub, len, Int(1)), r) : Expr(r);
        Expr prev = n->reverse ? Binary(BinaryOp::kAdd, pos, Int(1)) : Binary(BinaryOp::kSub, pos, Int(1));
        Expr x = Load(n->src.buffer, index(n->src, pos));
        if (x->dtype != t) x = Cast(t, x);
        Expr sum = Select(Binary(BinaryOp::kGT, r, Int(0)),
                          Binary(BinaryOp::kAdd, Load(n->dst.buffer, index(n->dst, prev)), x), x);
        return For(r, Int(0), len, ForKind::kSerial, Store(n->dst.buffer, sum, index(n->dst, pos), n->span),
                   {}, n->span);
      },
      ForKind::kSerial);
}

const CpuOpLoweringRegistrar kLowerCumsum("cumsum", [](CpuTileLowerer& L, const TileOpNode& n) {
  return LowerCumsum(L, static_cast<const CumsumNode*>(&n));
});
}  // namespace
}  // namespace cpu_lowering
}  // namespace tl
