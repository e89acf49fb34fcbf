// LowerAscendTileOps: a tile program -> the Ascend core's instruction stream (docs/ascend.md).
//
// Each on-chip buffer gets a position (T.gemm operands: L1; accumulators: L0C; everything the vector unit
// touches: the Unified Buffer), a flat storage in the fractal / row layout its instructions use, and the
// tile ops become calls of the lowered form, one per AscendC instruction:
//   ascend.copy_gm_to_l1(l1[o], gm[..], rows, cols, gm_row_stride, nz_rows)     MTE2  DataCopy Nd2Nz
//   ascend.load2d(l0[o], l1[o], repeat, src_stride, transpose)                  MTE1  LoadData 2D
//   ascend.mmad(l0c[0], l0a[0], l0b[0], m, n, k, init, a_nz)                    M     Mmad
//   ascend.fixpipe(gm[..], l0c[0], m, n, l0c_rows, gm_row_stride)               FIX   Fixpipe NZ2ND
//   ascend.copy_gm_to_ub(ub[0], gm[..], rows, cols, gm_row_stride, ub_pitch)    MTE2  DataCopyPad
//   ascend.copy_ub_to_gm(gm[..], ub[0], rows, cols, gm_row_stride, ub_pitch)    MTE3  DataCopyPad
//   ascend.vbin(op, dst, a, b, count) / ascend.vscalar(op, dst, src, s, count) /
//   ascend.vun(op, dst, src, count) / ascend.vdup(dst, s, count) / ascend.vcast(dst, src, count)   V
// InsertAscendSync (ascend_sync.cc) then orders the pipes.
#include <algorithm>
#include <map>
#include <set>

#include "arith/simplify.h"
#include "ir/functor.h"
#include "ir/printer.h"
#include "ir/structural.h"
#include "op/ops.h"
#include "support/error.h"
#include "target/ascend/target.h"

namespace tl {
namespace {

Expr Mn(Expr a, Expr b) { return Binary(BinaryOp::kMin, std::move(a), std::move(b)); }
Expr CeilDiv(Expr a, int64_t d) { return Binary(BinaryOp::kFloorDiv, std::move(a) + Int(d - 1), Int(d)); }
int64_t RoundUp(int64_t a, int64_t d) { return (a + d - 1) / d * d; }
Stmt Op(const std::string& name, std::vector<Expr> args, const Span& sp) {
  return Evaluate(Call(DataType::Void(), "ascend." + name, std::move(args)), sp);
}
bool IsHalf16(DataType t) {
  return (t.code() == DataType::Code::kFloat && t.bits() == 16) || t.code() == DataType::Code::kBFloat;
}
bool IsF32(DataType t) { return t.code() == DataType::Code::kFloat && t.bits() == 32; }
bool IsInt8(DataType t) { return t.is_int() && t.bits() == 8; }
bool IsInt32(DataType t) { return t.is_int() && t.bits() == 32; }
// Elements of a 32-byte fractal row: the cube's k granule (16 float16 / bfloat16, 32 int8); a fractal is 16
// such rows (512 bytes).
int64_t C0(DataType t) { return 32 / t.bytes(); }

[[noreturn]] void NotLowered(const std::string& what, const Span& sp) {
  TL_USER_ERROR(kUnsupported, sp, "the Ascend target does not lower ", what,
                " yet (docs/ascend.md lists what it lowers)");
}

struct Tile {
  Buffer flat;  // the on-chip storage: one dimension, in the position's layout
  AscendPos pos = AscendPos::kUB;
  int64_t rows = 0, cols = 0;
  int64_t pitch =
      0;  // L1: NZ rows (rows rounded to 16: the distance between C0-column blocks); UB: elements per row
  Span span;
};

// Tiles with a leading stage dimension (TileLang-Ascend's `T.alloc_L1((2, M, K))` used as `a_l1[s, :, :]`):
// each stage becomes a 2-D tile of its own. A statement (a tile op, a T.Parallel nest, a store) that picks
// its stage with a run-time index (`k % 2`) becomes one copy per stage under `if index == stage`.
class StageSplit : public IRMutator {
 public:
  // Splits the kernel's rank-3 on-chip tiles; null when it has none.
  std::shared_ptr<KernelNode> Run(const KernelNode* k) {
    std::vector<Buffer> alloc;
    for (auto& b : k->alloc_buffers) {
      int64_t S = 0;
      if (b->shape.size() != 3 || b->scope == Scope::kGlobal || !AsConstInt(b->shape[0], &S) || S < 1) {
        alloc.push_back(b);
        continue;
      }
      auto& v = parts_[b.get()];
      for (int64_t i = 0; i < S; ++i) {
        v.push_back(MakeBuffer(b->name + "_" + std::to_string(i), b->dtype, {b->shape[1], b->shape[2]},
                               b->scope, b->span));
        alloc.push_back(v.back());
      }
    }
    if (parts_.empty()) return nullptr;
    Stmt body = VisitStmt(k->body);
    return std::make_shared<KernelNode>(k->grid, k->block_vars, k->threads, alloc, k->var_inits, body,
                                        k->span);
  }

  Stmt VisitStmt(const Stmt& s) override {
    if (!s) return s;
    const bool leaf = As<TileOpNode>(s) || As<StoreNode>(s) ||
                      (As<ForNode>(s) && As<ForNode>(s)->for_kind == ForKind::kParallel);
    if (!leaf || in_leaf_) return IRMutator::VisitStmt(s);
    // the run-time stage indices of the statement, and one copy of it per combination of their values
    std::vector<std::pair<Expr, int64_t>> dyn;  // (index, stages)
    struct Collect : IRVisitor {
      StageSplit* self;
      std::vector<std::pair<Expr, int64_t>>* dyn;
      void Note(const BufferNode* b, const Expr& e) {
        auto it = self->parts_.find(b);
        if (it == self->parts_.end() || IsConstIntAny(e)) return;
        for (auto& [x, n] : *dyn)
          if (StructuralEqual(x, e)) return;
        dyn->push_back({e, static_cast<int64_t>(it->second.size())});
      }
      static bool IsConstIntAny(const Expr& e) {
        int64_t v;
        return AsConstInt(e, &v);
      }
      void VisitLoad(const BufferLoadNode* l) override {
        if (!l->indices.empty()) Note(l->buffer.get(), l->indices[0]);
        IRVisitor::VisitLoad(l);
      }
      void VisitStmt(const Stmt& st) override {
        if (auto* t = As<TileOpNode>(st))
          for (auto& [r, acc] : t->Regions())
            if (!r->ranges.empty()) Note(r->buffer.get(), r->ranges[0].min);
        if (auto* w = As<StoreNode>(st); w && !w->indices.empty()) Note(w->buffer.get(), w->indices[0]);
        IRVisitor::VisitStmt(st);
      }
    } col;
    col.self = this;
    col.dyn = &dyn;
    col.VisitStmt(s);
    in_leaf_ = true;
    leaf_span_ = s->span;
    Stmt out;
    if (dyn.empty()) {
      out = IRMutator::VisitStmt(s);
    } else {
      std::vector<int64_t> pick(dyn.size(), 0);
      std::vector<Stmt> copies;
      while (true) {
        Expr cond;
        for (size_t i = 0; i < dyn.size(); ++i) {
          Expr c = Binary(BinaryOp::kEQ, dyn[i].first, Cast(dyn[i].first->dtype, Int(pick[i])));
          cond = cond ? Binary(BinaryOp::kAnd, cond, c) : c;
          chosen_.push_back({dyn[i].first, pick[i]});
        }
        copies.push_back(If(cond, IRMutator::VisitStmt(s), nullptr, s->span));
        chosen_.resize(chosen_.size() - dyn.size());
        size_t d = 0;
        while (d < dyn.size() && ++pick[d] == dyn[d].second) pick[d++] = 0;
        if (d == dyn.size()) break;
      }
      out = Seq(copies, s->span);
    }
    in_leaf_ = false;
    return out;
  }

 private:
  // The part of split tile b that stage index e names (a constant, or the value chosen for this copy).
  Buffer Part(const BufferNode* b, const Expr& e, const Span& sp) {
    const auto& v = parts_.at(b);
    int64_t i = -1;
    if (!AsConstInt(e, &i))
      for (auto& [x, n] : chosen_)
        if (StructuralEqual(x, e)) i = n;
    if (i < 0 || i >= static_cast<int64_t>(v.size()))
      TL_USER_ERROR(kUnsupported, sp, "stage ", PrintExpr(e), " of '", b->name, "', which has ", v.size(),
                    " stages (its leading dimension)");
    return v[static_cast<size_t>(i)];
  }
  Expr VisitLoad(const Expr& e, const BufferLoadNode* n) override {
    if (!parts_.count(n->buffer.get())) return IRMutator::VisitLoad(e, n);
    if (n->indices.size() != 3)
      TL_USER_ERROR(kUnsupported, leaf_span_, "a read of staged tile '", n->buffer->name,
                    "' at other than [stage, i, j]");
    bool changed = false;
    auto idx = VisitExprs(std::vector<Expr>(n->indices.begin() + 1, n->indices.end()), &changed);
    return Load(Part(n->buffer.get(), n->indices[0], leaf_span_), idx);
  }
  Stmt VisitStore(const Stmt& s, const StoreNode* n) override {
    if (!parts_.count(n->buffer.get())) return IRMutator::VisitStore(s, n);
    if (n->indices.size() != 3)
      TL_USER_ERROR(kUnsupported, n->span, "a write of staged tile '", n->buffer->name,
                    "' at other than [stage, i, j]");
    bool changed = false;
    auto idx = VisitExprs(std::vector<Expr>(n->indices.begin() + 1, n->indices.end()), &changed);
    return Store(Part(n->buffer.get(), n->indices[0], n->span), VisitExpr(n->value), idx, n->span);
  }
  Stmt VisitTileOp(const Stmt& s) override {
    auto* op = As<TileOpNode>(s);
    bool any = false;
    std::vector<Region> regions;
    for (auto& [r, acc] : op->Regions()) {
      if (!parts_.count(r->buffer.get())) {
        regions.push_back(VisitRegion(*r));
        continue;
      }
      any = true;
      if (r->ranges.size() != 3 || !IsConstInt(r->ranges[0].extent, 1))
        TL_USER_ERROR(kUnsupported, op->span, "a region of staged tile '", r->buffer->name,
                      "' that is not one stage (write it [stage, :, :])");
      Region out{Part(r->buffer.get(), r->ranges[0].min, op->span), {}};
      for (size_t d = 1; d < 3; ++d)
        out.ranges.push_back({VisitExpr(r->ranges[d].min), VisitExpr(r->ranges[d].extent)});
      regions.push_back(out);
    }
    if (!any) return IRMutator::VisitTileOp(s);
    std::vector<Expr> exprs;
    for (auto& e : op->Exprs()) exprs.push_back(e ? VisitExpr(e) : e);
    return op->WithOperands(std::move(regions), std::move(exprs));
  }
  Stmt VisitAttr(const Stmt& s, const AttrStmtNode* n) override {
    auto it = n->node ? parts_.find(n->node.get()) : parts_.end();
    if (it == parts_.end()) return IRMutator::VisitAttr(s, n);
    Stmt body = VisitStmt(n->body);  // the placement holds for every stage
    for (auto& b : it->second) body = AttrStmt(b, n->key, n->value, body, n->span);
    return body;
  }

  std::map<const BufferNode*, std::vector<Buffer>> parts_;
  std::vector<std::pair<Expr, int64_t>> chosen_;
  bool in_leaf_ = false;
  Span leaf_span_;  // the statement being split (errors inside expressions point at it)
};

class Lowering {
 public:
  Lowering(const PassContext& ctx) : ctx_(ctx), arch_(AscendArchOf(ctx.target)) {}

  PrimFunc Run(const PrimFunc& f) {
    const KernelNode* orig = FindKernel(f->body);
    if (!orig) TL_USER_ERROR(kUnsupported, f->span, "an Ascend kernel needs a T.Kernel scope");
    split_ = StageSplit().Run(orig);  // tiles with a stage dimension: a 2-D tile a stage
    const KernelNode* k = split_ ? split_.get() : orig;
    kernel_ = k;
    Place(k);
    SizeL0(k->body);
    Stmt body = Lower(k->body);
    std::vector<Buffer> alloc;
    for (auto& b : order_) alloc.push_back(tiles_[b].flat);
    if (l0a_) alloc.push_back(l0a_);
    if (l0b_) alloc.push_back(l0b_);
    alloc.insert(alloc.end(), extra_.begin(), extra_.end());
    alloc.insert(alloc.end(), temps_.begin(), temps_.end());
    CheckCapacity(alloc, f->span);
    for (auto& b : alloc) body = AttrStmt(b, kAscendPosition, StringImm(AscendPosName(pos_[b.get()])), body);
    auto nk = std::make_shared<KernelNode>(k->grid, k->block_vars, std::vector<Expr>{Int(1)}, alloc,
                                           k->var_inits, body, k->span);
    if (ctx_.info) {
      ctx_.info->threads = 1;
      ctx_.info->choices.push_back(
          std::string("Ascend ") + arch_.name + " (" + arch_.product +
          "): one AI Core per block; T.gemm on the cube (L1 -> L0A/L0B -> Mmad -> L0C, A " +
          (arch_.l0a_nz ? "NZ" : "ZZ") + " in L0A), element-wise ops on the vector unit");
    }
    return std::make_shared<PrimFuncNode>(f->name, f->params, ReplaceKernel(f->body, orig, nk), f->attrs,
                                          f->span);
  }

 private:
  static Stmt ReplaceKernel(const Stmt& s, const KernelNode* old, const Stmt& nk) {
    struct R : IRMutator {
      const KernelNode* old;
      Stmt nk;
      Stmt VisitKernel(const Stmt& s, const KernelNode* n) override { return n == old ? nk : s; }
    } r;
    r.old = old;
    r.nk = nk;
    return r.VisitStmt(s);
  }

  // ---- positions -------------------------------------------------------------------------------
  void Place(const KernelNode* k) {
    std::map<const BufferNode*, AscendPos> want;
    auto need = [&](const Buffer& b, AscendPos p, const Span& sp, const char* why) {
      auto [it, fresh] = want.emplace(b.get(), p);
      if (!fresh && it->second != p)
        TL_USER_ERROR(kUnsupported, sp, "buffer '", b->name, "' is used both in ", AscendPosName(it->second),
                      " and in ", AscendPosName(p), " (", why,
                      "); on Ascend a tile lives in one on-chip buffer: copy it into a second tile");
    };
    // where the program placed tiles itself (T.alloc_L1, T.alloc_L0A/L0B/L0C, T.alloc_ub: TileLang-Ascend's
    // scopes)
    std::map<const BufferNode*, std::pair<AscendPos, Span>> placed;
    PostOrderVisitStmt(k->body, [&](const Stmt& s) {
      auto* a = As<AttrStmtNode>(s);
      if (!a || a->key != kAscendPosition || !a->node) return;
      const std::string p = As<StringImmNode>(a->value)->value;
      placed[a->node.get()] = {p == "L1"    ? AscendPos::kL1
                               : p == "L0A" ? AscendPos::kL0A
                               : p == "L0B" ? AscendPos::kL0B
                               : p == "L0C" ? AscendPos::kL0C
                                            : AscendPos::kUB,
                               a->span};
    });
    auto placed_in = [&](const Buffer& b, AscendPos p) {
      auto it = placed.find(b.get());
      return it != placed.end() && it->second.first == p;
    };
    PostOrderVisitStmt(k->body, [&](const Stmt& s) {
      if (auto* g = As<GemmNode>(s)) {
        // an operand the program moved into L0A / L0B itself (T.copy from L1) is used where it is
        const bool a0 = placed_in(g->A.buffer, AscendPos::kL0A), b0 = placed_in(g->B.buffer, AscendPos::kL0B);
        need(g->A.buffer, a0 ? AscendPos::kL0A : AscendPos::kL1, g->span, "a T.gemm operand");
        need(g->B.buffer, b0 ? AscendPos::kL0B : AscendPos::kL1, g->span, "a T.gemm operand");
        need(g->C.buffer, AscendPos::kL0C, g->span, "a T.gemm accumulator");
        for (auto [b, tr, in_l0] :
             {std::tuple{g->A.buffer.get(), g->trans_A, a0}, std::tuple{g->B.buffer.get(), g->trans_B, b0}}) {
          if (!in_l0) continue;
          auto [it, fresh] = l0_trans_.emplace(b, tr);
          if (!fresh && it->second != tr)
            TL_USER_ERROR(kUnsupported, g->span, "'", b->name,
                          "' is used by T.gemm both transposed and not; an L0A / L0B tile holds its "
                          "operand in the one fractal layout the cube reads (load it into two tiles)");
        }
      } else if (auto* c = As<CopyNode>(s)) {
        if (placed_in(c->dst.buffer, AscendPos::kL0A) || placed_in(c->dst.buffer, AscendPos::kL0B))
          need(c->src.buffer, AscendPos::kL1, c->span, "the source of a copy into L0A / L0B");
      } else if (auto* t = As<TileOpNode>(s)) {
        if (As<FillNode>(s) || As<ReduceNode>(s)) return;
        NotLowered("T." + std::string(t->op), t->span);
      }
    });
    for (auto& [b, ps] : placed) {
      auto it = want.find(b);
      if (it != want.end() && it->second != ps.first)
        TL_USER_ERROR(
            kUnsupported, ps.second, "'", b->name, "' is placed in ", AscendPosName(ps.first),
            " but its use needs ", AscendPosName(it->second),
            " (T.gemm operands live in L1 (or L0A / L0B, loaded from L1 with T.copy), accumulators in L0C, "
            "vector tiles in the Unified Buffer)");
      want.emplace(b, ps.first);
    }
    // 1-D tiles copied with global memory, or read at a nest's column var, are dense rows; others row-wise
    std::set<const BufferNode*> dense;
    PostOrderVisitStmt(k->body, [&](const Stmt& s) {
      if (auto* c = As<CopyNode>(s)) {
        if (c->src.buffer->scope == Scope::kGlobal) dense.insert(c->dst.buffer.get());
        if (c->dst.buffer->scope == Scope::kGlobal) dense.insert(c->src.buffer.get());
      }
      auto* f = As<ForNode>(s);
      auto* in = f && f->for_kind == ForKind::kParallel ? As<ForNode>(f->body) : nullptr;
      if (!in || in->for_kind != ForKind::kParallel) return;
      const VarNode* col = in->var.get();
      struct ColumnReads : IRVisitor {  // 1-D tiles read at the nest's column var
        const VarNode* col;
        std::set<const BufferNode*>* dense;
        void VisitLoad(const BufferLoadNode* l) override {
          if (l->indices.size() == 1 && l->indices[0].get() == static_cast<const ExprNode*>(col))
            dense->insert(l->buffer.get());
          IRVisitor::VisitLoad(l);
        }
      } reads;
      reads.col = col;
      reads.dense = &dense;
      reads.VisitStmt(in->body);
    });
    // an accumulator the vector unit also reads or writes (a GEMM's epilogue, FlashAttention's scores and
    // output) lives in the Unified Buffer; each T.gemm into it computes in L0C and adds its product there
    // through a global workspace (on dav-c220 the cube and the vector unit are separate cores)
    std::set<const BufferNode*> vector_use;
    PostOrderVisitStmt(k->body, [&](const Stmt& s) {
      if (auto* f = As<ForNode>(s); f && f->for_kind == ForKind::kParallel)
        for (auto& [b, n] : Uses(f->body)) vector_use.insert(b);
      if (auto* r = As<ReduceNode>(s)) vector_use.insert({r->src.buffer.get(), r->dst.buffer.get()});
      if (auto* c = As<CopyNode>(s);
          c && c->src.buffer->scope != Scope::kGlobal && c->dst.buffer->scope != Scope::kGlobal)
        vector_use.insert({c->src.buffer.get(), c->dst.buffer.get()});
    });
    for (auto& [b, p] : want)
      if (p == AscendPos::kL0C && vector_use.count(b)) {
        dual_.insert(b);
        p = AscendPos::kUB;
      }
    for (auto& b : k->alloc_buffers) {
      if (b->scope != Scope::kShared && b->scope != Scope::kFragment && b->scope != Scope::kLocal)
        NotLowered(std::string("a buffer of scope ") + ScopeName(b->scope) + " ('" + b->name + "')", b->span);
      AscendPos p = want.count(b.get()) ? want[b.get()] : AscendPos::kUB;
      std::vector<int64_t> shape;
      for (auto& e : b->shape) {
        int64_t v;
        if (!AsConstInt(e, &v))
          TL_USER_ERROR(kUnsupported, b->span, "buffer '", b->name,
                        "' has a dynamic shape; on-chip tiles need constant shapes");
        shape.push_back(v);
      }
      const bool row_wise = shape.size() == 1 && p == AscendPos::kUB && !dense.count(b.get());
      if (shape.size() == 1) shape.insert(row_wise ? shape.end() : shape.begin(), 1);
      if (shape.size() != 2)
        NotLowered("an on-chip tile of rank " + std::to_string(b->shape.size()) + " ('" + b->name + "')",
                   b->span);
      Tile t;
      t.pos = p;
      t.rows = shape[0];
      t.cols = shape[1];
      t.span = b->span;
      const int64_t es = b->dtype.bytes();
      int64_t n;
      if (p == AscendPos::kL1) {
        if (!IsHalf16(b->dtype) && !IsInt8(b->dtype))
          TL_USER_ERROR(kUnsupported, b->span, "T.gemm operand '", b->name, "' is ", b->dtype.str(),
                        "; the Ascend lowering takes float16 / bfloat16 (16x16 fractals) and int8 (16x32) "
                        "operands so far");
        t.pitch = RoundUp(t.rows, 16);
        n = t.pitch * RoundUp(t.cols, 32 / es);
      } else if (p == AscendPos::kL0A || p == AscendPos::kL0B) {  // 16x16 fractals (ZZ / NZ, ZN)
        if (!IsHalf16(b->dtype))
          TL_USER_ERROR(kUnsupported, b->span, "T.gemm operand '", b->name, "' is ", b->dtype.str(),
                        "; the Ascend lowering takes float16 / bfloat16 operands (16x16 fractals) so far");
        if (!l0_trans_.count(b.get()))
          TL_USER_ERROR(kUnsupported, b->span, "'", b->name, "' is placed in ", AscendPosName(p),
                        " but no T.gemm reads it (L0A / L0B hold the cube's operands)");
        t.pitch = RoundUp(t.rows, 16);
        n = t.pitch * RoundUp(t.cols, 16);
      } else if (p == AscendPos::kL0C) {
        if (!IsF32(b->dtype) && !IsInt32(b->dtype))
          TL_USER_ERROR(kUnsupported, b->span, "T.gemm accumulator '", b->name, "' is ", b->dtype.str(),
                        "; the cube accumulates float16 / bfloat16 products in float32 and int8 products in "
                        "int32 in L0C");
        t.pitch = RoundUp(t.rows, 16);
        n = t.pitch * RoundUp(t.cols, 16);
      } else {
        t.pitch = row_wise ? 32 / es : RoundUp(t.cols * es, 32) / es;  // row-wise: a value per 32-byte block
        n = t.rows * t.pitch;
      }
      t.flat = MakeBuffer(b->name, b->dtype, {Int(n)}, Scope::kShared, b->span);
      pos_[t.flat.get()] = p;
      tiles_[b.get()] = t;
      order_.push_back(b.get());
      if (dual_.count(b.get())) {
        if (!IsF32(b->dtype))
          TL_USER_ERROR(kUnsupported, b->span, "T.gemm accumulator '", b->name, "' is ", b->dtype.str(),
                        "; the cube accumulates float16 / bfloat16 products in float32 in L0C");
        Tile c = t;
        c.pos = AscendPos::kL0C;
        c.pitch = RoundUp(t.rows, 16);
        c.flat = MakeBuffer(b->name + "_l0c", b->dtype, {Int(c.pitch * RoundUp(t.cols, 16))}, Scope::kShared,
                            b->span);
        pos_[c.flat.get()] = AscendPos::kL0C;
        l0c_[b.get()] = c;
        Buffer ws = MakeBuffer(b->name + "_ws", b->dtype, {Int(t.rows * t.cols)}, Scope::kShared, b->span);
        pos_[ws.get()] = AscendPos::kWS;
        Buffer prod =
            MakeBuffer(b->name + "_prod", b->dtype, {Int(t.rows * t.pitch)}, Scope::kShared, b->span);
        pos_[prod.get()] = AscendPos::kUB;
        extra_.insert(extra_.end(), {c.flat, ws, prod});
        dual_ws_[b.get()] = {ws, prod};
      }
    }
  }

  // L0A / L0B: one buffer each, as large as the largest gemm whose operand is in L1 needs (sized before any
  // gemm is lowered); operands the program placed in L0A / L0B itself are read where they are
  void SizeL0(const Stmt& body) {
    int64_t na = 0, nb = 0;
    DataType t;
    PostOrderVisitStmt(body, [&](const Stmt& s) {
      auto* g = As<GemmNode>(s);
      if (!g) return;
      const Tile& A = tiles_.at(g->A.buffer.get());
      const Tile& B = tiles_.at(g->B.buffer.get());
      const int64_t tm = g->trans_A ? A.cols : A.rows, tk = g->trans_A ? A.rows : A.cols;
      const int64_t tn = g->trans_B ? B.rows : B.cols;
      const int64_t c0 = C0(g->A.buffer->dtype);
      if (A.pos == AscendPos::kL1) na = std::max(na, RoundUp(tm, 16) * RoundUp(tk, c0));
      if (B.pos == AscendPos::kL1) nb = std::max(nb, RoundUp(tk, c0) * RoundUp(tn, 16));
      t = g->A.buffer->dtype;
    });
    if (na) {
      l0a_ = MakeBuffer("l0a", t, {Int(na)}, Scope::kShared);
      pos_[l0a_.get()] = AscendPos::kL0A;
    }
    if (nb) {
      l0b_ = MakeBuffer("l0b", t, {Int(nb)}, Scope::kShared);
      pos_[l0b_.get()] = AscendPos::kL0B;
    }
  }

  void CheckCapacity(std::vector<Buffer>& alloc, const Span& sp) {
    std::map<AscendPos, int64_t> used;
    std::string table;
    bool over = false;
    for (auto& b : alloc) {
      const AscendPos p = pos_[b.get()];
      int64_t n;
      AsConstInt(b->shape[0], &n);
      const int64_t bytes = RoundUp(n * b->dtype.bytes(), AscendPosAlign(p));
      if (p != AscendPos::kWS) used[p] += bytes;
      table +=
          "\n  " + std::string(AscendPosName(p)) + "  " + b->name + "  " + std::to_string(bytes) + " bytes";
    }
    const std::pair<AscendPos, int64_t> caps[] = {{AscendPos::kL1, arch_.l1},
                                                  {AscendPos::kL0A, arch_.l0a},
                                                  {AscendPos::kL0B, arch_.l0b},
                                                  {AscendPos::kL0C, arch_.l0c},
                                                  {AscendPos::kUB, arch_.ub}};
    std::string sum;
    for (auto [p, cap] : caps) {
      sum += "\n  " + std::string(AscendPosName(p)) + ": " + std::to_string(used[p]) + " of " +
             std::to_string(cap) + " bytes";
      over |= used[p] > cap;
    }
    if (over)
      TL_USER_ERROR(kResource, sp, "the kernel's on-chip buffers do not fit the Ascend ", arch_.name,
                    " core:", sum, "\nper buffer (position, name, bytes after alignment):", table);
    if (ctx_.info) ctx_.info->choices.push_back("Ascend on-chip buffers:" + sum);
  }

  // ---- statements ------------------------------------------------------------------------------
  Stmt Lower(const Stmt& s) {
    if (!s) return s;
    if (auto* q = As<SeqNode>(s)) {
      std::vector<Stmt> v;
      for (auto& x : q->seq) v.push_back(Lower(x));
      return Seq(v, q->span);
    }
    if (auto* f = As<ForNode>(s)) {
      if (f->for_kind == ForKind::kParallel) return LowerParallel(f);
      if (f->for_kind == ForKind::kPipelined) {
        auto it = f->annotations.find("num_stages");
        int64_t st = 0;
        if (it != f->annotations.end() && AsConstInt(it->second, &st) && st > 1) return LowerPipelined(f, st);
      }
      loops_.push_back(f);
      Stmt b = Lower(f->body);
      loops_.pop_back();
      return For(f->var, f->min, f->extent, ForKind::kSerial, b, {}, f->span);
    }
    if (auto* i = As<IfNode>(s)) {
      Scalar(i->cond, i->span);
      conds_.push_back(i->cond);
      Stmt then_case = Lower(i->then_case);
      conds_.back() = Not(i->cond);
      Stmt else_case = Lower(i->else_case);
      conds_.pop_back();
      return If(i->cond, then_case, else_case, i->span);
    }
    if (auto* l = As<LetNode>(s)) {
      Scalar(l->value, l->span);
      return Let(l->var, l->value, Lower(l->body), l->span);
    }
    if (auto* a = As<AttrStmtNode>(s)) {
      if (a->key == kAscendPosition) return Lower(a->body);  // the tile's position is decided (Place)
      return AttrStmt(a->node, a->key, a->value, Lower(a->body), a->span);
    }
    if (auto* c = As<CopyNode>(s)) return LowerCopy(c);
    if (auto* fl = As<FillNode>(s)) return LowerFill(fl);
    if (auto* g = As<GemmNode>(s)) return LowerGemm(g);
    if (auto* r = As<ReduceNode>(s)) return LowerReduce(r);
    if (auto* ev = As<EvaluateNode>(s)) {
      auto* c = As<CallNode>(ev->value);
      NotLowered(c ? "the call " + c->op : std::string("this expression statement"), s->span);
    }
    if (auto* st = As<StoreNode>(s)) {
      if (tiles_.count(st->buffer.get()))
        NotLowered("a single-element store into on-chip tile '" + st->buffer->name +
                       "' (write it in a T.Parallel loop)",
                   st->span);
      if (st->buffer->scope == Scope::kGlobal)
        NotLowered("a store into global tensor '" + st->buffer->name +
                       "' from the scalar unit (write tiles to global memory with T.copy)",
                   st->span);
      Scalar(st->value, st->span);
      return s;
    }
    NotLowered("this statement", s->span);
  }

  // An expression the scalar unit evaluates (loop bounds, conditions, lets, scalar stores): no thread
  // indices (an AI Core has none) and no reads of on-chip tiles (they would need the writing pipe's flag).
  void Scalar(const Expr& e, const Span& sp) {
    struct Check : IRVisitor {
      Lowering* self;
      const Span* sp;
      void VisitLoad(const BufferLoadNode* l) override {
        if (self->tiles_.count(l->buffer.get()))
          NotLowered(
              "a read of on-chip tile '" + l->buffer->name + "' by the scalar unit outside a T.Parallel loop",
              *sp);
        IRVisitor::VisitLoad(l);
      }
      void VisitCall(const CallNode* c) override {
        if (c->op.rfind("tl.thread", 0) == 0)
          NotLowered("thread indices (an Ascend block is one AI Core with no threads)", *sp);
        IRVisitor::VisitCall(c);
      }
    } check;
    check.self = this;
    check.sp = &sp;
    if (e) check.VisitExpr(e);
  }

  const Tile* TileOf(const Buffer& b) {
    auto it = tiles_.find(b.get());
    return it == tiles_.end() ? nullptr : &it->second;
  }

  // A global tile region: its first element, and its valid rows and columns (clipped at the tensor's edge).
  struct GmTile {
    Expr first;
    Expr rows, cols, row_stride;
  };
  GmTile Global(const Region& r, const Tile& t, const Span& sp) {
    const Buffer& g = r.buffer;
    const size_t n = r.ranges.size();
    if (n < 1) NotLowered("a copy of a scalar", sp);
    std::vector<Expr> idx;
    for (auto& rg : r.ranges) idx.push_back(rg.min);
    // the tile's rows: the one dimension before the last whose extent is not 1 (BSHD's S), else the one
    // before the last; their stride is the product of the dimensions after it (columns are the last,
    // contiguous)
    size_t row = n >= 2 ? n - 2 : 0;
    int found = 0;
    for (size_t d = 0; d + 1 < n; ++d)
      if (!IsConstInt(r.ranges[d].extent, 1)) row = d, ++found;
    if (found > 1) NotLowered("a copy whose global region has more than two dimensions of extent > 1", sp);
    GmTile out;
    out.first = Load(g, idx);
    auto clip = [&](size_t d, int64_t tile) {
      return Simplify(Mn(Mn(r.ranges[d].extent, Int(tile)), g->shape[d] - r.ranges[d].min));
    };
    if (n == 1) {
      out.rows = Int(1);
      out.cols = clip(0, t.cols);
      out.row_stride = g->shape[0];
    } else {
      out.rows = clip(row, t.rows);
      out.cols = clip(n - 1, t.cols);
      Expr stride = g->shape[n - 1];
      for (size_t d = row + 1; d + 1 < n; ++d) stride = stride * g->shape[d];
      out.row_stride = Simplify(stride);
    }
    return out;
  }

  Stmt LowerCopy(const CopyNode* c) {
    const Tile* src = TileOf(c->src.buffer);
    const Tile* dst = TileOf(c->dst.buffer);
    const Span& sp = c->span;
    if (c->src.buffer->dtype != c->dst.buffer->dtype &&
        !(src && (src->pos == AscendPos::kL0C || src->pos == AscendPos::kUB)) && (!src || !dst))
      NotLowered("a T.copy that converts " + c->src.buffer->dtype.str() + " to " +
                     c->dst.buffer->dtype.str() + " between global memory and a tile",
                 sp);
    if (!src && dst && c->src.buffer->scope == Scope::kGlobal) {
      if (!c->dst.IsWhole()) NotLowered("a copy into part of an on-chip tile", sp);
      GmTile g = Global(c->src, *dst, sp);
      valid_[c->dst.buffer.get()] = {g.rows, g.cols};
      if (dst->pos == AscendPos::kL1)
        return Op("copy_gm_to_l1",
                  {Load(dst->flat, {Int(0)}), g.first, g.rows, g.cols, g.row_stride, Int(dst->pitch)}, sp);
      if (dst->pos == AscendPos::kUB) {
        // elements of the tile outside the tensor read as zeros (as TileLang's guarded copies give): the tile
        // is cleared first unless the copy provably fills it
        Stmt copy =
            Op("copy_gm_to_ub",
               {Load(dst->flat, {Int(0)}), g.first, g.rows, g.cols, g.row_stride, Int(dst->pitch)}, sp);
        if (IsConstInt(g.rows, dst->rows) && IsConstInt(g.cols, dst->cols)) return copy;
        return Seq(
            {Op("vdup",
                {Load(dst->flat, {Int(0)}), FloatOrInt(dst->flat->dtype, 0), Int(dst->rows * dst->pitch)},
                sp),
             copy},
            sp);
      }
      if (dst->pos == AscendPos::kL0A || dst->pos == AscendPos::kL0B)
        TL_USER_ERROR(kUnsupported, sp, "a T.copy from global memory into ", AscendPosName(dst->pos),
                      " tile '", c->dst.buffer->name, "': ", AscendPosName(dst->pos),
                      " is filled from L1 (copy the tile into a T.alloc_L1 tile first, then from it)");
      NotLowered(std::string("a copy from global memory into ") + AscendPosName(dst->pos), sp);
    }
    if (src && !dst && c->dst.buffer->scope == Scope::kGlobal) {
      if (!c->src.IsWhole()) NotLowered("a copy out of part of an on-chip tile", sp);
      GmTile g = Global(c->dst, *src, sp);
      if (src->pos == AscendPos::kL0C) {
        auto it = gemm_rows_.find(c->src.buffer.get());
        Expr m = it != gemm_rows_.end() ? it->second : Int(src->rows);
        const DataType o = c->dst.buffer->dtype;
        const bool int_acc = IsInt32(src->flat->dtype);
        if (int_acc ? !IsInt32(o) : !IsF32(o) && !IsHalf16(o))
          NotLowered("Fixpipe of " + src->flat->dtype.str() + " to " + o.str() +
                         " (float32 to float32, float16 and bfloat16; int32 to int32)",
                     sp);
        return Op("fixpipe",
                  {g.first, Load(src->flat, {Int(0)}), g.rows, g.cols, Simplify(CeilDiv(m, 16) * Int(16)),
                   g.row_stride},
                  sp);
      }
      if (src->pos == AscendPos::kUB &&
          src->flat->dtype != c->dst.buffer->dtype) {  // cast in the UB, then out
        std::vector<Stmt> out;
        Buffer cast = CastInUB(*src, c->dst.buffer->dtype, c->src.buffer->name + "_out", sp, &out);
        out.push_back(Op("copy_ub_to_gm",
                         {g.first, Load(cast, {Int(0)}), g.rows, g.cols, g.row_stride, Int(src->pitch)}, sp));
        return Seq(out, sp);
      }
      if (src->pos == AscendPos::kUB)
        return Op("copy_ub_to_gm",
                  {g.first, Load(src->flat, {Int(0)}), g.rows, g.cols, g.row_stride, Int(src->pitch)}, sp);
      NotLowered(std::string("a copy from ") + AscendPosName(src->pos) + " to global memory", sp);
    }
    if (src && dst && src->pos == AscendPos::kUB && dst->pos == AscendPos::kUB && c->src.IsWhole() &&
        c->dst.IsWhole() && src->rows == dst->rows && src->cols == dst->cols) {
      if (src->flat->dtype != dst->flat->dtype)
        return Op("vcast",
                  {Load(dst->flat, {Int(0)}), Load(src->flat, {Int(0)}), Int(dst->rows * dst->pitch)}, sp);
      return Op("vscalar",
                {StringImm("Muls"), Load(dst->flat, {Int(0)}), Load(src->flat, {Int(0)}),
                 FloatOrInt(dst->flat->dtype, 1), Int(dst->rows * dst->pitch)},
                sp);
    }
    if (src && dst && src->pos == AscendPos::kUB && dst->pos == AscendPos::kL1 && c->src.IsWhole() &&
        c->dst.IsWhole() && src->rows == dst->rows && src->cols == dst->cols) {
      // the vector core's tile to the cube: cast in the UB if needed, DataCopyPad to a workspace, Nd2Nz into
      // L1
      std::vector<Stmt> out;
      Buffer from = src->flat;
      const DataType dt = dst->flat->dtype;
      if (from->dtype != dt) from = CastInUB(*src, dt, c->dst.buffer->name + "_cast", sp, &out);
      auto it = l1_ws_.find(c->dst.buffer.get());
      if (it == l1_ws_.end()) {
        Buffer ws =
            MakeBuffer(c->dst.buffer->name + "_ws", dt, {Int(dst->rows * dst->cols)}, Scope::kShared, sp);
        pos_[ws.get()] = AscendPos::kWS;
        extra_.push_back(ws);
        it = l1_ws_.emplace(c->dst.buffer.get(), ws).first;
      }
      out.push_back(Op("copy_ub_to_gm",
                       {Load(it->second, {Int(0)}), Load(from, {Int(0)}), Int(src->rows), Int(src->cols),
                        Int(dst->cols), Int(src->pitch)},
                       sp));
      out.push_back(Op("copy_gm_to_l1",
                       {Load(dst->flat, {Int(0)}), Load(it->second, {Int(0)}), Int(dst->rows), Int(dst->cols),
                        Int(dst->cols), Int(dst->pitch)},
                       sp));
      valid_[c->dst.buffer.get()] = {Int(dst->rows), Int(dst->cols)};
      return Seq(out, sp);
    }
    if (src && dst && src->pos == AscendPos::kL1 &&
        (dst->pos == AscendPos::kL0A || dst->pos == AscendPos::kL0B)) {
      // L1 -> L0A / L0B (MTE1's LoadData): in the fractal layout of the T.gemm that reads the tile
      if (!c->src.IsWhole() || !c->dst.IsWhole() || src->rows != dst->rows || src->cols != dst->cols)
        NotLowered("a T.copy between parts of L1 and L0A / L0B tiles, or tiles of different shapes", sp);
      auto it = valid_.find(c->src.buffer.get());
      const auto [r, q] =
          it != valid_.end() ? it->second : std::pair<Expr, Expr>{Int(src->rows), Int(src->cols)};
      valid_[c->dst.buffer.get()] = {r, q};
      const bool tr = l0_trans_.at(c->dst.buffer.get());
      std::vector<Stmt> out;
      if (dst->pos == AscendPos::kL0A)
        LoadA(*src, tr, tr ? q : r, tr ? r : q, dst->flat, &out, sp);  // m, k
      else
        LoadB(*src, tr, tr ? q : r, tr ? r : q, dst->flat, &out, sp);  // k, n
      return Seq(out, sp);
    }
    if (src && dst && src->pos == AscendPos::kL0C && dst->pos == AscendPos::kUB)
      NotLowered(
          "a copy from the cube's L0C to the Unified Buffer (on dav-c220 the cube and vector cores are "
          "separate: results reach the vector unit through global memory)",
          sp);
    NotLowered("this T.copy (" +
                   std::string(src ? AscendPosName(src->pos) : ScopeName(c->src.buffer->scope)) + " -> " +
                   (dst ? AscendPosName(dst->pos) : ScopeName(c->dst.buffer->scope)) + ")",
               sp);
  }

  // A UB tile converted to `dt` into a new UB tile of the same element layout (the rows must stay whole
  // 32-byte blocks in `dt`); the Cast is appended to `out`.
  Buffer CastInUB(const Tile& src, DataType dt, const std::string& name, const Span& sp,
                  std::vector<Stmt>* out) {
    if ((src.pitch * dt.bytes()) % 32 != 0)
      NotLowered("a T.copy converting " + src.flat->dtype.str() + " to " + dt.str() +
                     " whose rows are not whole 32-byte blocks in " + dt.str(),
                 sp);
    Buffer cast = MakeBuffer(name, dt, {Int(src.rows * src.pitch)}, Scope::kShared, sp);
    pos_[cast.get()] = AscendPos::kUB;
    extra_.push_back(cast);
    out->push_back(
        Op("vcast", {Load(cast, {Int(0)}), Load(src.flat, {Int(0)}), Int(src.rows * src.pitch)}, sp));
    return cast;
  }

  static Expr FloatOrInt(DataType t, double v) {
    return t.is_float() ? FloatImm(t, v) : IntImm(t, static_cast<int64_t>(v));
  }

  Stmt LowerFill(const FillNode* f) {
    const Tile* t = TileOf(f->dst.buffer);
    if (!t) NotLowered("T.fill of a buffer that is not an on-chip tile", f->span);
    if (!f->dst.IsWhole()) NotLowered("T.fill of part of a tile", f->span);
    if (t->pos == AscendPos::kL0C) {
      double v = 1;
      if (auto* fi = As<FloatImmNode>(f->value)) v = fi->value;
      int64_t iv;
      if (AsConstInt(f->value, &iv)) v = static_cast<double>(iv);
      if (v != 0)
        TL_USER_ERROR(
            kUnsupported, f->span, "T.fill of the accumulator '", f->dst.buffer->name,
            "' with a value other than 0: L0C is written only by the cube (a cleared accumulator is the "
            "next Mmad's initial value)");
      // a clear under a condition (clear_accum=(k == 0)) holds where the condition did
      Expr when = Bool(true);
      for (auto& c : conds_) when = Binary(BinaryOp::kAnd, when, c);
      clear_depth_[f->dst.buffer.get()] = {loops_.size(), when};
      return nullptr;
    }
    if (t->pos == AscendPos::kUB)
      return Op("vdup", {Load(t->flat, {Int(0)}), Cast(t->flat->dtype, f->value), Int(t->rows * t->pitch)},
                f->span);
    NotLowered(std::string("T.fill of a tile in ") + AscendPosName(t->pos), f->span);
  }

  // A (m x k; its L1 tile holds A, or A^T when transposed, in NZ) into L0A: ZZ on dav-c220 (fractal (mb, kb)
  // at mb*KB + kb, row-major inside) or NZ on dav-c310 (kb*MB + mb); LoadData moves 512-byte fractals.
  void LoadA(const Tile& A, bool trans, const Expr& m, const Expr& k, const Buffer& dst,
             std::vector<Stmt>* out, const Span& sp) {
    const int64_t c0 = C0(A.flat->dtype);  // k granule: a fractal is 16 x c0
    const Expr MB = Simplify(CeilDiv(m, 16)), KB = Simplify(CeilDiv(k, c0)), F = Int(16 * c0);
    const int64_t ra = A.pitch / 16;  // fractal rows of the L1 tile
    auto loop = [&](const char* name, Expr extent, const std::function<Stmt(Expr)>& body) {
      Var v = MakeVar(name);
      out->push_back(For(v, Int(0), extent, ForKind::kSerial, body(v), {}, sp));
    };
    if (!arch_.l0a_nz) {
      if (!trans)  // L1 holds A (m x k) in NZ: fractal (mb, kb) at kb*ra + mb
        loop("mb", MB,
             [&](Expr mb) { return Load2D(dst, mb * KB * F, A.flat, mb * F, KB, Int(ra), false, sp); });
      else  // L1 holds A^T (k x m) in NZ: fractal (kb, mb) at mb*ra + kb, transposed inside
        loop("mb", MB, [&](Expr mb) {
          return Load2D(dst, mb * KB * F, A.flat, mb * Int(ra) * F, KB, Int(1), true, sp);
        });
    } else {
      if (!trans)
        loop("kb", KB, [&](Expr kb) {
          return Load2D(dst, kb * MB * F, A.flat, kb * Int(ra) * F, MB, Int(1), false, sp);
        });
      else
        loop("kb", KB,
             [&](Expr kb) { return Load2D(dst, kb * MB * F, A.flat, kb * F, MB, Int(ra), true, sp); });
    }
  }

  // B (k x n; its L1 tile holds B, or B^T when transposed, in NZ) into L0B: ZN (fractal (kb, nb) at kb*NB +
  // nb, column-major inside).
  void LoadB(const Tile& B, bool trans, const Expr& k, const Expr& n, const Buffer& dst,
             std::vector<Stmt>* out, const Span& sp) {
    const int64_t c0 = C0(B.flat->dtype);
    const Expr KB = Simplify(CeilDiv(k, c0)), NB = Simplify(CeilDiv(n, 16)), F = Int(16 * c0);
    const int64_t rb = B.pitch / 16;
    Var kb = MakeVar("kb");
    Stmt body =
        !trans  // L1 holds B (k x n) in NZ: fractal (kb, nb) at nb*rb + kb, row-major inside
            ? Load2D(dst, kb * NB * F, B.flat, kb * F, NB, Int(rb), true, sp)
            // L1 holds B^T (n x k) in NZ: fractal (nb, kb) at kb*rb + nb, already column-major in (k, n)
            : Load2D(dst, kb * NB * F, B.flat, kb * Int(rb) * F, NB, Int(1), false, sp);
    out->push_back(For(kb, Int(0), KB, ForKind::kSerial, body, {}, sp));
  }

  static Stmt Load2D(const Buffer& dst, Expr doff, const Buffer& src, Expr soff, Expr rep, Expr stride,
                     bool tr, const Span& sp) {
    return Op("load2d",
              {Load(dst, {Simplify(doff)}), Load(src, {Simplify(soff)}), rep, stride, Int(tr ? 1 : 0)}, sp);
  }

  Stmt LowerGemm(const GemmNode* g) {
    const Tile* A = TileOf(g->A.buffer);
    const Tile* B = TileOf(g->B.buffer);
    if (g->k_pack != 1 && ctx_.info)
      ctx_.info->warnings.push_back(g->span.file + ":" + std::to_string(g->span.line) +
                                    ": T.gemm k_pack=" + std::to_string(g->k_pack) +
                                    " is an AMD MFMA option; it has no effect on Ascend");
    const bool dual = dual_.count(g->C.buffer.get()) != 0;
    const Tile* C = dual ? &l0c_.at(g->C.buffer.get()) : TileOf(g->C.buffer);
    const Span& sp = g->span;
    if (!A || !B || !C || !g->A.IsWhole() || !g->B.IsWhole() || !g->C.IsWhole())
      NotLowered("T.gemm on parts of tiles or on global memory", sp);
    if (g->A.buffer->dtype != g->B.buffer->dtype)
      TL_USER_ERROR(kUnsupported, sp, "T.gemm of ", g->A.buffer->dtype.str(), " by ",
                    g->B.buffer->dtype.str(), ": the cube multiplies operands of one type");
    if (IsInt8(g->A.buffer->dtype)) {
      // int8 fractals are 16 x 32 bytes; LoadData transposes only 16 x 16 fractals of 2-byte elements, so the
      // int8 operands must reach L0A / L0B as they are: A (m x k) and B stored n x k (transpose_B)
      if (g->trans_A || !g->trans_B)
        TL_USER_ERROR(kUnsupported, sp,
                      "T.gemm of int8 on Ascend takes A as m x k and B as n x k (transpose_A=False, "
                      "transpose_B=True): LoadData transposes 16x16 fractals of 2-byte elements only; got "
                      "transpose_A=",
                      g->trans_A ? "True" : "False", ", transpose_B=", g->trans_B ? "True" : "False");
      if (!IsInt32(g->C.buffer->dtype) || dual_.count(g->C.buffer.get()))
        TL_USER_ERROR(kUnsupported, sp,
                      "T.gemm of int8 on Ascend accumulates into an int32 L0C tile that only "
                      "the cube and T.copy to global memory touch; got ",
                      g->C.buffer->dtype.str(),
                      dual_.count(g->C.buffer.get()) ? " also used by the vector unit" : "");
      if (TileOf(g->A.buffer)->pos != AscendPos::kL1 || TileOf(g->B.buffer)->pos != AscendPos::kL1)
        NotLowered("int8 operands placed in L0A / L0B by the program (T.gemm loads int8 from L1 itself)", sp);
    } else if (IsInt32(g->C.buffer->dtype)) {
      TL_USER_ERROR(kUnsupported, sp, "T.gemm into int32 '", g->C.buffer->name, "' of ",
                    g->A.buffer->dtype.str(), " operands: int32 accumulates int8 products");
    }
    auto valid = [&](const BufferNode* b, const Tile& t) -> std::pair<Expr, Expr> {
      auto it = valid_.find(b);
      return it != valid_.end() ? it->second : std::pair<Expr, Expr>{Int(t.rows), Int(t.cols)};
    };
    auto [ar, ac] = valid(g->A.buffer.get(), *A);
    auto [br, bc] = valid(g->B.buffer.get(), *B);
    const Expr m = g->trans_A ? ac : ar, k = g->trans_A ? ar : ac, n = g->trans_B ? br : bc;
    const int64_t tm = g->trans_A ? A->cols : A->rows;
    const int64_t tn = g->trans_B ? B->rows : B->cols;
    if (tm > C->rows || tn > C->cols)
      TL_USER_ERROR(kUnsupported, sp, "T.gemm of ", tm, "x", tn, " into a ", C->rows, "x", C->cols,
                    " accumulator");
    gemm_rows_[g->C.buffer.get()] = m;
    std::vector<Stmt> out;
    // operands in L1 go into L0A / L0B here; ones the program loaded into L0A / L0B itself are read there
    Buffer l0a = A->pos == AscendPos::kL0A ? A->flat : l0a_, l0b = B->pos == AscendPos::kL0B ? B->flat : l0b_;
    if (A->pos == AscendPos::kL1) LoadA(*A, g->trans_A, m, k, l0a, &out, sp);
    if (B->pos == AscendPos::kL1) LoadB(*B, g->trans_B, k, n, l0b, &out, sp);
    // the accumulator's initial value: a cleared accumulator starts at the first gemm after the clear
    Expr init = Int(0);
    if (dual) {
      init = Int(1);  // a fresh product, added to the accumulator in the Unified Buffer below
    } else if (g->clear_accum) {
      init = Int(1);
    } else if (auto it = clear_depth_.find(g->C.buffer.get()); it != clear_depth_.end()) {
      init = it->second.second;
      for (size_t d = it->second.first; d < loops_.size(); ++d)
        init = Binary(BinaryOp::kAnd, init, Binary(BinaryOp::kEQ, loops_[d]->var, loops_[d]->min));
      init = Simplify(Cast(DataType::Int(32), init));
      clear_depth_.erase(it);
    }
    out.push_back(Op("mmad",
                     {Load(C->flat, {Int(0)}), Load(l0a, {Int(0)}), Load(l0b, {Int(0)}), m, n, k, init,
                      Int(arch_.l0a_nz ? 1 : 0)},
                     sp));
    if (dual) {  // the product to the vector core: Fixpipe to the workspace, DataCopyPad into the UB, add
      const Tile& U = tiles_.at(g->C.buffer.get());
      auto [ws, prod] = dual_ws_.at(g->C.buffer.get());
      out.push_back(Op("fixpipe",
                       {Load(ws, {Int(0)}), Load(C->flat, {Int(0)}), m, n, Simplify(CeilDiv(m, 16) * Int(16)),
                        Int(U.cols)},
                       sp));
      out.push_back(Op("copy_gm_to_ub",
                       {Load(prod, {Int(0)}), Load(ws, {Int(0)}), m, n, Int(U.cols), Int(U.pitch)}, sp));
      if (g->clear_accum)
        out.push_back(Op("vscalar",
                         {StringImm("Muls"), Load(U.flat, {Int(0)}), Load(prod, {Int(0)}),
                          FloatImm(U.flat->dtype, 1), Int(U.rows * U.pitch)},
                         sp));
      else
        out.push_back(Op("vbin",
                         {StringImm("Add"), Load(U.flat, {Int(0)}), Load(U.flat, {Int(0)}),
                          Load(prod, {Int(0)}), Int(U.rows * U.pitch)},
                         sp));
    }
    return Seq(out, sp);
  }

  // ---- element-wise T.Parallel loops and reductions on the vector unit -------------------------------
  // A 2-D Unified-Buffer tile holds rows of `pitch` elements (32-byte rows). A 1-D tile is either a row of
  // values (dense, (1, n): copied with global memory, or indexed by a loop's column var) or one value per row
  // (row-wise, (n, 1): one element per 32-byte block, so that each sits at an address a vector instruction
  // can start at: reductions write them, and a row's value is read by the scalar unit to broadcast it).
  static bool RowWise(const Tile& t) { return t.cols == 1 && t.pitch > 1; }

  // What an expression of a T.Parallel nest varies with.
  enum Kind { kScalar = 0, kRow = 1, kCol = 2, kFull = 3 };

  struct Nest {
    std::vector<const ForNode*> loops;
    const VarNode* row = nullptr;  // the row var of a 2-D nest
    const VarNode* col = nullptr;  // the column var (the only var of a 1-D nest)
    int64_t rows = 1, cols = 1, pitch = 0;
    DataType t;  // the stored tile's type
  };

  Kind KindOf(const Expr& e, const Nest& n) {
    const VarUses u = VarsOf(e);
    int k = kScalar;
    if (n.row && u.vars.count(n.row)) k |= kRow;
    if (n.col && u.vars.count(n.col)) k |= kCol;
    if (k == kScalar && u.loads)
      NotLowered("a T.Parallel expression reading a tile element at a fixed index", cur_);
    return static_cast<Kind>(k);
  }

  // A scratch tile of the Unified Buffer for one statement's intermediate values: a statement's temporaries
  // die with it, so the next statement reuses them (same type and size; the sync pass orders the reuse).
  Buffer Temp(DataType t, int64_t elems) {
    for (auto& b : temps_) {
      int64_t n = 0;
      AsConstInt(b->shape[0], &n);
      if (b->dtype == t && n == elems && !busy_.count(b.get())) {
        busy_.insert(b.get());
        return b;
      }
    }
    Buffer tmp = MakeBuffer("tmp" + std::to_string(temps_.size()), t, {Int(elems)}, Scope::kShared, cur_);
    pos_[tmp.get()] = AscendPos::kUB;
    temps_.push_back(tmp);
    busy_.insert(tmp.get());
    return tmp;
  }

  // A value of the nest as a tile: the buffer and the element offset of (row i, column 0); a row-kind value
  // is a row-wise tile, a column-kind value a dense row, a full value a 2-D tile (all with the nest's pitch).
  struct Val {
    Buffer buf;
    Kind kind;
  };

  Val Eval(const Expr& e, const Nest& n, std::vector<Stmt>& out, Buffer dst = nullptr) {
    const Kind kind = KindOf(e, n);
    const int64_t bsz = 32 / std::max(1, e->dtype.bytes());
    auto count = [&](Kind k) {
      return Int(k == kFull ? n.rows * n.pitch : k == kRow ? n.rows * bsz : n.pitch);
    };
    auto into = [&](Kind k, DataType t) -> Buffer {
      if (dst) return dst;
      if (k != kRow && t.bytes() != n.t.bytes() && (n.pitch * t.bytes()) % 32 != 0)
        NotLowered("a T.Parallel expression in " + t.str() + " in a " + n.t.str() + " loop whose rows (" +
                       std::to_string(n.pitch) + " elements) are not whole 32-byte blocks in " + t.str(),
                   cur_);
      return Temp(t, k == kFull ? n.rows * n.pitch : k == kRow ? n.rows * bsz : n.pitch);
    };
    auto at0 = [](const Buffer& b) { return Load(b, {Int(0)}); };
    if (kind == kScalar) NotLowered("a T.Parallel expression without the loop's vars (internal)", cur_);
    if (auto* sel = As<SelectNode>(e)) return Mask(sel, n, out, dst);
    if (auto* l = As<BufferLoadNode>(e)) {
      const Tile* t = TileOf(l->buffer);
      if (!t || t->pos != AscendPos::kUB)
        NotLowered("a T.Parallel read of a buffer that is not a Unified-Buffer tile", cur_);
      const bool ok = kind == kFull ? l->indices.size() == 2 && t->rows == n.rows && t->cols == n.cols &&
                                          l->indices[0].get() == static_cast<const ExprNode*>(n.row) &&
                                          l->indices[1].get() == static_cast<const ExprNode*>(n.col)
                      : kind == kRow ? l->indices.size() == 1 && RowWise(*t) && t->rows == n.rows &&
                                           l->indices[0].get() == static_cast<const ExprNode*>(n.row)
                      : kind == kCol ? l->indices.size() == 1 && !RowWise(*t) && t->cols == n.cols &&
                                           l->indices[0].get() == static_cast<const ExprNode*>(n.col)
                                     : false;
      if (!ok || (kind == kFull && t->pitch != n.pitch))
        NotLowered("the T.Parallel read " + l->buffer->name +
                       "[...] (a tile is read at the nest's own (i, j), (i) or (j))",
                   cur_);
      if (!dst) return {t->flat, kind};
      return Copy(t->flat, kind, n, out, dst);
    }
    if (auto* c = As<CastNode>(e)) {
      Val s = Eval(c->value, n, out);
      Buffer o = dst ? dst
                     : Temp(e->dtype, s.kind == kFull  ? n.rows * n.pitch
                                      : s.kind == kRow ? n.rows * bsz
                                                       : n.pitch);
      if (s.kind != kind) return Broadcast(s, kind, n, out, o);
      if (kind == kRow && s.buf->dtype.bytes() != e->dtype.bytes()) {
        // row-wise values sit one per 32-byte block in either type: a Cast of one element per repeat, each
        // repeat a block further on in both (repeats of at most 255)
        for (int64_t r0 = 0; r0 < n.rows; r0 += 255)
          out.push_back(Op("vcast_rows",
                           {Load(o, {Int(r0 * bsz)}), Load(s.buf, {Int(r0 * (32 / s.buf->dtype.bytes()))}),
                            Int(std::min<int64_t>(255, n.rows - r0))},
                           cur_));
        return {o, kind};
      }
      out.push_back(Op("vcast", {at0(o), at0(s.buf), count(kind)}, cur_));
      return {o, kind};
    }
    if (auto* call = As<CallNode>(e)) {
      static const std::map<std::string, const char*> un = {
          {"exp", "Exp"},     {"tl.exp", "Exp"},    {"log", "Ln"},    {"tl.log", "Ln"},
          {"abs", "Abs"},     {"tl.abs", "Abs"},    {"sqrt", "Sqrt"}, {"tl.sqrt", "Sqrt"},
          {"rsqrt", "Rsqrt"}, {"tl.rsqrt", "Rsqrt"}};
      // the vector unit has natural exponentials and logarithms: 2^x = e^(x ln 2), log2 x = ln x / ln 2
      const bool exp2 = call->op == "exp2" || call->op == "tl.exp2",
                 log2 = call->op == "log2" || call->op == "tl.log2";
      auto it = un.find(call->op);
      if ((it == un.end() && !exp2 && !log2) || call->args.size() != 1)
        NotLowered("the call " + call->op + " in a T.Parallel loop on the vector unit", cur_);
      Val s = Eval(call->args[0], n, out);
      Buffer o = into(s.kind, e->dtype);
      const double ln2 = 0.69314718055994530942;
      if (exp2) {
        out.push_back(Op("vscalar",
                         {StringImm("Muls"), at0(o), at0(s.buf), FloatImm(e->dtype, ln2), count(s.kind)},
                         cur_));
        out.push_back(Op("vun", {StringImm("Exp"), at0(o), at0(o), count(s.kind)}, cur_));
      } else if (log2) {
        out.push_back(Op("vun", {StringImm("Ln"), at0(o), at0(s.buf), count(s.kind)}, cur_));
        out.push_back(Op("vscalar",
                         {StringImm("Muls"), at0(o), at0(o), FloatImm(e->dtype, 1 / ln2), count(s.kind)},
                         cur_));
      } else {
        out.push_back(Op("vun", {StringImm(it->second), at0(o), at0(s.buf), count(s.kind)}, cur_));
      }
      return {o, s.kind};
    }
    auto* b = As<BinaryNode>(e);
    static const std::map<BinaryOp, const char*> vv = {{BinaryOp::kAdd, "Add"}, {BinaryOp::kSub, "Sub"},
                                                       {BinaryOp::kMul, "Mul"}, {BinaryOp::kDiv, "Div"},
                                                       {BinaryOp::kMax, "Max"}, {BinaryOp::kMin, "Min"}};
    if (!b || !vv.count(b->op)) NotLowered("this T.Parallel expression on the vector unit", cur_);
    static const std::map<BinaryOp, const char*> vs = {{BinaryOp::kAdd, "Adds"},
                                                       {BinaryOp::kMul, "Muls"},
                                                       {BinaryOp::kMax, "Maxs"},
                                                       {BinaryOp::kMin, "Mins"}};
    const Kind ka = KindOf(b->a, n), kb = KindOf(b->b, n);
    const bool commutes = vs.count(b->op) != 0;
    // a value (op) a scalar: one instruction with the scalar
    if ((ka == kScalar) != (kb == kScalar) && (commutes || (kb == kScalar && b->op == BinaryOp::kSub))) {
      const bool left = ka != kScalar;
      Val v = Eval(left ? b->a : b->b, n, out);
      Expr sc = left ? b->b : b->a;
      const char* name = commutes ? vs.at(b->op) : "Adds";
      if (!commutes) sc = Simplify(Binary(BinaryOp::kSub, FloatOrInt(sc->dtype, 0), sc));
      Buffer o = into(v.kind, e->dtype);
      out.push_back(Op("vscalar", {StringImm(name), at0(o), at0(v.buf), sc, count(v.kind)}, cur_));
      return {o, v.kind};
    }
    // a full tile (op) a row's value: per row, the scalar unit reads the value and the vector unit applies it
    if (kind == kFull && ((ka == kFull && kb == kRow) || (ka == kRow && kb == kFull)) &&
        (commutes || (ka == kFull && b->op == BinaryOp::kSub))) {
      Val v = Eval(ka == kFull ? b->a : b->b, n, out), r = Eval(ka == kRow ? b->a : b->b, n, out);
      Buffer o = into(kFull, e->dtype);
      const char* name = commutes ? vs.at(b->op) : "Subs";
      out.push_back(PerRow(n, [&](Expr i) {
        return Op("vscalar_row",
                  {StringImm(name), Load(o, {i * Int(n.pitch)}), Load(v.buf, {i * Int(n.pitch)}),
                   Load(r.buf, {i * Int(bsz)}), Int(n.pitch)},
                  cur_);
      }));
      return {o, kFull};
    }
    auto operand = [&](const Expr& x) -> Val {
      if (KindOf(x, n) == kScalar) {  // a scalar spread over a tile of the result's kind
        Buffer o = Temp(x->dtype, kind == kFull ? n.rows * n.pitch : kind == kRow ? n.rows * bsz : n.pitch);
        out.push_back(Op("vdup", {at0(o), x, count(kind)}, cur_));
        return {o, kind};
      }
      Val v = Eval(x, n, out);
      return v.kind == kind ? v : Broadcast(v, kind, n, out, nullptr);
    };
    Val x = operand(b->a), y = operand(b->b);
    Buffer o = into(kind, e->dtype);
    out.push_back(Op("vbin", {StringImm(vv.at(b->op)), at0(o), at0(x.buf), at0(y.buf), count(kind)}, cur_));
    return {o, kind};
  }

  // T.if_then_else(cond, a, b). With scalar a and b and a condition linear in the column index (masks:
  // causal attention's `q_row >= k_col`, a ragged key block's `k0 + j >= seq_len`), each row's columns where
  // it holds are a prefix or a suffix: the row is filled with one value and its prefix with the other (two
  // Duplicates from the row's start, whose addresses stay aligned). Any other: Compare into a bit mask and
  // Select (SelectTiles below).
  Val Mask(const SelectNode* sel, const Nest& n, std::vector<Stmt>& out, Buffer dst) {
    const VarUses ua = VarsOf(sel->true_value), ub = VarsOf(sel->false_value);
    auto loop_free = [&](const VarUses& u) {
      return !u.loads && !(n.row && u.vars.count(n.row)) && !(n.col && u.vars.count(n.col));
    };
    Prefix p;
    if (!loop_free(ua) || !loop_free(ub) || !ColumnPrefix(sel->cond, n, &p))
      return SelectTiles(sel, n, out, dst);
    const DataType t = sel->dtype;
    const Expr pre = p.holds ? sel->true_value : sel->false_value,
               rest = p.holds ? sel->false_value : sel->true_value;
    Buffer o = dst ? dst : Temp(t, n.rows * n.pitch);
    out.push_back(PrefixFill(n, o, p.len, Cast(t, pre), Cast(t, rest)));
    return {o, kFull};
  }

  // Where a condition linear in the column index holds in row i: the prefix [0, len) of the row when `holds`,
  // else the rest (len an expression of the row var).
  struct Prefix {
    Expr len;
    bool holds = false;
  };
  bool ColumnPrefix(const Expr& cond, const Nest& n, Prefix* p) {
    auto* cmp = As<BinaryNode>(cond);
    const bool is_cmp = cmp && (cmp->op == BinaryOp::kGE || cmp->op == BinaryOp::kGT ||
                                cmp->op == BinaryOp::kLE || cmp->op == BinaryOp::kLT);
    if (!n.col || !is_cmp || VarsOf(cond).loads) return false;
    // f >= 0 (or f > 0) with f = s * j + g(i): s = +-1
    Expr f = cmp->op == BinaryOp::kGE || cmp->op == BinaryOp::kGT ? Simplify(cmp->a - cmp->b)
                                                                  : Simplify(cmp->b - cmp->a);
    const bool strict = cmp->op == BinaryOp::kGT || cmp->op == BinaryOp::kLT;
    if (!f->dtype.is_int()) return false;
    auto at = [&](int64_t v) { return Simplify(Substitute(f, {{n.col, Int(v)}})); };
    int64_t s1 = 0, s2 = 0;
    if (!AsConstInt(Simplify(at(1) - at(0)), &s1) || !AsConstInt(Simplify(at(2) - at(1)), &s2) || s1 != s2 ||
        (s1 != 1 && s1 != -1))
      return false;
    const Expr g = at(0);  // f = s1 * j + g
    // s1 = 1: holds for j >= -g (+1 if strict): the prefix [0, -g (+1)) is where it does not
    // s1 = -1: holds for j <= g (-1 if strict): the prefix [0, g + 1 (-1)) is where it does
    p->holds = s1 < 0;
    p->len = s1 > 0 ? Simplify(Int(0) - g + Int(strict ? 1 : 0)) : Simplify(g + Int(strict ? 0 : 1));
    return true;
  }

  // Per row: `rest` everywhere, then `pre` over the prefix [0, len) clipped to the row.
  Stmt PrefixFill(const Nest& n, const Buffer& o, const Expr& len, const Expr& pre, const Expr& rest) {
    const int64_t cols = n.cols;
    return PerRow(n, [&](Expr i) {
      Expr l = len;
      if (n.row) l = Substitute(l, {{n.row, i}});
      l = Simplify(Binary(BinaryOp::kMax, Binary(BinaryOp::kMin, l, Int(cols)), Int(0)));
      Stmt fill = Op("vdup", {Load(o, {i * Int(n.pitch)}), rest, Int(n.pitch)}, cur_);
      Stmt head =
          If(Binary(BinaryOp::kGT, l, Int(0)), Op("vdup", {Load(o, {i * Int(n.pitch)}), pre, l}, cur_));
      return Seq({fill, head}, cur_);
    });
  }

  // The general T.if_then_else: the condition as a bit mask (Compare; conditions combined with and / or / not
  // as 0/1 tiles), then Select between the two values as whole tiles. Compare and Select run over whole
  // 256-byte repeats (the count form of Compare needs them), so their tiles are padded to one.
  Val SelectTiles(const SelectNode* sel, const Nest& n, std::vector<Stmt>& out, Buffer dst) {
    const DataType t = sel->dtype;
    if (!t.is_float() || (t.bits() != 32 && !(t.bits() == 16 && t.code() == DataType::Code::kFloat)))
      NotLowered("T.if_then_else choosing " + t.str() +
                     " values in a T.Parallel loop (the vector unit's Select takes float32 and float16)",
                 cur_);
    const int64_t cnt = n.rows * n.pitch, padded = RoundUp(cnt, 256 / t.bytes());
    Buffer bits = CondBits(sel->cond, n, out, padded);
    Buffer a = Whole(sel->true_value, t, n, out, padded), b = Whole(sel->false_value, t, n, out, padded);
    const bool into_dst = dst && SizeOf(dst) >= padded;
    Buffer o = into_dst ? dst : Temp(t, padded);
    out.push_back(Op(
        "vsel", {Load(o, {Int(0)}), Load(bits, {Int(0)}), Load(a, {Int(0)}), Load(b, {Int(0)}), Int(padded)},
        cur_));
    if (dst && !into_dst) return Copy(o, kFull, n, out, dst);
    return {o, kFull};
  }

  static int64_t SizeOf(const Buffer& b) {
    int64_t v = 0;
    AsConstInt(b->shape[0], &v);
    return v;
  }

  // A value of the nest as a whole tile of type t with at least `padded` elements.
  Buffer Whole(const Expr& x, DataType t, const Nest& n, std::vector<Stmt>& out, int64_t padded) {
    const Expr v = x->dtype == t ? x : Cast(t, x);
    if (KindOf(v, n) == kScalar) {
      Buffer o = Temp(t, padded);
      out.push_back(Op("vdup", {Load(o, {Int(0)}), v, Int(padded)}, cur_));
      return o;
    }
    Val e = Eval(v, n, out);
    if (e.kind != kFull) e = Broadcast(e, kFull, n, out, Temp(t, padded));
    if (SizeOf(e.buf) >= padded) return e.buf;
    return Copy(e.buf, kFull, n, out, Temp(t, padded)).buf;
  }

  // The condition as a bit mask over `padded` elements (bit e of byte e / 8 for element e, lowest first).
  Buffer CondBits(const Expr& c, const Nest& n, std::vector<Stmt>& out, int64_t padded) {
    static const std::map<BinaryOp, const char*> modes = {{BinaryOp::kLT, "LT"}, {BinaryOp::kLE, "LE"},
                                                          {BinaryOp::kGT, "GT"}, {BinaryOp::kGE, "GE"},
                                                          {BinaryOp::kEQ, "EQ"}, {BinaryOp::kNE, "NE"}};
    Buffer bits = Temp(DataType::UInt(8), RoundUp((padded + 7) / 8, 32));
    auto* cmp = As<BinaryNode>(c);
    Prefix p;
    if (cmp && modes.count(cmp->op) && !ColumnPrefix(c, n, &p)) {
      if (!VarsOf(cmp->a).loads && !VarsOf(cmp->b).loads)
        NotLowered(
            "a T.if_then_else condition on the loop indices that is not linear in the column index (the "
            "vector "
            "unit compares tile values; index conditions must be j or -j plus terms without j)",
            cur_);
      // values compared in their common float type (float32 unless both are float16)
      const DataType ct =
          cmp->a->dtype == cmp->b->dtype && cmp->a->dtype.is_float() &&
                  (cmp->a->dtype.bits() == 32 || cmp->a->dtype.code() == DataType::Code::kFloat)
              ? cmp->a->dtype
              : DataType::Float(32);
      const int64_t cp = RoundUp(padded, 256 / ct.bytes());
      Buffer x = Whole(cmp->a, ct, n, out, cp), y = Whole(cmp->b, ct, n, out, cp);
      out.push_back(Op("vcmp",
                       {StringImm(modes.at(cmp->op)), Load(bits, {Int(0)}), Load(x, {Int(0)}),
                        Load(y, {Int(0)}), Int(padded)},
                       cur_));
      return bits;
    }
    // otherwise the condition as a 0/1 float32 tile, then where it is above one half
    Buffer f = Cond01(c, n, out, padded), half = Temp(DataType::Float(32), padded);
    out.push_back(Op("vdup", {Load(half, {Int(0)}), FloatImm(DataType::Float(32), 0.5), Int(padded)}, cur_));
    out.push_back(Op(
        "vcmp", {StringImm("GT"), Load(bits, {Int(0)}), Load(f, {Int(0)}), Load(half, {Int(0)}), Int(padded)},
        cur_));
    return bits;
  }

  // A condition as a float32 tile of 1 where it holds and 0 where not: and = Mul, or = Max, not = 1 - x.
  Buffer Cond01(const Expr& c, const Nest& n, std::vector<Stmt>& out, int64_t padded) {
    const DataType f32 = DataType::Float(32);
    const int64_t fp = RoundUp(padded, 64);
    auto at0 = [](const Buffer& b) { return Load(b, {Int(0)}); };
    Prefix p;
    if (ColumnPrefix(c, n, &p)) {
      Buffer o = Temp(f32, fp);
      if (fp > n.rows * n.pitch) out.push_back(Op("vdup", {at0(o), FloatImm(f32, 0), Int(fp)}, cur_));
      out.push_back(PrefixFill(n, o, p.len, FloatImm(f32, p.holds ? 1 : 0), FloatImm(f32, p.holds ? 0 : 1)));
      return o;
    }
    auto* bin = As<BinaryNode>(c);
    if (bin && (bin->op == BinaryOp::kAnd || bin->op == BinaryOp::kOr)) {
      Buffer x = Cond01(bin->a, n, out, padded), y = Cond01(bin->b, n, out, padded);
      out.push_back(
          Op("vbin", {StringImm(bin->op == BinaryOp::kAnd ? "Mul" : "Max"), at0(x), at0(x), at0(y), Int(fp)},
             cur_));
      return x;
    }
    if (auto* no = As<NotNode>(c)) {
      Buffer x = Cond01(no->a, n, out, padded);
      out.push_back(Op("vscalar", {StringImm("Muls"), at0(x), at0(x), FloatImm(f32, -1), Int(fp)}, cur_));
      out.push_back(Op("vscalar", {StringImm("Adds"), at0(x), at0(x), FloatImm(f32, 1), Int(fp)}, cur_));
      return x;
    }
    if (bin && (bin->op == BinaryOp::kLT || bin->op == BinaryOp::kLE || bin->op == BinaryOp::kGT ||
                bin->op == BinaryOp::kGE || bin->op == BinaryOp::kEQ || bin->op == BinaryOp::kNE)) {
      Buffer bits = CondBits(c, n, out, fp), one = Temp(f32, fp), zero = Temp(f32, fp), o = Temp(f32, fp);
      out.push_back(Op("vdup", {at0(one), FloatImm(f32, 1), Int(fp)}, cur_));
      out.push_back(Op("vdup", {at0(zero), FloatImm(f32, 0), Int(fp)}, cur_));
      out.push_back(Op("vsel", {at0(o), at0(bits), at0(one), at0(zero), Int(fp)}, cur_));
      return o;
    }
    NotLowered(
        "this T.if_then_else condition in a T.Parallel loop (comparisons of tile values, and / or / not "
        "of them, and comparisons linear in the column index are lowered)",
        cur_);
  }

  Stmt PerRow(const Nest& n, const std::function<Stmt(Expr)>& body) {
    Var i = MakeVar("r");
    return For(i, Int(0), Int(n.rows), ForKind::kSerial, body(i), {}, cur_);
  }

  // v as a value of kind `to` (a row's value or a column row spread over the whole tile).
  Val Broadcast(const Val& v, Kind to, const Nest& n, std::vector<Stmt>& out, Buffer dst) {
    const int64_t bsz = 32 / std::max(1, v.buf->dtype.bytes());
    if (to != kFull && !(to == kCol && v.kind == kCol))
      NotLowered("a T.Parallel expression mixing a row's values and a column's values outside a whole tile",
                 cur_);
    Buffer o = dst ? dst : Temp(v.buf->dtype, n.rows * n.pitch);
    if (v.kind == kRow)
      out.push_back(PerRow(n, [&](Expr i) {
        return Op("vdup_row", {Load(o, {i * Int(n.pitch)}), Load(v.buf, {i * Int(bsz)}), Int(n.pitch)}, cur_);
      }));
    else
      out.push_back(PerRow(n, [&](Expr i) {
        return Op("vscalar",
                  {StringImm("Muls"), Load(o, {i * Int(n.pitch)}), Load(v.buf, {Int(0)}),
                   FloatOrInt(v.buf->dtype, 1), Int(n.pitch)},
                  cur_);
      }));
    return {o, kFull};
  }

  Val Copy(const Buffer& src, Kind k, const Nest& n, std::vector<Stmt>& out, const Buffer& dst) {
    const int64_t bsz = 32 / std::max(1, src->dtype.bytes());
    out.push_back(Op("vscalar",
                     {StringImm("Muls"), Load(dst, {Int(0)}), Load(src, {Int(0)}), FloatOrInt(src->dtype, 1),
                      Int(k == kFull  ? n.rows * n.pitch
                          : k == kRow ? n.rows * bsz
                                      : n.pitch)},
                     cur_));
    return {dst, k};
  }

  Stmt LowerParallel(const ForNode* f) {
    std::vector<const ForNode*> nest{f};
    Stmt body = f->body;
    while (auto* in = As<ForNode>(body)) {
      if (in->for_kind != ForKind::kParallel) break;
      nest.push_back(in);
      body = in->body;
    }
    // the body's statements one by one (each element's statements only touch that element: splitting them
    // into loops of their own keeps what each computes), lets inlined
    std::vector<Stmt> stmts;
    std::function<void(const Stmt&)> flat = [&](const Stmt& x) {
      if (auto* q = As<SeqNode>(x)) {
        for (auto& y : q->seq) flat(y);
      } else if (auto* l = As<LetNode>(x)) {
        flat(Substitute(l->body, {{l->var.get(), l->value}}));
      } else if (As<StoreNode>(x)) {
        stmts.push_back(x);
      } else {
        NotLowered("a T.Parallel body with this statement (stores and lets are lowered)",
                   x ? x->span : f->span);
      }
    };
    flat(body);
    if (nest.size() > 2) NotLowered("a T.Parallel nest of more than two loops", f->span);
    for (auto* l : nest)
      if (!IsConstInt(l->min, 0)) NotLowered("a T.Parallel loop that does not start at 0", f->span);
    std::vector<Stmt> all;
    for (auto& x : stmts) all.push_back(LowerParallelStore(f, nest, As<StoreNode>(x)));
    return Seq(all, f->span);
  }

  // `G[base + i] = t[i]` / `G[base_r + i, base_c + j] = t[i, j]`: the tile's rows to global memory.
  Stmt ParallelToGlobal(const std::vector<const ForNode*>& nest, const StoreNode* st) {
    const Buffer& G = st->buffer;
    auto* l = As<BufferLoadNode>(st->value);
    const Tile* t = l ? TileOf(l->buffer) : nullptr;
    if (!t || t->pos != AscendPos::kUB || l->buffer->dtype != G->dtype)
      NotLowered(
          "a T.Parallel store into global tensor '" + G->name +
              "' of anything but an element of a Unified-Buffer tile of its type (compute into a tile first)",
          st->span);
    const size_t k = nest.size();
    bool ok = l->indices.size() == k && G->shape.size() >= k;
    for (size_t d = 0; ok && d < k; ++d)
      ok = l->indices[d].get() == static_cast<const ExprNode*>(nest[d]->var.get());
    if (!ok)
      NotLowered("a T.Parallel store into '" + G->name + "' that is not element (i[, j]) of a tile",
                 st->span);
    std::map<const VarNode*, Expr> zero;
    for (auto* f : nest) zero[f->var.get()] = Int(0);
    std::vector<Expr> first;
    const size_t lead = G->shape.size() - k;
    for (size_t d = 0; d < G->shape.size(); ++d) {
      const Expr base = Simplify(Substitute(st->indices[d], zero));
      const VarUses u = VarsOf(d < lead ? st->indices[d] : Simplify(st->indices[d] - nest[d - lead]->var));
      for (auto* f : nest)
        if (u.vars.count(f->var.get()))
          NotLowered("a T.Parallel store into '" + G->name + "' at an index other than base + the loop's var",
                     st->span);
      first.push_back(base);
    }
    int64_t e0 = 0, e1 = 0;
    AsConstInt(nest[0]->extent, &e0);
    if (k == 2) AsConstInt(nest[1]->extent, &e1);
    const size_t last = G->shape.size() - 1;
    auto clip = [&](int64_t ext, size_t d) { return Simplify(Mn(Int(ext), G->shape[d] - first[d])); };
    Expr rows, cols, stride;
    if (k == 2) {
      if (t->rows != e0 || t->cols != e1) NotLowered("a T.Parallel store of part of a tile", st->span);
      rows = clip(e0, last - 1), cols = clip(e1, last), stride = G->shape[last];
    } else if (RowWise(*t)) {
      if (t->rows != e0) NotLowered("a T.Parallel store of part of a tile", st->span);
      rows = clip(e0, last), cols = Int(1), stride = Int(1);
    } else {
      if (t->cols != e0) NotLowered("a T.Parallel store of part of a tile", st->span);
      rows = Int(1), cols = clip(e0, last), stride = G->shape[last];
    }
    return Op("copy_ub_to_gm", {Load(G, first), Load(t->flat, {Int(0)}), rows, cols, stride, Int(t->pitch)},
              st->span);
  }

  Stmt LowerParallelStore(const ForNode* f, const std::vector<const ForNode*>& nest, const StoreNode* st) {
    cur_ = st->span;
    busy_.clear();
    if (st->buffer->scope == Scope::kGlobal) return ParallelToGlobal(nest, st);
    const Tile* d = TileOf(st->buffer);
    if (!d || d->pos != AscendPos::kUB)
      NotLowered("a T.Parallel loop that does not write a Unified-Buffer tile", f->span);
    Nest n;
    n.t = st->buffer->dtype;
    int64_t e0 = 0, e1 = 0;
    AsConstInt(nest[0]->extent, &e0);
    if (nest.size() == 2) AsConstInt(nest[1]->extent, &e1);
    if (nest.size() == 2) {
      n.row = nest[0]->var.get();
      n.col = nest[1]->var.get();
      n.rows = e0;
      n.cols = e1;
      n.pitch = d->pitch;
      const bool whole = st->indices.size() == 2 &&
                         st->indices[0].get() == static_cast<const ExprNode*>(n.row) &&
                         st->indices[1].get() == static_cast<const ExprNode*>(n.col);
      if (!whole || d->rows != n.rows || d->cols != n.cols)
        NotLowered("a T.Parallel store that is not element (i, j) of the tile the nest walks whole",
                   st->span);
    } else if (RowWise(*d)) {  // one value per row: the nest's var is the row
      n.row = nest[0]->var.get();
      n.rows = e0;
      n.pitch = 1;
      if (st->indices.size() != 1 || st->indices[0].get() != static_cast<const ExprNode*>(n.row) ||
          d->rows != n.rows)
        NotLowered("a T.Parallel store that is not element (i) of the row-wise tile the loop walks whole",
                   st->span);
    } else {
      n.col = nest[0]->var.get();
      n.cols = e0;
      n.pitch = d->pitch;
      if (st->indices.size() != 1 || st->indices[0].get() != static_cast<const ExprNode*>(n.col) ||
          d->cols != n.cols)
        NotLowered("a T.Parallel store that is not element (j) of the tile the loop walks whole", st->span);
    }
    std::vector<Stmt> out;
    const Kind want = KindOf(st->value, n);
    const Kind kd = nest.size() == 2 ? kFull : RowWise(*d) ? kRow : kCol;
    if (want == kScalar) {
      out.push_back(Op("vdup", {Load(d->flat, {Int(0)}), st->value, Int(d->rows * d->pitch)}, cur_));
    } else if (want == kd || As<SelectNode>(st->value)) {  // a mask is written as a whole tile
      Eval(st->value, n, out, d->flat);
    } else {
      Val v = Eval(st->value, n, out);
      if (v.kind == kd)
        Copy(v.buf, kd, n, out, d->flat);
      else
        Broadcast(v, kd, n, out, d->flat);
    }
    return Seq(out, f->span);
  }

  Stmt LowerReduce(const ReduceNode* r) {
    cur_ = r->span;
    busy_.clear();
    const Tile* s = TileOf(r->src.buffer);
    const Tile* d = TileOf(r->dst.buffer);
    if (!s || !d || s->pos != AscendPos::kUB || d->pos != AscendPos::kUB || !r->src.IsWhole() ||
        !r->dst.IsWhole())
      NotLowered("a reduction outside the Unified Buffer", r->span);
    if (r->src.buffer->shape.size() != 2 || r->dim != 1 || !RowWise(*d) || d->rows != s->rows)
      NotLowered("a reduction other than along the rows of a 2-D tile into one value per row", r->span);
    const char* op = r->reduce_kind == ReduceKind::kSum   ? "Sum"
                     : r->reduce_kind == ReduceKind::kMax ? "Max"
                     : r->reduce_kind == ReduceKind::kMin ? "Min"
                                                          : nullptr;
    if (!op) NotLowered(std::string("T.reduce_") + ReduceKindName(r->reduce_kind), r->span);
    const DataType t = r->dst.buffer->dtype;
    const int64_t bsz = 32 / t.bytes();
    Buffer work = Temp(t, s->pitch);
    Buffer into = r->clear ? d->flat : Temp(t, d->rows * bsz);
    Nest n;
    n.rows = s->rows;
    std::vector<Stmt> out;
    out.push_back(PerRow(n, [&](Expr i) {
      return Op("vreduce",
                {StringImm(op), Load(into, {i * Int(bsz)}), Load(s->flat, {i * Int(s->pitch)}),
                 Load(work, {Int(0)}), Int(s->cols)},
                r->span);
    }));
    if (!r->clear) {  // the reduction of this tile combined with what the row held
      const char* comb = r->reduce_kind == ReduceKind::kSum   ? "Add"
                         : r->reduce_kind == ReduceKind::kMax ? "Max"
                                                              : "Min";
      out.push_back(Op("vbin",
                       {StringImm(comb), Load(d->flat, {Int(0)}), Load(d->flat, {Int(0)}),
                        Load(into, {Int(0)}), Int(d->rows * bsz)},
                       r->span));
    }
    return Seq(out, r->span);
  }

  // Every buffer a statement names (tile-op regions, loads, stores).
  static std::map<const BufferNode*, int> Uses(const Stmt& s) {
    std::map<const BufferNode*, int> n;
    struct V : IRVisitor {
      std::map<const BufferNode*, int>* n;
      void VisitBuffer(const Buffer& b) override { ++(*n)[b.get()]; }
    } v;
    v.n = &n;
    v.VisitStmt(s);
    return n;
  }

  // T.Pipelined(num_stages = S >= 2): the tiles the loop's copies fill from global memory get S buffers
  // (while the buffers fit: fewer stages, with a warning, where they do not), L0A / L0B two, and the loop
  // runs S iterations per trip, iteration s on buffer s: the copies of one iteration touch other buffers than
  // the loads and the Mmad of the S - 1 before it, so the flags let MTE2 run that far ahead of the cube.
  Stmt LowerPipelined(const ForNode* f, int64_t stages) {
    std::vector<const BufferNode*> tiles;
    const auto in_loop = Uses(f->body), in_kernel = Uses(kernel_->body);
    PostOrderVisitStmt(f->body, [&](const Stmt& x) {
      auto* c = As<CopyNode>(x);
      if (!c || c->src.buffer->scope != Scope::kGlobal || !tiles_.count(c->dst.buffer.get())) return;
      const BufferNode* b = c->dst.buffer.get();
      if (std::find(tiles.begin(), tiles.end(), b) != tiles.end()) return;
      if (in_loop.at(b) == in_kernel.at(b)) tiles.push_back(b);  // used only in the loop
    });
    bool gemm = false;
    PostOrderVisitStmt(f->body, [&](const Stmt& x) { gemm |= As<GemmNode>(x) != nullptr; });
    if (tiles.empty() && !gemm) {
      loops_.push_back(f);
      Stmt b = Lower(f->body);
      loops_.pop_back();
      return For(f->var, f->min, f->extent, ForKind::kSerial, b, {}, f->span);
    }
    // as many stages as the positions hold (the program's tiles, the loop's tiles once per stage)
    const std::string at = f->span.file + ":" + std::to_string(f->span.line) + ": ";
    int64_t S = stages;
    for (; S > 2; --S) {
      std::map<AscendPos, int64_t> used;
      for (auto& [b, t] : tiles_) {
        int64_t n = 0;
        AsConstInt(t.flat->shape[0], &n);
        const bool rotated = std::find(tiles.begin(), tiles.end(), b) != tiles.end();
        used[t.pos] += RoundUp(n * t.flat->dtype.bytes(), AscendPosAlign(t.pos)) * (rotated ? S : 1);
      }
      if (used[AscendPos::kL1] <= arch_.l1 && used[AscendPos::kUB] <= arch_.ub) break;
    }
    if (S < stages && ctx_.info)
      ctx_.info->warnings.push_back(at + "T.Pipelined num_stages=" + std::to_string(stages) + " runs with " +
                                    std::to_string(S) + " stages on Ascend: " + std::to_string(stages) +
                                    " buffers of the loop's tiles do not fit L1 / the Unified Buffer");
    std::string names;
    for (const BufferNode* b : tiles) {
      auto& v = stage_bufs_[b];
      if (v.empty()) v.push_back(tiles_.at(b));
      while (static_cast<int64_t>(v.size()) < S) {
        Tile t = v[0];
        const size_t s = v.size();
        t.flat = MakeBuffer(t.flat->name + (s == 1 ? "_pong" : "_stage" + std::to_string(s)), t.flat->dtype,
                            t.flat->shape, Scope::kShared, t.span);
        pos_[t.flat.get()] = t.pos;
        extra_.push_back(t.flat);
        v.push_back(t);
      }
      names += (names.empty() ? "" : ", ") + b->name;
    }
    auto pong = [&](const Buffer& b, Buffer& second) {
      if (!b || second) return;
      second = MakeBuffer(b->name + "_pong", b->dtype, b->shape, Scope::kShared);
      pos_[second.get()] = pos_.at(b.get());
      extra_.push_back(second);
    };
    if (gemm) {
      pong(l0a_, l0a2_);
      pong(l0b_, l0b2_);
    }
    const bool l0 = gemm && (l0a_ || l0b_);
    if (ctx_.info)
      ctx_.info->choices.push_back(at + "T.Pipelined: " + (names.empty() ? "" : names + ": ") +
                                   (names.empty() ? "" : std::to_string(S) + " buffers each, ") +
                                   (l0 ? "L0A / L0B ping-pong, " : "") + std::to_string(S) +
                                   " iterations per trip");
    Var ko = MakeVar(f->var->name + "_trip");
    const Expr trips = Simplify(CeilDiv(f->extent, S));
    auto pseudo = std::make_shared<ForNode>(ko, Int(0), trips, ForKind::kSerial, Stmt(),
                                            std::map<std::string, Expr>{}, f->span);
    loops_.push_back(pseudo.get());
    const Buffer a0 = l0a_, b0 = l0b_;
    std::vector<Stmt> steps;
    for (int64_t st = 0; st < S; ++st) {
      for (const BufferNode* b : tiles) tiles_[b] = stage_bufs_[b][static_cast<size_t>(st)];
      if (st % 2 && l0a2_) l0a_ = l0a2_;
      if (st % 2 && l0b2_) l0b_ = l0b2_;
      const Expr k = f->min + ko * Int(S) + Int(st);
      Stmt body = Substitute(f->body, {{f->var.get(), k}});
      body = Lower(st ? UniquifyDefs(body) : body);
      steps.push_back(st ? If(Binary(BinaryOp::kLT, ko * Int(S) + Int(st), f->extent), body, nullptr, f->span)
                         : body);
      l0a_ = a0;
      l0b_ = b0;
    }
    for (const BufferNode* b : tiles) tiles_[b] = stage_bufs_[b][0];
    loops_.pop_back();
    return For(ko, Int(0), trips, ForKind::kSerial, Seq(steps, f->span), {}, f->span);
  }

  const PassContext& ctx_;
  const AscendArch& arch_;
  std::shared_ptr<KernelNode> split_;  // the kernel with its staged tiles split, when it had any
  const KernelNode* kernel_ = nullptr;
  std::map<const BufferNode*, std::vector<Tile>> stage_bufs_;  // the buffers of pipelined tiles, one a stage
  std::vector<Buffer> extra_;                 // buffers made while lowering (ping-pong)
  Buffer l0a2_, l0b2_;
  std::set<const BufferNode*> dual_;       // accumulators also used by the vector unit
  std::map<const BufferNode*, Tile> l0c_;  // their L0C tiles
  std::map<const BufferNode*, std::pair<Buffer, Buffer>> dual_ws_;  // their workspace and product tiles
  std::map<const BufferNode*, Buffer> l1_ws_;                       // the workspace of a UB -> L1 copy
  std::map<const BufferNode*, Tile> tiles_;
  std::vector<const BufferNode*> order_;
  std::map<const BufferNode*, AscendPos> pos_;
  std::map<const BufferNode*, std::pair<Expr, Expr>>
      valid_;                                        // valid rows, cols of a tile after its last copy
  std::map<const BufferNode*, Expr> gemm_rows_;      // an accumulator's m: its L0C NZ row count
  // cleared accumulators: the loop depth at the clear and the conditions it was under
  std::map<const BufferNode*, std::pair<size_t, Expr>> clear_depth_;
  std::vector<Expr> conds_;  // the conditions of the Ifs being lowered
  std::vector<const ForNode*> loops_;
  Buffer l0a_, l0b_;                            // L0A / L0B for gemm operands in L1
  std::map<const BufferNode*, bool> l0_trans_;  // the program's L0A / L0B tiles: their gemm's transpose
  std::vector<Buffer> temps_;
  std::set<const BufferNode*> busy_;  // the temporaries the statement being lowered uses
  Span cur_;  // the statement being lowered (vector code)
};

}  // namespace

PrimFunc LowerAscendTileOps(const PrimFunc& f, const PassContext& ctx) {
  return Simplify(Lowering(ctx).Run(f));
}

}  // namespace tl
