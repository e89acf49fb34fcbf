// LowerTileOpsCPU: what the per-op lowerings share (loop nests, guarded accesses, packed and cached tiles).
#include "transform/cpu/tile_lowerer.h"

namespace tl {
namespace cpu_lowering {

Stmt CpuTileLowerer::Nest(const std::vector<Expr>& extents, const Span& span,
          const std::function<Stmt(const std::vector<Expr>&)>& body, ForKind kind) {
  std::vector<Var> vars;
  static const char* names[] = {"i", "j", "k", "l", "m", "n"};
  for (size_t i = 0; i < extents.size(); ++i) vars.push_back(MakeVar(names[i % 6]));
  std::vector<Expr> ev(vars.begin(), vars.end());
  Stmt s = body(ev);
  for (size_t i = extents.size(); i-- > 0;) s = For(vars[i], Int(0), extents[i], kind, s, {}, span);
  return s;
}

std::vector<Expr> CpuTileLowerer::At(const Region& r, const std::vector<size_t>& dims, const std::vector<Expr>& t) {
  std::vector<Expr> idx;
  for (auto& rg : r.ranges) idx.push_back(rg.min);
  for (size_t i = 0; i < dims.size(); ++i) idx[dims[i]] = Binary(BinaryOp::kAdd, idx[dims[i]], t[i]);
  return idx;
}

Expr CpuTileLowerer::Guarded(const Buffer& b, const std::vector<Expr>& idx, DataType t) {
  Expr v = Load(b, idx);
  if (v->dtype != t) v = Cast(t, v);
  Expr ok = InBounds(b, idx);
  return ok ? Select(ok, v, Zero(t)) : v;
}

Stmt CpuTileLowerer::GuardedStore(const Buffer& b, Expr v, const std::vector<Expr>& idx, const Span& sp) {
  if (v->dtype != b->dtype) v = Cast(b->dtype, v);
  Stmt st = Store(b, v, idx, sp);
  Expr ok = InBounds(b, idx);
  return ok ? If(ok, st, nullptr, sp) : st;
}

Stmt CpuTileLowerer::VisitKernel(const Stmt& s, const KernelNode* n) {
  if (!split_tiles_) return IRMutator::VisitKernel(s, n);
  std::map<const BufferNode*, PackedB> saved = std::move(packed_);
  packed_.clear();
  PostOrderVisitStmt(n->body, [&](const Stmt& st) {
    auto* a = As<AttrStmtNode>(st);
    if (!a || a->key != "tl.cpu_packed_b" || !a->node) return;
    const Buffer& b = a->node;
    int64_t r = 0, c = 0;
    TL_ICHECK(b->shape.size() == 2 && AsConstInt(b->shape[0], &r) && AsConstInt(b->shape[1], &c),
              "tl.cpu_packed_b on a tile without a constant 2-D shape");
    const bool trans = !IsConstInt(a->value, 0);
    const int64_t k = trans ? c : r, nn = trans ? r : c;
    packed_[b.get()] = {
        b, MakeBuffer(b->name, DataType::Float(32), {Int(k * ((nn + 31) / 32 * 32))}, b->scope, b->span),
        trans};
  });
  Stmt out = IRMutator::VisitKernel(s, n);
  packed_ = std::move(saved);
  return out;
}

Stmt CpuTileLowerer::VisitAttr(const Stmt& s, const AttrStmtNode* n) {
  if (n->key == "tl.cpu_packed_b") return VisitStmt(n->body);
  if (n->key == "tl.cpu_cached_tile") {  // the tile is the cache's slot: bind it there
    auto* c = As<CallNode>(n->value);
    TL_ICHECK(c && c->op == "tl_cpu_cache_slot" && c->args.size() == 2, "malformed tl.cpu_cached_tile");
    const Expr id = c->args[0], slot = VisitExpr(c->args[1]);
    cached_[n->node.get()] = {id, slot};
    Stmt body = VisitStmt(n->body);
    cached_.erase(n->node.get());
    return AttrStmt(VisitBuffer(n->node), "tl.cpu_cache_bind",
                    Call(DataType::Handle(), "tl_cpu_cache_tile", {id, slot}), body, n->span);
  }
  return IRMutator::VisitAttr(s, n);
}

Buffer CpuTileLowerer::VisitBuffer(const Buffer& b) {
  auto it = packed_.find(b.get());
  return it == packed_.end() ? b : it->second.panels;
}

Expr CpuTileLowerer::AddressOf(const Buffer& b, std::vector<Expr> idx) {
  return Call(DataType::Handle(), "address_of", {Load(b, std::move(idx))});
}

Expr CpuTileLowerer::TileInside(const Region& r) {
  if (r.buffer->scope != Scope::kGlobal) return nullptr;
  Expr cond;
  for (size_t i = 0; i < r.ranges.size(); ++i) {
    const Range& rg = r.ranges[i];
    for (Expr c : {Binary(BinaryOp::kGE, rg.min, Int(0)),
                   Binary(BinaryOp::kLE, Binary(BinaryOp::kAdd, rg.min, rg.extent), r.buffer->shape[i])})
      cond = cond ? Binary(BinaryOp::kAnd, cond, c) : c;
  }
  return cond;
}

Expr CpuTileLowerer::LeadingDim(const Region& r, size_t dim) {
  Expr s = Int(1);
  for (size_t i = dim + 1; i < r.buffer->shape.size(); ++i)
    s = Binary(BinaryOp::kMul, s, r.buffer->shape[i]);
  return s;
}

}  // namespace cpu_lowering
}  // namespace tl
