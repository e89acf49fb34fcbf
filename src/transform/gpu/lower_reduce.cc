// LowerTileOpsGPU, the shared T.reduce: in-thread partials, warp shuffles (or sub-group reductions) and shared
// memory across warps. (HIP reduces an MFMA accumulator's rows itself: src/target/hip/lower_gemm_mfma.cc.)
#include <cmath>
#include <set>

#include "arith/simplify.h"
#include "ir/printer.h"
#include "op/reduce_math.h"
#include "transform/gpu/tile_lowerer.h"
#include "transform/gpu_util.h"

namespace tl {
namespace gpu_lowering {

namespace {
Stmt LowerReduce(GpuTileLowerer& L, const ReduceNode* r);

using namespace gpu_pass;

namespace {
// cl_khr_subgroups' sub_group_reduce_<name> for a reduction's combine (|x| enters before the combine).
const char* SubgroupReduceName(ReduceKind k) {
  switch (k) {
    case ReduceKind::kMax:
    case ReduceKind::kAbsMax: return "max";
    case ReduceKind::kMin: return "min";
    default: return "add";
  }
}
}  // namespace

Stmt LowerReduce(GpuTileLowerer& L, const ReduceNode* r) {
  const Fragment& S = L.Layout(r->src.buffer.get());
  const Fragment& D = L.Layout(r->dst.buffer.get());
  DataType t = r->dst.buffer->dtype;
  Buffer src = L.MapBuffer(r->src.buffer), dst = L.MapBuffer(r->dst.buffer);
  Span sp = r->span;
  ReduceKind k = r->reduce_kind;
  std::vector<Stmt> out;
  // rows held a row a thread (Fragment::RowPerThread: tensor memory read with one column group) into a row
  // vector held the same way: each thread reduces its own row, nothing exchanged
  if (S.RowPerThread() && D.kind == "rows" && r->dim == 1 && D.shape.size() == 1 &&
      D.shape[0] == S.shape[0] && D.locals == 1) {
    L.ctx_.info->choices.push_back(Loc(sp) + ": T.reduce of " + S.desc + ": in-thread (a thread a row)");
    Buffer part = L.Scratch("red", t, 1, Scope::kLocal);
    Var l = MakeVar("l");
    out.push_back(Store(part, ReduceIdentity(k, t), {C(0)}, sp));
    out.push_back(For(l, C(0), C(S.locals), ForKind::kUnrolled,
                      Store(part, ReduceCombine(k, Load(part, {C(0)}), ReduceElement(k, Load(src, {l}), t)), {C(0)},
                            sp),
                      {}, sp));
    Expr v = Load(part, {C(0)});
    out.push_back(Store(dst, r->clear ? v : ReduceCombine(k, Load(dst, {C(0)}), v), {C(0)}, sp));
    return Seq(out, sp);
  }
  if (S.kind == "mma_C" && D.kind == "mma_rows" && r->dim == 1 && D.params[0] == S.params[0] &&
      D.params[2] == S.params[2] && D.params[3] == S.params[3]) {
    int64_t M = S.params[0], N = S.params[1], wm = S.params[2], wn = S.params[3];
    int64_t mt = M / wm / 16, nt = N / wn / 8;
    L.ctx_.info->choices.push_back(
        Loc(sp) + ": T.reduce of an mma accumulator: in-thread, 2 quad shuffles" +
        (wn > 1 ? ", then across " + std::to_string(wn) + " warps through shared memory" : "") +
        (L.ctx_.features.subgroup_reduce
             ? " (the quad exchange through shared memory: a row spans 4 work-items and "
               "cl_khr_subgroups reduces whole sub-groups, with no shuffles)"
             : ""));
    Buffer part = L.Scratch("red", t, mt * 2, Scope::kLocal);
    Buffer xs = wn > 1 ? L.Scratch("red_smem", t, wn * M, Scope::kShared) : nullptr;
    std::vector<std::pair<int64_t, Expr>> cross;  // (register, row) of the partials exchanged across warps
    Expr warp = Div(L.tx_, 32), lane = Mod(L.tx_, 32);
    // Without warp shuffles (OpenCL): every thread's partials go through shared memory once and each
    // thread combines its quad's four (one barrier instead of one pair per shuffle).
    Buffer quad = L.ctx_.features.shuffle ? nullptr : L.Scratch("red_quad", t, mt * 2 * L.T_, Scope::kShared);
    std::vector<Stmt> later;  // per-row statements after the quad exchange
    for (int64_t d = 0; d < mt * 2; ++d) {
      int64_t ti = d / 2, rh = d % 2;
      Var tj = MakeVar("tj");
      Expr base = (C(ti * nt) + Expr(tj)) * C(4) + C(rh * 2);
      Expr both = ReduceCombine(k, ReduceElement(k, Load(src, {base}), t),
                                ReduceElement(k, Load(src, {Simplify(base + C(1))}), t));
      out.push_back(Store(part, ReduceIdentity(k, t), {C(d)}, sp));
      out.push_back(For(tj, C(0), C(nt), ForKind::kUnrolled,
                        Store(part, ReduceCombine(k, Load(part, {C(d)}), both), {C(d)}, sp), {}, sp));
      if (quad) {
        out.push_back(Store(quad, Load(part, {C(d)}), {Simplify(C(d * L.T_) + L.tx_)}, sp));
        Var q = MakeVar("q");
        later.push_back(Store(part, ReduceIdentity(k, t), {C(d)}, sp));
        later.push_back(
            For(q, C(0), C(4), ForKind::kUnrolled,
                Store(part,
                      ReduceCombine(k, Load(part, {C(d)}),
                                    Load(quad, {Simplify(C(d * L.T_) + Div(L.tx_, 4) * C(4) + Expr(q))})),
                      {C(d)}, sp),
                {}, sp));
      } else {
        for (int m : {1, 2})
          out.push_back(Store(
              part, ReduceCombine(k, Load(part, {C(d)}), Call(t, "tl.shfl_xor", {Load(part, {C(d)}), C(m)})),
              {C(d)}, sp));
      }
      if (xs) {
        Expr row = D.IndexAt(L.tx_, C(d))[0];  // (row d of this thread in the row-vector layout)
        (quad ? later : out)
            .push_back(If(Eq(Mod(lane, 4), C(0)),
                          Store(xs, Load(part, {C(d)}), {Simplify(Div(warp, wm) * C(M) + row)}, sp), nullptr,
                          sp));
        cross.push_back({d, row});
      }
    }
    out.insert(out.end(), later.begin(), later.end());
    if (xs) {
      // (the barrier pass puts a __syncthreads between the writes above and these reads)
      for (auto& [d, row] : cross) {
        Var w = MakeVar("w");
        out.push_back(Store(part, ReduceIdentity(k, t), {C(d)}, sp));
        out.push_back(
            For(w, C(0), C(wn), ForKind::kUnrolled,
                Store(part, ReduceCombine(k, Load(part, {C(d)}), Load(xs, {Simplify(Expr(w) * C(M) + row)})),
                      {C(d)}, sp),
                {}, sp));
      }
    }
    for (int64_t d = 0; d < mt * 2; ++d) {
      Expr v = Load(part, {C(d)});
      out.push_back(Store(dst, r->clear ? v : ReduceCombine(k, Load(dst, {C(d)}), v), {C(d)}, sp));
    }
    return Seq(out, sp);
  }
  // Generic: per-thread partials over the thread's own elements, a butterfly over the warp,
  // then one partial per warp through shared memory. Every thread ends with all the totals, so any
  // destination layout can be written: a replicated destination holds them all; another (one a loop
  // fixed first, e.g. striped) takes, in each of its registers, the total of the element it holds there.
  L.ctx_.info->choices.push_back(Loc(sp) + ": T.reduce of " + S.desc +
                               ": per-thread partials, 5-step warp butterfly, " +
                               "then per-warp partials through shared memory");
  int64_t nd = 1;
  for (auto& e : r->dst.buffer->shape) nd *= ConstOr(e, sp, "a reduction's shape");
  Buffer part = L.Scratch("red", t, nd, Scope::kLocal);
  Var d = MakeVar("d");
  // The totals in `part` into the destination (folded into its old values unless clear).
  auto finish = [&] {
    if (D.kind == "replicated") {
      Expr v = Load(part, {d});
      out.push_back(For(d, C(0), C(nd), ForKind::kUnrolled,
                        Store(dst, r->clear ? v : ReduceCombine(k, Load(dst, {d}), v), {d}, sp), {}, sp));
      return Seq(out, sp);
    }
    L.ctx_.info->choices.back() += " (every thread holds all totals; the destination's " + D.desc +
                                   " registers take theirs)";
    for (int64_t l = 0; l < D.locals; ++l) {
      auto idx = D.IndexAt(L.tx_, C(l));
      Expr flat = C(0);
      for (size_t a = 0; a < idx.size(); ++a) flat = flat * C(D.shape[a]) + idx[a];
      flat = Simplify(flat, L.kernel_bounds_);
      Expr v = Load(part, {flat});
      Stmt st = Store(dst, r->clear ? v : ReduceCombine(k, Load(dst, {C(l)}), v), {C(l)}, sp);
      Expr g = D.ValidAt(L.tx_, C(l));
      if (g) {
        g = Simplify(g, L.kernel_bounds_);
        int64_t gc;
        if (AsConstInt(g, &gc)) {
          if (gc == 0) continue;
          g = Expr();
        }
      }
      out.push_back(g ? If(g, st, nullptr, sp) : st);
    }
    return Seq(out, sp);
  };
  out.push_back(For(d, C(0), C(nd), ForKind::kUnrolled, Store(part, ReduceIdentity(k, t), {d}, sp), {}, sp));
  for (int64_t l = 0; l < S.locals; ++l) {
    auto idx = S.IndexAt(L.tx_, C(l));
    Expr flat = C(0);
    for (size_t a = 0; a < idx.size(); ++a)
      if (static_cast<int>(a) != r->dim) flat = flat * C(S.shape[a]) + idx[a];
    // What the kernel knows of tx (0 <= tx < threads) often makes the slot a constant (one thread:
    // always), and otherwise bounds the slots the select below has to consider.
    flat = Simplify(flat, L.kernel_bounds_);
    const Interval range = BoundOf(flat, L.kernel_bounds_);
    const int64_t lo = range.lo ? std::max<int64_t>(*range.lo, 0) : 0;
    const int64_t hi = range.hi ? std::min<int64_t>(*range.hi, nd - 1) : nd - 1;
    Stmt st;
    int64_t fc;
    if (AsConstInt(flat, &fc) || nd > 32) {
      st = Store(part, ReduceCombine(k, Load(part, {flat}), ReduceElement(k, Load(src, {C(l)}), t)), {flat},
                 sp);
    } else {
      // The destination slot depends on the thread: select it among the (few) slots with constant
      // register indices rather than indexing the register array at run time (local memory).
      Var e = MakeVar("e");
      Expr upd =
          Select(Eq(flat, Expr(e)), ReduceCombine(k, Load(part, {e}), ReduceElement(k, Load(src, {C(l)}), t)),
                 Load(part, {e}));
      st = For(e, C(lo), C(hi - lo + 1), ForKind::kUnrolled, Store(part, upd, {e}, sp), {}, sp);
    }
    Expr g = S.ValidAt(L.tx_, C(l));
    if (S.replicas > 1) g = And(g, Eq(S.ReplicaOf(L.tx_), C(0)));
    if (g) {
      g = Simplify(g, L.kernel_bounds_);
      int64_t gc;
      if (AsConstInt(g, &gc)) {
        if (gc == 0) continue;  // no thread holds element l
        g = Expr();             // every thread does
      }
    }
    out.push_back(g ? If(g, st, nullptr, sp) : st);
  }
  if (L.T_ == 1) {
    // One thread holds every element: its partials are the totals.
    L.ctx_.info->choices.back() = Loc(sp) + ": T.reduce of " + S.desc + ": in one thread (no exchange)";
    return finish();
  }
  // A warp shuffle names all 32 lanes of its warp; a block whose last warp is partial (threads not a
  // multiple of 32) has lanes that do not exist, so it exchanges its partials through shared memory.
  const bool partial_warp = L.T_ % 32 != 0;
  if (!L.ctx_.features.shuffle || partial_warp) {
    // Without warp shuffles (OpenCL): every thread writes its partials to shared memory; thread t
    // combines the partials of slots t, t + T, ... and publishes the totals; every thread reads them
    // (two barriers, and about 2 * nd * T shared reads per block instead of a shuffle tree).
    // With cl_khr_subgroups each sub-group first combines its partials (sub_group_reduce_*) and only
    // its first work-item writes them: slot d * T + (sub-group id), and thread t combines
    // get_num_sub_groups() partials per slot. The sub-group size is implementation-defined, so the
    // slots are sized for the worst case (T sub-groups of one work-item each).
    const bool sg = L.ctx_.features.subgroup_reduce && !L.ctx_.features.shuffle;  // (cl_khr_subgroups)
    Buffer xs = L.Scratch("red_smem", t, nd * L.T_, Scope::kShared);
    Buffer tot = L.Scratch("red_total", t, nd, Scope::kShared);
    L.ctx_.info->choices.back() =
        Loc(sp) + ": T.reduce of " + S.desc +
        (sg ? ": per-thread partials, sub_group_reduce_" + std::string(SubgroupReduceName(k)) +
                  " within each sub-group (cl_khr_subgroups), then one partial per sub-group through shared "
                  "memory (a thread per destination slot combines them)"
            : ": per-thread partials, then through shared memory (a thread per destination slot "
              "combines all " +
                  std::to_string(L.T_) + " partials; " +
                  (L.ctx_.features.shuffle
                       ? std::to_string(L.T_) + " threads are not whole warps, and a shuffle needs all 32 lanes"
                       : "no warp shuffles on " + L.ctx_.features.name +
                             (L.ctx_.features.subgroup_feature.empty()
                                  ? ""
                                  : ", no sub-groups: target feature '" + L.ctx_.features.subgroup_feature +
                                        "' off")) +
                  ")");
    Expr writer = L.tx_, partials = C(L.T_);
    if (sg) {
      Expr whole = Call(t, "tl.subgroup_reduce", {Load(part, {d}), StringImm(SubgroupReduceName(k))});
      out.push_back(For(d, C(0), C(nd), ForKind::kUnrolled, Store(part, whole, {d}, sp), {}, sp));
      writer = Call(DataType::Int(32), "tl.subgroup_id", {});
      partials = Call(DataType::Int(32), "tl.num_subgroups", {});
    }
    Stmt publish = For(d, C(0), C(nd), ForKind::kSerial,
                       Store(xs, Load(part, {d}), {Simplify(Expr(d) * C(L.T_) + writer)}, sp), {}, sp);
    out.push_back(sg ? If(Eq(Call(DataType::Int(32), "tl.subgroup_local_id", {}), C(0)), publish, nullptr, sp)
                     : publish);
    Var i = MakeVar("i"), w = MakeVar("w");
    Buffer one = L.Scratch("red_acc", t, 1, Scope::kLocal);
    Expr slot = Simplify(Expr(i) * C(L.T_) + L.tx_);
    Stmt combine = Seq(
        {Store(one, ReduceIdentity(k, t), {C(0)}, sp),
         For(w, C(0), partials, ForKind::kSerial,
             Store(one, ReduceCombine(k, Load(one, {C(0)}), Load(xs, {slot * C(L.T_) + Expr(w)})), {C(0)}, sp),
             {}, sp),
         Store(tot, Load(one, {C(0)}), {slot}, sp)},
        sp);
    int64_t rounds = (nd + L.T_ - 1) / L.T_;
    out.push_back(For(i, C(0), C(rounds), ForKind::kSerial,
                      nd % L.T_ ? If(Lt(slot, C(nd)), combine, nullptr, sp) : combine, {}, sp));
    out.push_back(For(d, C(0), C(nd), ForKind::kSerial, Store(part, Load(tot, {d}), {d}, sp), {}, sp));
    return finish();
  }
  std::vector<Stmt> bf;
  const int64_t W = L.ctx_.features.wave == 64 && L.T_ % 64 == 0 ? 64 : 32;  // HIP: butterfly over the wave64
  if (W == 64)
    L.ctx_.info->choices.back() =
        Loc(sp) + ": T.reduce of " + S.desc +
        ": per-thread partials, 6-step wave64 butterfly, then per-wave partials through LDS";
  for (int m : {32, 16, 8, 4, 2, 1}) {
    if (m >= W) continue;
    std::vector<Expr> sa{Load(part, {d}), C(m)};
    if (W == 64) sa.push_back(C(64));
    bf.push_back(Store(part, ReduceCombine(k, Load(part, {d}), Call(t, "tl.shfl_xor", sa)), {d}, sp));
  }
  out.push_back(For(d, C(0), C(nd), ForKind::kSerial, Seq(bf, sp), {}, sp));
  int64_t warps = (L.T_ + W - 1) / W;
  if (warps > 1) {
    Buffer xs = L.Scratch("red_smem", t, warps * nd, Scope::kShared);
    Expr warp = Div(L.tx_, W), lane = Mod(L.tx_, W);
    out.push_back(If(Eq(lane, C(0)),
                     For(d, C(0), C(nd), ForKind::kSerial,
                         Store(xs, Load(part, {d}), {Simplify(warp * C(nd) + Expr(d))}, sp), {}, sp),
                     nullptr, sp));
    Var w = MakeVar("w");
    out.push_back(
        For(d, C(0), C(nd), ForKind::kSerial,
            Seq({Store(part, ReduceIdentity(k, t), {d}, sp),
                 For(w, C(0), C(warps), ForKind::kSerial,
                     Store(part, ReduceCombine(k, Load(part, {d}), Load(xs, {Expr(w) * C(nd) + Expr(d)})),
                           {d}, sp),
                     {}, sp)},
                sp),
            {}, sp));
  }
  return finish();
}

const GpuOpLoweringRegistrar kReduce("reduce", [](GpuTileLowerer& L, const TileOpNode& n) {
  return LowerReduce(L, static_cast<const ReduceNode*>(&n));
});
}  // namespace

}  // namespace gpu_lowering
}  // namespace tl
