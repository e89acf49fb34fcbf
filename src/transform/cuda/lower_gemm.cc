// LowerTileOpsCUDA, T.gemm: ldmatrix loads of the operands and mma.sync m16n8k16 over the warp grid
// of the accumulator layout.
#include <cmath>
#include <map>
#include <set>

#include "arith/simplify.h"
#include "ir/printer.h"
#include "layout/hopper_layout.h"
#include "transform/cuda/hopper_wgmma.h"
#include "transform/cuda/lower_tile_ops_cuda_impl.h"
#include "transform/cuda_util.h"

namespace tl {
namespace cuda_lowering {

using namespace cuda_pass;

Buffer CudaTileLowerer::Scratch(const std::string& base, DataType t, int64_t n, Scope sc) {
  std::string name = base + "_" + std::to_string(extra_.size());
  Buffer b = MakeBuffer(name, t, {C(n)}, sc);
  extra_.push_back(b);
  return b;
}

Buffer CudaTileLowerer::StageFragment(const Buffer& b, const std::string& base, const Span& sp,
                                      std::vector<Stmt>* out) {
  const Fragment& F = Layout(b.get());
  int64_t n = 1;
  for (int64_t e : F.shape) n *= e;
  Buffer st = Scratch(base, b->dtype, n, Scope::kShared);
  Buffer regs = MapBuffer(b);
  std::vector<Stmt> w;
  for (int64_t l = 0; l < F.locals; ++l) {
    auto idx = F.IndexAt(tx_, C(l));
    Expr flat = C(0);
    for (size_t a = 0; a < idx.size(); ++a) flat = flat * C(F.shape[a]) + idx[a];
    Stmt s1 = Store(st, Load(regs, {C(l)}), {Simplify(flat)}, sp);
    Expr ok = F.ValidAt(tx_, C(l));
    if (F.replicas > 1) ok = ok ? And(ok, Eq(F.ReplicaOf(tx_), C(0))) : Eq(F.ReplicaOf(tx_), C(0));
    w.push_back(ok ? If(Simplify(ok), s1, nullptr, sp) : s1);
  }
  out->push_back(Seq(w, sp));
  return st;
}

Region CudaTileLowerer::KMajorCopy(const Region& r, const std::vector<size_t>& dims, int64_t mn, int64_t K,
                                   const std::string& base, const Span& sp, std::vector<Stmt>* out) {
  Buffer t = MakeBuffer(base + "_" + std::to_string(extra_.size()), r.buffer->dtype, {C(mn), C(K)},
                        Scope::kShared, sp);
  extra_.push_back(MapBuffer(t));
  std::vector<Expr> src;
  for (auto& rg : r.ranges) src.push_back(VisitExpr(rg.min));
  Var e = MakeVar("e");
  Expr flat = Expr(e) * C(T_) + tx_, row = Div(flat, K), col = Mod(flat, K);  // (mn, k) of the K-major tile
  src[dims[0]] = Simplify(src[dims[0]] + col);
  src[dims[1]] = Simplify(src[dims[1]] + row);
  Stmt st = Store(MapBuffer(t), Load(MapBuffer(r.buffer), {SharedIndex(r.buffer, src)}),
                  {SharedIndex(t, {Simplify(row), Simplify(col)})}, sp);
  if ((mn * K) % T_) st = If(Lt(flat, C(mn * K)), st, nullptr, sp);
  out->push_back(For(e, C(0), C((mn * K + T_ - 1) / T_), ForKind::kSerial, st, {}, sp));
  Region nr = r;
  nr.buffer = t;
  nr.ranges = {Range{C(0), C(mn)}, Range{C(0), C(K)}};
  return nr;
}

namespace {
const CudaOpLoweringRegistrar kGemm("gemm", [](CudaTileLowerer& L, const TileOpNode& n) {
  return L.LowerGemm(static_cast<const GemmNode*>(&n));
});
}  // namespace

// Targets without tensor-core mma (OpenCL): every thread accumulates the elements of C that the
// accumulator layout gives it (the same mma_C layout, so reductions and T.Parallel nests over C are
// lowered exactly as on CUDA), one multiply-add per k, reading A and B from shared memory. An
// operand held in registers is first written to a shared staging tile by its owners (the barrier
// pass separates those writes from the reads).
Stmt CudaTileLowerer::LowerGemmSIMT(const GemmNode* g) {
  const Fragment& CF = Layout(g->C.buffer.get());
  DataType ct = g->C.buffer->dtype, at = g->A.buffer->dtype, bt = g->B.buffer->dtype;
  Span sp = g->span;
  auto numeric = [](DataType t) { return t.is_float() || t.is_integer(); };
  if (!numeric(at) || !numeric(bt) || !numeric(ct) || (ct.is_float() != (at.is_float() || bt.is_float())))
    throw UserError(ErrorKind::kUnsupported,
                    "T.gemm on " + ctx_.features.name +
                        " takes numeric A and B and an accumulator of the same kind "
                        "(float or integer); got A " +
                        at.str() + ", B " + bt.str() + ", C " + ct.str(),
                    sp);
  GemmTiles gt = GemmTilesOf(g, sp);
  auto ad = gt.ad, bd = gt.bd;
  const int64_t K = gt.K;
  ctx_.info->choices.push_back(Loc(sp) + ": T.gemm: per-thread multiply-adds (" + ctx_.features.name +
                               " has no tensor-core mma), " + std::to_string(CF.locals) +
                               " accumulators per thread over " + CF.desc + ", K = " + std::to_string(K));
  std::vector<Stmt> out;
  Buffer cl = MapBuffer(g->C.buffer);
  if (g->clear_accum) {
    Var i = MakeVar("i");
    Expr zero = ct.is_float() ? FloatImm(ct, 0.0) : IntImm(ct, 0);
    out.push_back(For(i, C(0), C(CF.locals), ForKind::kUnrolled, Store(cl, zero, {i}, sp), {}, sp));
  }
  // An operand in registers: its owners write it to a shared tile of the fragment's full shape.
  auto stage = [&](const Region& r, const std::string& base) -> Buffer {
    Buffer st = StageFragment(r.buffer, base, sp, &out);
    return st;
  };
  auto region_at = [&](const Region& r, const std::vector<size_t>& dims, const Buffer& staged,
                       const Expr& row, const Expr& col) -> Expr {
    std::vector<Expr> idx;
    for (auto& rg : r.ranges) idx.push_back(VisitExpr(rg.min));
    idx[dims[0]] = Simplify(idx[dims[0]] + row);
    idx[dims[1]] = Simplify(idx[dims[1]] + col);
    if (staged) {
      Expr flat = C(0);
      const Fragment& F = Layout(r.buffer.get());
      for (size_t a = 0; a < idx.size(); ++a) flat = flat * C(F.shape[a]) + idx[a];
      return Load(staged, {Simplify(flat)});
    }
    return Load(MapBuffer(r.buffer), {SharedIndex(r.buffer, idx)});
  };
  Buffer as = g->A.buffer->scope == Scope::kFragment ? stage(g->A, "A_stage") : nullptr;
  Buffer bs = g->B.buffer->scope == Scope::kFragment ? stage(g->B, "B_stage") : nullptr;
  // Per k step, each distinct row of A and column of B this thread needs is loaded once into a
  // register (an mma_C layout touches 2 * mt rows and 2 * nt columns for its 8 * mt * nt elements).
  Var kk = MakeVar("kk");
  std::vector<Expr> rows, cols;
  std::map<std::string, size_t> row_of, col_of;
  std::vector<std::pair<size_t, size_t>> use(CF.locals);
  for (int64_t l = 0; l < CF.locals; ++l) {
    auto mn = CF.IndexAt(tx_, C(l));
    Expr m = Simplify(mn[0]), n = Simplify(mn[1]);
    auto slot = [](std::map<std::string, size_t>& of, std::vector<Expr>& v, const Expr& e) {
      auto it = of.emplace(PrintExpr(e), v.size());
      if (it.second) v.push_back(e);
      return it.first->second;
    };
    use[l] = {slot(row_of, rows, m), slot(col_of, cols, n)};
  }
  Buffer ar = Scratch("A_reg", ct, static_cast<int64_t>(rows.size()), Scope::kLocal);
  Buffer br = Scratch("B_reg", ct, static_cast<int64_t>(cols.size()), Scope::kLocal);
  std::vector<Stmt> body;
  for (size_t i = 0; i < rows.size(); ++i) {
    Expr a = g->trans_A ? region_at(g->A, ad, as, kk, rows[i]) : region_at(g->A, ad, as, rows[i], kk);
    body.push_back(Store(ar, a->dtype != ct ? Cast(ct, a) : a, {C(static_cast<int64_t>(i))}, sp));
  }
  for (size_t j = 0; j < cols.size(); ++j) {
    Expr b = g->trans_B ? region_at(g->B, bd, bs, cols[j], kk) : region_at(g->B, bd, bs, kk, cols[j]);
    body.push_back(Store(br, b->dtype != ct ? Cast(ct, b) : b, {C(static_cast<int64_t>(j))}, sp));
  }
  for (int64_t l = 0; l < CF.locals; ++l) {
    Expr a = Load(ar, {C(static_cast<int64_t>(use[l].first))}),
         b = Load(br, {C(static_cast<int64_t>(use[l].second))});
    Stmt st = Store(cl, Load(cl, {C(l)}) + a * b, {C(l)}, sp);
    Expr ok = CF.ValidAt(tx_, C(l));
    body.push_back(ok ? If(ok, st, nullptr, sp) : st);
  }
  out.push_back(For(kk, C(0), C(K), ForKind::kSerial, Seq(body, sp), {}, sp));
  return Seq(out, sp);
}

Stmt CudaTileLowerer::LowerGemm(const GemmNode* g) {
  switch (ctx_.features.matrix) {
    case MatrixUnit::kSimdgroupMatrix: return LowerGemmSimdgroup(g);  // src/transform/metal/
    case MatrixUnit::kMfma: return LowerGemmMfma(g);                  // src/transform/hip/
    case MatrixUnit::kNone: return LowerGemmSIMT(g);
    case MatrixUnit::kMmaSync: break;
  }
  const Fragment& CF = Layout(g->C.buffer.get());
  if (IsWgmmaLayout(CF)) return LowerGemmWgmma(*this, g);  // sm_90a (hopper_wgmma.cc)
  NoteNoWgmma(*this, g);
  int64_t M = CF.params[0], N = CF.params[1], wm = CF.params[2], wn = CF.params[3];
  DataType at = g->A.buffer->dtype, bt = g->B.buffer->dtype;
  bool f16 = at == DataType::Float(16) && bt == DataType::Float(16);
  bool b16 = at == DataType::BFloat16() && bt == DataType::BFloat16();
  bool s8 = at == DataType::Int(8) && bt == DataType::Int(8);  // mma.sync m16n8k32 s8 -> s32
  bool f8 = IsFp8(at) && IsFp8(bt);  // mma.sync m16n8k32 e4m3/e5m2 (either mix) -> f32, sm_89+
  if (at == DataType::Float(32) && bt == DataType::Float(32) && g->C.buffer->dtype == DataType::Float(32))
    return LowerGemmTf32(g);  // mma.sync m16n8k8 tf32 (lower_gemm_tf32.cc)
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
  if (f8 && !ctx_.features.fp8_mma)
    throw UserError(
        ErrorKind::kUnsupported,
        "fp8 T.gemm needs sm_89 or newer (mma.sync m16n8k32 with e4m3/e5m2 inputs); the target is " +
            ctx_.features.arch,
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
    Ar = KMajorCopy(g->A, ad, M, K, "A_kmajor", sp, &out);
    ad = {0, 1};
    tA = false;
    staged.push_back("A [K, M]");
  }
  if ((s8 || f8) && !tB && !b_reg) {
    Br = KMajorCopy(g->B, bd, N, K, "B_kmajor", sp, &out);
    bd = {0, 1};
    tB = true;
    staged.push_back("B [K, N]");
  }
  // ldmatrix reads 16 contiguous bytes of a stored row per lane: an operand whose T.annotate_layout layout
  // keeps less of a row together is first copied into a tile of the compiler's layout.
  auto narrow = [&](const Region& r) {
    auto u = user_shared_.find(r.buffer.get());
    return r.buffer->scope == Scope::kShared && u != user_shared_.end() &&
           u->second.contiguous * r.buffer->dtype.bytes() < 16;
  };
  std::vector<std::string> relaid;
  if (narrow(Ar)) {
    Ar = KMajorCopy(Ar, tA ? ad : std::vector<size_t>{ad[1], ad[0]}, M, K, "A_relaid", sp, &out);
    ad = {0, 1};
    tA = false;
    relaid.push_back("A ('" + g->A.buffer->name + "')");
  }
  if (narrow(Br)) {
    Br = KMajorCopy(Br, tB ? std::vector<size_t>{bd[1], bd[0]} : bd, N, K, "B_relaid", sp, &out);
    bd = {0, 1};
    tB = true;
    relaid.push_back("B ('" + g->B.buffer->name + "')");
  }
  if (!relaid.empty())
    ctx_.info->warnings.push_back(
        Loc(sp) + ": T.gemm operand " + relaid[0] + (relaid.size() > 1 ? " and " + relaid[1] : "") +
        " is copied into a tile of the compiler's layout on every call: the layout "
        "T.annotate_layout gives it keeps less than 16 bytes of a row together, and "
        "ldmatrix reads 16");
  if (!staged.empty())
    ctx_.info->warnings.push_back(Loc(sp) + ": 8-bit T.gemm operand " + staged[0] +
                                  (staged.size() > 1 ? " and " + staged[1] : "") +
                                  " is transposed through shared memory on every call (ldmatrix cannot "
                                  "transpose 8-bit elements): store "
                                  "A as [M, K] and B as [N, K] (transpose_B=True) for full speed");
  ctx_.info->choices.push_back(
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
  Expr warp = Div(tx_, 32), lane = Mod(tx_, 32);
  Expr wmi = Mod(warp, wm), wnj = Div(warp, wm);
  Buffer cl = MapBuffer(g->C.buffer);
  if (g->clear_accum) {
    Var i = MakeVar("i");
    Expr zero = s8 ? IntImm(DataType::Int(32), 0) : FloatImm(g->C.buffer->dtype, 0.0);
    out.push_back(For(i, C(0), C(CF.locals), ForKind::kUnrolled, Store(cl, zero, {i}, sp), {}, sp));
  }
  Buffer afrag = a_reg ? MapBuffer(g->A.buffer) : Scratch("A_frag", at, mt * 8 * epr, Scope::kLocal);
  Buffer bfrag = b_reg ? MapBuffer(g->B.buffer) : Scratch("B_frag", bt, nt * 4 * epr, Scope::kLocal);
  std::string ab = MmaAbName(at, bt);
  auto shared_at = [&](const Region& r, const std::vector<size_t>& dims, const Expr& row, const Expr& col) {
    std::vector<Expr> idx;
    for (auto& rg : r.ranges) idx.push_back(VisitExpr(rg.min));
    idx[dims[0]] = Simplify(idx[dims[0]] + row);
    idx[dims[1]] = Simplify(idx[dims[1]] + col);
    return Load(MapBuffer(r.buffer), {SharedIndex(r.buffer, idx)});
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

}  // namespace cuda_lowering
}  // namespace tl
