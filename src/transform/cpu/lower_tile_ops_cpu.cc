// Tile-op lowering for the CPU target (and the loop nests of TileOpToParallelLoops): the entry and the op
// registry. Each op's lowering is its own file in this folder (tile_lowerer.h). Tails of ragged tiles are
// guarded: out-of-range reads of global memory give zero, out-of-range writes are skipped.
#include "transform/lower_tile_ops_cpu.h"

#include <map>

#include "transform/gpu/hopper_wgmma.h"
#include "transform/cpu/tile_lowerer.h"

namespace tl {

namespace cpu_lowering {
namespace {
std::map<std::string, CpuOpLowering>& Lowerings() {
  static std::map<std::string, CpuOpLowering> m;
  return m;
}

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
  PostOrderVisitStmt(f->body, [](const Stmt& s) {  // tensor memory exists on the CUDA tcgen05 family only
    if (auto* k = As<KernelNode>(s))
      for (const Buffer& b : k->alloc_buffers)
        if (b->scope == Scope::kTensorMemory)
          throw UserError(ErrorKind::kUnsupported,
                          "tensor memory (T.alloc_tmem '" + b->name + "') needs the CUDA tcgen05 family (cuda -arch="
                          "sm_100a / sm_103a / sm_110a); the CPU target has none",
                          b->span);
  });
  // Each var bound once, simplified: the output prints in canonical form and re-parses equal.
  return Simplify(WithBody(f, UniquifyDefs(CpuTileLowerer(true).VisitStmt(f->body))));
}

Stmt TileOpToParallelLoops(const Stmt& op) {
  TL_ICHECK(As<CopyNode>(op) || As<FillNode>(op) || As<AtomicAddNode>(op),
            "TileOpToParallelLoops takes copy, fill or atomic_add");
  return CpuTileLowerer().VisitStmt(op);
}

}  // namespace tl
