// T.gemm on wgmma.mma_async (sm_90a); see hopper_wgmma.h. The operands are shared tiles in the
// layout of layout/hopper_layout.h (a 32B/64B/128B swizzle pattern per 8-row atom), which the
// matrix descriptors describe as one of the PTX ISA's canonical layouts:
//   K-major  (A stored [M, K], B stored [N, K]): 8-row groups SBO = 8 * swizzle bytes apart; the
//            k16 step is a byte offset inside the swizzle row (the start address is taken before
//            the swizzle, which the hardware applies to the address bits);
//   MN-major (A stored [K, M], B stored [K, N]): 8 k-rows of swizzle-width rows, k groups SBO =
//            8 * swizzle bytes apart, 128-byte panels along M/N LBO = rows * 128 bytes apart.
#include "transform/gpu/hopper_wgmma.h"

#include <tuple>

#include "ir/printer.h"

#include "layout/hopper_layout.h"
#include "op/hopper_ops.h"
#include "transform/gpu/tile_lowerer.h"
#include "transform/gpu_util.h"

namespace tl {

namespace {

bool FullTile(const Region& r, std::vector<int64_t>* shape) {
  if (r.buffer->shape.size() != 2 || r.ranges.size() != 2) return false;
  shape->clear();
  for (size_t d = 0; d < 2; ++d) {
    int64_t s, mn, ext;
    if (!AsConstInt(r.buffer->shape[d], &s) || !AsConstInt(r.ranges[d].min, &mn) ||
        !AsConstInt(r.ranges[d].extent, &ext) || mn != 0 || ext != s)
      return false;
    shape->push_back(s);
  }
  return true;
}

}  // namespace

bool WgmmaOperandOf(const Region& r, WgmmaOperand* o) {
  const size_t R = r.buffer->shape.size();
  if (R < 2 || r.ranges.size() != R) return false;
  o->rows = 1;
  for (size_t d = 0; d < R; ++d) {
    int64_t s = 0, e = 0;
    if (!AsConstInt(r.buffer->shape[d], &s) || !AsConstInt(Simplify(r.ranges[d].extent), &e)) return false;
    if (d + 2 < R) {
      if (e != 1) return false;  // one index of each leading dimension
      o->rows *= s;
      continue;
    }
    int64_t m = 0;
    Expr mn = Simplify(r.ranges[d].min);
    if (AsConstInt(mn, &m) && (m < 0 || m + e > s)) return false;
    (d + 2 == R ? o->row0 : o->col0) = mn;
    if (d + 2 == R) o->rows *= s;
    else o->cols = s;
  }
  int64_t er = 0, ec = 0;
  AsConstInt(Simplify(r.ranges[R - 2].extent), &er);
  AsConstInt(Simplify(r.ranges[R - 1].extent), &ec);
  o->shape = {er, ec};
  return true;
}

namespace {
// The MN extent of one instruction must stay inside one 128-byte panel or cover whole panels.
bool PanelsFit(int64_t start, int64_t extent, int64_t panel) {
  if (start % panel + extent <= panel) return true;
  return start % panel == 0 && extent % panel == 0;
}

}  // namespace

WgmmaPlan PlanWgmma(const GemmNode* g, const GpuFeatures& t, const GpuOptions& opt, int64_t threads,
                    const std::map<const BufferNode*, SharedLayout>* user) {
  WgmmaPlan p;
  auto no = [&](const std::string& why) {
    p.why = why;
    return p;
  };
  if (!t.wgmma) return no("wgmma needs sm_90a");
  if (opt.disable_wgmma) return no("the pass config tl.disable_wgmma is set");
  for (const Region* r : {&g->A, &g->B})
    if (user && user->count(r->buffer.get()))
      return no("operand '" + r->buffer->name +
                "' has a layout from T.annotate_layout; wgmma reads only its canonical swizzled layouts");
  if (g->B.buffer->scope != Scope::kShared) return no("wgmma reads B from shared memory (B is in registers)");
  const bool a_reg = g->A.buffer->scope == Scope::kFragment;
  if (a_reg && g->trans_A) return no("A in registers cannot be transposed");
  DataType at = g->A.buffer->dtype, bt = g->B.buffer->dtype;
  bool f16 = at == DataType::Float(16) && bt == DataType::Float(16);
  bool b16 = at == DataType::BFloat16() && bt == DataType::BFloat16();
  const bool fp8 = gpu_pass::IsFp8(at) && gpu_pass::IsFp8(bt);
  auto int8 = [](DataType t) { return (t.is_int() || t.is_uint()) && t.bits() == 8; };
  const bool i8 = int8(at) && int8(bt);
  if (i8 && g->C.buffer->dtype != DataType::Int(32))
    return no("wgmma is used for 8-bit integer inputs with an int32 accumulator");
  if ((!f16 && !b16 && !fp8 && !i8) || (!i8 && g->C.buffer->dtype != DataType::Float(32)))
    return no("wgmma is used for float16/bfloat16/fp8 inputs with a float32 accumulator and for int8/uint8 "
              "inputs with an int32 one");
  // 8-bit inputs (m64nNk32: fp8 .e4m3/.e5m2 into f32, int8 .s8/.u8 into s32): the PTX ISA has no transpose
  // for 8-bit operands, so both are read K-major; an operand stored MN-major is copied into a K-major shared
  // tile first (WgmmaPlan::stage_a / stage_b), which the next call may overwrite only once this call's wgmmas
  // completed.
  const bool f8 = fp8 || i8;
  p.stage_a = f8 && g->trans_A;
  p.stage_b = f8 && !g->trans_B;
  if ((p.stage_a || p.stage_b) && g->wg_wait != 0)
    return no(
        "an fp8 operand stored MN-major is transposed into a K-major tile on every call, which needs the "
        "gemm to wait for its wgmmas (wg_wait=0)");
  const int eb = f8 ? 1 : 2;
  p.kstep = f8 ? 32 : 16;
  std::vector<int64_t> as, bs, cs;
  WgmmaOperand oa, ob;
  if (!FullTile(g->C, &cs)) return no("wgmma needs the whole accumulator fragment");
  if (a_reg ? !FullTile(g->A, &as) : !WgmmaOperandOf(g->A, &oa))
    return no("operand A is not a 2-D tile of a buffer with a constant corner (one index of its leading dimensions)");
  if (!WgmmaOperandOf(g->B, &ob))
    return no("operand B is not a 2-D tile of a buffer with a constant corner (one index of its leading dimensions)");
  if (!a_reg) as = oa.shape;
  bs = ob.shape;
  // A tile of a larger buffer is read in the buffer's layout: its swizzle mode, its corner on a whole 8-row
  // swizzle atom, its K-major rows from a 32-byte chunk (the instruction's K step)
  const bool sliced_a = !a_reg && (oa.rows != as[0] || oa.cols != as[1]);
  const bool sliced_b = ob.rows != bs[0] || ob.cols != bs[1];
  if ((sliced_a && p.stage_a) || (sliced_b && p.stage_b))
    return no("an fp8 operand stored MN-major is transposed from a whole tile only, not a part of a buffer");
  int64_t col0_b = 0;  // B's first column where B is MN-major (constant: PanelsFit)
  for (auto [o, sliced, k_major] : {std::make_tuple(&oa, sliced_a, !g->trans_A), std::make_tuple(&ob, sliced_b, g->trans_B)}) {
    if (!sliced) continue;
    if (!HopperSwizzleBytes(o->rows, o->cols, eb)) return no("a sliced operand's buffer has no wgmma swizzle mode");
    if (!IsConstInt(Simplify(gpu_pass::Mod(o->row0, 8)), 0))
      return no("a sliced operand starts at row " + PrintExpr(o->row0) + ", not a multiple of 8");
    if (k_major && !IsConstInt(Simplify(gpu_pass::Mod(o->col0, 32 / eb)), 0))
      return no("a sliced K-major operand starts inside a 32-byte chunk of its rows");
    if (!k_major && (!AsConstInt(o->col0, &col0_b) ||
                     (HopperSwizzleBytes(o->rows, o->cols, eb) < 128 && o->cols != o->shape[1])))
      return no("a sliced MN-major operand must start at a constant column and, narrower than the 128-byte "
                "swizzle, span its buffer's rows");
  }
  p.M = cs[0];
  p.N = cs[1];
  p.K = g->trans_A ? as[0] : as[1];
  if (p.stage_a) std::swap(as[0], as[1]);  // the K-major copies are [M, K] / [N, K]
  if (p.stage_b) std::swap(bs[0], bs[1]);
  const bool b_mn = !g->trans_B && !p.stage_b;
  if (p.K % p.kstep)
    return no("K = " + std::to_string(p.K) + " is not a multiple of " + std::to_string(p.kstep));
  if (threads % 128) return no("the block is not a whole number of warp groups (128 threads)");
  if ((!a_reg && !HopperSwizzleBytes(as[0], as[1], eb)) || !HopperSwizzleBytes(bs[0], bs[1], eb))
    return no(
        "a shared operand's rows are not 32, 64 or a multiple of 128 bytes (or its row count is not a "
        "multiple of 8), so no wgmma swizzle mode describes it");
  int64_t W = threads / 128;
  int64_t panelB = 128 / eb;
  auto try_split = [&](int64_t wgm) {
    if (W % wgm || p.M % (64 * wgm)) return false;
    int64_t wgn = W / wgm, wN = p.N / wgn;
    if (p.N % (8 * wgn) || (a_reg && wgn != 1)) return false;  // A in registers: whole rows per warp group
    int64_t ni = wN;
    while (ni > 256 || wN % ni || ni % 8) --ni;
    if (b_mn) {  // B is MN-major: each instruction's columns must fit the panels (of B's buffer)
      int64_t pw = HopperSwizzleBytes(ob.rows, ob.cols, eb) / eb;
      if (pw < panelB && ob.cols != pw) return false;
      for (int64_t b = 0; b < wgn; ++b)
        for (int64_t c = 0; c < wN / ni; ++c)
          if (!PanelsFit(col0_b + b * wN + c * ni, ni, pw)) return false;
    }
    p.wgm = wgm;
    p.wgn = wgn;
    p.n_inst = ni;
    return true;
  };
  bool found = false;
  if (g->policy == GemmWarpPolicy::kFullCol) {
    for (int64_t wgm = 1; wgm <= W && !found; ++wgm) found = try_split(wgm);
  } else {
    for (int64_t wgm = W; wgm >= 1 && !found; --wgm) found = try_split(wgm);
  }
  if (!found && a_reg)
    return no("with A in registers every warp group needs whole rows: the " + std::to_string(p.M) +
              "-row tile must split over " + std::to_string(W) + " warp group(s) in m64 rows");
  if (!found)
    return no("the " + std::to_string(p.M) + "x" + std::to_string(p.N) +
              " accumulator cannot be split over " + std::to_string(W) +
              " warp group(s) in m64 rows and whole 128-byte panels of B");
  p.ok = true;
  return p;
}

bool IsClusterOp(const std::string& op) {
  return op.rfind("tl.clc_", 0) == 0 || op == "tl.st_cluster" || op == "tl.cluster_ctarank" ||
         op == "tl.cluster_sync" || op == "tl.cluster_arrive" || op == "tl.cluster_arrive_relaxed" ||
         op == "tl.cluster_wait" || op == "tl.mbarrier_arrive_cluster";
}

std::string ClusterOpName(const std::string& op) {
  if (op == "tl.cluster_ctarank") return "T.block_rank_in_cluster";
  if (op == "tl.mbarrier_arrive_cluster") return "T.mbarrier_arrive(bar, cta_id)";
  if (op == "tl.st_cluster") return "T.copy_cluster(..., dst_block=)";
  if (op.rfind("tl.clc_", 0) == 0) return "T." + op.substr(3) + " (cluster launch control)";
  return "T." + op.substr(3);
}

void CheckHopperCall(const Expr& e, const GpuFeatures& t, const Span& sp) {
  auto* c = As<CallNode>(e);
  if (!c) return;
  if (c->op == "tl.set_max_nreg" && !t.setmaxnreg)
    throw UserError(ErrorKind::kUnsupported,
                    "T.set_max_nreg (setmaxnreg) needs sm_90a or an sm_100a / sm_120a-class target; the target is " + t.label, sp);
  if (c->op.rfind("tl.mbarrier_", 0) != 0 && c->op != "tl.fence_proxy_async") return;
  std::string name = c->op == "tl.fence_proxy_async"                ? "T.fence_proxy_async"
                     : c->op == "tl.mbarrier_cp_async_arrive_noinc" ? "T.cp_async_barrier_noinc"
                                                                    : "T." + c->op.substr(3);
  if (!t.tma)
    throw UserError(
        ErrorKind::kUnsupported,
        name + " (mbarriers, async proxy) needs a Hopper target (sm_90 / sm_90a); the target is " + t.label,
        sp);
}

namespace gpu_lowering {

using namespace gpu_pass;

OperandDesc DescOf(const std::vector<int64_t>& shape, bool mn_major, int eb) {
  int64_t sw = HopperSwizzleBytes(shape[0], shape[1], eb);
  OperandDesc d;
  d.mode = sw == 128 ? 1 : sw == 64 ? 2 : 3;
  d.sbo = 8 * sw;
  d.lbo = mn_major ? shape[0] * 128 : 16;  // K-major swizzled layouts do not use LBO
  return d;
}

Expr OperandDescriptor(GpuTileLowerer& L, const Region& r, const WgmmaOperand& o, const Expr& row, const Expr& col,
                       const OperandDesc& d, bool per_wg, int eb, const std::string& op, int64_t mode) {
  Buffer mb = L.MapBuffer(r.buffer);
  std::vector<Expr> at;  // the element at (row, col) of the tile: one index of each leading dimension, then
  for (size_t q = 0; q + 2 < r.ranges.size(); ++q) at.push_back(L.VisitExpr(r.ranges[q].min));
  at.push_back(Simplify(row + L.VisitExpr(o.row0)));
  at.push_back(Simplify(col + L.VisitExpr(o.col0)));
  Expr idx = L.SharedIndex(r.buffer, at);
  Expr bytes = Simplify(idx * C(eb));
  if (!IsConstInt(Simplify(Mod(bytes, 16)), 0))
    return Call(DataType::UInt(64), op, {Load(mb, {idx}), C(d.lbo), C(d.sbo), C(mode)});
  Expr base = Call(DataType::UInt(64), op, {Load(mb, {C(0)}), C(d.lbo), C(d.sbo), C(mode)});
  return Call(DataType::UInt(64), "tl.wgmma_desc_add",
              {base, Cast(DataType::UInt(32), Simplify(Div(bytes, 16))), C(per_wg ? 1 : 0)});
}

Stmt LowerGemmWgmma(GpuTileLowerer& L, const GemmNode* g) {
  WgmmaPlan p = PlanWgmma(g, L.ctx_.features, L.ctx_.opt, L.T_, &L.user_shared_);
  const Fragment& CF = L.Layout(g->C.buffer.get());
  TL_ICHECK(p.ok && IsWgmmaLayout(CF) && CF.params[2] == 4 * p.wgm && CF.params[3] == p.wgn,
            "the wgmma accumulator layout of '", g->C.buffer->name, "' does not match the gemm's plan");
  Span sp = g->span;
  const bool i8 = g->C.buffer->dtype == DataType::Int(32);
  const std::string ab = MmaAbName(g->A.buffer->dtype, g->B.buffer->dtype, /*int8_pairs=*/true);
  const int eb = g->A.buffer->dtype.bytes();
  const bool a_reg = g->A.buffer->scope == Scope::kFragment;
  std::vector<Stmt> out;
  // fp8 operands stored MN-major are first copied into K-major tiles (the PTX ISA has no 8-bit transpose).
  Region Ar = g->A, Br = g->B;
  if (p.stage_a) Ar = L.KMajorCopy(g->A, {0, 1}, p.M, p.K, "A_kmajor", sp, &out);
  if (p.stage_b) Br = L.KMajorCopy(g->B, {0, 1}, p.N, p.K, "B_kmajor", sp, &out);
  if (p.stage_a || p.stage_b)
    L.ctx_.info->warnings.push_back(
        Loc(sp) + ": 8-bit T.gemm operand " +
        (p.stage_a ? (p.stage_b ? "A [K, M] and B [K, N]" : "A [K, M]") : "B [K, N]") +
        " is transposed through shared memory on every call (wgmma reads 8-bit operands K-major only): "
        "store A as [M, K] and B as [N, K] (transpose_B=True) for full speed");
  // The operands' tiles in their buffers' layouts (WgmmaOperandOf; the fp8 K-major copies are whole tiles).
  WgmmaOperand oa, ob;
  if (!a_reg) TL_ICHECK(WgmmaOperandOf(Ar, &oa), "wgmma operand A is not a tile");
  TL_ICHECK(WgmmaOperandOf(Br, &ob), "wgmma operand B is not a tile");
  std::vector<int64_t> as = {oa.rows, oa.cols}, bs = {ob.rows, ob.cols};
  // MN-major operands: A stored [K, M] (transpose_A), B stored [K, N] (not transpose_B).
  bool a_mn = g->trans_A && !p.stage_a, b_mn = !g->trans_B && !p.stage_b;
  OperandDesc da = a_reg ? OperandDesc() : DescOf(as, a_mn, eb), db = DescOf(bs, b_mn, eb);
  int64_t wN = p.N / p.wgn, nt = wN / 8, mi = p.M / (64 * p.wgm), nc = wN / p.n_inst;
  std::string shape = "m64n" + std::to_string(p.n_inst) + "k" + std::to_string(p.kstep);
  L.ctx_.info->choices.push_back(
      Loc(sp) + ": T.gemm: wgmma.mma_async " + shape + " " + ab + ", warp groups " + std::to_string(p.wgm) +
      "x" + std::to_string(p.wgn) + ", " + std::to_string(mi * nc) + " instructions per warp group per k" +
      std::to_string(p.kstep) + " step; A " +
      (a_reg ? std::string("in registers")
             : std::string(a_mn ? "MN" : "K") + "-major (swizzle " +
                   std::to_string(HopperSwizzleBytes(as[0], as[1], eb)) + "B)") +
      ", B " + (b_mn ? "MN" : "K") + "-major (swizzle " +
      std::to_string(HopperSwizzleBytes(bs[0], bs[1], eb)) + "B) from shared memory");
  Expr warp = Div(L.tx_, 32);
  // The gemm's threads are its wgm x wgn warp groups, so a split of one warp group along M or N has index
  // 0 there (a constant keeps the descriptors free of the thread index).
  Expr wga = p.wgm == 1 ? C(0) : Mod(Div(warp, 4), p.wgm), wgb = p.wgn == 1 ? C(0) : Div(warp, 4 * p.wgm);
  Buffer cl = L.MapBuffer(g->C.buffer);
  if (g->clear_accum) {
    Var i = MakeVar("i");
    Expr zero = i8 ? IntImm(DataType::Int(32), 0) : FloatImm(DataType::Float(32), 0.0);
    out.push_back(For(i, C(0), C(CF.locals), ForKind::kUnrolled, Store(cl, zero, {i}, sp), {}, sp));
  }
  // A descriptor is the tile's base descriptor plus the operand's byte offset / 16 in its start-address
  // field (bits 0-13: tl.wgmma_desc_add): the base is loop-invariant (built
  // once, outside the main loop), and each instruction adds a stage term and a constant. The sum never
  // carries out of the field, as shared addresses are below 2^18 (the emulator checks it). Where the
  // offset is not provably a multiple of 16 bytes, the descriptor is built whole.
  auto desc = [&](const Region& r, const WgmmaOperand& o, const Expr& row, const Expr& col, const OperandDesc& d,
                  bool per_wg) { return OperandDescriptor(L, r, o, row, col, d, per_wg, eb, "tl.wgmma_desc", d.mode); };
  Var kk = MakeVar("kk"), i = MakeVar("i"), c = MakeVar("c");
  Expr m0 = Expr(i) * C(64 * p.wgm) + wga * C(64);
  Expr n0 = wgb * C(wN) + Expr(c) * C(p.n_inst);
  Expr k0 = Expr(kk) * C(p.kstep);
  // A's offset depends on the warp group where the gemm splits M over several, B's where it splits N.
  Expr dB = b_mn ? desc(Br, ob, k0, n0, db, p.wgn > 1) : desc(Br, ob, n0, k0, db, p.wgn > 1);
  Expr acc = Load(cl, {Simplify((Expr(i) * C(nt) + Expr(c) * C(p.n_inst / 8)) * C(4))});
  Stmt mma;
  if (a_reg) {
    // A's fragment (WgmmaAccumulator(M, K), or its byte split for 8-bit types): per m16 tile i and k step kk,
    // 16 consecutive bytes (8 16-bit or 16 8-bit elements) in the order of the ISA's A-fragment figure, as
    // for mma.sync.
    const Fragment& AF = L.Layout(g->A.buffer.get());
    const bool split = AF.kind == "mma_C8";
    TL_ICHECK((IsWgmmaLayout(AF) || (split && AF.params.size() > 4 && AF.params[4] == 1)) && split == (eb == 1) &&
                  AF.params[2] == 4 * p.wgm && AF.params[3] == 1,
              "the register operand A '", g->A.buffer->name, "' does not have the wgmma A layout");
    Expr a = Load(L.MapBuffer(g->A.buffer),
                  {Simplify((Expr(i) * C(p.K / p.kstep) + Expr(kk)) * C(16 / eb))});
    mma = Call0("tl.wgmma_rs", {StringImm(shape), StringImm(ab), a, dB, acc, C(1), C(b_mn ? 1 : 0)}, sp);
  } else {
    Expr dA = a_mn ? desc(Ar, oa, k0, m0, da, p.wgm > 1) : desc(Ar, oa, m0, k0, da, p.wgm > 1);
    mma = Call0("tl.wgmma",
                {StringImm(shape), StringImm(ab), dA, dB, acc, C(1), C(a_mn ? 1 : 0), C(b_mn ? 1 : 0)}, sp);
  }
  // wgmma reads its operands through the async proxy: where they were written through the generic
  // proxy (cp.async, st.shared) a fence.proxy.async comes first, not where only TMA wrote them
  // (ElideWgmmaProxyFences decides once shared memory is planned).
  if (!L.ctx_.opt.skip_fence_proxy) {
    std::vector<Expr> tiles;
    if (!a_reg) tiles.push_back(Load(L.MapBuffer(Ar.buffer), {C(0)}));
    tiles.push_back(Load(L.MapBuffer(Br.buffer), {C(0)}));
    out.push_back(Call0("tl.wgmma_operand_fence", tiles, sp));
  }
  out.push_back(Call0("tl.wgmma_fence", {}, sp));
  out.push_back(For(
      kk, C(0), C(p.K / p.kstep), ForKind::kUnrolled,
      For(i, C(0), C(mi), ForKind::kUnrolled, For(c, C(0), C(nc), ForKind::kUnrolled, mma, {}, sp), {}, sp),
      {}, sp));
  out.push_back(Call0("tl.wgmma_commit", {}, sp));
  // A warp-specialised GEMM pipeline keeps this iteration's group in flight (gpu/warp_specialize.cc).
  const int wg_wait = g == L.ws_relaxed_gemm_ ? 1 : g->wg_wait;
  if (wg_wait >= 0) out.push_back(Call0("tl.wgmma_wait", {C(wg_wait)}, sp));
  return Seq(out, sp);
}

void NoteNoWgmma(GpuTileLowerer& L, const GemmNode* g) {
  WgmmaPlan p = PlanWgmma(g, L.ctx_.features, L.ctx_.opt, L.T_, &L.user_shared_);
  std::string why = p.ok ? "its accumulator's layout was fixed by another operation" : p.why;
  if (g->require_wgmma)
    throw UserError(ErrorKind::kUnsupported,
                    "T.wgmma_gemm cannot use wgmma on " + L.ctx_.features.arch + ": " + why +
                        "; use T.gemm to let the compiler pick the instruction",
                    g->span);
  // no warning where wgmma is not there to use, or where the user turned it off
  if (!L.ctx_.features.wgmma || L.ctx_.opt.disable_wgmma) return;
  L.ctx_.info->warnings.push_back(Loc(g->span) + ": T.gemm uses mma.sync, not wgmma: " + why);
}

namespace {
// T.wait_wgmma(n): wgmma.wait_group n on sm_90a; elsewhere the gemm is synchronous and nothing waits.
const GpuOpLoweringRegistrar kWaitWgmma("wait_wgmma", [](GpuTileLowerer& L, const TileOpNode& n) -> Stmt {
  if (!L.ctx_.features.wgmma) return Seq({}, n.span);
  return Call0("tl.wgmma_wait", {C(static_cast<const WaitWgmmaNode&>(n).n)}, n.span);
});
}  // namespace

}  // namespace gpu_lowering

Stmt DropWgmmaWaitsWithoutWgmma(const Stmt& body) {
  bool wgmma = false;
  PostOrderVisitStmt(body, [&](const Stmt& st) {
    auto* ev = As<EvaluateNode>(st);
    auto* c = ev ? As<CallNode>(ev->value) : nullptr;
    if (c && (c->op == "tl.wgmma" || c->op == "tl.wgmma_rs")) wgmma = true;
  });
  if (wgmma) return body;
  struct Drop : IRMutator {
    Stmt VisitStmt(const Stmt& st) override {
      auto* ev = As<EvaluateNode>(st);
      auto* c = ev ? As<CallNode>(ev->value) : nullptr;
      if (c && c->op == "tl.wgmma_wait") return Seq({}, st->span);
      return IRMutator::VisitStmt(st);
    }
  };
  return Drop().VisitStmt(body);
}

}  // namespace tl
