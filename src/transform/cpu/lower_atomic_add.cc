// LowerTileOpsCPU, T.atomic_add / max / min: atomic read-modify-writes of the destination elements.
#include "transform/cpu/tile_lowerer.h"

namespace tl {
namespace cpu_lowering {

namespace {
Stmt LowerAtomic(CpuTileLowerer& L, const AtomicAddNode* n) {
  auto atomic = [&](const std::vector<Expr>& di, Expr v) {
    if (v->dtype != n->dst.buffer->dtype) v = Cast(n->dst.buffer->dtype, v);
    Stmt st = Evaluate(Call(DataType::Void(), n->CallName(),
                            {Call(DataType::Handle(), "address_of", {Load(n->dst.buffer, di)}), v}),
                       n->span);
    Expr ok = InBounds(n->dst.buffer, di);
    return ok ? If(ok, st, nullptr, n->span) : st;
  };
  if (!n->src) {
    std::vector<Expr> di;
    for (auto& rg : n->dst.ranges) di.push_back(rg.min);
    return atomic(di, n->value);
  }
  auto sd = TileDims(*n->src), dd = TileDims(n->dst);
  std::vector<Expr> ext;
  for (size_t d : sd) ext.push_back(n->src->ranges[d].extent);
  return L.Nest(ext, n->span, [&](const std::vector<Expr>& t) {
    return atomic(L.At(n->dst, dd, t), L.Guarded(n->src->buffer, L.At(*n->src, sd, t), n->dst.buffer->dtype));
  });
}

const CpuOpLoweringRegistrar kLowerAtomic("atomic_add", [](CpuTileLowerer& L, const TileOpNode& n) {
  return LowerAtomic(L, static_cast<const AtomicAddNode*>(&n));
});
}  // namespace
}  // namespace cpu_lowering
}  // namespace tl
