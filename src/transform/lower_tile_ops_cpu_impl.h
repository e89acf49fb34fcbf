// Internal to LowerTileOpsCPU: the mutator that turns tile ops into loop nests for the host, and the
// registry of per-op lowerings. Each tile op registers its CPU lowering by name (TileOpNode::op) with
// a CpuOpLoweringRegistrar in the file that implements it; the built-in ops' lowerings are in
// lower_tile_ops_cpu.cc.
#pragma once
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <string>

#include "arith/simplify.h"
#include "ir/functor.h"
#include "op/reduce_math.h"

namespace tl {
namespace cpu_lowering {

// Indices of the dims of a region whose extent is not 1 (the tile's own axes).
inline std::vector<size_t> TileDims(const Region& r) {
  std::vector<size_t> d;
  for (size_t i = 0; i < r.ranges.size(); ++i)
    if (!IsConstInt(r.ranges[i].extent, 1)) d.push_back(i);
  return d;
}

// A condition that the index lies inside the buffer (only for global buffers, whose tiles may
// overhang the tensor at either end: a tile may start before it, at a negative row or column; on-chip
// buffers are sized by their tiles). The bounds the simplifier proves fold away later.
inline Expr InBounds(const Buffer& b, const std::vector<Expr>& idx) {
  if (b->scope != Scope::kGlobal) return nullptr;
  Expr cond;
  for (size_t i = 0; i < idx.size(); ++i)
    for (Expr c : {Binary(BinaryOp::kGE, idx[i], Int(0)), Binary(BinaryOp::kLT, idx[i], b->shape[i])})
      cond = cond ? Binary(BinaryOp::kAnd, cond, c) : c;
  return cond;
}

inline Expr Zero(DataType t) { return t.is_float() ? FloatImm(t, 0.0) : IntImm(t, 0); }

// A region that is the whole of its buffer (constant shape; the CPU GEMM rewrites work on those).
inline bool IsWholeTile(const Region& r) {
  if (r.ranges.size() != r.buffer->shape.size()) return false;
  for (size_t i = 0; i < r.ranges.size(); ++i) {
    int64_t ext = 0, dim = -1;
    if (!IsConstInt(r.ranges[i].min, 0) || !AsConstInt(r.ranges[i].extent, &ext) ||
        !AsConstInt(r.buffer->shape[i], &dim) || ext != dim)
      return false;
  }
  return true;
}

// Base of the CPU GEMM rewrites' scans: any reference to a buffer that a scan does not recognise
// disqualifies it, and so does being a view (T.reshape, T.view) or viewed by one, since those keep
// their plain storage. Scans visit the regions they recognise with VisitRanges (indices only).
struct TileUseScan : IRVisitor {
  std::set<const BufferNode*> cand, bad;
  void VisitBuffer(const Buffer& b) override {
    for (const BufferNode* v = b.get(); v; v = v->data.get()) bad.insert(v);
  }
  void VisitRanges(const Region& r) {
    for (auto& rg : r.ranges) {
      VisitExpr(rg.min);
      VisitExpr(rg.extent);
    }
  }
  // Candidates: the kernel's on-chip 2-D buffers (`keep` filters them); views among the
  // allocations disqualify what they view.
  void Seed(const KernelNode* n, const std::function<bool(const Buffer&)>& keep) {
    for (auto& b : n->alloc_buffers)
      if (b->scope != Scope::kGlobal && b->shape.size() == 2 && keep(b)) cand.insert(b.get());
    for (auto& b : n->alloc_buffers)
      if (b->data) VisitBuffer(b);
  }
};

// "file:line" of a span, for kernel.choices.
inline std::string SpanLine(const Span& s) {
  return s.defined() ? s.file + ":" + std::to_string(s.line) : "<unknown>";
}

class CpuTileLowerer : public IRMutator {
 public:
  /// split_tiles: a copy whose tile lies inside the tensor at run time takes an unguarded loop
  /// nest (which the host compiler vectorises); only edge tiles pay for per-element guards.
  explicit CpuTileLowerer(bool split_tiles = false) : split_tiles_(split_tiles) {}

  // Each op's lowering is registered by name (RegisterCpuOpLowering); an op without one is an error.
  Stmt VisitTileOp(const Stmt& s) override;

  // ---- what op lowerings use -----------------------------------------------------------------
  // Loop vars over `extents`, innermost last; body gets one index expr per extent.
  Stmt Nest(const std::vector<Expr>& extents, const Span& span,
            const std::function<Stmt(const std::vector<Expr>&)>& body, ForKind kind = ForKind::kParallel) {
    std::vector<Var> vars;
    static const char* names[] = {"i", "j", "k", "l", "m", "n"};
    for (size_t i = 0; i < extents.size(); ++i) vars.push_back(MakeVar(names[i % 6]));
    std::vector<Expr> ev(vars.begin(), vars.end());
    Stmt s = body(ev);
    for (size_t i = extents.size(); i-- > 0;) s = For(vars[i], Int(0), extents[i], kind, s, {}, span);
    return s;
  }

  // Index into region r for tile coordinates `t` (one per tile dim of r).
  static std::vector<Expr> At(const Region& r, const std::vector<size_t>& dims, const std::vector<Expr>& t) {
    std::vector<Expr> idx;
    for (auto& rg : r.ranges) idx.push_back(rg.min);
    for (size_t i = 0; i < dims.size(); ++i) idx[dims[i]] = Binary(BinaryOp::kAdd, idx[dims[i]], t[i]);
    return idx;
  }

  static Expr Guarded(const Buffer& b, const std::vector<Expr>& idx, DataType t) {
    Expr v = Load(b, idx);
    if (v->dtype != t) v = Cast(t, v);
    Expr ok = InBounds(b, idx);
    return ok ? Select(ok, v, Zero(t)) : v;
  }
  static Stmt GuardedStore(const Buffer& b, Expr v, const std::vector<Expr>& idx, const Span& sp) {
    if (v->dtype != b->dtype) v = Cast(b->dtype, v);
    Stmt st = Store(b, v, idx, sp);
    Expr ok = InBounds(b, idx);
    return ok ? If(ok, st, nullptr, sp) : st;
  }

  // ---- B tiles packed by their copies (PackGemmTilesCPU's `tl.cpu_packed_b`) ----------------
  struct PackedB {
    Buffer tile;    // the tile as the program declares it (K x N, or N x K for trans_B)
    Buffer panels;  // its float panels: K x roundup(N, 32) elements
    bool trans;
  };
  Stmt VisitKernel(const Stmt& s, const KernelNode* n) override {
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
  Stmt VisitAttr(const Stmt& s, const AttrStmtNode* n) override {
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
  Buffer VisitBuffer(const Buffer& b) override {
    auto it = packed_.find(b.get());
    return it == packed_.end() ? b : it->second.panels;
  }
  static Expr AddressOf(const Buffer& b, std::vector<Expr> idx) {
    return Call(DataType::Handle(), "address_of", {Load(b, std::move(idx))});
  }
  // The copy into a packed tile: tl_cpu::pack_b_tile(first, ld, panels, K, N, k_valid, n_valid, k_lo,
  // n_lo, trans), where the valid counts and the leading rows / columns before the tensor (lo) clip the
  // tile to the tensor (the rest of the panels is zero-filled) and `first` is the first element inside.
  Stmt LowerPackCopy(const CopyNode* n, const PackedB& p) {
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
             {AddressOf(src, first), LeadingDim(n->src, sd[0]), AddressOf(p.panels, {Int(0)}), K, N,
              p.trans ? v1 : v0, p.trans ? v0 : v1, p.trans ? lo1 : lo0, p.trans ? lo0 : lo1, Bool(p.trans)}),
        n->span);
  }

  // A copy into a cached tile (CacheGemmTilesCPU) runs only in the worker that claims the slot.
  Stmt LowerCopy(const CopyNode* n) {
    auto ch = cached_.find(n->dst.buffer.get());
    if (ch == cached_.end()) return LowerCopyInto(n);
    const std::vector<Expr> slot = {ch->second.first, ch->second.second};
    return If(Call(DataType::Bool(), "tl_cpu_cache_claim", slot),
              Seq({LowerCopyInto(n), Evaluate(Call(DataType::Void(), "tl_cpu_cache_publish", slot), n->span)},
                  n->span),
              nullptr, n->span);
  }

  Stmt LowerCopyInto(const CopyNode* n) {
    auto pk = packed_.find(n->dst.buffer.get());
    if (pk != packed_.end()) return LowerPackCopy(n, pk->second);
    auto sd = TileDims(n->src), dd = TileDims(n->dst);
    TL_ICHECK(sd.size() == dd.size(), "copy tile ranks differ");
    std::vector<Expr> ext;
    for (size_t d : dd) ext.push_back(n->dst.ranges[d].extent);
    Stmt guarded = Nest(ext, n->span, [&](const std::vector<Expr>& t) {
      auto si = At(n->src, sd, t), di = At(n->dst, dd, t);
      return GuardedStore(n->dst.buffer, Guarded(n->src.buffer, si, n->dst.buffer->dtype), di, n->span);
    });
    Expr inside = TileInside(n->src);
    Expr dst_inside = TileInside(n->dst);
    if (dst_inside) inside = inside ? Binary(BinaryOp::kAnd, inside, dst_inside) : dst_inside;
    if (!split_tiles_ || !inside) return guarded;
    Stmt plain = Nest(ext, n->span, [&](const std::vector<Expr>& t) {
      auto si = At(n->src, sd, t), di = At(n->dst, dd, t);
      Expr v = Load(n->src.buffer, si);
      if (v->dtype != n->dst.buffer->dtype) v = Cast(n->dst.buffer->dtype, v);
      return Store(n->dst.buffer, v, di, n->span);
    });
    return If(inside, plain, guarded, n->span);
  }

  // The whole tile of a global region lies inside its tensor (null for on-chip buffers).
  static Expr TileInside(const Region& r) {
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

  Stmt LowerFill(const FillNode* n) {
    auto dd = TileDims(n->dst);
    std::vector<Expr> ext;
    for (size_t d : dd) ext.push_back(n->dst.ranges[d].extent);
    return Nest(ext, n->span, [&](const std::vector<Expr>& t) {
      return GuardedStore(n->dst.buffer, n->value, At(n->dst, dd, t), n->span);
    });
  }

  // Row stride of the last-but-one tile dim of a region's buffer (buffers are dense row-major).
  static Expr LeadingDim(const Region& r, size_t dim) {
    Expr s = Int(1);
    for (size_t i = dim + 1; i < r.buffer->shape.size(); ++i)
      s = Binary(BinaryOp::kMul, s, r.buffer->shape[i]);
    return s;
  }

  Stmt LowerGemm(const GemmNode* n) {
    auto ad = TileDims(n->A), bd = TileDims(n->B), cd = TileDims(n->C);
    auto mat = [&](const Region& r, std::vector<size_t> d, const char* what) {
      if (d.size() == 1) d.insert(d.begin(), r.ranges.size() - 2);  // a 1-row tile
      if (d.size() != 2)
        throw UserError(ErrorKind::kType, std::string("T.gemm operand ") + what + " must be a 2-D tile",
                        n->span);
      return d;
    };
    ad = mat(n->A, ad, "A");
    bd = mat(n->B, bd, "B");
    cd = mat(n->C, cd, "C");
    Expr M = n->C.ranges[cd[0]].extent, N = n->C.ranges[cd[1]].extent;
    Expr K = n->trans_A ? n->A.ranges[ad[0]].extent : n->A.ranges[ad[1]].extent;
    auto ptr = [](const Region& r) {
      std::vector<Expr> idx;
      for (auto& rg : r.ranges) idx.push_back(rg.min);
      return Call(DataType::Handle(), "address_of", {Load(r.buffer, idx)});
    };
    std::vector<Stmt> out;
    if (n->clear_accum) {
      auto fill = std::make_shared<FillNode>(n->C, Zero(n->C.buffer->dtype), n->span);
      out.push_back(LowerFill(fill.get()));
    }
    auto pk = packed_.find(n->B.buffer.get());
    if (pk != packed_.end()) {  // B is already in panels (PackGemmTilesCPU)
      out.push_back(Evaluate(Call(DataType::Void(), "tl_cpu_gemm_packed_b",
                                  {ptr(n->A), LeadingDim(n->A, ad[0]), AddressOf(pk->second.panels, {Int(0)}),
                                   ptr(n->C), LeadingDim(n->C, cd[0]), M, N, K, Bool(n->trans_A)}),
                             n->span));
      return Seq(out, n->span);
    }
    out.push_back(
        Evaluate(Call(DataType::Void(), "tl_cpu_gemm",
                      {ptr(n->A), LeadingDim(n->A, ad[0]), ptr(n->B), LeadingDim(n->B, bd[0]), ptr(n->C),
                       LeadingDim(n->C, cd[0]), M, N, K, Bool(n->trans_A), Bool(n->trans_B)}),
                 n->span));
    return Seq(out, n->span);
  }

  Stmt LowerReduce(const ReduceNode* n) {
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
      return Nest(
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
    return Nest(
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

  Stmt LowerAtomic(const AtomicAddNode* n) {
    auto atomic = [&](const std::vector<Expr>& di, Expr v) {
      if (v->dtype != n->dst.buffer->dtype) v = Cast(n->dst.buffer->dtype, v);
      Stmt st = Evaluate(Call(DataType::Void(), n->CallName(),
                              {Call(DataType::Handle(), "address_of", {Load(n->dst.buffer, di)}), v}),
                         n->span);
      Expr ok = InBounds(n->dst.buffer, di);
      return ok ? If(ok, st, nullptr, n->span) : st;
    };
    if (!n->src) {
      std::vector<Expr> di;
      for (auto& rg : n->dst.ranges) di.push_back(rg.min);
      return atomic(di, n->value);
    }
    auto sd = TileDims(*n->src), dd = TileDims(n->dst);
    std::vector<Expr> ext;
    for (size_t d : sd) ext.push_back(n->src->ranges[d].extent);
    return Nest(ext, n->span, [&](const std::vector<Expr>& t) {
      return atomic(At(n->dst, dd, t), Guarded(n->src->buffer, At(*n->src, sd, t), n->dst.buffer->dtype));
    });
  }

  bool split_tiles_ = false;
  std::map<const BufferNode*, PackedB> packed_;
  std::map<const BufferNode*, std::pair<Expr, Expr>> cached_;  // tile -> (cache id, slot) where bound

  Stmt LowerCumsum(const CumsumNode* n) {
    size_t ax = n->dim;
    std::vector<size_t> other;
    for (size_t d = 0; d < n->src.ranges.size(); ++d)
      if (d != ax) other.push_back(d);
    std::vector<Expr> ext;
    for (size_t d : other) ext.push_back(n->src.ranges[d].extent);
    Expr len = n->src.ranges[ax].extent;
    DataType t = n->dst.buffer->dtype;
    return Nest(
        ext, n->span,
        [&](const std::vector<Expr>& ti) {
          auto index = [&](const Region& rg, Expr pos) {
            std::vector<Expr> idx;
            for (auto& r : rg.ranges) idx.push_back(r.min);
            for (size_t i = 0; i < other.size(); ++i)
              idx[other[i]] = Binary(BinaryOp::kAdd, idx[other[i]], ti[i]);
            idx[ax] = Binary(BinaryOp::kAdd, idx[ax], pos);
            return idx;
          };
          // pos runs 0..len-1 forward, len-1..0 in reverse; each element adds its predecessor's sum.
          Var r = MakeVar("r");
          Expr pos = n->reverse ? Binary(BinaryOp::kSub, Binary(BinaryOp::kSub, len, Int(1)), r) : Expr(r);
          Expr prev = n->reverse ? Binary(BinaryOp::kAdd, pos, Int(1)) : Binary(BinaryOp::kSub, pos, Int(1));
          Expr x = Load(n->src.buffer, index(n->src, pos));
          if (x->dtype != t) x = Cast(t, x);
          Expr sum = Select(Binary(BinaryOp::kGT, r, Int(0)),
                            Binary(BinaryOp::kAdd, Load(n->dst.buffer, index(n->dst, prev)), x), x);
          return For(r, Int(0), len, ForKind::kSerial, Store(n->dst.buffer, sum, index(n->dst, pos), n->span),
                     {}, n->span);
        },
        ForKind::kSerial);
  }
};

using CpuOpLowering = std::function<Stmt(CpuTileLowerer&, const TileOpNode&)>;
void RegisterCpuOpLowering(const std::string& op, CpuOpLowering f);
struct CpuOpLoweringRegistrar {
  CpuOpLoweringRegistrar(const std::string& op, CpuOpLowering f) { RegisterCpuOpLowering(op, std::move(f)); }
};

}  // namespace cpu_lowering
}  // namespace tl
