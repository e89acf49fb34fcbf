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
#include <map>
#include <set>

#include "arith/simplify.h"
#include "ir/functor.h"
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

class Lowering {
 public:
  Lowering(const PassContext& ctx) : ctx_(ctx), arch_(AscendArchOf(ctx.target)) {}

  PrimFunc Run(const PrimFunc& f) {
    const KernelNode* k = FindKernel(f->body);
    if (!k) TL_USER_ERROR(kUnsupported, f->span, "an Ascend kernel needs a T.Kernel scope");
    Place(k);
    SizeL0(k->body);
    Stmt body = Lower(k->body);
    std::vector<Buffer> alloc;
    for (auto& b : order_) alloc.push_back(tiles_[b].flat);
    if (l0a_) alloc.push_back(l0a_);
    if (l0b_) alloc.push_back(l0b_);
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
    return std::make_shared<PrimFuncNode>(f->name, f->params, ReplaceKernel(f->body, k, nk), f->attrs,
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
    PostOrderVisitStmt(k->body, [&](const Stmt& s) {
      if (auto* g = As<GemmNode>(s)) {
        need(g->A.buffer, AscendPos::kL1, g->span, "a T.gemm operand");
        need(g->B.buffer, AscendPos::kL1, g->span, "a T.gemm operand");
        need(g->C.buffer, AscendPos::kL0C, g->span, "a T.gemm accumulator");
      } else if (auto* t = As<TileOpNode>(s)) {
        if (As<CopyNode>(s) || As<FillNode>(s)) return;
        NotLowered("T." + std::string(t->op), t->span);
      }
    });
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
      if (shape.size() == 1) shape.insert(shape.begin(), 1);
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
        if (!IsHalf16(b->dtype))
          TL_USER_ERROR(kUnsupported, b->span, "T.gemm operand '", b->name, "' is ", b->dtype.str(),
                        "; the Ascend lowering takes float16 / bfloat16 operands (16x16 fractals) so far");
        t.pitch = RoundUp(t.rows, 16);
        n = t.pitch * RoundUp(t.cols, 32 / es);
      } else if (p == AscendPos::kL0C) {
        if (!IsF32(b->dtype))
          TL_USER_ERROR(kUnsupported, b->span, "T.gemm accumulator '", b->name, "' is ", b->dtype.str(),
                        "; the cube accumulates float16 / bfloat16 products in float32 in L0C");
        t.pitch = RoundUp(t.rows, 16);
        n = t.pitch * RoundUp(t.cols, 16);
      } else {
        t.pitch = RoundUp(t.cols * es, 32) / es;
        n = t.rows * t.pitch;
      }
      t.flat = MakeBuffer(b->name, b->dtype, {Int(n)}, Scope::kShared, b->span);
      pos_[t.flat.get()] = p;
      tiles_[b.get()] = t;
      order_.push_back(b.get());
    }
  }

  // L0A / L0B: one buffer each, as large as the largest gemm needs (sized before any gemm is lowered).
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
      na = std::max(na, RoundUp(tm, 16) * RoundUp(tk, 16));
      nb = std::max(nb, RoundUp(tk, 16) * RoundUp(tn, 16));
      t = g->A.buffer->dtype;
    });
    if (!na) return;
    l0a_ = MakeBuffer("l0a", t, {Int(na)}, Scope::kShared);
    l0b_ = MakeBuffer("l0b", t, {Int(nb)}, Scope::kShared);
    pos_[l0a_.get()] = AscendPos::kL0A;
    pos_[l0b_.get()] = AscendPos::kL0B;
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
      used[p] += bytes;
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
      if (f->for_kind == ForKind::kPipelined && ctx_.info) {
        auto it = f->annotations.find("num_stages");
        int64_t st = 0;
        if (it != f->annotations.end() && AsConstInt(it->second, &st) && st > 1)
          ctx_.info->warnings.push_back(f->span.file + ":" + std::to_string(f->span.line) +
                                        ": T.Pipelined num_stages=" + std::to_string(st) +
                                        " runs as a serial loop on Ascend so far (the pipes still overlap "
                                        "across instructions; the tiles are not double-buffered)");
      }
      loops_.push_back(f);
      Stmt b = Lower(f->body);
      loops_.pop_back();
      return For(f->var, f->min, f->extent, ForKind::kSerial, b, {}, f->span);
    }
    if (auto* i = As<IfNode>(s)) return If(i->cond, Lower(i->then_case), Lower(i->else_case), i->span);
    if (auto* l = As<LetNode>(s)) return Let(l->var, l->value, Lower(l->body), l->span);
    if (auto* a = As<AttrStmtNode>(s)) return AttrStmt(a->node, a->key, a->value, Lower(a->body), a->span);
    if (auto* c = As<CopyNode>(s)) return LowerCopy(c);
    if (auto* fl = As<FillNode>(s)) return LowerFill(fl);
    if (auto* g = As<GemmNode>(s)) return LowerGemm(g);
    if (As<EvaluateNode>(s)) return s;
    if (auto* st = As<StoreNode>(s)) {
      if (tiles_.count(st->buffer.get()))
        NotLowered("a single-element store into on-chip tile '" + st->buffer->name +
                       "' (write it in a T.Parallel loop)",
                   st->span);
      return s;
    }
    NotLowered("this statement", s->span);
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
    for (size_t d = 0; d + 2 < n; ++d)
      if (!IsConstInt(r.ranges[d].extent, 1))
        NotLowered("a copy whose global region has more than two dimensions of extent > 1", sp);
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
      out.rows = clip(n - 2, t.rows);
      out.cols = clip(n - 1, t.cols);
      out.row_stride = g->shape[n - 1];
    }
    return out;
  }

  Stmt LowerCopy(const CopyNode* c) {
    const Tile* src = TileOf(c->src.buffer);
    const Tile* dst = TileOf(c->dst.buffer);
    const Span& sp = c->span;
    if (c->src.buffer->dtype != c->dst.buffer->dtype && !(src && src->pos == AscendPos::kL0C))
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
      if (dst->pos == AscendPos::kUB)
        return Op("copy_gm_to_ub",
                  {Load(dst->flat, {Int(0)}), g.first, g.rows, g.cols, g.row_stride, Int(dst->pitch)}, sp);
      NotLowered(std::string("a copy from global memory into ") + AscendPosName(dst->pos), sp);
    }
    if (src && !dst && c->dst.buffer->scope == Scope::kGlobal) {
      if (!c->src.IsWhole()) NotLowered("a copy out of part of an on-chip tile", sp);
      GmTile g = Global(c->dst, *src, sp);
      if (src->pos == AscendPos::kL0C) {
        auto it = gemm_rows_.find(c->src.buffer.get());
        Expr m = it != gemm_rows_.end() ? it->second : Int(src->rows);
        const DataType o = c->dst.buffer->dtype;
        if (!IsF32(o) && !IsHalf16(o))
          NotLowered("Fixpipe to " + o.str() + " (float32, float16 and bfloat16 results)", sp);
        return Op("fixpipe",
                  {g.first, Load(src->flat, {Int(0)}), g.rows, g.cols, Simplify(CeilDiv(m, 16) * Int(16)),
                   g.row_stride},
                  sp);
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
      clear_depth_[f->dst.buffer.get()] = loops_.size();
      return nullptr;
    }
    if (t->pos == AscendPos::kUB)
      return Op("vdup", {Load(t->flat, {Int(0)}), Cast(t->flat->dtype, f->value), Int(t->rows * t->pitch)},
                f->span);
    NotLowered(std::string("T.fill of a tile in ") + AscendPosName(t->pos), f->span);
  }

  Stmt LowerGemm(const GemmNode* g) {
    const Tile* A = TileOf(g->A.buffer);
    const Tile* B = TileOf(g->B.buffer);
    const Tile* C = TileOf(g->C.buffer);
    const Span& sp = g->span;
    if (!A || !B || !C || !g->A.IsWhole() || !g->B.IsWhole() || !g->C.IsWhole())
      NotLowered("T.gemm on parts of tiles or on global memory", sp);
    if (g->A.buffer->dtype != g->B.buffer->dtype)
      TL_USER_ERROR(kUnsupported, sp, "T.gemm of ", g->A.buffer->dtype.str(), " by ",
                    g->B.buffer->dtype.str(), ": the cube multiplies operands of one type");
    auto valid = [&](const BufferNode* b, const Tile& t) -> std::pair<Expr, Expr> {
      auto it = valid_.find(b);
      return it != valid_.end() ? it->second : std::pair<Expr, Expr>{Int(t.rows), Int(t.cols)};
    };
    auto [ar, ac] = valid(g->A.buffer.get(), *A);
    auto [br, bc] = valid(g->B.buffer.get(), *B);
    const Expr m = g->trans_A ? ac : ar, k = g->trans_A ? ar : ac, n = g->trans_B ? br : bc;
    const int64_t tm = g->trans_A ? A->cols : A->rows, tk = g->trans_A ? A->rows : A->cols;
    const int64_t tn = g->trans_B ? B->rows : B->cols;
    if (tm > C->rows || tn > C->cols)
      TL_USER_ERROR(kUnsupported, sp, "T.gemm of ", tm, "x", tn, " into a ", C->rows, "x", C->cols,
                    " accumulator");
    gemm_rows_[g->C.buffer.get()] = m;
    Buffer l0a = l0a_, l0b = l0b_;
    const Expr MB = Simplify(CeilDiv(m, 16)), KB = Simplify(CeilDiv(k, 16)), NB = Simplify(CeilDiv(n, 16));
    std::vector<Stmt> out;
    auto loop = [&](const char* name, Expr extent, const std::function<Stmt(Expr)>& body) {
      Var v = MakeVar(name);
      out.push_back(For(v, Int(0), extent, ForKind::kSerial, body(v), {}, sp));
    };
    auto load = [&](const Buffer& dst, Expr doff, const Buffer& src, Expr soff, Expr rep, Expr stride,
                    bool tr) {
      return Op("load2d",
                {Load(dst, {Simplify(doff)}), Load(src, {Simplify(soff)}), rep, stride, Int(tr ? 1 : 0)}, sp);
    };
    const Expr F = Int(256);
    const int64_t ra = A->pitch / 16, rb = B->pitch / 16;  // fractal rows of the L1 tiles
    // A into L0A: ZZ (dav-c220: fractal (mb, kb) at mb*KB + kb, row-major inside) or NZ (dav-c310: kb*MB +
    // mb)
    if (!arch_.l0a_nz) {
      if (!g->trans_A)  // L1 holds A (m x k) in NZ: fractal (mb, kb) at kb*ra + mb
        loop("mb", MB, [&](Expr mb) { return load(l0a, mb * KB * F, A->flat, mb * F, KB, Int(ra), false); });
      else  // L1 holds A^T (k x m) in NZ: fractal (kb, mb) at mb*ra + kb, transposed inside
        loop("mb", MB,
             [&](Expr mb) { return load(l0a, mb * KB * F, A->flat, mb * Int(ra) * F, KB, Int(1), true); });
    } else {
      if (!g->trans_A)
        loop("kb", KB,
             [&](Expr kb) { return load(l0a, kb * MB * F, A->flat, kb * Int(ra) * F, MB, Int(1), false); });
      else
        loop("kb", KB, [&](Expr kb) { return load(l0a, kb * MB * F, A->flat, kb * F, MB, Int(ra), true); });
    }
    // B into L0B: ZN (fractal (kb, nb) at kb*NB + nb, column-major inside)
    if (!g->trans_B)  // L1 holds B (k x n) in NZ: fractal (kb, nb) at nb*rb + kb, row-major inside
      loop("kb", KB, [&](Expr kb) { return load(l0b, kb * NB * F, B->flat, kb * F, NB, Int(rb), true); });
    else  // L1 holds B^T (n x k) in NZ: fractal (nb, kb) at kb*rb + nb, already column-major in (k, n)
      loop("kb", KB,
           [&](Expr kb) { return load(l0b, kb * NB * F, B->flat, kb * Int(rb) * F, NB, Int(1), false); });
    // the accumulator's initial value: a cleared accumulator starts at the first gemm after the clear
    Expr init = Int(0);
    if (g->clear_accum) {
      init = Int(1);
    } else if (auto it = clear_depth_.find(g->C.buffer.get()); it != clear_depth_.end()) {
      init = Bool(true);
      for (size_t d = it->second; d < loops_.size(); ++d)
        init = Binary(BinaryOp::kAnd, init, Binary(BinaryOp::kEQ, loops_[d]->var, loops_[d]->min));
      init = Simplify(Cast(DataType::Int(32), init));
      clear_depth_.erase(it);
    }
    out.push_back(Op("mmad",
                     {Load(C->flat, {Int(0)}), Load(l0a, {Int(0)}), Load(l0b, {Int(0)}), m, n, k, init,
                      Int(arch_.l0a_nz ? 1 : 0)},
                     sp));
    (void)tk;
    return Seq(out, sp);
  }

  // ---- element-wise T.Parallel loops on the vector unit ------------------------------------------
  Stmt LowerParallel(const ForNode* f) {
    std::vector<const ForNode*> nest{f};
    Stmt body = f->body;
    while (auto* in = As<ForNode>(body)) {
      if (in->for_kind != ForKind::kParallel) break;
      nest.push_back(in);
      body = in->body;
    }
    auto* st = As<StoreNode>(body);
    if (!st) NotLowered("a T.Parallel loop whose body is not one store into a tile", f->span);
    const Tile* d = TileOf(st->buffer);
    if (!d || d->pos != AscendPos::kUB)
      NotLowered("a T.Parallel loop that does not write a Unified-Buffer tile", f->span);
    // the loop must walk the whole tile, index (i, j) = the loop vars in order
    std::vector<const VarNode*> vars;
    for (auto* l : nest) vars.push_back(l->var.get());
    auto whole = [&](const Buffer& b, const std::vector<Expr>& idx) {
      const Tile* t = TileOf(b);
      if (!t || t->pos != AscendPos::kUB || idx.size() != vars.size() || t->rows != d->rows ||
          t->cols != d->cols)
        return false;
      for (size_t i = 0; i < idx.size(); ++i)
        if (idx[i].get() != static_cast<const ExprNode*>(vars[i])) return false;
      return true;
    };
    if (!whole(st->buffer, st->indices))
      NotLowered("a T.Parallel store that is not element (i, j) of a tile the loop walks whole", st->span);
    for (size_t i = 0; i < nest.size(); ++i) {
      int64_t e;
      if (!AsConstInt(nest[i]->extent, &e) || !IsConstInt(nest[i]->min, 0) ||
          e != (nest.size() == 1 ? d->cols : (i == 0 ? d->rows : d->cols)))
        NotLowered("a T.Parallel loop over part of a tile", f->span);
    }
    std::vector<Stmt> out;
    const Span sp = st->span;
    const Expr count = Int(d->rows * d->pitch);
    // Evaluates e into a tile (dst when given); returns the tile's first element.
    std::function<Expr(const Expr&, Buffer)> tile = [&](const Expr& e, Buffer dst) -> Expr {
      auto uses_loop = [&](const Expr& x) {
        const VarUses u = VarsOf(x);
        for (auto* lv : vars)
          if (u.vars.count(lv)) return true;
        return false;
      };
      auto into = [&](DataType t) {
        if (dst) return Load(dst, {Int(0)});
        Buffer tmp =
            MakeBuffer("tmp" + std::to_string(temps_.size()), t,
                       {Int(d->rows * (RoundUp(d->cols * t.bytes(), 32) / t.bytes()))}, Scope::kShared, sp);
        if (RoundUp(d->cols * t.bytes(), 32) / t.bytes() != d->pitch)
          NotLowered("a T.Parallel expression that changes the element size (" + t.str() + " in a " +
                         st->buffer->dtype.str() + " loop)",
                     sp);
        pos_[tmp.get()] = AscendPos::kUB;
        temps_.push_back(tmp);
        return Load(tmp, {Int(0)});
      };
      if (auto* l = As<BufferLoadNode>(e)) {
        if (!whole(l->buffer, l->indices))
          NotLowered("a T.Parallel read that is not element (i, j) of a tile of the same shape", sp);
        Expr src = Load(TileOf(l->buffer)->flat, {Int(0)});
        if (!dst) return src;
        out.push_back(
            Op("vscalar", {StringImm("Muls"), Load(dst, {Int(0)}), src, FloatOrInt(e->dtype, 1), count}, sp));
        return Load(dst, {Int(0)});
      }
      if (!uses_loop(e)) {  // a scalar: broadcast
        Expr o = into(e->dtype);
        out.push_back(Op("vdup", {o, e, count}, sp));
        return o;
      }
      if (auto* c = As<CastNode>(e)) {
        Expr s = tile(c->value, nullptr);
        Expr o = into(e->dtype);
        out.push_back(Op("vcast", {o, s, count}, sp));
        return o;
      }
      if (auto* b = As<BinaryNode>(e)) {
        static const std::map<BinaryOp, const char*> vv = {{BinaryOp::kAdd, "Add"}, {BinaryOp::kSub, "Sub"},
                                                           {BinaryOp::kMul, "Mul"}, {BinaryOp::kDiv, "Div"},
                                                           {BinaryOp::kMax, "Max"}, {BinaryOp::kMin, "Min"}};
        static const std::map<BinaryOp, const char*> vs = {{BinaryOp::kAdd, "Adds"},
                                                           {BinaryOp::kMul, "Muls"},
                                                           {BinaryOp::kMax, "Maxs"},
                                                           {BinaryOp::kMin, "Mins"}};
        auto it = vv.find(b->op);
        if (it == vv.end()) NotLowered("the operator of this T.Parallel expression on the vector unit", sp);
        const bool la = uses_loop(b->a), lb = uses_loop(b->b);
        auto sc = vs.find(b->op);
        if (la != lb && sc != vs.end()) {  // tile (op) scalar, commutative
          Expr s = tile(la ? b->a : b->b, nullptr);
          Expr o = into(e->dtype);
          out.push_back(Op("vscalar", {StringImm(sc->second), o, s, la ? b->b : b->a, count}, sp));
          return o;
        }
        if (la && !lb && b->op == BinaryOp::kSub) {  // tile - s = tile + (-s)
          Expr s = tile(b->a, nullptr);
          Expr o = into(e->dtype);
          out.push_back(Op("vscalar", {StringImm("Adds"), o, s, Simplify(Int(0) - b->b), count}, sp));
          return o;
        }
        Expr x = tile(b->a, nullptr), y = tile(b->b, nullptr);
        Expr o = into(e->dtype);
        out.push_back(Op("vbin", {StringImm(it->second), o, x, y, count}, sp));
        return o;
      }
      if (auto* c = As<CallNode>(e)) {
        static const std::map<std::string, const char*> un = {
            {"exp", "Exp"}, {"tl.exp", "Exp"}, {"log", "Ln"},    {"tl.log", "Ln"},
            {"abs", "Abs"}, {"tl.abs", "Abs"}, {"sqrt", "Sqrt"}, {"tl.sqrt", "Sqrt"}};
        auto it = un.find(c->op);
        if (it != un.end() && c->args.size() == 1) {
          Expr s = tile(c->args[0], nullptr);
          Expr o = into(e->dtype);
          out.push_back(Op("vun", {StringImm(it->second), o, s, count}, sp));
          return o;
        }
        NotLowered("the call " + c->op + " in a T.Parallel loop on the vector unit", sp);
      }
      NotLowered("this T.Parallel expression on the vector unit", sp);
    };
    tile(st->value, d->flat);
    return Seq(out, f->span);
  }

  const PassContext& ctx_;
  const AscendArch& arch_;
  std::map<const BufferNode*, Tile> tiles_;
  std::vector<const BufferNode*> order_;
  std::map<const BufferNode*, AscendPos> pos_;
  std::map<const BufferNode*, std::pair<Expr, Expr>>
      valid_;                                        // valid rows, cols of a tile after its last copy
  std::map<const BufferNode*, Expr> gemm_rows_;      // an accumulator's m: its L0C NZ row count
  std::map<const BufferNode*, size_t> clear_depth_;  // cleared accumulators: loop depth at the clear
  std::vector<const ForNode*> loops_;
  Buffer l0a_, l0b_;
  std::vector<Buffer> temps_;
};

}  // namespace

PrimFunc LowerAscendTileOps(const PrimFunc& f, const PassContext& ctx) {
  return Simplify(Lowering(ctx).Run(f));
}

}  // namespace tl
