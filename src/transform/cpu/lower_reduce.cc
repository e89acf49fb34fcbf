// LowerTileOpsCPU, T.reduce_*: loop nests with the combiners of op/reduce_math.h.
#include "transform/cpu/tile_lowerer.h"

namespace tl {
namespace cpu_lowering {

namespace {
Stmt LowerReduce(CpuTileLowerer& L, const ReduceNode* n) {
  // Axes of the source other than the reduced one map, in order, onto the destination's tile
  // axes; the reduced axis becomes the inner serial loop.
  auto sd = TileDims(n->src);
  std::vector<size_t> keep;
  size_t red = n->dim;
  for (size_t d = 0; d < n->src.ranges.size(); ++d)
    if (d != red && !IsConstInt(n->src.ranges[d].extent, 1)) keep.push_back(d);
  auto dd = TileDims(n->dst);
  std::vector<Expr> ext;
  for (size_t d : keep) ext.push_back(n->src.ranges[d].extent);
  DataType t = n->dst.buffer->dtype;
  Expr init = ReduceIdentity(n->reduce_kind, t);
  // An on-chip float tile reduced along its last (contiguous) axis: tl_cpu::reduce_row keeps 16
  // partial results, which the host compiler vectorises (a single running value cannot be).
  const bool fp = t.code() == DataType::Code::kFloat && (t.bits() == 32 || t.bits() == 64);
  if (fp && n->src.buffer->dtype == t && n->src.buffer != n->dst.buffer &&
      n->src.buffer->scope != Scope::kGlobal && n->dst.buffer->scope != Scope::kGlobal &&
      red + 1 == n->src.ranges.size())
    return L.Nest(
        ext, n->span,
        [&](const std::vector<Expr>& t_idx) {
          std::vector<Expr> di, si;
          for (auto& rg : n->dst.ranges) di.push_back(rg.min);
          for (size_t i = 0; i < dd.size() && i < t_idx.size(); ++i)
            di[dd[i]] = Binary(BinaryOp::kAdd, di[dd[i]], t_idx[i]);
          for (auto& rg : n->src.ranges) si.push_back(rg.min);
          for (size_t i = 0; i < keep.size(); ++i)
            si[keep[i]] = Binary(BinaryOp::kAdd, si[keep[i]], t_idx[i]);
          auto addr = [](const Buffer& b, const std::vector<Expr>& idx) {
            return Call(DataType::Handle(), "address_of", {Load(b, idx)});
          };
          return Evaluate(Call(DataType::Void(), "tl_cpu_reduce_row",
                               {Int(static_cast<int64_t>(n->reduce_kind)), addr(n->src.buffer, si),
                                n->src.ranges[red].extent, addr(n->dst.buffer, di), Bool(n->clear)}),
                          n->span);
        },
        ForKind::kSerial);
  return L.Nest(
      ext, n->span,
      [&](const std::vector<Expr>& t_idx) {
        std::vector<Expr> di;
        for (auto& rg : n->dst.ranges) di.push_back(rg.min);
        for (size_t i = 0; i < dd.size() && i < t_idx.size(); ++i)
          di[dd[i]] = Binary(BinaryOp::kAdd, di[dd[i]], t_idx[i]);
        Var r = MakeVar("r");
        std::vector<Expr> si;
        for (auto& rg : n->src.ranges) si.push_back(rg.min);
        for (size_t i = 0; i < keep.size(); ++i)
          si[keep[i]] = Binary(BinaryOp::kAdd, si[keep[i]], t_idx[i]);
        si[red] = Binary(BinaryOp::kAdd, si[red], r);
        Expr x = ReduceElement(n->reduce_kind, Load(n->src.buffer, si), t);
        Expr upd = ReduceCombine(n->reduce_kind, Load(n->dst.buffer, di), x);
        Stmt loop = For(r, Int(0), n->src.ranges[red].extent, ForKind::kSerial,
                        Store(n->dst.buffer, upd, di, n->span), {}, n->span);
        // Without clear, the reduction folds the previous value of dst in (TileLang semantics).
        Stmt first = n->clear ? Store(n->dst.buffer, init, di, n->span) : nullptr;
        return Seq({first, loop}, n->span);
      },
      ForKind::kSerial);
}

const CpuOpLoweringRegistrar kLowerReduce("reduce", [](CpuTileLowerer& L, const TileOpNode& n) {
  return LowerReduce(L, static_cast<const ReduceNode*>(&n));
});
}  // namespace
}  // namespace cpu_lowering
}  // namespace tl
