// LowerTileOpsGPU on CUDA, T.mma_gemm_blockscaled on sm_120a / sm_121a with the warp-level block-scaled MMAs
// (PTX ISA 9.7.14.3 "Block Scaling", 9.7.14.5.10 / 9.7.14.5.11 "Matrix Fragments for mma.m16n8k32 / k64"),
// over the warp grid of the accumulator (the m16n8 accumulator of every mma.sync, so layout inference,
// epilogues and reductions are T.gemm's):
//   NVFP4 (fp4 A and B, UE4M3 words):  m16n8k64 kind::mxf4nvf4.block_scale.scale_vec::4X ... .ue4m3
//   MXFP4 (fp4 A and B, E8M0 bytes):   m16n8k64 kind::mxf4.block_scale.scale_vec::2X ... .ue8m0
//   any other mix of e4m3 / e5m2 / e3m2 / e2m3 / e2m1 with E8M0 bytes:
//                                      m16n8k32 kind::mxf8f6f4.block_scale.scale_vec::1X ... .ue8m0
//
// Fragments, lane l, group g = l / 4, t = l % 4, P values a .b32 register (8 e2m1 for k64, the first in bits
// 0-3; 4 one a byte for k32), KS = 64 or 32:
//   A (16 x KS): register r, value e holds row g + 8 (r % 2), column P t + e + (KS / 2) (r / 2)
//   B (KS x 8):  register r, value e holds row (k) P t + e + (KS / 2) r, column g
// In kind::mxf8f6f4's byte containers an fp6 value sits in bits 0-5 and an fp4 value in bits 2-5 (CUTLASS's
// SM120 MMA traits shift the low nibble ldmatrix leaves up by two for e2m1 and leave fp6 alone; the ISA text
// reachable here draws the containers only in figures).
// Tiles of one code a byte: the lowering gathers each lane's values from shared memory into a local array in
// register order (value P r + e), and tl::mma_m16n8k* packs them into the registers. Tiles of two codes a
// byte (uint8, GemmBlockScaledNode::PackedFp4: what PackFp4TilesCUDA makes of the fp4 tiles of NVFP4 and
// MXFP4 gemms): a register's 8 values are 4 consecutive bytes of a row. Scales: with .scale_vec::4X a lane's
// scale register holds the four UE4M3 scales of one row of A (byte i: K elements [16 i, 16 i + 16)) and
// byte-id must be 0; with 2X bytes 0 and 1 scale K [0, 32) and [32, 64) (byte-id 0 names that pair); with 1X
// byte-id 0 names byte 0. thread-id-a names the lane pair of each quad that supplies them: row g from lane 4
// g + 2 tid + 0, row g + 8 from lane 4 g + 2 tid + 1. For B, column g's scales come from lane 4 g +
// thread-id-b. Every lane loads the scales its position names with both ids 0 (lanes the instruction does not
// read load copies).
#include "arith/simplify.h"
#include "ir/functor.h"
#include "op/gemm_blockscaled.h"
#include "target/cuda/lower_gemm_mma.h"
#include "transform/gpu/tile_lowerer.h"
#include "transform/gpu_util.h"

namespace tl {
namespace gpu_lowering {

using namespace gpu_pass;

namespace {

// The choice table's word on kind::mxf8f6f4's sub-byte operands: one value a byte of the register, fp6 in
// bits 0-5 and fp4 in bits 2-5 (shifted there from the tiles' low nibble by tl::mma_m16n8k32_mxf8f6f4_*).
std::string SubByteNote(DataType a, DataType b) {
  if (!a.is_mx_float() && !b.is_mx_float()) return "";
  return " (sub-byte values one a register byte: fp6 in bits 0-5, fp4 in bits 2-5)";
}

Stmt LowerGemmBlockScaledMma(GpuTileLowerer& L, const GemmBlockScaledNode* g) {
  const Span sp = g->span;
  const GpuFeatures& ft = L.ctx_.features;
  if (!ft.block_scale_mma_sync)
    throw UserError(
        ErrorKind::kUnsupported,
        "T.mma_gemm_blockscaled on CUDA uses the warp-level block-scaled MMA of sm_120a / sm_121a "
        "(mma.sync kind::mxf4nvf4 / kind::mxf8f6f4 block_scale): target cuda -arch=sm_120a; " +
            ft.arch + " has none (on the tcgen05 family use T.tcgen05_gemm_blockscaled, docs/blackwell.md)",
        sp);
  const DataType at = g->A.buffer->dtype, bt = g->B.buffer->dtype;
  // NVFP4: kind::mxf4nvf4 m16n8k64 scale_vec::4X, UE4M3 words. MXFP4 (fp4 A and B, E8M0 bytes): kind::mxf4
  // m16n8k64 scale_vec::2X, a scale per row and 32 K, two a step. Any other mix of MXFP8 / MXFP6 / MXFP4
  // operands: kind::mxf8f6f4 m16n8k32 scale_vec::1X, one E8M0 byte per row and step (the op's granularity
  // a multiple of 32: GemmBlockScaledNode::Check).
  const bool nvf4 = g->Nvf4Words();
  auto fp4 = [](DataType t) { return t.code() == DataType::Code::kFloat4E2M1; };
  const bool mxf4 = !nvf4 && (g->PackedA() || fp4(at)) && (g->PackedB() || fp4(bt));
  const bool mxf8 = !nvf4 && !mxf4;
  if (mxf8 && (F8F6F4Name(at).empty() || F8F6F4Name(bt).empty()))
    throw UserError(
        ErrorKind::kUnsupported,
        "T.mma_gemm_blockscaled on sm_120a takes float8_e4m3fn / float8_e5m2 / float6_e3m2fn / "
        "float6_e2m3fn / float4_e2m1fn A and B (mma.sync kind::mxf8f6f4 / kind::mxf4) or NVFP4; got A " +
            at.str() + ", B " + bt.str(),
        sp);
  for (const Region* x : {&g->A, &g->B, &g->SFA, &g->SFB})
    if (x->buffer->scope != Scope::kShared)
      throw UserError(ErrorKind::kUnsupported,
                      "T.mma_gemm_blockscaled on sm_120a reads A, B, SFA and SFB from shared memory "
                      "(T.alloc_shared); '" +
                          x->buffer->name + "' is not there",
                      sp);
  const Fragment& CF = L.Layout(g->C.buffer.get());
  const int64_t M = CF.params[0], N = CF.params[1], wm = CF.params[2], wn = CF.params[3];
  if (g->PackedA() != g->PackedB())
    throw UserError(ErrorKind::kUnsupported,
                    "T.mma_gemm_blockscaled on sm_120a takes both operands as uint8 fp4 codes two a byte or "
                    "neither; got A " +
                        g->A.buffer->dtype.str() + ", B " + g->B.buffer->dtype.str(),
                    sp);
  GemmTiles gt = GemmTilesOf(g, sp);
  const bool packed = g->PackedFp4();  // uint8 tiles of two codes a byte (PackFp4TilesCUDA; K-major by Check)
  const int64_t K = gt.K, KS = mxf8 ? 32 : 64;
  const std::string ab = mxf8 ? F8F6F4Name(at) + "." + F8F6F4Name(bt) : "e2m1.e2m1";
  if (K % KS)
    throw UserError(ErrorKind::kLayout,
                    "T.mma_gemm_blockscaled on sm_120a needs K to be a multiple of " + std::to_string(KS) +
                        " (mma.sync m16n8k" + std::to_string(KS) + "); K = " + std::to_string(K),
                    sp);
  const int64_t wM = M / wm, wN = N / wn, mt = wM / 16, nt = wN / 8;
  const std::string shape = "m16n8k" + std::to_string(KS);
  L.ctx_.info->choices.push_back(
      Loc(sp) + ": T.mma_gemm_blockscaled: mma.sync " + shape +
      (mxf8   ? " kind::mxf8f6f4 block_scale scale_vec::1X " + ab + " with ue8m0 scales" + SubByteNote(at, bt)
       : mxf4 ? " kind::mxf4 block_scale scale_vec::2X e2m1 x e2m1 with ue8m0 scales (two a row and k64 step)"
              : " kind::mxf4nvf4 block_scale scale_vec::4X e2m1 x e2m1 with ue4m3 scales") +
      ", warps " + std::to_string(wm) + "x" + std::to_string(wn) + ", " + std::to_string(wM) + "x" +
      std::to_string(wN) + " per warp (" + std::to_string(mt) + "x" + std::to_string(nt) +
      " mma tiles per k" + std::to_string(KS) + " step); A and B " +
      (packed ? "two values a byte in shared memory, a register from 4 bytes"
              : std::string("one value a byte in shared memory, a register from ") + (mxf8 ? "4" : "8") +
                    " bytes") +
      " (one load where the tile is K-major)" + ", one 32-bit scale word a lane and tile");
  std::vector<Stmt> out;
  Buffer cl = L.MapBuffer(g->C.buffer);
  if (g->clear_accum) out.push_back(ClearAccumulator(cl, CF.locals, DataType::Float(32), sp));
  const DataType u32 = DataType::UInt(32);
  // A lane's registers per mma tile: A 4, B 2, each of `per` values (8 fp4, 4 fp8), held as `units` bytes a
  // register in register order: the register's own bytes (packed fp4 tiles, fp8) or its values one a byte
  // (fp4 tiles of one value a byte; tl::mma_m16n8k64_nvf4 packs them)
  const int64_t per = mxf8 ? 4 : 8, units = packed ? 4 : per;
  Buffer afrag = L.Scratch("A_frag", at, mt * 4 * units, Scope::kLocal);
  Buffer bfrag = L.Scratch("B_frag", bt, nt * 2 * units, Scope::kLocal);
  Buffer sfa = L.Scratch("SFA_word", u32, mt, Scope::kLocal);
  Buffer sfb = L.Scratch("SFB_word", u32, nt, Scope::kLocal);
  // element (mn, k) of operand A (or B), whichever way the tile is stored (k in bytes for packed tiles)
  auto element = [&](bool is_b, const Expr& mn, const Expr& k) {
    const Region& r = is_b ? g->B : g->A;
    const auto& dims = is_b ? gt.bd : gt.ad;
    const bool k_first = is_b ? !g->trans_B : g->trans_A;
    return k_first ? SharedTileElement(L, r, dims, k, mn) : SharedTileElement(L, r, dims, mn, k);
  };
  // A register's units lie together in shared memory where the tile is K-major and the compiler's (its
  // layouts keep 16-byte chunks whole; rows of whole chunks): one 4- or 8-byte load a register
  auto whole = [&](bool is_b) {
    const Region& r = is_b ? g->B : g->A;
    int64_t row = 0;
    return (is_b ? g->trans_B : !g->trans_A) && !L.user_shared_.count(r.buffer.get()) &&
           AsConstInt(Simplify(r.buffer->shape.back()), &row) && row * r.buffer->dtype.bytes() % 16 == 0;
  };
  Var kk = MakeVar("kk"), i = MakeVar("i"), j = MakeVar("j"), r = MakeVar("r");
  // the units of register r of tile t whose first value is at (mn, k0): one vector load, or one load a unit
  auto fill = [&](bool is_b, const Buffer& frag, const Var& t, int64_t tiles, int64_t regs, const Expr& mn,
                  const Expr& k0) {
    const Expr at0 = Simplify(packed ? Div(k0, 2) : k0);  // the first unit's k
    const Expr dst = Simplify((Expr(t) * C(regs) + Expr(r)) * C(units));
    Stmt st;
    if (whole(is_b)) {
      st = Call0("tl.vector_load", {Load(frag, {dst}), element(is_b, mn, at0), C(units), Bool(true)}, sp);
    } else {
      Var u = MakeVar("u");
      st =
          For(u, C(0), C(units), ForKind::kUnrolled,
              Store(frag, element(is_b, mn, Simplify(at0 + Expr(u))), {Simplify(dst + Expr(u))}, sp), {}, sp);
    }
    return For(t, C(0), C(tiles), ForKind::kUnrolled, For(r, C(0), C(regs), ForKind::kUnrolled, st, {}, sp),
               {}, sp);
  };
  // The scale word of tile-local row `row` (of A; of B's N when is_b) for the K step starting at `k`: the
  // op's own addressing (GemmBlockScaledNode::ScaleAt) over placeholders, its region minima lowered. An E8M0
  // byte goes to bits 0-7 (byte-id 0); with kind::mxf4 (2X) the step's second 32 K's to bits 8-15.
  Var prow = MakeVar("sf_row"), pk = MakeVar("sf_k");
  auto scale_word = [&](bool is_b, const Expr& row, const Expr& k) {
    const Region& sf = is_b ? g->SFB : g->SFA;
    auto at_idx = g->ScaleAt(is_b, prow, pk).first;
    auto load = [&](const Expr& kk) {
      std::map<const VarNode*, Expr> sub{{prow.get(), row}, {pk.get(), kk}};
      std::vector<Expr> idx;
      for (auto& e : at_idx) idx.push_back(Simplify(Substitute(L.VisitExpr(e), sub)));
      return GemmBlockScaledNode::ScaleBits(Load(L.MapBuffer(sf.buffer), {L.SharedIndex(sf.buffer, idx)}));
    };
    if (nvf4) return load(k);
    if (mxf8) return Cast(u32, load(k));
    return Binary(BinaryOp::kBitOr, Cast(u32, load(k)),
                  Binary(BinaryOp::kShl, Cast(u32, load(Simplify(k + C(32)))), Cast(u32, C(8))));
  };
  Expr warp = Div(L.tx_, 32), lane = Mod(L.tx_, 32), grp = Div(lane, 4), tig = Mod(lane, 4);
  Expr wmi = Mod(warp, wm), wnj = Div(warp, wm);
  std::vector<Stmt> step;
  // A: register r, value e at row g + 8 (r % 2), column per t + e + (KS / 2) (r / 2)
  step.push_back(fill(false, afrag, i, mt, 4,
                      Simplify(wmi * C(wM) + Expr(i) * C(16) + grp + Mod(r, 2) * C(8)),
                      Simplify(Expr(kk) * C(KS) + tig * C(per) + Div(r, 2) * C(KS / 2))));
  // B: register r, value e at k per t + e + (KS / 2) r, column g
  step.push_back(fill(true, bfrag, j, nt, 2, Simplify(wnj * C(wN) + Expr(j) * C(8) + grp),
                      Simplify(Expr(kk) * C(KS) + tig * C(per) + Expr(r) * C(KS / 2))));
  // scales: this lane's row of A (8 (l % 2) + l / 4 of each m16 tile) and column of B (l / 4 of each n8 tile)
  step.push_back(
      For(i, C(0), C(mt), ForKind::kUnrolled,
          Store(sfa,
                scale_word(false, Simplify(wmi * C(wM) + Expr(i) * C(16) + Mod(lane, 2) * C(8) + grp),
                           Simplify(Expr(kk) * C(KS))),
                {i}, sp),
          {}, sp));
  step.push_back(For(
      j, C(0), C(nt), ForKind::kUnrolled,
      Store(sfb, scale_word(true, Simplify(wnj * C(wN) + Expr(j) * C(8) + grp), Simplify(Expr(kk) * C(KS))),
            {j}, sp),
      {}, sp));
  const std::string kind = mxf8 ? "mxf8f6f4_" + F8F6F4Name(at) + "_" + F8F6F4Name(bt)
                                : std::string(mxf4 ? "mxf4" : "nvf4") + (packed ? "_packed" : "");
  Stmt mma = Call0("tl.mma_sync_blockscaled",
                   {StringImm(shape), StringImm(kind), Load(afrag, {Expr(i) * C(4 * units)}),
                    Load(bfrag, {Expr(j) * C(2 * units)}), Load(cl, {(Expr(i) * C(nt) + Expr(j)) * C(4)}),
                    Load(sfa, {i}), Load(sfb, {j}), C(0), C(0)},
                   sp);
  step.push_back(
      For(i, C(0), C(mt), ForKind::kUnrolled, For(j, C(0), C(nt), ForKind::kUnrolled, mma, {}, sp), {}, sp));
  out.push_back(For(kk, C(0), C(K / KS), ForKind::kUnrolled, Seq(step, sp), {}, sp));
  return Seq(out, sp);
}

const GpuOpLoweringRegistrar kGemmBlockScaled(
    "gemm_blockscaled",
    [](GpuTileLowerer& L, const TileOpNode& n) {
      return LowerGemmBlockScaledMma(L, static_cast<const GemmBlockScaledNode*>(&n));
    },
    "cuda");

}  // namespace
}  // namespace gpu_lowering
}  // namespace tl
