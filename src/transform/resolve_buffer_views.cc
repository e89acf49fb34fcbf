// ResolveBufferViews; see resolve_buffer_views.h.
#include "transform/resolve_buffer_views.h"

#include <map>
#include <set>

#include "arith/simplify.h"
#include "ir/functor.h"
#include "ir/printer.h"
#include "ir/structural.h"
#include "op/copy.h"
#include "op/fill.h"
#include "support/error.h"

namespace tl {
namespace {

bool IsView(const Buffer& b) { return b && b->data; }

bool SameShape(const std::vector<Expr>& a, const std::vector<Expr>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!StructuralEqual(Simplify(a[i]), Simplify(b[i]))) return false;
  return true;
}

std::string ShapeText(const std::vector<Expr>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + PrintExpr(Simplify(shape[i]));
  return s + (shape.size() == 1 ? ",)" : ")");
}

Expr Elements(const std::vector<Expr>& shape) {
  Expr n = Int(1);
  for (auto& d : shape) n = n * d;
  return Simplify(n);
}

/// The checks made once per view, at its declaration.
void CheckView(const Buffer& v) {
  const Buffer& owner = v->data;
  auto fail = [&](const std::string& why) {
    throw UserError(ErrorKind::kUnsupported,
                    "buffer '" + v->name + "' views the storage of '" + owner->name + "': " + why, v->span);
  };
  if (v->dtype.bits() * v->dtype.lanes() != owner->dtype.bits() * owner->dtype.lanes())
    fail("its dtype " + v->dtype.str() + " is " + std::to_string(v->dtype.bits() * v->dtype.lanes()) +
         " bits wide and the owner's " + owner->dtype.str() + " is " +
         std::to_string(owner->dtype.bits() * owner->dtype.lanes()) +
         " bits; views that change the element width are not supported (a view may change the shape, or the "
         "dtype to one of the same width)");
  if (v->scope != owner->scope) fail("a view must be in its owner's memory scope");
  if (v->byte_offset < 0 || v->byte_offset % owner->dtype.bytes() != 0)
    fail("its byte offset " + std::to_string(v->byte_offset) + " is not a whole number of " +
         owner->dtype.str() + " elements");
  Expr need = Simplify(Elements(v->shape) + Int(v->byte_offset / owner->dtype.bytes()));
  Expr have = Elements(owner->shape);
  Expr over = Simplify(Binary(BinaryOp::kGT, need, have));
  if (auto* imm = As<IntImmNode>(over); imm && imm->value)
    fail("it needs " + PrintExpr(need) + " elements (shape " + ShapeText(v->shape) + ") but '" + owner->name +
         "' has " + PrintExpr(have) + " (shape " + ShapeText(owner->shape) + ")");
}

/// Indices into `v` as indices into its owner, through the row-major element order (simplified with
/// the ranges of the enclosing loops).
std::vector<Expr> ToOwner(const Buffer& v, const std::vector<Expr>& idx, const BoundMap& bounds) {
  const Buffer& owner = v->data;
  int64_t off = v->byte_offset / owner->dtype.bytes();
  if (off == 0 && SameShape(v->shape, owner->shape)) return idx;
  Expr linear = Int(off);
  for (size_t d = 0; d < idx.size(); ++d) {
    Expr stride = Int(1);
    for (size_t e = d + 1; e < v->shape.size(); ++e) stride = stride * v->shape[e];
    linear = linear + idx[d] * stride;
  }
  std::vector<Expr> out(owner->shape.size());
  for (size_t d = owner->shape.size(); d-- > 0;) {
    if (d == 0) {
      out[d] = Simplify(linear, bounds);
    } else {
      out[d] = Simplify(Binary(BinaryOp::kFloorMod, linear, owner->shape[d]), bounds);
      linear = Binary(BinaryOp::kFloorDiv, linear, owner->shape[d]);
    }
  }
  return out;
}

/// Follows a chain of views to the storage owner, mapping the indices on the way.
Buffer Resolve(Buffer b, std::vector<Expr>* idx, const BoundMap& bounds) {
  while (IsView(b)) {
    *idx = ToOwner(b, *idx, bounds);
    b = b->data;
  }
  return b;
}

/// A region of a view as the same region of its owner, when the view is the owner with another name
/// (same shape, dtype and offset 0, along the whole chain). Null buffer otherwise.
Region SameRegionOnOwner(const Region& r) {
  Buffer b = r.buffer;
  while (IsView(b)) {
    if (b->byte_offset != 0 || b->dtype != b->data->dtype || !SameShape(b->shape, b->data->shape))
      return {nullptr, {}};
    b = b->data;
  }
  return {b, r.ranges};
}

bool IsOne(const Expr& e) {
  auto* imm = As<IntImmNode>(Simplify(e));
  return imm && imm->value == 1;
}

/// The indices of region `r` at the loop vars of its non-unit dims (in order).
std::vector<Expr> PointOf(const Region& r, const std::vector<Var>& vars) {
  std::vector<Expr> idx;
  size_t k = 0;
  for (auto& rg : r.ranges) idx.push_back(IsOne(rg.extent) ? rg.min : Simplify(rg.min + Expr(vars.at(k++))));
  return idx;
}

/// Global views that stand in for a whole parameter: the owner is a tensor parameter that the kernel
/// reads and writes only through this one view (at offset 0). Such a view becomes the parameter (the
/// kernel sees the parameter with the view's shape and dtype; the caller's tensor is still checked
/// against the declared one), so tile ops on it keep their regions -- a T.copy from it stays an async
/// copy on CUDA. Maps the view to the parameter's new buffer.
std::map<const BufferNode*, Buffer> ParamViews(const PrimFunc& f) {
  std::set<const BufferNode*> params;
  for (auto& p : f->params)
    if (p.buffer) params.insert(p.buffer.get());
  struct Uses : IRVisitor {
    std::map<const BufferNode*, int> direct;
    std::map<const BufferNode*, std::vector<Buffer>> views;
    void VisitKernel(const KernelNode* k) override {
      for (auto& b : k->alloc_buffers)
        if (b->data) views[b->data.get()].push_back(b);
      for (auto& kv : k->var_inits) VisitExpr(kv.second);
      VisitStmt(k->body);
    }
    void VisitBuffer(const Buffer& b) override { ++direct[b.get()]; }
    void VisitTileOp(const StmtNode* s) override {
      for (auto& [r, access] : As<TileOpNode>(s)->Regions()) ++direct[r->buffer.get()];
      IRVisitor::VisitTileOp(s);
    }
  } u;
  u.VisitStmt(f->body);
  std::map<const BufferNode*, Buffer> out;
  for (auto& [owner, vs] : u.views) {
    if (!params.count(owner) || vs.size() != 1 || u.direct.count(owner)) continue;
    const Buffer& v = vs[0];
    if (v->scope != Scope::kGlobal || v->byte_offset != 0 || v->data->data) continue;
    if (v->dtype.bits() * v->dtype.lanes() != v->data->dtype.bits() * v->data->dtype.lanes()) continue;
    out[v.get()] = MakeBuffer(v->name, v->dtype, v->shape, Scope::kGlobal, v->span);
  }
  return out;
}

/// expand_only: checks the views and rewrites the tile ops on them (phase one, before InjectBoundGuards,
/// so that element accesses of a global view are guarded by the view's shape); otherwise resolves
/// every access and drops the views.
class Resolver : public IRMutator {
 public:
  Resolver(bool expand_only, std::map<const BufferNode*, Buffer> param_views)
      : expand_only_(expand_only), param_views_(std::move(param_views)) {}

 protected:
  Buffer VisitBuffer(const Buffer& b) override {
    if (expand_only_) return b;
    auto it = param_views_.find(b.get());
    return it == param_views_.end() ? b : it->second;
  }
  bool Resolvable(const Buffer& b) const { return IsView(b) && !param_views_.count(b.get()); }
  Stmt VisitFor(const Stmt& s, const ForNode* n) override {
    Interval range = LoopVarRange(n->min, n->extent, bounds_);
    if (range.lo && range.hi) bounds_[n->var.get()] = range;
    Stmt out = IRMutator::VisitFor(s, n);
    bounds_.erase(n->var.get());
    return out;
  }
  Expr VisitLoad(const Expr& e, const BufferLoadNode* n) override {
    if (expand_only_ || !Resolvable(n->buffer)) return IRMutator::VisitLoad(e, n);
    bool changed = false;
    std::vector<Expr> idx = VisitExprs(n->indices, &changed);
    Buffer owner = Resolve(n->buffer, &idx, bounds_);
    Expr v = Load(owner, idx);
    return owner->dtype == n->buffer->dtype ? v : Call(n->buffer->dtype, "tl.reinterpret", {v});
  }
  Stmt VisitStore(const Stmt& s, const StoreNode* n) override {
    if (expand_only_ || !Resolvable(n->buffer)) return IRMutator::VisitStore(s, n);
    bool changed = false;
    std::vector<Expr> idx = VisitExprs(n->indices, &changed);
    Expr v = VisitExpr(n->value);
    Buffer owner = Resolve(n->buffer, &idx, bounds_);
    if (owner->dtype != n->buffer->dtype)
      v = Call(owner->dtype, "tl.reinterpret", {Cast(n->buffer->dtype, v)});
    return Store(owner, v, idx, n->span);
  }
  Stmt VisitAttr(const Stmt& s, const AttrStmtNode* n) override {
    if (expand_only_ && IsView(n->node))
      throw UserError(ErrorKind::kUnsupported,
                      "'" + n->node->name + "' is a view of '" + StorageOwner(n->node)->name +
                          "': annotate the layout of the buffer that owns the storage instead",
                      n->span);
    return IRMutator::VisitAttr(s, n);
  }
  Stmt VisitKernel(const Stmt& s, const KernelNode* k) override {
    for (size_t d = 0; d < k->block_vars.size() && d < k->grid.size(); ++d)
      if (auto g = BoundOf(k->grid[d], bounds_).hi) bounds_[k->block_vars[d].get()] = {int64_t{0}, *g - 1};
    if (expand_only_) {
      for (auto& b : k->alloc_buffers)
        if (IsView(b)) CheckView(b);
      return IRMutator::VisitKernel(s, k);
    }
    std::vector<Buffer> allocs;
    for (auto& b : k->alloc_buffers) {
      if (!IsView(b)) allocs.push_back(b);
    }
    Stmt out = IRMutator::VisitKernel(s, k);
    auto* m = As<KernelNode>(out);
    return std::make_shared<KernelNode>(m->grid, m->block_vars, m->threads, allocs, m->var_inits, m->body,
                                        m->span);
  }
  Stmt VisitTileOp(const Stmt& s) override {
    auto* op = As<TileOpNode>(s);
    bool any_view = false;
    for (auto& [r, access] : op->Regions()) any_view |= Resolvable(r->buffer);
    if (!any_view) return IRMutator::VisitTileOp(s);
    // Same shape and dtype: the op acts on the owner's region directly.
    std::vector<Region> regions;
    bool all_same = true;
    for (auto& [r, access] : op->Regions()) {
      Region o = Resolvable(r->buffer) ? SameRegionOnOwner(*r) : *r;
      all_same &= static_cast<bool>(o.buffer);
      regions.push_back(o);
    }
    if (all_same) return IRMutator::VisitTileOp(op->WithOperands(regions, op->Exprs()));
    if (auto* c = As<CopyNode>(s)) return VisitStmt(ElementLoops(c->dst, c->src, nullptr, s->span));
    if (auto* f = As<FillNode>(s)) return VisitStmt(ElementLoops(f->dst, {nullptr, {}}, f->value, s->span));
    std::string names;
    for (auto& [r, access] : op->Regions())
      if (Resolvable(r->buffer) && names.find("'" + r->buffer->name + "'") == std::string::npos)
        names += (names.empty() ? "'" : ", '") + r->buffer->name + "'";
    throw UserError(ErrorKind::kUnsupported,
                    std::string("T.") + op->op + " on " + names +
                        ", a view with another shape or dtype than the buffer that owns its storage, is not "
                        "supported; apply it to the owner's region, or copy the view into a buffer first",
                    s->span);
  }

 private:
  bool expand_only_;
  std::map<const BufferNode*, Buffer> param_views_;
  BoundMap bounds_;  // the enclosing loops' vars
  /// dst[...] = src[...] (or = value) over the tile, as nested T.Parallel loops.
  static Stmt ElementLoops(const Region& dst, const Region& src, const Expr& value, const Span& span) {
    std::vector<Var> vars;
    std::vector<Expr> extents;
    for (auto& rg : dst.ranges)
      if (!IsOne(rg.extent)) {
        vars.push_back(MakeVar("i" + std::to_string(vars.size())));
        extents.push_back(rg.extent);
      }
    Expr v = value ? value : Load(src.buffer, PointOf(src, vars));
    if (v->dtype != dst.buffer->dtype) v = Cast(dst.buffer->dtype, v);
    Stmt body = Store(dst.buffer, v, PointOf(dst, vars), span);
    if (vars.empty()) return For(MakeVar("i0"), Int(0), Int(1), ForKind::kParallel, body, {}, span);
    for (size_t d = vars.size(); d-- > 0;)
      body = For(vars[d], Int(0), extents[d], ForKind::kParallel, body, {}, span);
    return body;
  }
};

}  // namespace

const BufferNode* StorageOwner(const Buffer& b) {
  const BufferNode* n = b.get();
  while (n && n->data) n = n->data.get();
  return n;
}

PrimFunc ExpandViewTileOps(const PrimFunc& f) {
  Resolver r(true, ParamViews(f));
  Stmt body = r.VisitStmt(f->body);
  if (body == f->body) return f;
  return WithBody(f, body);
}

PrimFunc ResolveBufferViews(const PrimFunc& f) {
  std::map<const BufferNode*, Buffer> pv = ParamViews(f);
  Resolver r(false, pv);
  Stmt body = r.VisitStmt(f->body);
  if (body == f->body) return f;
  if (pv.empty()) return WithBody(f, body);
  std::vector<Param> params = f->params;
  for (auto& [view, buf] : pv)
    for (auto& p : params)
      if (p.buffer && p.buffer.get() == view->data.get()) p.buffer = buf;
  return MakePrimFunc(f->name, params, body, f->attrs, f->span);
}

}  // namespace tl
