// LowerTileOpsGPU, Metal's T.gemm (registered for the "metal" kind) on simdgroup_matrix 8x8 tiles (the matrix
// unit MatrixUnit::kSimdgroupMatrix of src/target/metal/target.cc's GpuFeatures).
//
// The Metal Shading Language specification does not say which thread of a SIMD-group holds which
// element of a simdgroup_matrix, so the compiler never touches matrix elements: matrices are only
// loaded from and stored to threadgroup memory (simdgroup_load / simdgroup_store) and combined by
// simdgroup_multiply_accumulate. The accumulator fragment keeps the mma_C layout the shared layout
// inference gives every gemm accumulator (so reductions and T.Parallel nests over it lower as on
// CUDA); a gemm moves it into simdgroup matrices and back through per-SIMD-group 8x8 staging
// tiles in threadgroup memory (docs/metal.md). Requires unswizzled shared tiles (`swizzle` off).
//
// In the IR a simdgroup matrix is a local buffer of 2 elements per matrix (64 elements over the 32
// lanes); its elements are only named as the first element of a matrix, `M[2 * t]`, in the calls
//   tl.simdgroup_load(M[2t], src[origin], elements_per_row, transpose)
//   tl.simdgroup_store(dst[origin], M[2t], elements_per_row, transpose)
//   tl.simdgroup_mma(D[2t], A[2i], B[2j], C[2t])        D = A * B + C
// which the code generator prints as simdgroup_matrix objects and the emulator executes from the
// MSL specification (src/emulator/intrinsics_metal.cc).
#include <algorithm>

#include "arith/simplify.h"
#include "transform/gpu/tile_lowerer.h"
#include "transform/gpu_util.h"

namespace tl {
namespace gpu_lowering {

using namespace gpu_pass;

namespace {
Stmt LowerGemmSimdgroup(GpuTileLowerer& L, const GemmNode* g);

const GpuOpLoweringRegistrar kGemm(
    "gemm",
    [](GpuTileLowerer& L, const TileOpNode& n) {
      return LowerGemmSimdgroup(L, static_cast<const GemmNode*>(&n));
    },
    "metal");

Stmt LowerGemmSimdgroup(GpuTileLowerer& L, const GemmNode* g) {
  const Fragment& CF = L.Layout(g->C.buffer.get());
  Span sp = g->span;
  DataType at = g->A.buffer->dtype, bt = g->B.buffer->dtype, ct = g->C.buffer->dtype;
  const bool metal4 = L.ctx_.features.cooperative_tensors;
  bool ok_ab =
      at == bt && (at == DataType::Float(16) || at == DataType::Float(32) || at == DataType::BFloat16());
  // Metal 4's matmul2d also takes int8 x int8 with an int32 accumulator (the API's type table).
  const bool int8 = at == DataType::Int(8) && bt == at && ct == DataType::Int(32);
  if (!(ok_ab && ct == DataType::Float(32)) && !(metal4 && int8))
    throw UserError(
        ErrorKind::kUnsupported,
        std::string(metal4 ? "T.gemm on Metal 4 (matmul2d) takes A and B of one dtype among float16, "
                             "bfloat16 and float32 with a float32 accumulator, or int8 with an int32 "
                             "accumulator"
                           : "T.gemm on Metal (simdgroup_matrix 8x8) takes A and B of one dtype among "
                             "float16, bfloat16 and float32, with a float32 accumulator (int8 needs "
                             "Metal 4: -mattr=+metal4)") +
            "; got A " + at.str() + ", B " + bt.str() + ", C " + ct.str(),
        sp);
  TL_ICHECK(CF.kind == "mma_C", "a Metal gemm accumulator must have the mma_C layout, got " + CF.desc);
  GemmTiles gt = GemmTilesOf(g, sp);
  auto ad = gt.ad, bd = gt.bd;
  const int64_t K = gt.K;
  if (K % 8)
    throw UserError(ErrorKind::kLayout,
                    "T.gemm on Metal needs K to be a multiple of 8 (simdgroup_matrix 8x8 tiles); K = " +
                        std::to_string(K),
                    sp);
  int64_t M = CF.params[0], N = CF.params[1], wm = CF.params[2], wn = CF.params[3];
  int64_t wM = M / wm, wN = N / wn, mt = wM / 8, nt = wN / 8, warps = wm * wn;
  Expr warp = Div(L.tx_, 32), lane = Mod(L.tx_, 32);
  Expr wmi = Mod(warp, wm), wnj = Div(warp, wm);
  Buffer cl = L.MapBuffer(g->C.buffer);
  std::vector<Stmt> out;
  if (g->clear_accum) {
    Var i = MakeVar("i");
    out.push_back(
        For(i, C(0), C(CF.locals), ForKind::kUnrolled, Store(cl, FloatImm(ct, 0.0), {i}, sp), {}, sp));
  }

  // An operand in registers: its owners write it to a threadgroup tile of the fragment's full shape.
  struct Src {
    Buffer buf;                                        // shared buffer (mapped) the matrices are loaded from
    std::function<Expr(const Expr&, const Expr&)> at;  // (stored row, stored col) -> element load
    int64_t stride = 0;                                // elements per stored row
  };
  auto stage = [&](const Region& r, const std::string& base) -> Src {
    const Fragment& F = L.Layout(r.buffer.get());
    TL_ICHECK(F.shape.size() == 2, "a register gemm operand must be 2-D");
    Buffer st = L.Scratch(base, r.buffer->dtype, F.shape[0] * F.shape[1], Scope::kShared);
    Buffer regs = L.MapBuffer(r.buffer);
    std::vector<Stmt> w;
    for (int64_t l = 0; l < F.locals; ++l) {
      auto idx = F.IndexAt(L.tx_, C(l));
      Stmt s1 = Store(st, Load(regs, {C(l)}), {Simplify(idx[0] * C(F.shape[1]) + idx[1])}, sp);
      Expr ok = F.ValidAt(L.tx_, C(l));
      if (F.replicas > 1) ok = And(ok, Eq(F.ReplicaOf(L.tx_), C(0)));
      w.push_back(ok ? If(ok, s1, nullptr, sp) : s1);
    }
    // the fragment covers the tile: the stage is written whole before the MMAs read it (PlanSharedMemory may
    // give its bytes to another buffer outside this gemm)
    out.push_back(AttrStmt(st, "tl.shared_overwrite", C(1), Seq(w, sp), sp));
    Expr r0 = L.VisitExpr(r.ranges[0].min), c0 = L.VisitExpr(r.ranges[1].min);
    int64_t cols = F.shape[1];
    return {st,
            [st, r0, c0, cols](const Expr& row, const Expr& col) {
              return Load(st, {Simplify((r0 + row) * C(cols) + c0 + col)});
            },
            cols};
  };
  auto shared = [&](const Region& r, const std::vector<size_t>& dims) -> Src {
    if (L.user_shared_.count(r.buffer.get()))
      throw UserError(ErrorKind::kUnsupported,
                      "T.gemm on Metal reads operand tiles with simdgroup_load, which needs plain rows; '" +
                          r.buffer->name +
                          "' has a layout from T.annotate_layout (supported on CUDA and HIP)",
                      sp);
    if (dims[1] + 1 != r.ranges.size())
      throw UserError(
          ErrorKind::kUnsupported,
          "T.gemm on Metal loads operand tiles whose columns are the last axis of '" + r.buffer->name + "'",
          sp);
    int64_t stride = 1;
    for (size_t d = dims[0] + 1; d < r.buffer->shape.size(); ++d)
      stride *= ConstOr(r.buffer->shape[d], sp, "a shared buffer's shape");
    Region reg = r;
    return {L.MapBuffer(r.buffer),
            [&L, reg, dims](const Expr& row, const Expr& col) {
              std::vector<Expr> idx;
              for (auto& rg : reg.ranges) idx.push_back(L.VisitExpr(rg.min));
              idx[dims[0]] = Simplify(idx[dims[0]] + row);
              idx[dims[1]] = Simplify(idx[dims[1]] + col);
              return Load(L.MapBuffer(reg.buffer), {L.SharedIndex(reg.buffer, idx)});
            },
            stride};
  };
  Src A = g->A.buffer->scope == Scope::kFragment ? stage(g->A, "A_stage") : shared(g->A, ad);
  Src B = g->B.buffer->scope == Scope::kFragment ? stage(g->B, "B_stage") : shared(g->B, bd);
  Expr g8 = Div(lane, 4), tg = Mod(lane, 4);
  // 8x8 tile (i, j) of this SIMD-group: rows i*8.. of its wM, cols j*8.. of its wN. In the mma_C
  // layout a lane holds (row lane/4, cols 2*(lane%4) + {0, 1}) of it, registers
  // ((i/2) * nt + j) * 4 + (i%2) * 2 + {0, 1}.
  auto reg8 = [&](int64_t i, int64_t j, int64_t c) { return C(((i / 2) * nt + j) * 4 + (i % 2) * 2 + c); };

  if (metal4) {
    // (the warp partition gives every SIMD-group a multiple of 16 rows and 8 columns: each gemm Metal takes)
    TL_ICHECK(wM % 16 == 0 && wN % 8 == 0, "a Metal 4 gemm with " + std::to_string(wM) + "x" +
                                               std::to_string(wN) + " accumulator elements per SIMD-group");
    // ---- Metal 4: matmul2d on cooperative tensors ------------------------------------------------------
    // Per SIMD-group, the accumulator is split into tm x tn destination cooperative tensors of a
    // matmul2d(tm, tn, kc) descriptor run by one SIMD-group (execution_simdgroup); each K step loads the
    // SIMD-group's rows of A into tm x kc left-operand cooperative tensors and runs the operation with B's
    // kc x tn tile of threadgroup memory as the right operand. Cooperative tensors are opaque (which thread
    // holds which element is not specified), so the accumulator moves between its registers and them through
    // threadgroup staging tiles, as for simdgroup matrices, and the same passes move those transfers out of
    // a K loop that does not touch the accumulator, and A's loads out of a loop that does not change A.
    const int64_t tm = 16;
    // staging budget 8 KB: whole tn x tm tiles, one per SIMD-group at least
    int64_t tn = 8;
    for (int64_t c : {32, 16})
      if (wN % c == 0 && tm * c * 4 * warps <= 8192) {
        tn = c;
        break;
      }
    const int64_t kc = K % 16 == 0 ? 16 : 8;
    const int64_t pm = wM / tm, pn = wN / tn, tiles = pm * pn;
    const int64_t EC = tm * tn / 32, EA = tm * kc / 32;  // elements a lane holds of each cooperative tensor
    const int64_t slots = std::max<int64_t>(1, std::min<int64_t>(tiles, 8192 / (tm * tn * 4 * warps)));
    L.ctx_.info->choices.push_back(
        Loc(sp) + ": T.gemm: Metal 4 matmul2d(" + std::to_string(tm) + ", " + std::to_string(tn) + ", " +
        std::to_string(kc) + ") on cooperative tensors, " + at.str() + " -> " + ct.str() + ", SIMD-groups " +
        std::to_string(wm) + "x" + std::to_string(wn) + ", " + std::to_string(wM) + "x" + std::to_string(wN) +
        " per SIMD-group (" + std::to_string(tiles) +
        " destination cooperative tensors staged through threadgroup memory, " + std::to_string(slots) +
        " at a time)");
    Buffer cc = L.Scratch("C_coop", ct, EC * tiles, Scope::kLocal);
    Buffer ac = L.Scratch("A_coop", at, EA * pm, Scope::kLocal);
    Buffer cs = L.Scratch("C_stage", ct, tm * tn * slots * warps, Scope::kShared);
    auto desc = [&](std::vector<Expr> args) {
      for (int64_t v : {tm, tn, kc, int64_t(g->trans_A), int64_t(g->trans_B)}) args.push_back(C(v));
      return args;
    };
    auto slot = [&](int64_t q) { return Simplify(warp * C(tm * tn * slots) + C(tm * tn * q)); };
    // The stage element of this lane's register c of 8x8 tile (a, b) inside cooperative tile t's slot q.
    auto at_stage = [&](int64_t q, int64_t a, int64_t b, int64_t c) {
      return Simplify(slot(q) + (C(a * 8) + g8) * C(tn) + C(b * 8 + c) + tg * C(2));
    };
    auto each = [&](int64_t t, const std::function<void(int64_t, int64_t, int64_t, Expr)>& fn) {
      int64_t p = t / pn, q = t % pn;
      for (int64_t a = 0; a < tm / 8; ++a)
        for (int64_t b = 0; b < tn / 8; ++b)
          for (int64_t c = 0; c < 2; ++c) fn(a, b, c, reg8(p * (tm / 8) + a, q * (tn / 8) + b, c));
    };
    std::vector<Stmt> in, back;
    for (int64_t t0 = 0; t0 < tiles; t0 += slots) {
      const int64_t t1 = std::min(tiles, t0 + slots);
      for (int64_t t = t0; t < t1; ++t)
        each(t, [&](int64_t a, int64_t b, int64_t c, Expr r) {
          in.push_back(Store(cs, Load(cl, {r}), {at_stage(t - t0, a, b, c)}, sp));
        });
      for (int64_t t = t0; t < t1; ++t)
        in.push_back(
            Call0("tl.coop_load", desc({Load(cc, {C(EC * t)}), Load(cs, {slot(t - t0)}), C(tn), C(2)}), sp));
      for (int64_t t = t0; t < t1; ++t)
        back.push_back(
            Call0("tl.coop_store", desc({Load(cs, {slot(t - t0)}), Load(cc, {C(EC * t)}), C(tn), C(2)}), sp));
      for (int64_t t = t0; t < t1; ++t)
        each(t, [&](int64_t a, int64_t b, int64_t c, Expr r) {
          back.push_back(Store(cl, Load(cs, {at_stage(t - t0, a, b, c)}), {r}, sp));
        });
    }
    out.push_back(AttrStmt(cl, "tl.simdgroup_stage_in", C(1),
                           AttrStmt(cs, "tl.shared_overwrite", C(1), Seq(in, sp), sp), sp));
    Var kk = MakeVar("kk");
    Expr k0 = Expr(kk) * C(kc);
    std::vector<Stmt> step, a_loads;
    for (int64_t i = 0; i < pm; ++i) {
      Expr m0 = Simplify(wmi * C(wM) + C(i * tm));
      Expr src = g->trans_A ? A.at(k0, m0) : A.at(m0, k0);
      a_loads.push_back(Call0("tl.coop_load", desc({Load(ac, {C(EA * i)}), src, C(A.stride), C(0)}), sp));
    }
    step.push_back(AttrStmt(ac, "tl.simdgroup_a_loads", C(EA * pm), Seq(a_loads, sp), sp));
    for (int64_t q = 0; q < pn; ++q) {
      Expr n0 = Simplify(wnj * C(wN) + C(q * tn));
      Expr src = g->trans_B ? B.at(n0, k0) : B.at(k0, n0);
      for (int64_t p = 0; p < pm; ++p)
        step.push_back(
            Call0("tl.coop_mma",
                  desc({Load(cc, {C(EC * (p * pn + q))}), Load(ac, {C(EA * p)}), src, C(B.stride)}), sp));
    }
    out.push_back(For(kk, C(0), C(K / kc), ForKind::kSerial, Seq(step, sp), {}, sp));
    out.push_back(AttrStmt(cl, "tl.simdgroup_stage_out", C(1),
                           AttrStmt(cs, "tl.shared_overwrite", C(1), Seq(back, sp), sp), sp));
    return Seq(out, sp);
  }

  // Simdgroup matrices (2 elements per lane each) and the per-SIMD-group staging tiles: `slots` 8x8
  // tiles per SIMD-group (4 KB in all, at most one per accumulator matrix), so that a chunk of
  // `slots` matrices moves with one barrier each way instead of one per matrix.
  int64_t tiles = mt * nt;
  int64_t slots = std::max<int64_t>(1, std::min<int64_t>(tiles, 4096 / (64 * 4 * warps)));
  L.ctx_.info->choices.push_back(
      Loc(sp) + ": T.gemm: simdgroup_matrix 8x8 " + at.str() + " -> float32, SIMD-groups " +
      std::to_string(wm) + "x" + std::to_string(wn) + ", " + std::to_string(wM) + "x" + std::to_string(wN) +
      " per SIMD-group (" + std::to_string(mt * nt) +
      " accumulator matrices staged through threadgroup memory, " + std::to_string(slots) + " at a time)");
  Buffer cm = L.Scratch("C_simd", ct, 2 * tiles, Scope::kLocal);
  Buffer am = L.Scratch("A_simd", at, 2 * mt, Scope::kLocal);
  Buffer bm = L.Scratch("B_simd", bt, 2 * nt, Scope::kLocal);
  Buffer cs = L.Scratch("C_stage", ct, 64 * slots * warps, Scope::kShared);
  // Slot q of this SIMD-group, and this lane's element c of it.
  auto slot = [&](int64_t q) { return Simplify(warp * C(64 * slots) + C(64 * q)); };
  auto stage_at = [&](int64_t q, int64_t c) { return Simplify(slot(q) + g8 * C(8) + tg * C(2) + C(c)); };
  auto reg = [&](int64_t t, int64_t c) { return reg8(t / nt, t % nt, c); };
  // Registers -> matrices, a chunk of `slots` at a time (the barrier pass orders the writes before
  // the loads, and the loads before the next chunk's writes).
  // Both moves are marked (`tl.simdgroup_stage_in` / `_out` on the register buffer) so that
  // HoistSimdgroupStaging can move them out of a loop that touches the accumulator only here.
  std::vector<Stmt> in;
  for (int64_t t0 = 0; t0 < tiles; t0 += slots) {
    for (int64_t t = t0; t < std::min(tiles, t0 + slots); ++t)
      for (int64_t c = 0; c < 2; ++c)
        in.push_back(Store(cs, Load(cl, {reg(t, c)}), {stage_at(t - t0, c)}, sp));
    for (int64_t t = t0; t < std::min(tiles, t0 + slots); ++t)
      in.push_back(
          Call0("tl.simdgroup_load", {Load(cm, {C(2 * t)}), Load(cs, {slot(t - t0)}), C(8), C(0)}, sp));
  }
  // (each move writes the staging slots it then reads: the staging tile holds nothing between moves)
  out.push_back(AttrStmt(cl, "tl.simdgroup_stage_in", C(1),
                         AttrStmt(cs, "tl.shared_overwrite", C(1), Seq(in, sp), sp), sp));
  Var kk = MakeVar("kk");
  std::vector<Stmt> step, a_loads;
  Expr k0 = Expr(kk) * C(8);
  for (int64_t i = 0; i < mt; ++i) {
    Expr m0 = Simplify(wmi * C(wM) + C(i * 8));
    Expr src = g->trans_A ? A.at(k0, m0) : A.at(m0, k0);
    a_loads.push_back(
        Call0("tl.simdgroup_load", {Load(am, {C(2 * i)}), src, C(A.stride), C(g->trans_A ? 1 : 0)}, sp));
  }
  // (marked: HoistSimdgroupOperands keeps A in simdgroup matrices across an outer loop that does not change
  // it)
  step.push_back(AttrStmt(am, "tl.simdgroup_a_loads", C(2 * mt), Seq(a_loads, sp), sp));
  for (int64_t j = 0; j < nt; ++j) {
    Expr n0 = Simplify(wnj * C(wN) + C(j * 8));
    Expr src = g->trans_B ? B.at(n0, k0) : B.at(k0, n0);
    step.push_back(
        Call0("tl.simdgroup_load", {Load(bm, {C(2 * j)}), src, C(B.stride), C(g->trans_B ? 1 : 0)}, sp));
  }
  for (int64_t i = 0; i < mt; ++i)
    for (int64_t j = 0; j < nt; ++j) {
      Expr d = Load(cm, {C(2 * (i * nt + j))});
      step.push_back(Call0("tl.simdgroup_mma", {d, Load(am, {C(2 * i)}), Load(bm, {C(2 * j)}), d}, sp));
    }
  out.push_back(For(kk, C(0), C(K / 8), ForKind::kSerial, Seq(step, sp), {}, sp));
  std::vector<Stmt> back;
  for (int64_t t0 = 0; t0 < tiles; t0 += slots) {
    for (int64_t t = t0; t < std::min(tiles, t0 + slots); ++t)
      back.push_back(
          Call0("tl.simdgroup_store", {Load(cs, {slot(t - t0)}), Load(cm, {C(2 * t)}), C(8), C(0)}, sp));
    for (int64_t t = t0; t < std::min(tiles, t0 + slots); ++t)
      for (int64_t c = 0; c < 2; ++c)
        back.push_back(Store(cl, Load(cs, {stage_at(t - t0, c)}), {reg(t, c)}, sp));
  }
  out.push_back(AttrStmt(cl, "tl.simdgroup_stage_out", C(1),
                         AttrStmt(cs, "tl.shared_overwrite", C(1), Seq(back, sp), sp), sp));
  return Seq(out, sp);
}

}  // namespace
}  // namespace gpu_lowering
}  // namespace tl
