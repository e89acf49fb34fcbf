// The CPU backend's pipeline. First what the kernel's gemms run on (kernel.choices), then the
// tile-level GEMM rewrites of this folder (each with the verifier after it, as every step), then
// the shared front passes, the thread bindings and the tile-op lowering for the host.
#include "target/cpu/passes.h"

#include "arith/simplify.h"
#include "ir/functor.h"
#include "target/cpu/cache_gemm_tiles_cpu.h"
#include "target/cpu/coalesce_k_steps_cpu.h"
#include "target/cpu/group_gemm_blocks_cpu.h"
#include "target/cpu/isa.h"
#include "target/cpu/lower_warp_shuffles_cpu.h"
#include "target/cpu/pack_gemm_tiles_cpu.h"
#include "transform/gpu/hopper_wgmma.h"
#include "transform/lower_thread_bindings.h"
#include "transform/lower_tile_ops_cpu.h"

namespace tl {
namespace {

// How tl_cpu::gemm (include/tl_device/cpu/gemm.h) runs a T.gemm of these types on this target.
std::string GemmPath(const GemmNode& g, const Target& t, const CpuIsa& isa) {
  using C = DataType::Code;
  const DataType a = g.A.buffer->dtype, b = g.B.buffer->dtype, c = g.C.buffer->dtype;
  auto f32 = [](DataType d) { return d.code() == C::kFloat && d.bits() == 32; };
  const std::string types = a.str() + " x " + b.str() + " -> " + c.str() + ": ";
  auto s8 = [](DataType d) { return d.code() == C::kInt && d.bits() == 8; };
  // AMX runs only where Linux grants the process the tile state (gemm_amx.h); else the next path.
  auto amx = [&](const char* feature, const char* insn, const char* group, const std::string& otherwise) {
    return types + feature + " " + insn + " on 32x32 blocks of 16x16 AMX tiles (A and B packed in k " +
           group + "), if the OS grants the tile state; otherwise " + otherwise;
  };
  if (s8(a) && s8(b) && c.code() == C::kInt && c.bits() == 32) {
    const bool vnni = isa.level >= 3 && t.Has("avx512vnni") && t.Has("avx512vl");
    const std::string simd = vnni ? "avx512vnni 6x16 vpdpwssd micro-kernel on int16 k pairs (exact)"
                             : isa.level >= 2 ? "avx2 6x16 vpmaddwd micro-kernel on int16 k pairs (exact)"
                                              : "reference loop (exact)";
    return t.Has("amx-int8") ? amx("amx-int8", "tdpbssd", "quads", simd) : types + simd;
  }
  if (!f32(c)) return types + "reference loop (the SIMD kernels accumulate in float32)";
  if (a.code() == C::kBFloat && b.code() == C::kBFloat) {
    const bool dot = isa.level >= 3 && t.Has("avx512bf16");
    const std::string simd =
        dot ? "avx512bf16 vdpbf16ps 12x32 micro-kernel on k-pair packed A and B"
            : isa.name + " " + isa.gemm + " micro-kernel, bfloat16 widened by a 16-bit shift";
    if (t.Has("amx-bf16")) return amx("amx-bf16", "tdpbf16ps", "pairs", simd);
    if (dot) return types + simd;
  }
  auto widen = [&](DataType d) -> std::string {
    if (d.code() == C::kFloat && d.bits() == 16)
      return t.Has("f16c") ? "float16 widened by vcvtph2ps" : "float16 widened in software";
    if (d.code() == C::kBFloat) return "bfloat16 widened by a 16-bit shift";
    return d.str() + " widened to float32";
  };
  std::string s = types + isa.name + " " + isa.gemm + " micro-kernel, B packed per panel";
  if (!f32(b)) s += " (" + widen(b) + " while packing)";
  if (!f32(a)) s += ", A " + widen(a) + " once per call";
  return s;
}

// Reports the target's micro-kernel family and each T.gemm's path; changes nothing.
PrimFunc ReportGemmPathsCPU(const PrimFunc& f, const PassContext& ctx) {
  if (!ctx.info) return f;
  const Target& t = ctx.target;
  const CpuIsa isa = ChooseCpuIsa(t);
  ctx.info->choices.push_back("CPU target " + t.str() + ": " + isa.name + " micro-kernels; " + isa.arch_flags);
  PostOrderVisitStmt(f->body, [&](const Stmt& s) {
    auto* g = As<GemmNode>(s);
    if (!g) return;
    const std::string loc = g->span.file + ":" + std::to_string(g->span.line);
    if (g->k_pack != 1)
      ctx.info->warnings.push_back(loc + ": T.gemm k_pack=" + std::to_string(g->k_pack) +
                                   " is an AMD MFMA option; it has no effect on the CPU");
    ctx.info->choices.push_back(loc + ": T.gemm " + GemmPath(*g, t, isa));
  });
  return f;
}

std::vector<std::string>* Choices(const PassContext& ctx) { return ctx.info ? &ctx.info->choices : nullptr; }
// A rewrite's output is simplified (rewrites print, and re-parse, simplified); an unchanged input stays.
PrimFunc SimplifiedIfChanged(const PrimFunc& in, const PrimFunc& out) { return out == in ? in : Simplify(out); }

// Deeper gemm tiles. Tiles served from tile caches run K = 256 per gemm call (their copies are paid
// once per call, and deeper calls halve the accumulator traffic); per-worker tiles stay at K = 128,
// where two 256-deep tiles per group would not fit in L2 beside the accumulators. Whether the caches
// apply is known after the block groups: this pass tries K = 256 with the two next rewrites on a
// scratch copy, and keeps 256 only where CacheGemmTilesCPU then changes the kernel.
PrimFunc CoalesceKSteps(const PrimFunc& f, const PassContext& ctx) {
  std::vector<std::string> trial;
  const PrimFunc deep = SimplifiedIfChanged(f, CoalesceGemmKStepsCPU(f, &trial, 256));
  const size_t own = trial.size();
  const PrimFunc grouped = SimplifiedIfChanged(deep, GroupGemmBlocksCPU(deep, &trial));
  if (CacheGemmTilesCPU(grouped, &trial) != grouped) {
    if (std::vector<std::string>* choices = Choices(ctx))
      choices->insert(choices->end(), trial.begin(), trial.begin() + static_cast<std::ptrdiff_t>(own));
    return deep;
  }
  return SimplifiedIfChanged(f, CoalesceGemmKStepsCPU(f, Choices(ctx), 128));
}
// Blocks in lockstep groups, so one copy of a tile from global memory serves two blocks.
PrimFunc GroupBlocks(const PrimFunc& f, const PassContext& ctx) {
  return SimplifiedIfChanged(f, GroupGemmBlocksCPU(f, Choices(ctx)));
}
PrimFunc CacheTiles(const PrimFunc& f, const PassContext& ctx) { return CacheGemmTilesCPU(f, Choices(ctx)); }
// B tiles packed into the micro-kernel's panels by their copies.
PrimFunc PackTiles(const PrimFunc& f, const PassContext& ctx) { return PackGemmTilesCPU(f, Choices(ctx)); }

// Calls the CPU target cannot run, at the user's line (before anything else can fail on them).
PrimFunc RejectGpuOnlyCalls(const PrimFunc& f, const PassContext&) {
  RejectGpuOnlyCallsOnCPU(f->body);
  return f;
}

}  // namespace

PassContext CpuPassContext(const Target& t, const PassConfig& pc) { return {{}, {}, nullptr, t, pc}; }

Pipeline CpuPipeline(const PassContext&) {
  return {
      {"LowerWarpShufflesCPU", ContextFree(LowerWarpShufflesCPU)},
      {"RejectGpuOnlyCallsCPU", RejectGpuOnlyCalls},
      {"ReportGemmPathsCPU", ReportGemmPathsCPU},
      {"CoalesceGemmKStepsCPU", CoalesceKSteps},
      {"GroupGemmBlocksCPU", GroupBlocks},
      {"CacheGemmTilesCPU", CacheTiles},
      {"PackGemmTilesCPU", PackTiles},
      Step("ExpandViewTileOps"),
      Step("Simplify"),
      Step("RasterizeBlocks"),
      Step("InjectBoundGuards"),
      Step("ResolveBufferViews"),
      {"LowerThreadBindingsCPU", ContextFree(LowerThreadBindingsCPU)},
      {"LowerTileOpsCPU", ContextFree(LowerTileOpsCPU)},
      Step("Simplify"),
  };
}

}  // namespace tl
