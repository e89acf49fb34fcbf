// LowerTileOpsGPU, the shared scalar T.atomic_add / atomic_max / atomic_min on one element (tile atomics became
// T.Parallel nests in LegalizeTileOpsGPU): one thread's atomic, or each thread's where the statement is per thread.
#include "transform/gpu/tile_lowerer.h"
#include "transform/gpu_util.h"

namespace tl {
namespace gpu_lowering {

using namespace gpu_pass;

namespace {
Stmt LowerScalarAtomicAdd(GpuTileLowerer& L, const AtomicAddNode* a) {
  std::vector<Expr> di;
  for (auto& rg : a->dst.ranges) di.push_back(L.VisitExpr(rg.min));
  Expr v = L.VisitExpr(a->value);
  if (v->dtype != a->dst.buffer->dtype) v = Cast(a->dst.buffer->dtype, v);
  Stmt st = Call0("tl." + a->CallName(), {L.MapLoad(a->dst.buffer, di), v}, a->span);
  if (L.PerThread(st)) return st;  // a per-thread atomic (T.get_thread_binding)
  return L.GuardOne(st, a->span);
}

const GpuOpLoweringRegistrar kAtomicAdd("atomic_add", [](GpuTileLowerer& L, const TileOpNode& n) {
  return LowerScalarAtomicAdd(L, static_cast<const AtomicAddNode*>(&n));
});
}  // namespace

}  // namespace gpu_lowering
}  // namespace tl
