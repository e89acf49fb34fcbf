// LowerTileOpsCPU, T.copy: a loop nest (unguarded where the tile lies inside the tensor), a packed B tile
// (tl_cpu::pack_b_tile) or a cached tile claimed by one worker.
#include "transform/cpu/tile_lowerer.h"

namespace tl {
namespace cpu_lowering {

namespace {
Stmt LowerCopy(CpuTileLowerer& L, const CopyNode* n);
Stmt LowerCopyInto(CpuTileLowerer& L, const CopyNode* n);
Stmt LowerPackCopy(CpuTileLowerer& L, const CopyNode* n, const CpuTileLowerer::PackedB& p);

Stmt LowerPackCopy(CpuTileLowerer& L, const CopyNode* n, const CpuTileLowerer::PackedB& p) {
  auto sd = TileDims(n->src);
  const Buffer& src = n->src.buffer;
  std::vector<Expr> mins;
  for (auto& rg : n->src.ranges) mins.push_back(rg.min);
  Expr others;  // the source's other (extent-1) indices inside the tensor
  for (size_t i = 0; i < mins.size(); ++i) {
    if (i == sd[0] || i == sd[1]) continue;
    for (Expr c : {Binary(BinaryOp::kGE, mins[i], Int(0)), Binary(BinaryOp::kLT, mins[i], src->shape[i])})
      others = others ? Binary(BinaryOp::kAnd, others, c) : c;
  }
  auto valid = [&](size_t d) {
    Expr v = Binary(
        BinaryOp::kMax, Int(0),
        Binary(BinaryOp::kMin, n->src.ranges[d].extent, Binary(BinaryOp::kSub, src->shape[d], mins[d])));
    return others ? Select(others, v, Int(0)) : v;
  };
  auto lo = [&](size_t d) {
    return Binary(BinaryOp::kMax, Int(0), Binary(BinaryOp::kSub, Int(0), mins[d]));
  };
  Expr v0 = valid(sd[0]), v1 = valid(sd[1]), lo0 = lo(sd[0]), lo1 = lo(sd[1]);
  std::vector<Expr> first = mins;
  first[sd[0]] = Binary(BinaryOp::kAdd, mins[sd[0]], lo0);
  first[sd[1]] = Binary(BinaryOp::kAdd, mins[sd[1]], lo1);
  const Expr K = p.tile->shape[p.trans ? 1 : 0], N = p.tile->shape[p.trans ? 0 : 1];
  return Evaluate(
      Call(DataType::Void(), "tl_cpu_pack_b",
           {L.AddressOf(src, first), L.LeadingDim(n->src, sd[0]), L.AddressOf(p.panels, {Int(0)}), K, N,
            p.trans ? v1 : v0, p.trans ? v0 : v1, p.trans ? lo1 : lo0, p.trans ? lo0 : lo1, Bool(p.trans)}),
      n->span);
}

Stmt LowerCopy(CpuTileLowerer& L, const CopyNode* n) {
  auto ch = L.cached_.find(n->dst.buffer.get());
  if (ch == L.cached_.end()) return LowerCopyInto(L, n);
  const std::vector<Expr> slot = {ch->second.first, ch->second.second};
  return If(Call(DataType::Bool(), "tl_cpu_cache_claim", slot),
            Seq({LowerCopyInto(L, n), Evaluate(Call(DataType::Void(), "tl_cpu_cache_publish", slot), n->span)},
                n->span),
            nullptr, n->span);
}

Stmt LowerCopyInto(CpuTileLowerer& L, const CopyNode* n) {
  auto pk = L.packed_.find(n->dst.buffer.get());
  if (pk != L.packed_.end()) return LowerPackCopy(L, n, pk->second);
  auto sd = TileDims(n->src), dd = TileDims(n->dst);
  TL_ICHECK(sd.size() == dd.size(), "copy tile ranks differ");
  std::vector<Expr> ext;
  for (size_t d : dd) ext.push_back(n->dst.ranges[d].extent);
  Stmt guarded = L.Nest(ext, n->span, [&](const std::vector<Expr>& t) {
    auto si = L.At(n->src, sd, t), di = L.At(n->dst, dd, t);
    return L.GuardedStore(n->dst.buffer, L.Guarded(n->src.buffer, si, n->dst.buffer->dtype), di, n->span);
  });
  Expr inside = L.TileInside(n->src);
  Expr dst_inside = L.TileInside(n->dst);
  if (dst_inside) inside = inside ? Binary(BinaryOp::kAnd, inside, dst_inside) : dst_inside;
  if (!L.split_tiles_ || !inside) return guarded;
  Stmt plain = L.Nest(ext, n->span, [&](const std::vector<Expr>& t) {
    auto si = L.At(n->src, sd, t), di = L.At(n->dst, dd, t);
    Expr v = Load(n->src.buffer, si);
    if (v->dtype != n->dst.buffer->dtype) v = Cast(n->dst.buffer->dtype, v);
    return Store(n->dst.buffer, v, di, n->span);
  });
  return If(inside, plain, guarded, n->span);
}

const CpuOpLoweringRegistrar kLowerCopy("copy", [](CpuTileLowerer& L, const TileOpNode& n) {
  return LowerCopy(L, static_cast<const CopyNode*>(&n));
});
}  // namespace
}  // namespace cpu_lowering
}  // namespace tl
