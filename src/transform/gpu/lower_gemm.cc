// LowerTileOpsGPU, T.gemm: the shared lowering (per-thread multiply-adds over the accumulator layout) and the
// operand staging that the backends' own gemm lowerings (src/target/<kind>/lower_gemm_*.cc) use too.
#include <cmath>
#include <map>
#include <set>

#include "arith/simplify.h"
#include "ir/printer.h"
#include "layout/hopper_layout.h"
#include "transform/gpu/hopper_wgmma.h"
#include "transform/gpu/tile_lowerer.h"
#include "transform/gpu_util.h"

namespace tl {
namespace gpu_lowering {

using namespace gpu_pass;

Buffer GpuTileLowerer::Scratch(const std::string& base, DataType t, int64_t n, Scope sc) {
  std::string name = base + "_" + std::to_string(extra_.size());
  Buffer b = MakeBuffer(name, t, {C(n)}, sc);
  extra_.push_back(b);
  return b;
}

Buffer GpuTileLowerer::StageFragment(const Buffer& b, const std::string& base, const Span& sp,
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

Region GpuTileLowerer::KMajorCopy(const Region& r, const std::vector<size_t>& dims, int64_t mn, int64_t K,
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
// Targets without tensor-core mma (OpenCL): every thread accumulates the elements of C that the
// accumulator layout gives it (the same mma_C layout, so reductions and T.Parallel nests over C are
// lowered exactly as on CUDA), one multiply-add per k, reading A and B from shared memory. An
// operand held in registers is first written to a shared staging tile by its owners (the barrier
// pass separates those writes from the reads).
Stmt LowerGemmSIMT(GpuTileLowerer& L, const GemmNode* g) {
  const Fragment& CF = L.Layout(g->C.buffer.get());
  DataType ct = g->C.buffer->dtype, at = g->A.buffer->dtype, bt = g->B.buffer->dtype;
  Span sp = g->span;
  auto numeric = [](DataType t) { return t.is_float() || t.is_integer(); };
  if (!numeric(at) || !numeric(bt) || !numeric(ct) || (ct.is_float() != (at.is_float() || bt.is_float())))
    throw UserError(ErrorKind::kUnsupported,
                    "T.gemm on " + L.ctx_.features.name +
                        " takes numeric A and B and an accumulator of the same kind "
                        "(float or integer); got A " +
                        at.str() + ", B " + bt.str() + ", C " + ct.str(),
                    sp);
  GemmTiles gt = GemmTilesOf(g, sp);
  auto ad = gt.ad, bd = gt.bd;
  const int64_t K = gt.K;
  L.ctx_.info->choices.push_back(Loc(sp) + ": T.gemm: per-thread multiply-adds (" + L.ctx_.features.name +
                               " has no tensor-core mma), " + std::to_string(CF.locals) +
                               " accumulators per thread over " + CF.desc + ", K = " + std::to_string(K));
  std::vector<Stmt> out;
  Buffer cl = L.MapBuffer(g->C.buffer);
  if (g->clear_accum) {
    Var i = MakeVar("i");
    Expr zero = ct.is_float() ? FloatImm(ct, 0.0) : IntImm(ct, 0);
    out.push_back(For(i, C(0), C(CF.locals), ForKind::kUnrolled, Store(cl, zero, {i}, sp), {}, sp));
  }
  // An operand in registers: its owners write it to a shared tile of the fragment's full shape.
  auto stage = [&](const Region& r, const std::string& base) -> Buffer {
    Buffer st = L.StageFragment(r.buffer, base, sp, &out);
    return st;
  };
  auto region_at = [&](const Region& r, const std::vector<size_t>& dims, const Buffer& staged,
                       const Expr& row, const Expr& col) -> Expr {
    std::vector<Expr> idx;
    for (auto& rg : r.ranges) idx.push_back(L.VisitExpr(rg.min));
    idx[dims[0]] = Simplify(idx[dims[0]] + row);
    idx[dims[1]] = Simplify(idx[dims[1]] + col);
    if (staged) {
      Expr flat = C(0);
      const Fragment& F = L.Layout(r.buffer.get());
      for (size_t a = 0; a < idx.size(); ++a) flat = flat * C(F.shape[a]) + idx[a];
      return Load(staged, {Simplify(flat)});
    }
    return Load(L.MapBuffer(r.buffer), {L.SharedIndex(r.buffer, idx)});
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
    auto mn = CF.IndexAt(L.tx_, C(l));
    Expr m = Simplify(mn[0]), n = Simplify(mn[1]);
    auto slot = [](std::map<std::string, size_t>& of, std::vector<Expr>& v, const Expr& e) {
      auto it = of.emplace(PrintExpr(e), v.size());
      if (it.second) v.push_back(e);
      return it.first->second;
    };
    use[l] = {slot(row_of, rows, m), slot(col_of, cols, n)};
  }
  Buffer ar = L.Scratch("A_reg", ct, static_cast<int64_t>(rows.size()), Scope::kLocal);
  Buffer br = L.Scratch("B_reg", ct, static_cast<int64_t>(cols.size()), Scope::kLocal);
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
    Expr ok = CF.ValidAt(L.tx_, C(l));
    body.push_back(ok ? If(ok, st, nullptr, sp) : st);
  }
  out.push_back(For(kk, C(0), C(K), ForKind::kSerial, Seq(body, sp), {}, sp));
  return Seq(out, sp);
}

// The shared T.gemm, for GPU backends with no matrix-unit lowering of their own (OpenCL, a new backend).
const GpuOpLoweringRegistrar kGemm("gemm", [](GpuTileLowerer& L, const TileOpNode& n) {
  return LowerGemmSIMT(L, static_cast<const GemmNode*>(&n));
});
}  // namespace

}  // namespace gpu_lowering
}  // namespace tl
