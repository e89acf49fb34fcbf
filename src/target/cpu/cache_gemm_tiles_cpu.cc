// CacheGemmTilesCPU; see cache_gemm_tiles_cpu.h.
#include "target/cpu/cache_gemm_tiles_cpu.h"

#include <algorithm>
#include <map>
#include <set>

#include "arith/simplify.h"
#include "ir/functor.h"
#include "ir/structural.h"
#include "op/copy.h"
#include "op/gemm.h"
#include "transform/cpu/tile_lowerer.h"

namespace tl {
namespace {

constexpr int64_t kMaxCacheBytes = int64_t(1) << 30;  // per kernel call, all its caches together

// Buffers something in the function writes (stores, tile-op outputs, or hands out by address).
struct Written : IRVisitor {
  std::set<const BufferNode*> w;
  void VisitStore(const StoreNode* n) override {
    w.insert(n->buffer.get());
    IRVisitor::VisitStore(n);
  }
  void VisitTileOp(const StmtNode* s) override {
    if (auto* op = dynamic_cast<const TileOpNode*>(s))
      for (auto& [r, access] : op->Regions())
        if (access != Access::kRead) w.insert(r->buffer.get());
    IRVisitor::VisitTileOp(s);
  }
  void VisitCall(const CallNode* n) override {
    if (n->op == "address_of")
      if (auto* l = As<BufferLoadNode>(n->args[0])) w.insert(l->buffer.get());
    IRVisitor::VisitCall(n);
  }
};

// The copies into each candidate tile, and whether anything but those and gemm operands names it.
struct Scan : cpu_lowering::TileUseScan {
  std::map<const BufferNode*, std::vector<const CopyNode*>> copies;
  std::map<const BufferNode*, int> gemms;
  std::map<const BufferNode*, std::set<int>> roles;  // 0/1: A (trans_A), 2/3: B (trans_B)
  void VisitTileOp(const StmtNode* s) override {
    if (auto* c = dynamic_cast<const CopyNode*>(s)) {
      if (cand.count(c->dst.buffer.get()) && c->dst.IsWhole()) {
        copies[c->dst.buffer.get()].push_back(c);
        VisitRegion(c->src);
        VisitRanges(c->dst);
        return;
      }
    }
    if (auto* g = As<GemmNode>(s)) {  // by name: T.mma_gemm_blockscaled (a GemmNode too) is not one
      const BufferNode* a = g->A.buffer.get();
      const BufferNode* b = g->B.buffer.get();
      const bool ca = cand.count(a) && g->A.IsWhole(), cb = cand.count(b) && g->B.IsWhole();
      if (ca || cb) {
        if (ca) ++gemms[a], roles[a].insert(g->trans_A ? 1 : 0);
        if (cb) ++gemms[b], roles[b].insert(g->trans_B ? 3 : 2);
        ca ? VisitRanges(g->A) : VisitRegion(g->A);
        cb ? VisitRanges(g->B) : VisitRegion(g->B);
        VisitRegion(g->C);
        return;
      }
    }
    IRVisitor::VisitTileOp(s);
  }
};

bool SameShape(const Buffer& a, const Buffer& b) {
  if (a->shape.size() != b->shape.size()) return false;
  for (size_t i = 0; i < a->shape.size(); ++i)
    if (!StructuralEqual(a->shape[i], b->shape[i])) return false;
  return true;
}

struct Cache {
  int id;
  Buffer tile;
  const CopyNode* copy;
  Expr slots, slot;
};

Expr I64(Expr e) { return e->dtype == DataType::Int(64) ? e : Cast(DataType::Int(64), e); }

// The copy of a statement item (the item itself, or guarded by an if without else).
const CopyNode* CopyOf(const Stmt& s) {
  if (auto* c = As<CopyNode>(s)) return c;
  if (auto* i = As<IfNode>(s))
    if (!i->else_case) return As<CopyNode>(i->then_case);
  return nullptr;
}

// Whether every reference to `t` in `s` lies inside a tl.cpu_cached_tile attr of t.
struct Outside : IRVisitor {
  const BufferNode* t;
  int depth = 0;
  bool found = false;
  void VisitBuffer(const Buffer& b) override { found |= b.get() == t && depth == 0; }
  void VisitAttr(const AttrStmtNode* n) override {
    const bool mine = n->key == "tl.cpu_cached_tile" && n->node.get() == t;
    depth += mine;
    IRVisitor::VisitAttr(n);
    depth -= mine;
  }
};

class Cacher : public IRMutator {
 public:
  Cacher(const PrimFunc& f, std::vector<std::string>* choices) : choices_(choices) {
    Written w;
    w.VisitStmt(f->body);
    written_ = std::move(w.w);
    // A tensor at an address read from a pointer table (T.make_tensor(table[i], ...)) is a different tensor
    // in each block: its tiles cannot be shared between blocks.
    PostOrderVisitStmt(f->body, [&](const Stmt& x) {
      if (auto* a = As<AttrStmtNode>(x); a && a->key == "tl.buffer_bind" && a->node)
        rebound_.insert(a->node.get());
    });
  }

  Stmt VisitKernel(const Stmt& s, const KernelNode* n) override {
    Scan scan;
    scan.Seed(n, [](const Buffer&) { return true; });
    scan.VisitStmt(n->body);
    caches_.clear();
    decls_.clear();
    int64_t cache_bytes = 0;
    for (auto& b : n->alloc_buffers) {
      const BufferNode* t = b.get();
      if (!scan.cand.count(t) || scan.bad.count(t) || !scan.gemms.count(t) || scan.copies[t].size() != 1)
        continue;
      const CopyNode* c = scan.copies[t][0];
      const Buffer& src = c->src.buffer;
      if (src->scope != Scope::kGlobal || src->shape.size() != 2 || written_.count(src.get()) ||
          rebound_.count(src.get()))
        continue;
      auto sd = cpu_lowering::TileDims(c->src);
      if (sd.size() != 2) continue;
      bool aligned = true;
      // Slot row * tiles per row + column of the tile; a tile past the tensor's end (a grid larger
      // than the tensor) or before its start reads only zeros, and all such tiles share the extra last
      // slot.
      Expr idx[2], inside;
      for (size_t d = 0; d < 2 && aligned; ++d) {
        const Range& r = c->src.ranges[d];
        int64_t e = 0, tile = 0;
        aligned = AsConstInt(r.extent, &e) && AsConstInt(b->shape[d], &tile) && e == tile && e > 0 &&
                  IsConstInt(Simplify(Binary(BinaryOp::kFloorMod, r.min, r.extent)), 0);
        idx[d] = Binary(BinaryOp::kFloorDiv, I64(r.min), IntImm(DataType::Int(64), e));
        Expr in = Binary(BinaryOp::kAnd, Binary(BinaryOp::kGE, I64(r.min), IntImm(DataType::Int(64), 0)),
                         Binary(BinaryOp::kLT, I64(r.min), I64(src->shape[d])));
        inside = d == 0 ? in : Binary(BinaryOp::kAnd, inside, in);
      }
      if (!aligned) continue;
      // The caches hold the whole tensor (as tiles, a B tile possibly widened to float panels):
      // constant shapes only, and at most kMaxCacheBytes per kernel.
      int64_t s0 = 0, s1 = 0, e0 = 0, e1 = 0;
      if (!AsConstInt(src->shape[0], &s0) || !AsConstInt(src->shape[1], &s1) ||
          !AsConstInt(c->src.ranges[0].extent, &e0) || !AsConstInt(c->src.ranges[1].extent, &e1))
        continue;
      const int64_t rows = (s0 + e0 - 1) / e0, cols = (s1 + e1 - 1) / e1;
      const int64_t bytes = (rows * cols + 1) * (e0 + 32) * (e1 + 32) * 4;
      auto i64 = [](int64_t v) { return IntImm(DataType::Int(64), v); };
      Expr slot = Select(inside, Binary(BinaryOp::kAdd, Binary(BinaryOp::kMul, idx[0], i64(cols)), idx[1]),
                         i64(rows * cols));
      Expr slots = i64(rows * cols + 1);
      // Tiles of one tensor, of one shape and used alike (e.g. a group's A tiles) share a cache.
      int id = int(decls_.size());
      for (size_t j = 0; j < decls_.size(); ++j) {
        const Cache& o = caches_.at(decls_[j]);
        if (o.copy->src.buffer == src && SameShape(o.tile, b) && o.tile->dtype == b->dtype &&
            scan.roles[o.tile.get()] == scan.roles[t] &&
            StructuralEqual(o.copy->src.ranges[0].extent, c->src.ranges[0].extent) &&
            StructuralEqual(o.copy->src.ranges[1].extent, c->src.ranges[1].extent))
          id = int(j);
      }
      if (id == int(decls_.size())) {
        if (cache_bytes + bytes > kMaxCacheBytes) continue;
        cache_bytes += bytes;
        decls_.push_back(c);
      }
      caches_[c] = {id, b, c, Simplify(slots), Simplify(slot)};
    }
    if (caches_.empty()) return s;
    Stmt body = VisitStmt(n->body);
    // Every use of a cached tile must have landed inside its binding.
    for (auto& [c, k] : caches_) {
      Outside o;
      o.t = k.tile.get();
      o.VisitStmt(body);
      if (o.found || !placed_.count(c)) return s;
    }
    for (size_t j = decls_.size(); j-- > 0;) {
      const Cache& k = caches_.at(decls_[j]);
      body = AttrStmt(k.tile, "tl.cpu_tile_cache",
                      Call(DataType::Int(64), "tl_cpu_cache_decl", {Int(k.id), k.slots}), body, n->span);
    }
    if (choices_)
      for (const CopyNode* c : decls_) {
        // by name: caches_ is keyed by address, so its order changes from run to run
        std::vector<std::string> names;
        for (auto& [c2, k] : caches_)
          if (k.id == caches_.at(c).id) names.push_back(k.tile->name);
        std::sort(names.begin(), names.end());
        std::string tiles;
        for (const std::string& t : names) tiles += (tiles.empty() ? "" : ", ") + t;
        choices_->push_back(cpu_lowering::SpanLine(c->span) + ": T.copy into " + tiles + ": tiles of " +
                            c->src.buffer->name +
                            " are cached for the whole call (filled once by the first block that needs "
                            "each, read in place by the others)");
      }
    return std::make_shared<KernelNode>(n->grid, n->block_vars, n->threads, n->alloc_buffers, n->var_inits,
                                        body, n->span);
  }

  Stmt VisitSeq(const Stmt& s, const SeqNode* n) override {
    std::vector<Stmt> items;
    for (auto& x : n->seq) items.push_back(VisitStmt(x));
    // From the back, so that each binding wraps the ones after it.
    for (size_t i = items.size(); i-- > 0;) {
      const CopyNode* c = CopyOf(n->seq[i]);
      auto it = c ? caches_.find(c) : caches_.end();
      if (it == caches_.end()) continue;
      std::vector<Stmt> rest(items.begin() + i, items.end());
      Stmt bound =
          AttrStmt(it->second.tile, "tl.cpu_cached_tile",
                   Call(DataType::Int(64), "tl_cpu_cache_slot", {Int(it->second.id), it->second.slot}),
                   Seq(rest, n->span), n->span);
      items.resize(i);
      items.push_back(bound);
      placed_.insert(c);
    }
    return Seq(items, n->span);
  }

 private:
  std::vector<std::string>* choices_;
  std::set<const BufferNode*> written_;
  std::set<const BufferNode*> rebound_;  // tensors bound per block by tl.buffer_bind
  std::map<const CopyNode*, Cache> caches_;
  std::vector<const CopyNode*> decls_;  // the first copy of each cache, in cache id order
  std::set<const CopyNode*> placed_;
};

}  // namespace

PrimFunc CacheGemmTilesCPU(const PrimFunc& f, std::vector<std::string>* choices) {
  Stmt body = Cacher(f, choices).VisitStmt(f->body);
  return body == f->body ? f : WithBody(f, body);
}

}  // namespace tl
