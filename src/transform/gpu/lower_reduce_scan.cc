// LowerTileOpsGPU, reductions and scans: T.reduce with in-thread partials, warp shuffles and
// shared memory across warps; T.cumsum with a thread per scanned line.
#include <cmath>
#include <set>

#include "arith/simplify.h"
#include "ir/printer.h"
#include "op/reduce_math.h"
#include "transform/gpu/tile_lowerer.h"
#include "transform/gpu_util.h"

namespace tl {
namespace gpu_lowering {

using namespace gpu_pass;

namespace {
const GpuOpLoweringRegistrar kReduce("reduce", [](GpuTileLowerer& L, const TileOpNode& n) {
  return L.LowerReduce(static_cast<const ReduceNode*>(&n));
});
const GpuOpLoweringRegistrar kCumsum("cumsum", [](GpuTileLowerer& L, const TileOpNode& n) {
  return L.LowerCumsum(static_cast<const CumsumNode*>(&n));
});
}  // namespace

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

Stmt GpuTileLowerer::LowerReduce(const ReduceNode* r) {
  const Fragment& S = Layout(r->src.buffer.get());
  const Fragment& D = Layout(r->dst.buffer.get());
  DataType t = r->dst.buffer->dtype;
  Buffer src = MapBuffer(r->src.buffer), dst = MapBuffer(r->dst.buffer);
  Span sp = r->span;
  ReduceKind k = r->reduce_kind;
  std::vector<Stmt> out;
  if (S.kind == "mma_C" && D.kind == "mma_rows" && r->dim == 1 && D.params[0] == S.params[0] &&
      D.params[2] == S.params[2] && D.params[3] == S.params[3]) {
    int64_t M = S.params[0], N = S.params[1], wm = S.params[2], wn = S.params[3];
    int64_t mt = M / wm / 16, nt = N / wn / 8;
    ctx_.info->choices.push_back(
        Loc(sp) + ": T.reduce of an mma accumulator: in-thread, 2 quad shuffles" +
        (wn > 1 ? ", then across " + std::to_string(wn) + " warps through shared memory" : "") +
        (ctx_.features.subgroup_reduce
             ? " (the quad exchange through shared memory: a row spans 4 work-items and "
               "cl_khr_subgroups reduces whole sub-groups, with no shuffles)"
             : ""));
    Buffer part = Scratch("red", t, mt * 2, Scope::kLocal);
    Buffer xs = wn > 1 ? Scratch("red_smem", t, wn * M, Scope::kShared) : nullptr;
    std::vector<std::pair<int64_t, Expr>> cross;  // (register, row) of the partials exchanged across warps
    Expr warp = Div(tx_, 32), lane = Mod(tx_, 32);
    // Without warp shuffles (OpenCL): every thread's partials go through shared memory once and each
    // thread combines its quad's four (one barrier instead of one pair per shuffle).
    Buffer quad = ctx_.features.shuffle ? nullptr : Scratch("red_quad", t, mt * 2 * T_, Scope::kShared);
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
        out.push_back(Store(quad, Load(part, {C(d)}), {Simplify(C(d * T_) + tx_)}, sp));
        Var q = MakeVar("q");
        later.push_back(Store(part, ReduceIdentity(k, t), {C(d)}, sp));
        later.push_back(
            For(q, C(0), C(4), ForKind::kUnrolled,
                Store(part,
                      ReduceCombine(k, Load(part, {C(d)}),
                                    Load(quad, {Simplify(C(d * T_) + Div(tx_, 4) * C(4) + Expr(q))})),
                      {C(d)}, sp),
                {}, sp));
      } else {
        for (int m : {1, 2})
          out.push_back(Store(
              part, ReduceCombine(k, Load(part, {C(d)}), Call(t, "tl.shfl_xor", {Load(part, {C(d)}), C(m)})),
              {C(d)}, sp));
      }
      if (xs) {
        Expr row = D.IndexAt(tx_, C(d))[0];  // (row d of this thread in the row-vector layout)
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
  if (D.kind != "replicated")
    throw UserError(ErrorKind::kLayout,
                    "T.reduce: the destination '" + r->dst.buffer->name + "' has layout " + D.desc +
                        ", which this reduction of " + S.desc + " along dim " + std::to_string(r->dim) +
                        " cannot produce",
                    sp);
  // Generic: per-thread partials over the thread's own elements, a butterfly over the warp,
  // then one partial per warp through shared memory.
  ctx_.info->choices.push_back(Loc(sp) + ": T.reduce of " + S.desc +
                               ": per-thread partials, 5-step warp butterfly, " +
                               "then per-warp partials through shared memory");
  int64_t nd = 1;
  for (auto& e : r->dst.buffer->shape) nd *= ConstOr(e, sp, "a reduction's shape");
  Buffer part = Scratch("red", t, nd, Scope::kLocal);
  Var d = MakeVar("d");
  // The totals in `part` into the destination (folded into its old values unless clear).
  auto finish = [&] {
    Expr v = Load(part, {d});
    out.push_back(For(d, C(0), C(nd), ForKind::kUnrolled,
                      Store(dst, r->clear ? v : ReduceCombine(k, Load(dst, {d}), v), {d}, sp), {}, sp));
    return Seq(out, sp);
  };
  out.push_back(For(d, C(0), C(nd), ForKind::kUnrolled, Store(part, ReduceIdentity(k, t), {d}, sp), {}, sp));
  for (int64_t l = 0; l < S.locals; ++l) {
    auto idx = S.IndexAt(tx_, C(l));
    Expr flat = C(0);
    for (size_t a = 0; a < idx.size(); ++a)
      if (static_cast<int>(a) != r->dim) flat = flat * C(S.shape[a]) + idx[a];
    // What the kernel knows of tx (0 <= tx < threads) often makes the slot a constant (one thread:
    // always), and otherwise bounds the slots the select below has to consider.
    flat = Simplify(flat, kernel_bounds_);
    const Interval range = BoundOf(flat, kernel_bounds_);
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
    Expr g = S.ValidAt(tx_, C(l));
    if (S.replicas > 1) g = And(g, Eq(S.ReplicaOf(tx_), C(0)));
    if (g) {
      g = Simplify(g, kernel_bounds_);
      int64_t gc;
      if (AsConstInt(g, &gc)) {
        if (gc == 0) continue;  // no thread holds element l
        g = Expr();             // every thread does
      }
    }
    out.push_back(g ? If(g, st, nullptr, sp) : st);
  }
  if (T_ == 1) {
    // One thread holds every element: its partials are the totals.
    ctx_.info->choices.back() = Loc(sp) + ": T.reduce of " + S.desc + ": in one thread (no exchange)";
    return finish();
  }
  // A warp shuffle names all 32 lanes of its warp; a block whose last warp is partial (threads not a
  // multiple of 32) has lanes that do not exist, so it exchanges its partials through shared memory.
  const bool partial_warp = T_ % 32 != 0;
  if (!ctx_.features.shuffle || partial_warp) {
    // Without warp shuffles (OpenCL): every thread writes its partials to shared memory; thread t
    // combines the partials of slots t, t + T, ... and publishes the totals; every thread reads them
    // (two barriers, and about 2 * nd * T shared reads per block instead of a shuffle tree).
    // With cl_khr_subgroups each sub-group first combines its partials (sub_group_reduce_*) and only
    // its first work-item writes them: slot d * T + (sub-group id), and thread t combines
    // get_num_sub_groups() partials per slot. The sub-group size is implementation-defined, so the
    // slots are sized for the worst case (T sub-groups of one work-item each).
    const bool sg = ctx_.features.subgroup_reduce && !ctx_.features.shuffle;  // (cl_khr_subgroups)
    Buffer xs = Scratch("red_smem", t, nd * T_, Scope::kShared);
    Buffer tot = Scratch("red_total", t, nd, Scope::kShared);
    ctx_.info->choices.back() =
        Loc(sp) + ": T.reduce of " + S.desc +
        (sg ? ": per-thread partials, sub_group_reduce_" + std::string(SubgroupReduceName(k)) +
                  " within each sub-group (cl_khr_subgroups), then one partial per sub-group through shared "
                  "memory (a thread per destination slot combines them)"
            : ": per-thread partials, then through shared memory (a thread per destination slot "
              "combines all " +
                  std::to_string(T_) + " partials; " +
                  (ctx_.features.shuffle
                       ? std::to_string(T_) + " threads are not whole warps, and a shuffle needs all 32 lanes"
                       : "no warp shuffles on " + ctx_.features.name +
                             (ctx_.features.subgroup_feature.empty()
                                  ? ""
                                  : ", no sub-groups: target feature '" + ctx_.features.subgroup_feature +
                                        "' off")) +
                  ")");
    Expr writer = tx_, partials = C(T_);
    if (sg) {
      Expr whole = Call(t, "tl.subgroup_reduce", {Load(part, {d}), StringImm(SubgroupReduceName(k))});
      out.push_back(For(d, C(0), C(nd), ForKind::kUnrolled, Store(part, whole, {d}, sp), {}, sp));
      writer = Call(DataType::Int(32), "tl.subgroup_id", {});
      partials = Call(DataType::Int(32), "tl.num_subgroups", {});
    }
    Stmt publish = For(d, C(0), C(nd), ForKind::kSerial,
                       Store(xs, Load(part, {d}), {Simplify(Expr(d) * C(T_) + writer)}, sp), {}, sp);
    out.push_back(sg ? If(Eq(Call(DataType::Int(32), "tl.subgroup_local_id", {}), C(0)), publish, nullptr, sp)
                     : publish);
    Var i = MakeVar("i"), w = MakeVar("w");
    Buffer one = Scratch("red_acc", t, 1, Scope::kLocal);
    Expr slot = Simplify(Expr(i) * C(T_) + tx_);
    Stmt combine = Seq(
        {Store(one, ReduceIdentity(k, t), {C(0)}, sp),
         For(w, C(0), partials, ForKind::kSerial,
             Store(one, ReduceCombine(k, Load(one, {C(0)}), Load(xs, {slot * C(T_) + Expr(w)})), {C(0)}, sp),
             {}, sp),
         Store(tot, Load(one, {C(0)}), {slot}, sp)},
        sp);
    int64_t rounds = (nd + T_ - 1) / T_;
    out.push_back(For(i, C(0), C(rounds), ForKind::kSerial,
                      nd % T_ ? If(Lt(slot, C(nd)), combine, nullptr, sp) : combine, {}, sp));
    out.push_back(For(d, C(0), C(nd), ForKind::kSerial, Store(part, Load(tot, {d}), {d}, sp), {}, sp));
    return finish();
  }
  std::vector<Stmt> bf;
  const int64_t W = ctx_.features.wave == 64 && T_ % 64 == 0 ? 64 : 32;  // HIP: butterfly over the wave64
  if (W == 64)
    ctx_.info->choices.back() =
        Loc(sp) + ": T.reduce of " + S.desc +
        ": per-thread partials, 6-step wave64 butterfly, then per-wave partials through LDS";
  for (int m : {32, 16, 8, 4, 2, 1}) {
    if (m >= W) continue;
    std::vector<Expr> sa{Load(part, {d}), C(m)};
    if (W == 64) sa.push_back(C(64));
    bf.push_back(Store(part, ReduceCombine(k, Load(part, {d}), Call(t, "tl.shfl_xor", sa)), {d}, sp));
  }
  out.push_back(For(d, C(0), C(nd), ForKind::kSerial, Seq(bf, sp), {}, sp));
  int64_t warps = (T_ + W - 1) / W;
  if (warps > 1) {
    Buffer xs = Scratch("red_smem", t, warps * nd, Scope::kShared);
    Expr warp = Div(tx_, W), lane = Mod(tx_, W);
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

Stmt GpuTileLowerer::LowerCumsum(const CumsumNode* n) {
  size_t ax = n->dim;
  std::vector<size_t> other;
  std::vector<int64_t> ext;
  for (size_t d = 0; d < n->src.ranges.size(); ++d)
    if (d != ax) {
      other.push_back(d);
      ext.push_back(ConstOr(n->src.ranges[d].extent, n->span, "a cumsum tile"));
    }
  int64_t lines = 1;
  for (auto e : ext) lines *= e;
  int64_t len = ConstOr(n->src.ranges[ax].extent, n->span, "a cumsum tile");
  DataType t = n->dst.buffer->dtype;
  Buffer acc = Scratch("scan", t, 1, Scope::kLocal);
  std::vector<Stmt> out;
  Span sp = n->span;
  bool replicated = n->src.buffer->scope == Scope::kFragment || n->dst.buffer->scope == Scope::kFragment;
  // Fragments striped a line per thread (the layout rule's choice for whole last-axis lines): thread t
  // scans lines t, t + T, ...; line it * T + t is its registers it * len ...
  // With fewer lines than threads, the first `owners` threads own them and thread t scans the lines of
  // t % owners (a replica: the same values in its registers).
  const int64_t owners = n->LineOwners(T_);
  auto by_line = [&](const Buffer& b) {
    if (b->scope != Scope::kFragment) return true;
    const Fragment& F = Layout(b.get());
    const int64_t fo = F.params.size() == 2 ? F.params[1] : F.threads;
    return F.kind == "striped" && (F.params.size() == 1 || F.params.size() == 2) && F.params[0] == len &&
           F.threads == T_ && fo == owners;
  };
  const bool striped = replicated && owners > 0 && by_line(n->src.buffer) && by_line(n->dst.buffer);
  if (striped) replicated = false;
  const int64_t O = striped ? owners : T_;  // threads that own distinct lines
  const Expr me = O == T_ ? Expr(tx_) : Simplify(Mod(tx_, O), kernel_bounds_);
  Var lv = MakeVar("line");
  int64_t per_thread = replicated ? 1 : (lines + O - 1) / O;
  int64_t cur_it = 0;
  Expr cur_pos;
  auto load = [&](const Buffer& b, const std::vector<Expr>& idx) {
    if (b->scope != Scope::kFragment) return MapLoad(b, idx);
    if (striped) return Load(MapBuffer(b), {Simplify(C(cur_it * len) + cur_pos)});
    Expr flat = C(0);
    for (size_t d = 0; d < idx.size(); ++d) flat = flat * b->shape[d] + idx[d];
    return Load(MapBuffer(b), {Simplify(flat)});
  };
  for (int64_t it = 0; it < per_thread; ++it) {
    Expr line = replicated ? Expr(lv) : C(it * O) + me;
    std::vector<Expr> ti(other.size());
    Expr rest = line;
    for (size_t d = other.size(); d-- > 0;) {
      ti[d] = d == 0 ? rest : Mod(rest, ext[d]);
      rest = Div(rest, ext[d]);
    }
    Var r = MakeVar("r");
    Expr pos = n->reverse ? C(len - 1) - Expr(r) : Expr(r);
    cur_it = it;
    cur_pos = pos;
    auto index = [&](const Region& rg) {
      std::vector<Expr> idx;
      for (auto& x : rg.ranges) idx.push_back(VisitExpr(x.min));
      for (size_t i = 0; i < other.size(); ++i) idx[other[i]] = Simplify(idx[other[i]] + ti[i]);
      idx[ax] = idx[ax] + pos;
      return idx;
    };
    Expr x = load(n->src.buffer, index(n->src));
    if (x->dtype != t) x = Cast(t, x);
    Expr dmapped = load(n->dst.buffer, index(n->dst));
    auto* dl = As<BufferLoadNode>(dmapped);
    Stmt body = Seq({Store(acc, Binary(BinaryOp::kAdd, Load(acc, {C(0)}), x), {C(0)}, sp),
                     Store(dl->buffer, Load(acc, {C(0)}), dl->indices, sp)},
                    sp);
    Stmt st = Seq({Store(acc, t.is_float() ? FloatImm(t, 0.0) : IntImm(t, 0), {C(0)}, sp),
                   For(r, C(0), C(len), ForKind::kSerial, body, {}, sp)},
                  sp);
    if (replicated)
      st = For(lv, C(0), C(lines), ForKind::kSerial, st, {}, sp);
    else if ((it + 1) * O > lines)
      st = If(Lt(line, C(lines)), st, nullptr, sp);
    out.push_back(st);
  }
  return Seq(out, sp);
}

}  // namespace gpu_lowering
}  // namespace tl
