// LowerTileOpsGPU on CUDA: T.gemm on the tensor cores. wgmma on sm_90a where the accumulator has a warp-group
// layout (src/transform/gpu/hopper_wgmma.cc), float32 operands as tf32 (lower_gemm_tf32.cc), otherwise
// ldmatrix loads of the operands and mma.sync m16n8k16 (m16n8k32 for 8-bit operands) over the warp grid of
// the accumulator layout. Registered for the "cuda" kind; other GPU backends have their own or the shared one.
#include "arith/simplify.h"
#include "ir/printer.h"
#include "layout/hopper_layout.h"
#include "target/cuda/lower_gemm_mma.h"
#include "transform/gpu/hopper_wgmma.h"
#include "transform/gpu/tile_lowerer.h"
#include "transform/gpu_util.h"

namespace tl {
namespace gpu_lowering {

using namespace gpu_pass;

namespace {
const GpuOpLoweringRegistrar kGemm(
    "gemm", [](GpuTileLowerer& L, const TileOpNode& n) { return LowerGemmMma(L, static_cast<const GemmNode*>(&n)); },
    "cuda");
}  // namespace

Stmt ClearAccumulator(const Buffer& cl, int64_t locals, DataType t, const Span& sp) {
  Var i = MakeVar("i");
  Expr zero = t.is_float() ? FloatImm(t, 0.0) : IntImm(t, 0);
  return For(i, C(0), C(locals), ForKind::kUnrolled, Store(cl, zero, {i}, sp), {}, sp);
}

Expr SharedTileElement(GpuTileLowerer& L, const Region& r, const std::vector<size_t>& dims, const Expr& row,
                       const Expr& col) {
  std::vector<Expr> idx;
  for (auto& rg : r.ranges) idx.push_back(L.VisitExpr(rg.min));
  idx[dims[0]] = Simplify(idx[dims[0]] + row);
  idx[dims[1]] = Simplify(idx[dims[1]] + col);
  return Load(L.MapBuffer(r.buffer), {L.SharedIndex(r.buffer, idx)});
}

Stmt LowerGemmMma(GpuTileLowerer& L, const GemmNode* g) {
  TL_ICHECK(L.ctx_.features.matrix == MatrixUnit::kMmaSync, "the CUDA T.gemm lowering on a target without mma.sync");
  const Fragment& CF = L.Layout(g->C.buffer.get());
  if (IsWgmmaLayout(CF)) return LowerGemmWgmma(L, g);  // sm_90a (hopper_wgmma.cc)
  NoteNoWgmma(L, g);
  // (on the tcgen05 family GemmToTcgen05CUDA has said why this gemm stays on mma.sync)
  int64_t M = CF.params[0], N = CF.params[1], wm = CF.params[2], wn = CF.params[3];
  DataType at = g->A.buffer->dtype, bt = g->B.buffer->dtype;
  bool f16 = at == DataType::Float(16) && bt == DataType::Float(16);
  bool b16 = at == DataType::BFloat16() && bt == DataType::BFloat16();
  bool s8 = at == DataType::Int(8) && bt == DataType::Int(8);  // mma.sync m16n8k32 s8 -> s32
  bool f8 = IsFp8(at) && IsFp8(bt);  // mma.sync m16n8k32 e4m3/e5m2 (either mix) -> f32, sm_89+
  if (at == DataType::Float(32) && bt == DataType::Float(32) && g->C.buffer->dtype == DataType::Float(32))
    return LowerGemmTf32(L, g);  // mma.sync m16n8k8 tf32 (lower_gemm_tf32.cc)
  // float16 A and B may also accumulate in float16 (mma .f16.f16.f16.f16; bf16 and fp8 have no such form).
  const bool c16 = f16 && g->C.buffer->dtype == DataType::Float(16);
  if (((f16 || b16 || f8) && g->C.buffer->dtype != DataType::Float(32) && !c16) ||
      (s8 && g->C.buffer->dtype != DataType::Int(32)) || (!f16 && !b16 && !s8 && !f8))
    throw UserError(
        ErrorKind::kUnsupported,
        "T.gemm on CUDA (mma.sync) takes float16, bfloat16, float32 (as tf32) or fp8 (float8_e4m3fn / "
        "float8_e5m2) A and B with a float32 accumulator, float16 A and B with a float16 accumulator, or "
        "int8 A and B with an int32 accumulator; got A " +
            at.str() + ", B " + bt.str() + ", C " + g->C.buffer->dtype.str(),
        g->span);
  if (f8 && !L.ctx_.features.fp8_mma)
    throw UserError(
        ErrorKind::kUnsupported,
        "fp8 T.gemm needs sm_89 or newer (mma.sync m16n8k32 with e4m3/e5m2 inputs); the target is " +
            L.ctx_.features.arch,
        g->span);
  bool a_reg = g->A.buffer->scope == Scope::kFragment;
  bool b_reg = g->B.buffer->scope == Scope::kFragment;
  // Elements of K per mma (16 bytes of a row): 16 halves, or 32 8-bit elements. An 8-bit fragment holds the
  // same bytes in the same registers as a 16-bit one (PTX ISA, mma.m16n8k32 fragments), so ldmatrix loads it.
  const int64_t kstep = (s8 || f8) ? 32 : 16, epr = 2 / at.bytes();  // elements per 16-bit ldmatrix element
  GemmTiles gt = GemmTilesOf(g, g->span);
  auto ad = gt.ad, bd = gt.bd;
  const int64_t K = gt.K;
  if (K % kstep)
    throw UserError(ErrorKind::kLayout,
                    "T.gemm on CUDA needs K to be a multiple of " + std::to_string(kstep) +
                        " (mma.sync m16n8k" + std::to_string(kstep) + "); K = " + std::to_string(K),
                    g->span);
  int64_t wM = M / wm, wN = N / wn, mt = wM / 16, nt = wN / 8;
  Span sp = g->span;
  std::vector<Stmt> out;
  // ldmatrix cannot transpose 8-bit elements: an 8-bit operand stored MN-major (A [K, M], B [K, N]) is first
  // copied transposed into a K-major shared tile ([M, K] / [N, K], swizzled like any tile of its shape) by
  // all threads, element by element; the barrier pass orders these stores against the ldmatrix reads.
  Region Ar = g->A, Br = g->B;
  bool tA = g->trans_A, tB = g->trans_B;
  std::vector<std::string> staged;
  if ((s8 || f8) && tA && !a_reg) {
    Ar = L.KMajorCopy(g->A, ad, M, K, "A_kmajor", sp, &out);
    ad = {0, 1};
    tA = false;
    staged.push_back("A [K, M]");
  }
  if ((s8 || f8) && !tB && !b_reg) {
    Br = L.KMajorCopy(g->B, bd, N, K, "B_kmajor", sp, &out);
    bd = {0, 1};
    tB = true;
    staged.push_back("B [K, N]");
  }
  // ldmatrix reads 16 contiguous bytes of a stored row per lane: an operand whose T.annotate_layout layout
  // keeps less of a row together is first copied into a tile of the compiler's layout.
  auto narrow = [&](const Region& r) {
    auto u = L.user_shared_.find(r.buffer.get());
    return r.buffer->scope == Scope::kShared && u != L.user_shared_.end() &&
           u->second.contiguous * r.buffer->dtype.bytes() < 16;
  };
  std::vector<std::string> relaid;
  if (narrow(Ar)) {
    Ar = L.KMajorCopy(Ar, tA ? ad : std::vector<size_t>{ad[1], ad[0]}, M, K, "A_relaid", sp, &out);
    ad = {0, 1};
    tA = false;
    relaid.push_back("A ('" + g->A.buffer->name + "')");
  }
  if (narrow(Br)) {
    Br = L.KMajorCopy(Br, tB ? std::vector<size_t>{bd[1], bd[0]} : bd, N, K, "B_relaid", sp, &out);
    bd = {0, 1};
    tB = true;
    relaid.push_back("B ('" + g->B.buffer->name + "')");
  }
  if (!relaid.empty())
    L.ctx_.info->warnings.push_back(
        Loc(sp) + ": T.gemm operand " + relaid[0] + (relaid.size() > 1 ? " and " + relaid[1] : "") +
        " is copied into a tile of the compiler's layout on every call: the layout "
        "T.annotate_layout gives it keeps less than 16 bytes of a row together, and "
        "ldmatrix reads 16");
  if (!staged.empty())
    L.ctx_.info->warnings.push_back(Loc(sp) + ": 8-bit T.gemm operand " + staged[0] +
                                  (staged.size() > 1 ? " and " + staged[1] : "") +
                                  " is transposed through shared memory on every call (ldmatrix cannot "
                                  "transpose 8-bit elements): store "
                                  "A as [M, K] and B as [N, K] (transpose_B=True) for full speed");
  L.ctx_.info->choices.push_back(
      Loc(sp) + ": T.gemm: mma.sync m16n8k" + std::to_string(kstep) + " " + MmaAbName(at, bt) +
      (c16 ? " (float16 accumulators)" : "") + ", warps " +
      std::to_string(wm) + "x" + std::to_string(wn) + ", " + std::to_string(wM) + "x" + std::to_string(wN) +
      " per warp (" + std::to_string(mt) + "x" + std::to_string(nt) + " mma tiles per k" +
      std::to_string(kstep) + " step); A " +
      (g->A.buffer->scope == Scope::kFragment ? "in registers"
                                              : std::string("by ldmatrix.x4") + (tA ? ".trans" : "")) +
      ", B " +
      (g->B.buffer->scope == Scope::kFragment ? "in registers"
                                              : std::string("by ldmatrix") + (tB ? "" : ".trans")) +
      (staged.empty() ? ""
                      : "; " + staged[0] + (staged.size() > 1 ? " and " + staged[1] : "") +
                            " transposed through shared memory first"));
  Expr warp = Div(L.tx_, 32), lane = Mod(L.tx_, 32);
  Expr wmi = Mod(warp, wm), wnj = Div(warp, wm);
  Buffer cl = L.MapBuffer(g->C.buffer);
  if (g->clear_accum) out.push_back(ClearAccumulator(cl, CF.locals, g->C.buffer->dtype, sp));
  Buffer afrag = a_reg ? L.MapBuffer(g->A.buffer) : L.Scratch("A_frag", at, mt * 8 * epr, Scope::kLocal);
  Buffer bfrag = b_reg ? L.MapBuffer(g->B.buffer) : L.Scratch("B_frag", bt, nt * 4 * epr, Scope::kLocal);
  std::string ab = MmaAbName(at, bt);
  auto shared_at = [&](const Region& r, const std::vector<size_t>& dims, const Expr& row, const Expr& col) {
    return SharedTileElement(L, r, dims, row, col);
  };
  Var kk = MakeVar("kk"), i = MakeVar("i"), j = MakeVar("j");
  std::vector<Stmt> step;
  if (!a_reg) {
    Expr q = Div(lane, 8), r8 = Mod(lane, 8);
    Expr row, col;  // stored coordinates this lane points at
    if (!tA) {      // stored [M, K]: matrices (m0-7,k0-7) (m8-15,k0-7) (m0-7,k8-15) (m8-15,k8-15)
      row = wmi * C(wM) + Expr(i) * C(16) + Mod(q, 2) * C(8) + r8;
      col = Expr(kk) * C(kstep) + Div(q, 2) * C(8 * epr);
    } else {  // stored [K, M], loaded transposed
      row = Expr(kk) * C(16) + Div(q, 2) * C(8) + r8;
      col = wmi * C(wM) + Expr(i) * C(16) + Mod(q, 2) * C(8);
    }
    step.push_back(For(i, C(0), C(mt), ForKind::kUnrolled,
                       Call0("tl.ldmatrix",
                             {C(tA ? 1 : 0), C(4), Load(afrag, {Expr(i) * C(8 * epr)}),
                              shared_at(Ar, ad, Simplify(row), Simplify(col))},
                             sp),
                       {}, sp));
  }
  // B: x4 loads cover two n8 tiles (k0-7, k8-15 of tile j, then of tile j+1); an odd last tile uses x2.
  auto bload = [&](const Expr& j0, int num) {
    Expr q = Div(lane, 8), r8 = Mod(lane, 8);
    if (num == 2) q = Mod(q, 2);
    Expr row, col;
    if (!tB) {  // stored [K, N], loaded transposed
      row = Expr(kk) * C(16) + Mod(q, 2) * C(8) + r8;
      col = wnj * C(wN) + (j0 + Div(q, 2)) * C(8);
    } else {  // stored [N, K]
      row = wnj * C(wN) + (j0 + Div(q, 2)) * C(8) + r8;
      col = Expr(kk) * C(kstep) + Mod(q, 2) * C(8 * epr);
    }
    return Call0("tl.ldmatrix",
                 {C(tB ? 0 : 1), C(num), Load(bfrag, {Simplify(j0 * C(4 * epr))}),
                  shared_at(Br, bd, Simplify(row), Simplify(col))},
                 sp);
  };
  if (!b_reg && nt / 2 > 0)
    step.push_back(For(j, C(0), C(nt / 2), ForKind::kUnrolled, bload(Expr(j) * C(2), 4), {}, sp));
  if (!b_reg && nt % 2) step.push_back(bload(C(nt - 1), 2));
  // A register operand holds, per mma tile and k step, the 8 (16-bit) or 16 (8-bit) elements of its fragment
  // (MmaOperandA / MmaOperandB, or their ByteSplitFragment form for 8-bit operands).
  Expr a_off = a_reg ? (Expr(i) * C(K / kstep) + Expr(kk)) * C(8 * epr) : Expr(i) * C(8 * epr);
  Expr b_off = b_reg ? (Expr(kk) * C(nt) + Expr(j)) * C(4 * epr) : Expr(j) * C(4 * epr);
  Stmt mma =
      Call0("tl.mma_sync",
            {StringImm("m16n8k" + std::to_string(kstep)), StringImm(ab), Load(afrag, {Simplify(a_off)}),
             Load(bfrag, {Simplify(b_off)}), Load(cl, {(Expr(i) * C(nt) + Expr(j)) * C(4)})},
            sp);
  step.push_back(
      For(i, C(0), C(mt), ForKind::kUnrolled, For(j, C(0), C(nt), ForKind::kUnrolled, mma, {}, sp), {}, sp));
  out.push_back(For(kk, C(0), C(K / kstep), ForKind::kUnrolled, Seq(step, sp), {}, sp));
  return Seq(out, sp);
}

}  // namespace gpu_lowering
}  // namespace tl
