// The CUDA backend's pipeline: tile program -> thread-level IR (docs/thread_ir.md), the shared GPU
// passes on CudaFeatures of the arch, and on sm_90a its own two.
#include "target/cuda/passes.h"

#include <algorithm>

#include "target/cuda/wgmma_proxy_fence.h"
#include "op/tcgen05_gemm.h"
#include "transform/gpu/pack_fp4_tiles.h"
#include "transform/gpu/warp_specialize.h"

namespace tl {

PrimFunc PackFp4TilesCUDA(const PrimFunc& f, const PassContext& ctx) {
  if (!ctx.features.block_scale_mma_sync) return f;
  return PackFp4Tiles(f, ctx,
                      {[](const GemmBlockScaledNode&) { return true; }, true,
                       "T.mma_gemm_blockscaled's NVFP4 / MXFP4 (kind::mxf4nvf4 / kind::mxf4)"});
}

namespace {
// The tcgen05 family's sub-byte operand rules (K-major operands only; kind::i8 takes none):
//  - kNvf4: the fp4 operands of NVFP4 (T.tcgen05_gemm_blockscaled with granularity 16, kind::mxf4nvf4) and
//    of MXFP4 with a granularity of 32 (kind::mxf4) two values a byte as the instruction reads them, the
//    tensors too (the copies byte copies; Tcgen05GemmNode bits 2-3);
//  - kPadFp4 / kPadFp6: the other fp4 / fp6 operands (kind::f8f6f4 / kind::mxf8f6f4) in the padded form the
//    tensor cores read sub-byte values in (16 values in the first 8 / 12 bytes of each 16), filled by TMA
//    (16U4_ALIGN16B / 16U6_ALIGN16B) from tensors stored packed (bits 0-1; 4-5 E2M3, 6-7 E3M2); MXFP4
//    operands the first mode could not store two a byte (kind::mxf8f6f4) included.
enum class SubByte { kPadFp4, kNvf4, kPadFp6 };
PrimFunc Tcgen05SubByteTiles(const PrimFunc& f, const PassContext& ctx, SubByte mode) {
  if (!ctx.features.tcgen05) return f;
  const bool nvf4 = mode == SubByte::kNvf4, fp6 = mode == SubByte::kPadFp6;
  Fp4PackRule rule;
  rule.gemm = [](const GemmBlockScaledNode&) { return false; };
  rule.pair = false;
  rule.format = nvf4 ? "a tcgen05.mma kind::mxf4nvf4 / kind::mxf4 (NVFP4 / MXFP4)"
                     : "a tcgen05.mma kind::f8f6f4 / kind::mxf8f6f4";
  rule.padded = !nvf4;
  rule.fp6 = fp6;
  rule.operands = [nvf4, fp6](const TileOpNode& op) {
    std::vector<const Region*> r;
    auto* g = dynamic_cast<const Tcgen05GemmNode*>(&op);
    if (!g || g->C.buffer->dtype == DataType::Int(32)) return r;
    if (nvf4 ? !(g->Nvf4() || g->Mxf4()) : g->Nvf4() || g->PackedA() || g->PackedB()) return r;
    auto sub = [fp6](const Region& x) {
      const DataType t = x.buffer->dtype;
      const bool f4 = t.code() == DataType::Code::kFloat4E2M1;
      return (fp6 ? t.is_mx_float() && !f4 : f4) && x.buffer->scope == Scope::kShared;
    };
    if (sub(g->A) && !g->trans_A) r.push_back(&g->A);
    if (sub(g->B) && g->trans_B) r.push_back(&g->B);
    return r;
  };
  rule.mark = [mode](const TileOpNode& op, const std::map<const BufferNode*, DataType>& changed) -> Stmt {
    auto& g = static_cast<const Tcgen05GemmNode&>(op);
    auto bit = [&](const Region& x, bool b) {
      auto it = changed.find(x.buffer.get());
      if (it == changed.end()) return 0;
      const int shift = b ? 1 : 0;
      if (mode == SubByte::kNvf4) return 4 << shift;
      if (mode == SubByte::kPadFp4) return 1 << shift;
      return (it->second.code() == DataType::Code::kFloat6E3M2 ? 64 : 16) << shift;
    };
    return std::make_shared<Tcgen05GemmNode>(g.A, g.B, g.C, g.trans_A, g.trans_B, g.mbar, g.clear_accum,
                                             g.use_2cta, g.span, g.SFA, g.SFB, g.k_start, g.gran_a, g.gran_b,
                                             g.wait, g.fp4 | bit(g.A, false) | bit(g.B, true));
  };
  return PackFp4Tiles(f, ctx, rule);
}
}  // namespace

PrimFunc PadFp4TilesCUDA(const PrimFunc& f, const PassContext& ctx) {
  return Tcgen05SubByteTiles(Tcgen05SubByteTiles(f, ctx, SubByte::kPadFp4), ctx, SubByte::kPadFp6);
}
PrimFunc PackNvf4TilesCUDA(const PrimFunc& f, const PassContext& ctx) {
  return Tcgen05SubByteTiles(f, ctx, SubByte::kNvf4);
}

PassContext CudaPassContext(const Target& t, const PassConfig& pc) {
  return GpuPassContext(CudaFeatures(CudaTargetOf(t)), t, pc);
}

Pipeline CudaPipeline(const PassContext& ctx) {
  const IRStage thread = IRStage::kThread, planned = IRStage::kSharedPlanned;
  Pipeline p = GpuTileToThreadSteps();  // CheckThreadBindings ... LowerTileOpsGPU, Simplify
  auto legalize = [&p] {
    return std::find_if(p.begin(), p.end(), [](const PipelineStep& s) { return s.name == "LegalizeTileOpsGPU"; });
  };
  // T.gemm into tensor memory, and T.gemm across a loop (unless tl.disable_tcgen05): tcgen05 into tensor memory
  if (ctx.features.tcgen05) p.insert(legalize(), {"GemmToTcgen05CUDA", GemmToTcgen05CUDA, IRStage::kTile});
  // one setmaxnreg per warp group where warp roles' branches each start with the group's
  if (ctx.features.setmaxnreg) p.insert(legalize(), {"HoistSetMaxNregCUDA", HoistSetMaxNregCUDA, IRStage::kTile});
  // sm_120a: fp4 operands of NVFP4 gemms (and the tensors copied into them) two values a byte
  if (ctx.features.block_scale_mma_sync)
    p.insert(legalize(), {"PackFp4TilesCUDA", PackFp4TilesCUDA, IRStage::kTile});
  // the tcgen05 family: fp4 tcgen05.mma operands in the tensor cores' padded form (filled by TMA
  // 16U4_ALIGN16B)
  if (ctx.features.tcgen05) {
    p.insert(legalize(), {"PackNvf4TilesCUDA", PackNvf4TilesCUDA, IRStage::kTile});
    p.insert(legalize(), {"PadFp4TilesCUDA", PadFp4TilesCUDA, IRStage::kTile});
  }
  if (ctx.features.tcgen05) p.push_back({"LowerTensorMemoryCUDA", LowerTensorMemoryCUDA, thread});
  p.push_back(Step("SplitInteriorBlocks", thread));
  p.push_back(Step("PlanSharedMemory", planned));
  // fence.proxy.async only where generic writes reach wgmma operands. Before InsertBarriers: a fence
  // must come before the barrier that orders the writes against another warp group's wgmma, and the
  // operand-less fence is what that pass sees.
  if (ctx.features.wgmma || ctx.features.tcgen05)
    p.push_back({"ElideWgmmaProxyFences", ElideWgmmaProxyFences, planned});
  p.push_back(Step("InsertBarriers", planned));
  // warp specialisation: consumer-only barriers become named ones (transform/gpu/warp_specialize.cc)
  if (ctx.features.wgmma) p.push_back({"WsNamedBarriers", WsNamedBarriers, planned});
  return p;
}

PrimFunc LowerForCUDA(const PrimFunc& f, const CudaTarget& target, const GpuOptions& opt, CompileInfo* info,
                      std::vector<PassRecord>* trace) {
  CompileInfo local;
  Target t;  // the kind picks CUDA's own op lowerings (RegisterGpuOpLowering)
  t.kind = "cuda";
  t.arch = target.arch;
  PassContext ctx{CudaFeatures(target), opt, info ? info : &local, t, {}};
  return RunPipeline(CudaPipeline(ctx), f, ctx, trace);
}

}  // namespace tl
