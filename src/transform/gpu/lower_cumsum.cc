// LowerTileOpsGPU, the shared T.cumsum: a thread per scanned line (or one thread for a whole-tile scan),
// with the layout rule that places a scanned fragment's lines on those threads.
#include "arith/simplify.h"
#include "layout/fragment.h"
#include "op/reduce_math.h"
#include "transform/gpu/tile_lowerer.h"
#include "transform/gpu_util.h"
#include "transform/layout_rules.h"

namespace tl {
namespace gpu_lowering {

namespace {
Stmt LowerCumsum(GpuTileLowerer& L, const CumsumNode* n);

using namespace gpu_pass;

Stmt LowerCumsum(GpuTileLowerer& L, const CumsumNode* n) {
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
  Buffer acc = L.Scratch("scan", t, 1, Scope::kLocal);
  std::vector<Stmt> out;
  Span sp = n->span;
  bool replicated = n->src.buffer->scope == Scope::kFragment || n->dst.buffer->scope == Scope::kFragment;
  // Fragments striped a line per thread (the layout rule's choice for whole last-axis lines): thread t
  // scans lines t, t + T, ...; line it * T + t is its registers it * len ...
  // With fewer lines than threads, the first `owners` threads own them and thread t scans the lines of
  // t % owners (a replica: the same values in its registers).
  const int64_t owners = n->LineOwners(L.T_);
  auto by_line = [&](const Buffer& b) {
    if (b->scope != Scope::kFragment) return true;
    const Fragment& F = L.Layout(b.get());
    const int64_t fo = F.params.size() == 2 ? F.params[1] : F.threads;
    return F.kind == "striped" && (F.params.size() == 1 || F.params.size() == 2) && F.params[0] == len &&
           F.threads == L.T_ && fo == owners;
  };
  const bool striped = replicated && owners > 0 && by_line(n->src.buffer) && by_line(n->dst.buffer);
  if (striped) replicated = false;
  const int64_t O = striped ? owners : L.T_;  // threads that own distinct lines
  const Expr me = O == L.T_ ? Expr(L.tx_) : Simplify(Mod(L.tx_, O), L.kernel_bounds_);
  Var lv = MakeVar("line");
  int64_t per_thread = replicated ? 1 : (lines + O - 1) / O;
  int64_t cur_it = 0;
  Expr cur_pos;
  auto load = [&](const Buffer& b, const std::vector<Expr>& idx) {
    if (b->scope != Scope::kFragment) return L.MapLoad(b, idx);
    if (striped) return Load(L.MapBuffer(b), {Simplify(C(cur_it * len) + cur_pos)});
    Expr flat = C(0);
    for (size_t d = 0; d < idx.size(); ++d) flat = flat * b->shape[d] + idx[d];
    return Load(L.MapBuffer(b), {Simplify(flat)});
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
      for (auto& x : rg.ranges) idx.push_back(L.VisitExpr(x.min));
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

// The layout rule: a scan over a fragment runs a line per thread (along the last axis) or whole in every thread.
const LayoutRuleRegistrar kCumsumRule("cumsum", [](LayoutRuleContext& c, const TileOpNode& n) {
  auto* s = static_cast<const CumsumNode*>(&n);
  bool changed = false;
  for (auto* b : {&s->src.buffer, &s->dst.buffer})
    if ((*b)->scope == Scope::kFragment) {
      std::vector<int64_t> shape;
      for (auto& e : (*b)->shape) shape.push_back(ConstOr(e, n.span, "a cumsum tile"));
      // A line per thread when the scan runs along whole last-axis lines (with fewer lines than threads,
      // the threads past the owners hold replicas); otherwise every thread holds it all.
      const int64_t owners = s->LineOwners(c.threads());
      Fragment f = owners ? Striped(shape, c.threads(), shape.back(), owners) : Replicated(shape, c.threads());
      changed |= c.Assign(*b, f, "T.cumsum on a fragment", n.span);
    }
  return changed;
});

const GpuOpLoweringRegistrar kCumsum("cumsum", [](GpuTileLowerer& L, const TileOpNode& n) {
  return LowerCumsum(L, static_cast<const CumsumNode*>(&n));
});
}  // namespace

}  // namespace gpu_lowering
}  // namespace tl
