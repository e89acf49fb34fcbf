// LowerTileOpsGPU, T.gemm with float32 A and B (and a float32 accumulator) on sm_80+: mma.sync m16n8k8
// .tf32 over the warp grid of the accumulator layout (the m16n8 accumulator is the one of m16n8k16, so
// layout inference, epilogues and reductions are shared). Like TileLang, a float32 gemm always runs on
// TF32 tensor cores: each operand element is rounded to TF32 (cvt.rna, 10-bit mantissa) as it is loaded.
// ldmatrix moves 16-bit elements (with .trans it would split each 32-bit element), so the operands are
// read with plain 32-bit shared loads. In the compiler's XOR swizzle of 16-byte chunks a K-major operand's
// load (8 rows x 4 columns) touches 32 distinct banks; an MN-major one (4 k-rows x 8 columns) is 2-way
// conflicted (docs/tf32.md).
#include "target/cuda/lower_gemm_mma.h"
#include "transform/gpu/hopper_wgmma.h"
#include "transform/gpu/tile_lowerer.h"
#include "transform/gpu_util.h"

namespace tl {
namespace gpu_lowering {

using namespace gpu_pass;

Stmt LowerGemmTf32(GpuTileLowerer& L, const GemmNode* g) {
  const Fragment& CF = L.Layout(g->C.buffer.get());
  const Span sp = g->span;
  // An operand in registers has the m16n8k8 .tf32 fragment layout (MmaOperandATf32 / MmaOperandBTf32, given
  // by layout inference): each k8 step reads its registers, rounded to TF32 like the shared-memory operands.
  const bool a_reg = g->A.buffer->scope == Scope::kFragment, b_reg = g->B.buffer->scope == Scope::kFragment;
  int64_t M = CF.params[0], N = CF.params[1], wm = CF.params[2], wn = CF.params[3];
  GemmTiles gt = GemmTilesOf(g, sp);
  auto ad = gt.ad, bd = gt.bd;
  const int64_t K = gt.K;
  if (K % 8)
    throw UserError(ErrorKind::kLayout,
                    "float32 T.gemm on CUDA needs K to be a multiple of 8 (mma.sync m16n8k8 tf32); K = " +
                        std::to_string(K),
                    sp);
  const int64_t wM = M / wm, wN = N / wn, mt = wM / 16, nt = wN / 8;
  L.ctx_.info->choices.push_back(
      Loc(sp) + ": T.gemm: mma.sync m16n8k8 tf32 (float32 operands rounded to tf32 " +
      "by cvt.rna as they are loaded), warps " + std::to_string(wm) + "x" + std::to_string(wn) + ", " +
      std::to_string(wM) + "x" + std::to_string(wN) + " per warp (" + std::to_string(mt) + "x" +
      std::to_string(nt) + " mma tiles per k8 step); A " + (a_reg ? "in registers" : "by 32-bit shared loads") +
      ", B " + (b_reg ? "in registers" : "by 32-bit shared loads"));
  std::vector<Stmt> out;
  Buffer cl = L.MapBuffer(g->C.buffer);
  if (g->clear_accum) out.push_back(ClearAccumulator(cl, CF.locals, DataType::Float(32), sp));
  const DataType f32 = DataType::Float(32);
  Buffer afrag = L.Scratch("A_frag", f32, mt * 4, Scope::kLocal);
  Buffer bfrag = L.Scratch("B_frag", f32, nt * 2, Scope::kLocal);
  // The rounded element (row, col) of an operand tile, in the tile's stored coordinates.
  auto load = [&](const Region& r, const std::vector<size_t>& dims, const Expr& row, const Expr& col) {
    return Call(f32, "tl.to_tf32", {SharedTileElement(L, r, dims, row, col)});
  };
  Expr warp = Div(L.tx_, 32), lane = Mod(L.tx_, 32), grp = Div(lane, 4), tig = Mod(lane, 4);
  Expr wmi = Mod(warp, wm), wnj = Div(warp, wm);
  Var kk = MakeVar("kk"), i = MakeVar("i"), j = MakeVar("j"), e = MakeVar("e");
  std::vector<Stmt> step;
  {  // A (16x8, row): a_e at row g + 8*(e&1), col tg + 4*(e>>1)
    Expr m = wmi * C(wM) + Expr(i) * C(16) + grp + Mod(e, 2) * C(8);
    Expr k = Expr(kk) * C(8) + tig + Div(e, 2) * C(4);
    Expr v = a_reg ? Call(f32, "tl.to_tf32",
                          {Load(L.MapBuffer(g->A.buffer), {Simplify((Expr(i) * C(K / 8) + kk) * C(4) + e)})})
             : g->trans_A ? load(g->A, ad, Simplify(k), Simplify(m))
                          : load(g->A, ad, Simplify(m), Simplify(k));
    step.push_back(For(
        i, C(0), C(mt), ForKind::kUnrolled,
        For(e, C(0), C(4), ForKind::kUnrolled, Store(afrag, v, {Expr(i) * C(4) + e}, sp), {}, sp), {}, sp));
  }
  {  // B (8x8, col): b_e at row (k) tg + 4*e, col (n) g
    Expr n = wnj * C(wN) + Expr(j) * C(8) + grp;
    Expr k = Expr(kk) * C(8) + tig + Expr(e) * C(4);
    Expr v = b_reg ? Call(f32, "tl.to_tf32",
                          {Load(L.MapBuffer(g->B.buffer), {Simplify((Expr(kk) * C(nt) + j) * C(2) + e)})})
             : g->trans_B ? load(g->B, bd, Simplify(n), Simplify(k))
                          : load(g->B, bd, Simplify(k), Simplify(n));
    step.push_back(For(
        j, C(0), C(nt), ForKind::kUnrolled,
        For(e, C(0), C(2), ForKind::kUnrolled, Store(bfrag, v, {Expr(j) * C(2) + e}, sp), {}, sp), {}, sp));
  }
  Stmt mma = Call0("tl.mma_sync",
                   {StringImm("m16n8k8"), StringImm("tf32"), Load(afrag, {Expr(i) * C(4)}),
                    Load(bfrag, {Expr(j) * C(2)}), Load(cl, {(Expr(i) * C(nt) + Expr(j)) * C(4)})},
                   sp);
  step.push_back(
      For(i, C(0), C(mt), ForKind::kUnrolled, For(j, C(0), C(nt), ForKind::kUnrolled, mma, {}, sp), {}, sp));
  out.push_back(For(kk, C(0), C(K / 8), ForKind::kUnrolled, Seq(step, sp), {}, sp));
  return Seq(out, sp);
}

}  // namespace gpu_lowering
}  // namespace tl
