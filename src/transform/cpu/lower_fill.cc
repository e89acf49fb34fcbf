// LowerTileOpsCPU, T.fill / T.clear: a loop nest over the region.
#include "transform/cpu/tile_lowerer.h"

namespace tl {
namespace cpu_lowering {

namespace {
Stmt LowerFill(CpuTileLowerer& L, const FillNode* n) {
  auto dd = TileDims(n->dst);
  std::vector<Expr> ext;
  for (size_t d : dd) ext.push_back(n->dst.ranges[d].extent);
  return L.Nest(ext, n->span, [&](const std::vector<Expr>& t) {
    return L.GuardedStore(n->dst.buffer, n->value, L.At(n->dst, dd, t), n->span);
  });
}

const CpuOpLoweringRegistrar kLowerFill("fill", [](CpuTileLowerer& L, const TileOpNode& n) {
  return LowerFill(L, static_cast<const FillNode*>(&n));
});
}  // namespace
}  // namespace cpu_lowering
}  // namespace tl
