// Tile-op lowering for the CPU target. A block runs on one core, so a tile op becomes a loop
// nest over its region (T.Parallel-style loops the host compiler vectorises); gemm becomes a call
// of the register-blocked micro-kernel in tl_device/cpu/gemm.h. Tails of ragged tiles are guarded:
// out-of-range reads of global memory give zero, out-of-range writes are skipped.
#include "transform/lower_tile_ops_cpu.h"

#include <map>

#include "transform/gpu/hopper_wgmma.h"
#include "transform/lower_tile_ops_cpu_impl.h"

namespace tl {

namespace cpu_lowering {
namespace {
std::map<std::string, CpuOpLowering>& Lowerings() {
  static std::map<std::string, CpuOpLowering> m;
  return m;
}

// The built-in ops.
const CpuOpLoweringRegistrar kCopy("copy", [](CpuTileLowerer& L, const TileOpNode& n) {
  return L.LowerCopy(static_cast<const CopyNode*>(&n));
});
const CpuOpLoweringRegistrar kFill("fill", [](CpuTileLowerer& L, const TileOpNode& n) {
  return L.LowerFill(static_cast<const FillNode*>(&n));
});
const CpuOpLoweringRegistrar kGemm("gemm", [](CpuTileLowerer& L, const TileOpNode& n) {
  return L.LowerGemm(static_cast<const GemmNode*>(&n));
});
const CpuOpLoweringRegistrar kReduce("reduce", [](CpuTileLowerer& L, const TileOpNode& n) {
  return L.LowerReduce(static_cast<const ReduceNode*>(&n));
});
const CpuOpLoweringRegistrar kAtomic("atomic_add", [](CpuTileLowerer& L, const TileOpNode& n) {
  return L.LowerAtomic(static_cast<const AtomicAddNode*>(&n));
});
const CpuOpLoweringRegistrar kCumsum("cumsum", [](CpuTileLowerer& L, const TileOpNode& n) {
  return L.LowerCumsum(static_cast<const CumsumNode*>(&n));
});
}  // namespace

void RegisterCpuOpLowering(const std::string& op, CpuOpLowering f) { Lowerings()[op] = std::move(f); }

Stmt CpuTileLowerer::VisitTileOp(const Stmt& s) {
  auto* n = As<TileOpNode>(s);
  if (!n) return s;
  auto it = Lowerings().find(n->op);
  if (it == Lowerings().end())
    throw UserError(ErrorKind::kUnsupported,
                    std::string("T.") + n->op + " has no lowering for the CPU target", s->span);
  return it->second(*this, *n);
}

}  // namespace cpu_lowering
using cpu_lowering::CpuTileLowerer;

PrimFunc LowerTileOpsCPU(const PrimFunc& f) {
  // Each var bound once, simplified: the output prints in canonical form and re-parses equal.
  return Simplify(WithBody(f, UniquifyDefs(CpuTileLowerer(true).VisitStmt(f->body))));
}

Stmt TileOpToParallelLoops(const Stmt& op) {
  TL_ICHECK(As<CopyNode>(op) || As<FillNode>(op) || As<AtomicAddNode>(op),
            "TileOpToParallelLoops takes copy, fill or atomic_add");
  return CpuTileLowerer().VisitStmt(op);
}

}  // namespace tl
