// PackFp4Tiles (pack_fp4_tiles.h): float4_e2m1fn tiles stored two values a byte where the target's
// block-scaled instruction reads fp4 so (sm_120a / sm_121a: NVFP4 mma.sync, PackFp4TilesCUDA; gfx950: MXFP4
// on the scaled MFMA, PackFp4TilesHIP). Elsewhere an fp4 value takes a byte of its own (docs/semantics.md),
// which doubles the shared memory and the loads of a block-scaled GEMM's fp4 operand tiles (TileLang's SM120
// example stages 2 x 128 x 256 values of A and of B: 128 KB one a byte, over sm_120a's 99 KB; 64 KB packed)
// and makes the registers be packed after every load. Where an fp4 tensor parameter is only copied into fp4
// shared tiles (T.copy) and those tiles are only K-major operands of T.mma_gemm_blockscaled calls the
// backend's rule takes, the tensor and the tiles become uint8 ones of half the last extent holding two codes
// a byte (the first in the low nibble, TileLang's, PyTorch's and the instructions' packing):
//
//   A: T.Tensor((M, K), "float4_e2m1fn")          A: uint8 (M, K / 2)
//   A_s = T.alloc_shared((bm, bk), fp4)     ->    A_s: uint8 (bm, bk / 2)
//   T.copy(A[by * bm, ko * bk], A_s)              T.copy(A[by * bm, ko * bk / 2], A_s)   (a byte copy: TMA)
//   T.mma_gemm_blockscaled(A_s, B_s, ...)         the same op on packed tiles
//   (GemmBlockScaledNode::PackedFp4)
//
// Every region on them must start and end on a byte (an even first column, an even extent). The launcher
// passes such a parameter packed: a two-a-byte int8 / uint8 tensor as it is, an fp4 array of one value a byte
// packed first (python/tilelang/jit/kernel.py). Tensors and tiles with any other use keep one value a byte.
#include "arith/simplify.h"
#include "ir/functor.h"
#include "ir/printer.h"
#include "op/copy.h"
#include "op/gemm_blockscaled.h"
#include "op/tile_op_checks.h"
#include "transform/gpu/pack_fp4_tiles.h"
#include "transform/gpu_util.h"

namespace tl {
namespace {

// The rule's values: float4_e2m1fn, two a byte (a unit of 2 values), or (Fp4PackRule::fp6) the fp6 dtypes,
// four in 3 bytes (a unit of 4).
bool IsFp4(const Buffer& b, bool fp6) {
  if (!b) return false;
  const bool f4 = b->dtype.code() == DataType::Code::kFloat4E2M1;
  return fp6 ? b->dtype.is_mx_float() && !f4 : f4;
}
int64_t Unit(bool fp6) { return fp6 ? 4 : 2; }
Expr Bytes(const Expr& values, bool fp6) {
  return Simplify(fp6 ? Binary(BinaryOp::kFloorDiv, values * Int(3), Int(4))
                      : Binary(BinaryOp::kFloorDiv, values, Int(2)));
}

bool EvenConst(const Expr& e, bool fp6) {
  int64_t v = 0;
  return AsConstInt(Simplify(e), &v) && v % Unit(fp6) == 0;
}
bool EvenExpr(const Expr& e, bool fp6) {
  int64_t v = 1;
  return AsConstInt(Simplify(Binary(BinaryOp::kFloorMod, e, Int(Unit(fp6)))), &v) && v == 0;
}

// Which fp4 buffers may be packed: every use seen, the disqualified ones removed.
class Uses : public IRVisitor {
 public:
  explicit Uses(const Fp4PackRule& rule) : rule_(rule) {}
  std::set<const BufferNode*> bad;
  std::vector<std::pair<const BufferNode*, const BufferNode*>> copies;  // (global source, shared destination)
  std::vector<std::pair<const BufferNode*, const BufferNode*>> gemms;   // (A, B), or (operand, null)

  void VisitLoad(const BufferLoadNode* n) override {
    Bad(n->buffer);
    IRVisitor::VisitLoad(n);
  }
  void VisitStore(const StoreNode* n) override {
    Bad(n->buffer);
    IRVisitor::VisitStore(n);
  }
  void VisitAttr(const AttrStmtNode* n) override {
    Bad(n->node);  // a layout or stage annotation on the buffer: kept as it is
    IRVisitor::VisitAttr(n);
  }
  void VisitTileOp(const StmtNode* s) override {
    auto* op = As<TileOpNode>(s);
    if (!op) return;
    for (auto& [r, access] : op->Regions()) {
      for (auto& rg : r->ranges) {
        VisitExpr(rg.min);
        VisitExpr(rg.extent);
      }
      if (IsFp4(r->buffer, rule_.fp6) && (r->ranges.empty() || !EvenExpr(r->ranges.back().min, rule_.fp6) ||
                                          !EvenConst(r->ranges.back().extent, rule_.fp6)))
        Bad(r->buffer);  // not whole bytes
    }
    for (auto& e : op->Exprs())
      if (e) VisitExpr(e);
    if (auto* c = As<CopyNode>(s); c && !rule_.padded) {
      if (IsFp4(c->src.buffer, rule_.fp6) && IsFp4(c->dst.buffer, rule_.fp6) &&
          c->src.buffer->scope == Scope::kGlobal && c->dst.buffer->scope == Scope::kShared) {
        copies.push_back({c->src.buffer.get(), c->dst.buffer.get()});
        return;
      }
    } else if (auto* t = As<TmaCopyNode>(s)) {  // (a byte copy, or the padded form's only filling)
      if (IsFp4(t->src.buffer, rule_.fp6) && IsFp4(t->dst.buffer, rule_.fp6) &&
          t->src.buffer->scope == Scope::kGlobal && t->dst.buffer->scope == Scope::kShared) {
        copies.push_back({t->src.buffer.get(), t->dst.buffer.get()});
        return;
      }
    } else if (std::vector<const Region*> ops =
                   rule_.operands ? rule_.operands(*op) : std::vector<const Region*>{};
               !ops.empty()) {
      std::set<const BufferNode*> taken;
      for (const Region* r : ops) {
        gemms.push_back({r->buffer.get(), nullptr});
        taken.insert(r->buffer.get());
      }
      for (auto& [r, access] : op->Regions())
        if (!taken.count(r->buffer.get())) Bad(r->buffer);
      return;
    } else if (auto* g = As<GemmBlockScaledNode>(s); g && rule_.gemm(*g)) {
      // an operand that may be packed: an fp4 shared tile, K-major
      const bool a = !g->trans_A && IsFp4(g->A.buffer, rule_.fp6) && g->A.buffer->scope == Scope::kShared;
      const bool b = g->trans_B && IsFp4(g->B.buffer, rule_.fp6) && g->B.buffer->scope == Scope::kShared;
      if (rule_.pair && a && b) {
        gemms.push_back({g->A.buffer.get(), g->B.buffer.get()});
        return;
      }
      if (!rule_.pair && (a || b)) {  // each on its own: (operand, null)
        if (a) gemms.push_back({g->A.buffer.get(), nullptr});
        if (b) gemms.push_back({g->B.buffer.get(), nullptr});
        if (!a) Bad(g->A.buffer);
        if (!b) Bad(g->B.buffer);
        return;
      }
    }
    for (auto& [r, access] : op->Regions()) Bad(r->buffer);  // any other use of an fp4 buffer
  }

 private:
  const Fp4PackRule& rule_;
  void Bad(const Buffer& b) {
    if (IsFp4(b, rule_.fp6)) bad.insert(b.get());
  }
};

class Packer : public IRMutator {
 public:
  std::map<const BufferNode*, Buffer> map;
  std::set<const BufferNode*> padded;  // (the new buffers) tiles in the padded form: regions kept
  std::map<const BufferNode*, DataType> tiles;  // (the new buffers) every tile changed, with its dtype before
  const Fp4PackRule* rule = nullptr;
  Buffer VisitBuffer(const Buffer& b) override {
    auto it = b ? map.find(b.get()) : map.end();
    return it == map.end() ? b : it->second;
  }
  Region VisitRegion(const Region& r) override {
    Region out = IRMutator::VisitRegion(r);
    if (map.count(r.buffer.get()) && !padded.count(out.buffer.get())) {  // the last range in bytes
      Range& last = out.ranges.back();
      last = {Bytes(last.min, rule->fp6), Bytes(last.extent, rule->fp6)};
    }
    return out;
  }
  // the ops on padded tiles say so: T.tma_copy into one (fp4_padded), the rule's operand ops (mark)
  Stmt VisitTileOp(const Stmt& s) override {
    Stmt out = IRMutator::VisitTileOp(s);
    if (tiles.empty()) return out;
    if (auto* t = As<TmaCopyNode>(out); t && padded.count(t->dst.buffer.get()))
      return std::make_shared<TmaCopyNode>(t->src, t->dst, t->barrier, t->cluster_barrier, t->span,
                                           rule->fp6 ? 2 : 1);
    if (auto* op = As<TileOpNode>(out);
        op && rule && rule->mark && rule->operands && !As<TmaCopyNode>(out) && !As<CopyNode>(out)) {
      for (auto& [r, access] : op->Regions())
        if (tiles.count(r->buffer.get())) return rule->mark(*op, tiles);
    }
    return out;
  }
};

// two values a byte; padded (a tile in the tensor cores' form): one byte a value's slot, the same shape
Buffer Packed(const Buffer& b, bool fp6, bool padded = false) {
  std::vector<Expr> shape = b->shape;
  if (!padded) shape.back() = Bytes(shape.back(), fp6);
  return MakeBuffer(b->name, DataType::UInt(8), shape, b->scope, b->span);
}

}  // namespace

PrimFunc PackFp4Tiles(const PrimFunc& f, const PassContext& ctx, const Fp4PackRule& rule) {
  const KernelNode* k = FindKernel(f->body);
  if (!k) return f;
  std::set<const BufferNode*> cand;
  for (auto& p : f->params)
    if (IsFp4(p.buffer, rule.fp6) && !p.buffer->shape.empty() && EvenConst(p.buffer->shape.back(), rule.fp6))
      cand.insert(p.buffer.get());
  for (auto& b : k->alloc_buffers)
    if (IsFp4(b, rule.fp6) && b->scope == Scope::kShared && !b->shape.empty() &&
        EvenConst(b->shape.back(), rule.fp6))
      cand.insert(b.get());
  if (cand.empty()) return f;
  Uses u(rule);
  u.VisitStmt(f->body);
  for (const BufferNode* b : u.bad) cand.erase(b);
  // a copy packs both its ends or neither; a gemm both its operands (a rule's pair); each tile needs its
  // gemm, each tensor a copy
  for (bool changed = true; changed;) {
    changed = false;
    std::set<const BufferNode*> used;
    for (auto [src, dst] : u.copies)
      if (cand.count(src) != cand.count(dst)) {
        changed |= cand.erase(src) + cand.erase(dst) > 0;
      }
    for (auto [a, b] : u.gemms)
      if (!b) {
        if (cand.count(a)) used.insert(a);
      } else if (cand.count(a) != cand.count(b)) {
        changed |= cand.erase(a) + cand.erase(b) > 0;
      } else if (cand.count(a)) {
        used.insert(a);
        used.insert(b);
      }
    for (auto [src, dst] : u.copies)
      if (used.count(dst)) used.insert(src);
    for (auto it = cand.begin(); it != cand.end();)
      if (!used.count(*it)) {
        it = cand.erase(it);
        changed = true;
      } else {
        ++it;
      }
  }
  if (cand.empty()) return f;
  Packer pk;
  pk.rule = &rule;
  std::vector<Param> params;
  for (auto& p : f->params) {
    if (p.buffer && cand.count(p.buffer.get())) {
      pk.map[p.buffer.get()] = Packed(p.buffer, rule.fp6);
      params.push_back({p.var, pk.map[p.buffer.get()]});
    } else {
      params.push_back(p);
    }
  }
  for (auto& b : k->alloc_buffers)
    if (cand.count(b.get())) {
      pk.map[b.get()] = Packed(b, rule.fp6, rule.padded);
      pk.tiles[pk.map[b.get()].get()] = b->dtype;
      if (rule.padded) pk.padded.insert(pk.map[b.get()].get());
    }
  std::vector<std::pair<const BufferNode*, Buffer>> packed;  // in declaration order: parameters, then tiles
  for (auto& p : f->params)
    if (p.buffer && pk.map.count(p.buffer.get())) packed.push_back({p.buffer.get(), pk.map[p.buffer.get()]});
  for (auto& b : k->alloc_buffers)
    if (pk.map.count(b.get())) packed.push_back({b.get(), pk.map[b.get()]});
  if (ctx.info)
    for (auto& [old, now] : packed)
      ctx.info->choices.push_back(
          gpu_pass::Loc(old->span) + ": " + std::string(ScopeName(old->scope)) + " " + old->dtype.str() +
          " " + (old->scope == Scope::kGlobal ? "tensor '" : "tile '") + old->name +
          (rule.padded && old->scope == Scope::kShared
               ? "' is stored as the tensor cores read " + std::string(rule.fp6 ? "fp6" : "fp4") +
                     " (uint8 " + op_detail::ShapeStr(now->shape) + ": 16 values of a row " +
                     (rule.fp6
                          ? "four in 3 bytes in the first 12 bytes of each 16): only filled by T.tma_copy "
                            "(TMA format 16U6_ALIGN16B)"
                          : "two a byte in the first 8 bytes of each 16): only filled by T.tma_copy (TMA "
                            "format 16U4_ALIGN16B)") +
                     " and used as " + rule.format + " operand"
               : "' is stored " + std::string(rule.fp6 ? "four values in 3 bytes" : "two values a byte") +
                     " (uint8 " + op_detail::ShapeStr(now->shape) + "): only copied and used as " +
                     rule.format + " operand"));
  Stmt body = pk.VisitStmt(f->body);
  std::map<std::string, std::string> attrs = f->attrs;
  std::string list;  // the launch takes these parameters in their packed form (src/target/backends.cc)
  for (size_t i = 0; i < f->params.size(); ++i)
    if (f->params[i].buffer && pk.map.count(f->params[i].buffer.get()))
      list += (list.empty() ? "" : ",") + std::to_string(i);
  if (!list.empty()) {  // (after an earlier run of the pass: both lists)
    auto it = attrs.find("tl.packed_params");
    attrs["tl.packed_params"] = it == attrs.end() || it->second.empty() ? list : it->second + "," + list;
  }
  return MakePrimFunc(f->name, params, body, attrs, f->span);
}

}  // namespace tl
