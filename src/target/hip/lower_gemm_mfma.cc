// LowerTileOpsGPU on HIP (registered for the "hip" kind): T.gemm as
// v_mfma_f32_{16x16x16,32x32x8}{f16,bf16_1k}, on CDNA4 v_mfma_f32_{16x16x32,32x32x16}_{f16,bf16} (and
// v_mfma_f32_16x16x32_{fp8,bf8}_{fp8,bf8} on gfx940+, with 32x32x16 on gfx950) over the wave grid of the
// mfma_C accumulator (src/layout/mfma_fragment.h), and T.reduce of an mfma_C accumulator along its rows
// (in-lane partials, cross-lane xor steps inside each 16- or 32-lane row group, then across waves through
// LDS).
#include "arith/simplify.h"
#include "layout/mfma_fragment.h"
#include "op/gemm_blockscaled.h"
#include "op/reduce_math.h"
#include "transform/gpu/tile_lowerer.h"
#include "transform/gpu_util.h"

namespace tl {
namespace gpu_lowering {

using namespace gpu_pass;

namespace {
Stmt LowerGemmMfma(GpuTileLowerer& L, const GemmNode* g);
Stmt LowerReduceMfma(GpuTileLowerer& L, const ReduceNode* r);

// HIP's own lowerings: T.gemm on MFMA, and T.reduce of an mfma_C accumulator along its rows (every other
// reduction is the shared one).
const GpuOpLoweringRegistrar kGemm(
    "gemm", [](GpuTileLowerer& L, const TileOpNode& n) { return LowerGemmMfma(L, static_cast<const GemmNode*>(&n)); },
    "hip");
const GpuOpLoweringRegistrar kGemmBlockScaled(
    "gemm_blockscaled",
    [](GpuTileLowerer& L, const TileOpNode& n) { return LowerGemmMfma(L, static_cast<const GemmNode*>(&n)); },
    "hip", "gfx950: its scaled MFMAs; the CPU target lowers it too");
const GpuOpLoweringRegistrar kReduce(
    "reduce",
    [](GpuTileLowerer& L, const TileOpNode& n) {
      auto* r = static_cast<const ReduceNode*>(&n);
      const Fragment& S = L.Layout(r->src.buffer.get());
      const Fragment& D = L.Layout(r->dst.buffer.get());
      if (S.kind == "mfma_C" && D.kind == "mfma_rows" && r->dim == 1) return LowerReduceMfma(L, r);
      return L.LowerShared(n);
    },
    "hip");

Stmt LowerGemmMfma(GpuTileLowerer& L, const GemmNode* g) {
  const Fragment& CF = L.Layout(g->C.buffer.get());
  Span sp = g->span;
  TL_ICHECK(CF.kind == "mfma_C", "T.gemm on MFMA: the accumulator has layout " + CF.desc);
  int64_t M = CF.params[0], N = CF.params[1], wm = CF.params[2], wn = CF.params[3], R = CF.params[4];
  DataType at = g->A.buffer->dtype, bt = g->B.buffer->dtype, ct = g->C.buffer->dtype;
  // T.mma_gemm_blockscaled: the f8f6f4 MFMAs with their scale operands (v_mfma_scale_f32_*_f8f6f4), one E8M0
  // scale a lane for its 32-value block (src/op/gemm_blockscaled.h).
  const auto* bsg = As<GemmBlockScaledNode>(static_cast<const StmtNode*>(g));
  // uint8 tiles of e2m1 codes two a byte (PackFp4TilesHIP; K-major by the op's Check), either operand: a
  // lane's 32 values are 16 bytes of a row, the MFMA's own register format; K counts values, twice such a
  // tile's bytes
  const bool pa = bsg && bsg->PackedA(), pb = bsg && bsg->PackedB();
  if (pa) at = DataType(DataType::Code::kFloat4E2M1, 4);
  if (pb) bt = DataType(DataType::Code::kFloat4E2M1, 4);
  const int64_t sa = g->ValuesPerElement(false), sb = g->ValuesPerElement(true);
  // 8-bit floats, and CDNA4's fp4 / fp6 (float4_e2m1fn, float6_*: only in the f8f6f4 family; "fp8" below
  // means any of them)
  auto is_fp8 = [](DataType t) {
    return t.code() == DataType::Code::kFloat8E4M3 || t.code() == DataType::Code::kFloat8E5M2 ||
           t.is_mx_float();
  };
  const bool fp8 = is_fp8(at) || is_fp8(bt);
  const bool fp4 = at.is_mx_float() || bt.is_mx_float();  // (fp4 or fp6)
  const GpuFeatures& ft = L.ctx_.features;
  const bool ocp = ft.mfma_fp8 == "ocp", k8 = ft.mfma_k8;
  // R x R tiles; each of the 64 / R lane groups supplies kv consecutive k: 16x16x16 / 32x32x8 (f16 / bf16,
  // kv = 4), their CDNA4 doubles 16x16x32 / 32x32x16 (kv = 8), and for 8-bit floats 16x16x32 (and on CDNA4
  // 32x32x16), kv = 8. CDNA4's f8f6f4 family takes 32 k a lane (16x16x128 / 32x32x64, twice the fp8 rate of
  // those): 8-bit floats use it whenever K is a multiple of its depth.
  const int64_t G = 64 / R;
  const bool f8f6f4 = fp8 && ocp && GemmTilesOf(g, sp).K % (32 * G) == 0;
  if (bsg && !ocp)
    throw UserError(
        ErrorKind::kUnsupported,
        "T.mma_gemm_blockscaled on HIP uses CDNA4's scaled MFMAs (v_mfma_scale_f32_*_f8f6f4): target "
        "hip -arch=gfx950; " +
            ft.arch + " has none",
        sp);
  if (bsg && bsg->Nvf4Words())
    throw UserError(
        ErrorKind::kUnsupported,
        "T.mma_gemm_blockscaled with uint32 scale words is NVFP4 (UE4M3 scales per 16 elements), which "
        "CDNA4's scaled MFMAs do not take (E8M0 scales per 32): on gfx950 pass row-major uint8 E8M0 scales "
        "(sf_layout=None)",
        sp);
  if (bsg && !f8f6f4)
    throw UserError(ErrorKind::kLayout,
                    "T.mma_gemm_blockscaled on gfx950: the K tile (" + std::to_string(GemmTilesOf(g, sp).K) +
                        ") must be a multiple of " + std::to_string(32 * G) +
                        ", the depth of the scaled MFMA " + std::to_string(R) + "x" + std::to_string(R) +
                        "x" + std::to_string(32 * G),
                    sp);
  // (fp4 / fp6 reach here only through T.mma_gemm_blockscaled, whose shape and target checks are just above)
  TL_ICHECK(!fp4 || f8f6f4, "T.gemm on MFMA: fp4 / fp6 operands outside the f8f6f4 shapes");
  const int64_t kv = f8f6f4 ? 32 : fp8 || k8 ? 8 : 4, kmfma = kv * G, outs = R * R / 64;
  const std::string shape = std::to_string(R) + "x" + std::to_string(R) + "x" + std::to_string(kmfma);
  bool f16 = at == DataType::Float(16) && bt == DataType::Float(16);
  bool b16 = at == DataType::BFloat16() && bt == DataType::BFloat16();
  const std::string& arch = ft.arch;
  if (fp8 && (!is_fp8(at) || !is_fp8(bt) || ct != DataType::Float(32) || ft.mfma_fp8.empty()))
    throw UserError(ErrorKind::kUnsupported,
                    "T.gemm on HIP with 8-bit floats (v_mfma_f32_16x16x32_fp8/bf8) takes float8_e4m3fn or "
                    "float8_e5m2 A and B (T.mma_gemm_blockscaled on gfx950 also float4_e2m1fn) with a "
                    "float32 accumulator "
                    "on gfx940 / gfx941 / gfx942 / gfx950; got A " +
                        at.str() + ", B " + bt.str() + ", C " + ct.str() + " on " + arch +
                        (!ft.mfma_fp8.empty()
                             ? ""
                             : " (no fp8 matrix instructions before gfx940: use target 'hip -arch=gfx940')"),
                    sp);
  const std::string iname = k8 ? (f16 ? "_f16" : "_bf16") : (f16 ? "f16" : "bf16_1k");
  if (!fp8 && ((!f16 && !b16) || ct != DataType::Float(32)))
    throw UserError(ErrorKind::kUnsupported,
                    "T.gemm on HIP (MFMA v_mfma_f32_" + shape + (k8 ? "_f16 / _bf16" : "f16 / bf16_1k") +
                        " on " + arch +
                        ") takes float16 or bfloat16 A and B with a float32 accumulator; got A " + at.str() +
                        ", B " + bt.str() + ", C " + ct.str() +
                        " (cast the operands, e.g. with T.copy into a float16 tile; 8-bit floats on gfx940+)",
                    sp);
  TL_ICHECK(!fp8 || ocp || R == 16,
            "T.gemm on HIP: 8-bit FNUZ operands need the 16x16 MFMA accumulator layout");
  // On CDNA3 fp8 / bf8 name the FNUZ formats the MFMAs compute in (E4M3FNUZ, E5M2FNUZ). The OCP operands
  // are re-encoded per k step (tl.fp8_to_fnuz: the same bits mean half the value, include/tl_device/hip/
  // fp8.h) and the MFMAs run on C / 4: every product and sum is as exact as in the OCP values
  // (power-of-two scaling is exact for float32 values above 2^-124). CDNA4 reads the OCP formats the
  // tensors hold: the operands go in as they are, named e4m3 / e5m2 in the IR.
  auto f8name = [&](DataType t) {
    if (t.code() == DataType::Code::kFloat4E2M1) return std::string("e2m1");
    if (t.code() == DataType::Code::kFloat6E2M3) return std::string("e2m3");
    if (t.code() == DataType::Code::kFloat6E3M2) return std::string("e3m2");
    bool e5 = t.code() == DataType::Code::kFloat8E5M2;
    return std::string(ocp ? (e5 ? "e5m2" : "e4m3") : (e5 ? "bf8" : "fp8"));
  };
  const bool recode = fp8 && !ocp;
  const std::string abname = fp8 ? f8name(at) + "_" + f8name(bt) : f16 ? "f16" : "bf16";
  GemmTiles gt = GemmTilesOf(g, sp);
  auto ad = gt.ad, bd = gt.bd;
  const int64_t K = gt.K;
  if (K % kmfma)
    throw UserError(ErrorKind::kLayout,
                    "T.gemm on HIP needs K to be a multiple of " + std::to_string(kmfma) + " (MFMA " + shape +
                        "); K = " + std::to_string(K),
                    sp);
  // TileLang's k_pack (an MFMA option): 2 asks for the packed operand reads below, which this lowering
  // also chooses by itself whenever K allows and a lane's k values of one MFMA are under 16 bytes (the
  // order of an MFMA's k is free).
  if (g->k_pack != 1 && g->k_pack != 2)
    throw UserError(ErrorKind::kUnsupported,
                    "T.gemm on HIP takes k_pack=1 or k_pack=2; got k_pack=" + std::to_string(g->k_pack), sp);
  const bool wide = kv * at.bytes() >= 16;  // one MFMA's k values of a lane are a 16-byte read already
  // Where they are (CDNA4's 8-k f16 / bf16 and f8f6f4 shapes) k_pack=2 asks for nothing more: it packs two
  // MFMA k steps a read where K allows, and is met by the one-step reads where it does not (said in the
  // table).
  const bool pack_met = g->k_pack == 2 && K % (2 * kmfma) && wide;
  if (g->k_pack == 2 && K % (2 * kmfma) && !wide)
    throw UserError(ErrorKind::kLayout,
                    "T.gemm with k_pack=2 on HIP needs K to be a multiple of " + std::to_string(2 * kmfma) +
                        " (two MFMA " + shape + " k steps); K = " + std::to_string(K),
                    sp);
  int64_t wM = M / wm, wN = N / wn, mt = wM / R, nt = wN / R;
  bool a_reg = g->A.buffer->scope == Scope::kFragment, b_reg = g->B.buffer->scope == Scope::kFragment;
  const int64_t pack = (g->k_pack == 2 && !pack_met) || (!wide && K % (2 * kmfma) == 0) ? 2 : 1;
  auto fp8_iname = [&](DataType t) {
    return std::string(t.code() == DataType::Code::kFloat8E5M2 ? "bf8" : "fp8");
  };
  L.ctx_.info->choices.push_back(
      Loc(sp) + (bsg ? ": T.mma_gemm_blockscaled: MFMA v_mfma_scale_f32_" : ": T.gemm: MFMA v_mfma_f32_") +
      shape +
      (f8f6f4 ? "_f8f6f4 (" + f8name(bt) + " x " + f8name(at) + ")"
       : fp8  ? "_" + fp8_iname(bt) + "_" + fp8_iname(at)
              : iname) +
      (recode     ? " (OCP operands re-encoded to FNUZ, accumulator scaled by 1/4)"
       : pa && pb ? " (fp4 operands stored two values a byte, read as stored)"
       : pa || pb ? std::string(" (fp4 ") + (pa ? "A" : "B") + " stored two values a byte, read as stored)"
       : fp4      ? " (fp4 / fp6 operands packed in registers: two values a byte / a 6-bit stream)"
       : fp8      ? " (OCP E4M3 / E5M2 operands read as stored)"
                  : "") +
      (pack == 2 ? " (k-packed: " + std::to_string(2 * kv * at.bytes()) + "-byte operand reads)" : "") +
      (pack_met ? " (k_pack=2: K = " + std::to_string(K) + " is one " + std::to_string(kmfma) +
                      "-deep step too few for two a read; a lane's " + std::to_string(kv * at.bytes() / sa) +
                      " bytes an MFMA are one wide read already)"
                : "") +
      ", waves " + std::to_string(wm) + "x" + std::to_string(wn) + ", " + std::to_string(wM) + "x" +
      std::to_string(wN) + " per wave (" + std::to_string(mt) + "x" + std::to_string(nt) +
      " MFMA tiles per k" + std::to_string(kmfma) + " step)" +
      (a_reg ? "; A in registers, staged through LDS" : "") +
      (g->trans_A && L.KTransposedTile(g->A.buffer.get())
           ? "; A's K x M tile stored k contiguous: vector reads"
           : "") +
      (!g->trans_B && L.KTransposedTile(g->B.buffer.get())
           ? "; B's K x N tile stored k contiguous: vector reads"
           : "") +
      (b_reg ? "; B in registers, staged through LDS" : ""));
  std::vector<Stmt> out;
  Buffer cl = L.MapBuffer(g->C.buffer);
  if (g->clear_accum) {
    Var i = MakeVar("i");
    out.push_back(
        For(i, C(0), C(CF.locals), ForKind::kUnrolled, Store(cl, FloatImm(ct, 0.0), {i}, sp), {}, sp));
  }
  // An operand in registers: its owners write it to an LDS tile of the fragment's full shape
  // (the barrier pass separates these writes from the MFMA operand reads below). The tile is swizzled as a
  // shared operand tile would be: rows of k (a K x M A, a K x N B) for column reads, else 16-byte chunks.
  // An accumulator-layout operand (FlashAttention's P) is written 4 columns a lane, rows 0..15 of a tile in
  // one 8-byte pass: its tile swaps the 8-byte halves of the chunks of alternate groups of 8 rows
  // (MfmaHalfSwapOffset), so those writes are conflict-free; its 16-byte reads swap them back.
  auto half_swapped = [&](const Fragment& F, int bytes, bool k_rows) {
    return !k_rows && L.ctx_.features.swizzle != SharedSwizzle::kNone && F.kind == "mfma_C" &&
           F.shape.size() >= 2 && MfmaHalfSwapFits(F.shape.back(), bytes);
  };
  auto staged_row = [&](const Fragment& F, const std::vector<Expr>& idx) {
    Expr row = C(0);
    for (size_t a = 0; a + 1 < idx.size(); ++a) row = row * C(F.shape[a]) + idx[a];
    return Simplify(row);
  };
  auto staged_offset = [&](const Fragment& F, const std::vector<Expr>& idx, int bytes, bool k_rows) -> Expr {
    Expr row = staged_row(F, idx);
    int64_t cols = F.shape.back();
    if (idx.size() < 2 || L.ctx_.features.swizzle == SharedSwizzle::kNone)
      return Simplify(row * C(cols) + idx.back());
    if (half_swapped(F, bytes, k_rows)) return MfmaHalfSwapOffset(row, idx.back(), cols, bytes);
    return k_rows ? MfmaKRowsOffset(row, idx.back(), cols, bytes)
                  : SwizzledOffset(row, idx.back(), cols, bytes);
  };
  auto stage = [&](const Region& r, const std::string& base, bool k_rows) -> Buffer {
    const Fragment& F = L.Layout(r.buffer.get());
    int64_t n = 1;
    for (int64_t e : F.shape) n *= e;
    Buffer st = L.Scratch(base, r.buffer->dtype, n, Scope::kShared);
    Buffer regs = L.MapBuffer(r.buffer);
    std::vector<Stmt> w;
    // An accumulator-layout fragment: registers 4q..4q+3 are 4 consecutive columns of a row (inside one
    // 16-byte chunk of the swizzled tile), written as one 4-lane store.
    const int bytes = r.buffer->dtype.bytes();
    if (F.kind == "mfma_C" && !F.valid && F.replicas == 1 && F.locals % 4 == 0 &&
        L.ctx_.features.swizzle != SharedSwizzle::kNone && (bytes == 1 || bytes == 2 || bytes == 4)) {
      for (int64_t l = 0; l < F.locals; l += 4) {
        std::vector<Expr> args{Load(st, {staged_offset(F, F.IndexAt(L.tx_, C(l)), bytes, k_rows)})};
        for (int64_t v = 0; v < 4; ++v) args.push_back(Load(regs, {C(l + v)}));
        w.push_back(Call0("tl.vector_store", args, sp));
      }
      out.push_back(Seq(w, sp));
      return st;
    }
    for (int64_t l = 0; l < F.locals; ++l) {
      auto idx = F.IndexAt(L.tx_, C(l));
      Stmt s1 = Store(st, Load(regs, {C(l)}), {staged_offset(F, idx, r.buffer->dtype.bytes(), k_rows)}, sp);
      Expr ok = F.ValidAt(L.tx_, C(l));
      if (F.replicas > 1) ok = ok ? And(ok, Eq(F.ReplicaOf(L.tx_), C(0))) : Eq(F.ReplicaOf(L.tx_), C(0));
      w.push_back(ok ? If(ok, s1, nullptr, sp) : s1);
    }
    out.push_back(Seq(w, sp));
    return st;
  };
  Buffer as = a_reg ? stage(g->A, "A_stage", g->trans_A) : nullptr;
  Buffer bs = b_reg ? stage(g->B, "B_stage", !g->trans_B) : nullptr;
  auto staged_idx = [&](const Region& r, const std::vector<size_t>& dims, const Expr& row, const Expr& col) {
    std::vector<Expr> idx;
    for (auto& rg : r.ranges) idx.push_back(L.VisitExpr(rg.min));
    idx[dims[0]] = Simplify(idx[dims[0]] + row);
    idx[dims[1]] = Simplify(idx[dims[1]] + col);
    return idx;
  };
  auto at_tile = [&](const Region& r, const std::vector<size_t>& dims, const Buffer& staged, const Expr& row,
                     const Expr& col) -> Expr {
    std::vector<Expr> idx = staged_idx(r, dims, row, col);
    if (staged)
      return Load(staged, {staged_offset(L.Layout(r.buffer.get()), idx, r.buffer->dtype.bytes(),
                                         staged.get() == as.get() ? g->trans_A : !g->trans_B)});
    return Load(L.MapBuffer(r.buffer), {L.SharedIndex(r.buffer, idx)});
  };
  // A 16-byte read of a chunk of a half-swapped staged tile: the aligned chunk's offset and the 0/1 swap of
  // its row (null when the read is not such a read).
  auto swapped_chunk = [&](const Region& r, const std::vector<size_t>& dims, const Buffer& staged,
                           bool k_rows, const Expr& row, const Expr& col,
                           int64_t bytes) -> std::pair<Expr, Expr> {
    if (!staged || bytes != 16) return {nullptr, nullptr};
    const Fragment& F = L.Layout(r.buffer.get());
    if (!half_swapped(F, r.buffer->dtype.bytes(), k_rows)) return {nullptr, nullptr};
    std::vector<Expr> idx = staged_idx(r, dims, row, col);
    Expr srow = staged_row(F, idx);
    return {SwizzledOffset(srow, idx.back(), F.shape.back(), r.buffer->dtype.bytes()), MfmaHalfSwapped(srow)};
  };
  Expr wave = Div(L.tx_, 64), lane = Mod(L.tx_, 64);
  Expr wmi = Mod(wave, wm), wnj = Div(wave, wm);
  // k-packing: an MFMA sums over its k in any order, so A and B may hand it any k values as long
  // as both agree. With K % (2 * kmfma) == 0 lane group g = l / R of a 2*kmfma-deep step supplies
  // k = 8g .. 8g+7: its first four to MFMA 0, the next four to MFMA 1. A row-major A (and an
  // N x K B) is then read as one 16-byte chunk per lane, and 8 lanes of a 16-byte LDS pass read
  // 8 rows of one chunk column: distinct bank groups under the XOR swizzle.
  // A packed fp4 tile: a lane's per / 2 stored bytes (its k_of counts bytes); its fragment keeps the
  // one-a-byte form's slots (kv bytes an MFMA, the packed 16 first: what tl.fp4_pack leaves).
  const int64_t kstep = kmfma * pack, per = kv * pack;
  Buffer afrag = L.Scratch("A_frag", pa ? DataType::UInt(8) : at, mt * per, Scope::kLocal);
  Buffer bfrag = L.Scratch("B_frag", pb ? DataType::UInt(8) : bt, nt * per, Scope::kLocal);
  Var kk = MakeVar("kk"), i = MakeVar("i"), j = MakeVar("j"), v = MakeVar("v"), h = MakeVar("h");
  auto k_in = [&](int64_t s) { return Expr(kk) * C(kstep / s) + Div(lane, R) * C(per / s) + Expr(v); };
  Expr k_of = k_in(1), ka_of = k_in(sa), kb_of = k_in(sb);
  Expr m_of = wmi * C(wM) + Expr(i) * C(R) + Mod(lane, R);
  Expr n_of = wnj * C(wN) + Expr(j) * C(R) + Mod(lane, R);
  Expr a = g->trans_A ? at_tile(g->A, ad, as, k_of, m_of) : at_tile(g->A, ad, as, m_of, ka_of);
  Expr b = g->trans_B ? at_tile(g->B, bd, bs, n_of, kb_of) : at_tile(g->B, bd, bs, k_of, n_of);
  // A lane's `per` k values of A (stored M x K) or B (stored N x K) are consecutive in the LDS tile
  // (the swizzle moves whole 16-byte chunks): one 8- or 16-byte LDS read; otherwise element by element.
  auto operand = [&](const Buffer& frag, const Var& t, int64_t tiles, const Expr& x, bool contiguous,
                     const std::pair<Expr, Expr>& swapped, bool packed) {
    Stmt body;
    const int64_t bytes = per * frag->dtype.bytes(), kv_s = kv / 2;
    if (packed) {  // each MFMA's 32 values: 16 consecutive bytes of the row, into the first half of its slot
      std::vector<Stmt> chunks;
      for (int64_t h = 0; h < pack; ++h)
        chunks.push_back(Call0("tl.vector_load",
                               {Load(frag, {Simplify(Expr(t) * C(per) + C(h * kv))}),
                                Substitute(x, {{v.get(), C(h * kv_s)}}), C(kv_s), Bool(true)},
                               sp));
      body = Seq(chunks, sp);
    } else if (swapped.first) {
      // half-swapped staged tile: each 8-byte half from where its row put it, one ds_read_b64 each (rows
      // 0..15 of a 16-lane pass read the same logical half, which the layout spreads over both physical
      // halves: conflict-free, the LDS cycles of one conflict-free ds_read_b128, no register fix-up)
      auto* ld = As<BufferLoadNode>(x);
      TL_ICHECK(ld, "T.gemm on MFMA: a staged operand read is a load");
      Expr base = Simplify(Expr(t) * C(per)), chunk = Substitute(swapped.first, {{v.get(), C(0)}});
      Expr sw = Substitute(swapped.second, {{v.get(), C(0)}});
      std::vector<Stmt> halves;
      for (int64_t h = 0; h < 2; ++h) {
        Expr at = Simplify(chunk + (h ? C(1) - sw : sw) * C(per / 2));
        halves.push_back(Call0(
            "tl.vector_load",
            {Load(frag, {Simplify(base + C(h * per / 2))}), Load(ld->buffer, {at}), C(per / 2), Bool(true)},
            sp));
      }
      body = Seq(halves, sp);
    } else if (contiguous && (bytes == 8 || bytes == 16)) {
      body = Call0(
          "tl.vector_load",
          {Load(frag, {Simplify(Expr(t) * C(per))}), Substitute(x, {{v.get(), C(0)}}), C(per), Bool(true)},
          sp);
    } else if (contiguous && bytes % 16 == 0) {  // k-packed CDNA4 f16 / bf16, f8f6f4: whole 16-byte reads
      std::vector<Stmt> chunks;
      const int64_t n = bytes / 16, each = per / n;
      for (int64_t h = 0; h < n; ++h)
        chunks.push_back(Call0("tl.vector_load",
                               {Load(frag, {Simplify(Expr(t) * C(per) + C(h * each))}),
                                Substitute(x, {{v.get(), C(h * each)}}), C(each), Bool(true)},
                               sp));
      body = Seq(chunks, sp);
    } else
      body = For(v, C(0), C(per), ForKind::kUnrolled,
                 Store(frag, x, {Simplify(Expr(t) * C(per) + Expr(v))}, sp), {}, sp);
    return For(t, C(0), C(tiles), ForKind::kUnrolled, body, {}, sp);
  };
  std::vector<Stmt> step;
  const int64_t abytes = per / sa * at.bytes(), bbytes = per / sb * bt.bytes();
  // (a 32- or 64-byte read is whole chunks, except from a half-swapped staged tile: element by element there)
  auto hs = [&](const Region& r, const Buffer& staged, bool k_rows, int64_t bytes) {
    return bytes > 16 && staged && half_swapped(L.Layout(r.buffer.get()), r.buffer->dtype.bytes(), k_rows);
  };
  // (a K x M A / K x N B tile stored k contiguous, gpu/mfma_lds.cc: vector reads as for an M x K / N x K one)
  const bool a_kc = !g->trans_A || L.KTransposedTile(g->A.buffer.get());
  const bool b_kc = g->trans_B || L.KTransposedTile(g->B.buffer.get());
  step.push_back(operand(
      afrag, i, mt, a, a_kc && !hs(g->A, as, g->trans_A, abytes),
      g->trans_A ? std::pair<Expr, Expr>{} : swapped_chunk(g->A, ad, as, false, m_of, k_of, abytes), pa));
  step.push_back(operand(
      bfrag, j, nt, b, b_kc && !hs(g->B, bs, !g->trans_B, bbytes),
      g->trans_B ? swapped_chunk(g->B, bd, bs, false, n_of, k_of, bbytes) : std::pair<Expr, Expr>{}, pb));
  if (recode) {  // each lane's operand bytes, OCP -> FNUZ in place
    auto recode = [&](const Buffer& frag, const Var& t, int64_t tiles, DataType dt) {
      return For(t, C(0), C(tiles), ForKind::kUnrolled,
                 Call0("tl.fp8_to_fnuz",
                       {Load(frag, {Simplify(Expr(t) * C(per))}), C(per),
                        StringImm(dt.code() == DataType::Code::kFloat8E5M2 ? "e5m2" : "e4m3")},
                       sp),
                 {}, sp);
    };
    step.push_back(recode(afrag, i, mt, at));
    step.push_back(recode(bfrag, j, nt, bt));
  }
  // fp4 operands one a byte: each loaded 32-value chunk packed in place, two values a byte (the instruction's
  // register format), once per fragment rather than once per MFMA; interleaved (cheaper) when both operands
  // are fp4 packed so (a tile stored packed holds them in order)
  const bool both4 =
      at.code() == DataType::Code::kFloat4E2M1 && bt.code() == DataType::Code::kFloat4E2M1 && !pa && !pb;
  auto pack4 = [&](const Buffer& frag, const Var& t, int64_t tiles, DataType dt, bool packed) {
    if (dt.code() != DataType::Code::kFloat4E2M1 || packed) return;
    Var hh = MakeVar("hh");
    step.push_back(For(t, C(0), C(tiles), ForKind::kUnrolled,
                       For(hh, C(0), C(pack), ForKind::kUnrolled,
                           Call0("tl.fp4_pack",
                                 {Load(frag, {Simplify(Expr(t) * C(per) + Expr(hh) * C(kv))}), C(kv),
                                  StringImm(both4 ? "interleaved" : "ordered")},
                                 sp),
                           {}, sp),
                       {}, sp));
  };
  pack4(afrag, i, mt, at, pa);
  pack4(bfrag, j, nt, bt, pb);
  // fp6 operands: each 32-value chunk packed in place into 24 bytes (6 VGPRs), a contiguous 6-bit stream,
  // value v at bits 6v .. 6v + 5 (tl.fp6_pack; docs/hip.md says where this order comes from)
  auto pack6 = [&](const Buffer& frag, const Var& t, int64_t tiles, DataType dt) {
    if (dt.code() != DataType::Code::kFloat6E2M3 && dt.code() != DataType::Code::kFloat6E3M2) return;
    Var hh = MakeVar("hh");
    step.push_back(For(
        t, C(0), C(tiles), ForKind::kUnrolled,
        For(hh, C(0), C(pack), ForKind::kUnrolled,
            Call0("tl.fp6_pack", {Load(frag, {Simplify(Expr(t) * C(per) + Expr(hh) * C(kv))}), C(kv)}, sp),
            {}, sp),
        {}, sp));
  };
  pack6(afrag, i, mt, at);
  pack6(bfrag, j, nt, bt);
  // The transposed tile, D = B^T A^T: B's registers are the instruction's A operand (lane l: B[k][l % R] is
  // B^T[l % R][k]) and A's its B operand; lane l then holds C[l % R][4 (l / R) + v], columns in a row.
  const std::string swapped = fp8 ? f8name(bt) + "_" + f8name(at) : abname;
  std::vector<Expr> margs = {StringImm(shape), StringImm(swapped),
                             Load(bfrag, {Simplify(Expr(j) * C(per) + Expr(h) * C(kv))}),
                             Load(afrag, {Simplify(Expr(i) * C(per) + Expr(h) * C(kv))}),
                             Load(cl, {Simplify((Expr(i) * C(nt) + Expr(j)) * C(outs))})};
  if (bsg) {  // the scales of this lane's 32-value block: B's column n (the instruction's A), A's row m
    Expr k0 = Simplify(Expr(kk) * C(kstep) + Div(lane, R) * C(per) + Expr(h) * C(kv));
    auto scale = [&](const Region& sf, bool is_b, const Expr& row) {  // the op's addressing (ScaleAt)
      return Cast(
          DataType::Int(32),
          L.VisitExpr(GemmBlockScaledNode::ScaleBits(Load(sf.buffer, bsg->ScaleAt(is_b, row, k0).first))));
    };
    margs.push_back(scale(bsg->SFB, true, Expr(n_of)));
    margs.push_back(scale(bsg->SFA, false, Expr(m_of)));
  }
  Stmt mfma = Call0("tl.mfma", margs, sp);
  step.push_back(For(
      h, C(0), C(pack), ForKind::kUnrolled,
      For(i, C(0), C(mt), ForKind::kUnrolled, For(j, C(0), C(nt), ForKind::kUnrolled, mfma, {}, sp), {}, sp),
      {}, sp));
  // fp8: the MFMAs add a * b / 4 (FNUZ operands hold half the OCP values), so they run on C / 4.
  auto scale = [&](double f) {
    Var s = MakeVar("s");
    return For(s, C(0), C(CF.locals), ForKind::kUnrolled,
               Store(cl, Binary(BinaryOp::kMul, Load(cl, {s}), FloatImm(ct, f)), {s}, sp), {}, sp);
  };
  if (recode && !g->clear_accum) out.push_back(scale(0.25));
  out.push_back(For(kk, C(0), C(K / kstep), ForKind::kUnrolled, Seq(step, sp), {}, sp));
  if (recode) out.push_back(scale(4.0));
  return Seq(out, sp);
}

Stmt LowerReduceMfma(GpuTileLowerer& L, const ReduceNode* r) {
  const Fragment& S = L.Layout(r->src.buffer.get());
  DataType t = r->dst.buffer->dtype;
  Buffer src = L.MapBuffer(r->src.buffer), dst = L.MapBuffer(r->dst.buffer);
  Span sp = r->span;
  ReduceKind k = r->reduce_kind;
  int64_t M = S.params[0], N = S.params[1], wm = S.params[2], wn = S.params[3], R = S.params[4];
  int64_t wM = M / wm, mt = wM / R, nt = N / wn / R, outs = R * R / 64;
  // Lane l holds row l % R of each tile row: its registers (columns) in-lane, then the 64 / R lane groups
  // sharing the row (xor R, 2R within the wave), then the wn waves of the wave row through LDS.
  L.ctx_.info->choices.push_back(Loc(sp) + ": T.reduce of an MFMA accumulator: in-lane over " +
                               std::to_string(nt * outs) + " registers, " + (R == 16 ? "2" : "1") +
                               " xor shuffle" + (R == 16 ? "s" : "") + " across the lane groups" +
                               (wn > 1 ? ", then across " + std::to_string(wn) + " waves through LDS" : ""));
  Buffer part = L.Scratch("red", t, mt, Scope::kLocal);
  Buffer xs = wn > 1 ? L.Scratch("red_smem", t, wn * M, Scope::kShared) : nullptr;
  Expr wave = Div(L.tx_, 64), lane = Mod(L.tx_, 64);
  std::vector<Stmt> out;
  std::vector<std::pair<int64_t, Expr>> cross;
  for (int64_t ti = 0; ti < mt; ++ti) {
    Var q = MakeVar("q");
    Expr e = ReduceElement(k, Load(src, {Simplify(C(ti * nt * outs) + Expr(q))}), t);
    out.push_back(Store(part, ReduceIdentity(k, t), {C(ti)}, sp));
    out.push_back(For(q, C(0), C(nt * outs), ForKind::kUnrolled,
                      Store(part, ReduceCombine(k, Load(part, {C(ti)}), e), {C(ti)}, sp), {}, sp));
    for (int64_t m = R; m < 64; m *= 2)
      out.push_back(Store(
          part,
          ReduceCombine(k, Load(part, {C(ti)}), Call(t, "tl.shfl_xor", {Load(part, {C(ti)}), C(m), C(64)})),
          {C(ti)}, sp));
    if (xs) {
      Expr row = Simplify(Mod(wave, wm) * C(wM) + C(ti * R) + Mod(lane, R));
      out.push_back(If(Lt(lane, C(R)),
                       Store(xs, Load(part, {C(ti)}), {Simplify(Div(wave, wm) * C(M) + row)}, sp), nullptr,
                       sp));
      cross.push_back({ti, row});
    }
  }
  for (auto& [d, row] : cross) {  // (a barrier separates the LDS writes above from these reads)
    Var w = MakeVar("w");
    out.push_back(Store(part, ReduceIdentity(k, t), {C(d)}, sp));
    out.push_back(
        For(w, C(0), C(wn), ForKind::kUnrolled,
            Store(part, ReduceCombine(k, Load(part, {C(d)}), Load(xs, {Simplify(Expr(w) * C(M) + row)})),
                  {C(d)}, sp),
            {}, sp));
  }
  for (int64_t d = 0; d < mt; ++d) {
    Expr val = Load(part, {C(d)});
    out.push_back(Store(dst, r->clear ? val : ReduceCombine(k, Load(dst, {C(d)}), val), {C(d)}, sp));
  }
  return Seq(out, sp);
}

}  // namespace
}  // namespace gpu_lowering
}  // namespace tl
