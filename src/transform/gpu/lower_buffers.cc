// LowerTileOpsGPU, buffer mapping: shared tiles flatten to one dimension with XOR swizzle and
// pipeline stages folded into the index; fragments become per-thread register arrays.
#include <cmath>
#include <set>

#include "arith/simplify.h"
#include "layout/hopper_layout.h"
#include "layout/mfma_fragment.h"
#include "ir/printer.h"
#include "transform/gpu/tile_lowerer.h"
#include "transform/gpu_util.h"

namespace tl {
namespace gpu_lowering {

using namespace gpu_pass;

Buffer GpuTileLowerer::MapBuffer(const Buffer& b) {
  auto it = bmap_.find(b.get());
  if (it != bmap_.end()) return it->second;
  Buffer nb = b;
  if (b->scope == Scope::kShared) {
    int64_t n = 1;
    for (auto& e : b->shape) n *= ConstOr(e, b->span, "the shape of shared buffer '" + b->name + "'");
    if (auto u = user_shared_.find(b.get()); u != user_shared_.end())
      n = u->second.size;  // T.annotate_layout: the layout's physical extent (padding included)
    else
      n = PaddedSharedSize(b, n);
    int64_t st = Stages(b);
    nb = MakeBuffer(b->name, b->dtype, {C(n * st)}, Scope::kShared, b->span);
  } else if (b->scope == Scope::kFragment) {
    const Fragment& lt = Layout(b.get());
    nb = MakeBuffer(b->name, b->dtype, {C(lt.locals)}, Scope::kLocal, b->span);
    ctx_.info->layouts[b->name] = lt.desc;
  } else if (b->scope == Scope::kLocal) {
    int64_t n = 1;
    for (auto& e : b->shape) n *= ConstOr(e, b->span, "the shape of local buffer '" + b->name + "'");
    nb = MakeBuffer(b->name, b->dtype, {C(n)}, Scope::kLocal, b->span);
  }
  bmap_[b.get()] = nb;
  return nb;
}

int64_t GpuTileLowerer::Stages(const Buffer& b) const {
  auto it = stages_.find(b.get());
  return it == stages_.end() ? 1 : it->second;
}

int64_t GpuTileLowerer::PaddedSharedSize(const Buffer& b, int64_t n) {
  // HIP: a k-rows tile whose rows are padded in LDS (MfmaLdsRowElems: 48 16-bit columns take 64)
  int64_t cols;
  if (!k_rows_.count(b.get()) || b->shape.size() < 2 || !AsConstInt(b->shape.back(), &cols)) return n;
  return n / cols * MfmaLdsRowElems(cols, b->dtype.bytes());
}

Expr GpuTileLowerer::SharedIndex(const Buffer& b, const std::vector<Expr>& idx) {
  std::vector<int64_t> shape;
  for (auto& e : b->shape) shape.push_back(ConstOr(e, b->span, "a shared buffer's shape"));
  int64_t size = 1;
  for (auto s : shape) size *= s;
  size = PaddedSharedSize(b, size);
  Expr off;
  if (auto u = user_shared_.find(b.get()); u != user_shared_.end()) {  // T.annotate_layout
    size = u->second.size;
    off = u->second.Offset(idx);
  } else if (shape.size() == 1) {
    off = idx[0];
  } else if (plain_shared_.count(b.get())) {  // row-major (PlainSharedTiles)
    off = C(0);
    for (size_t d = 0; d < shape.size(); ++d) off = off * C(shape[d]) + idx[d];
  } else {
    Expr row = C(0);
    for (size_t d = 0; d + 1 < shape.size(); ++d) row = row * C(shape[d]) + idx[d];
    Expr r = Simplify(row), c = Simplify(idx.back());
    if (ctx_.features.swizzle == SharedSwizzle::kNone)  // e.g. simdgroup_load reads plain rows
      off = r * C(shape.back()) + c;
    else if (auto kt = k_transposed_.find(b.get()); shape.size() == 2 && kt != k_transposed_.end())
      off = KTransposedOffset(r, c, shape[0], b->dtype.bytes(), kt->second.c);  // gpu/mfma_lds.cc
    else if (k_rows_.count(b.get()))  // MFMA operands (gpu/mfma_lds.cc)
      off = MfmaKRowsOffset(r, c, shape.back(), b->dtype.bytes());
    else if (half_swap_.count(b.get()))
      off = MfmaHalfSwapOffset(r, c, shape.back(), b->dtype.bytes());
    else if (ctx_.features.swizzle == SharedSwizzle::kTma)
      off = HopperSharedOffset(r, c, size / shape.back(), shape.back(), b->dtype.bytes());
    else
      off = SwizzledOffset(r, c, shape.back(), b->dtype.bytes());
  }
  auto st = stage_.find(b.get());
  if (st != stage_.end()) off = st->second * C(size) + off;
  return Simplify(off);
}

Expr GpuTileLowerer::MapLoad(const Buffer& b, const std::vector<Expr>& idx, bool as_value) {
  switch (b->scope) {
    case Scope::kGlobal: return Load(b, idx);
    case Scope::kShared: return Load(MapBuffer(b), {SharedIndex(b, idx)});
    case Scope::kLocalVar: return Load(MapBuffer(b), idx);
    case Scope::kTensorMemory:
      throw UserError(ErrorKind::kUnsupported,
                      "tensor memory '" + b->name + "' is read and written by T.tcgen05_gemm and T.copy into a "
                      "fragment only, not element by element",
                      stmt_span_);
    case Scope::kLocal: {
      Expr flat = C(0);
      for (size_t d = 0; d < idx.size(); ++d) flat = flat * b->shape[d] + idx[d];
      return Load(MapBuffer(b), {Simplify(flat)});
    }
    case Scope::kFragment: {
      if (auto st = fragment_stage_.find(b.get()); st != fragment_stage_.end() && as_value) {
        Expr flat = C(0);  // the staged copy: the fragment's elements, row-major
        for (size_t d = 0; d < idx.size(); ++d) flat = flat * b->shape[d] + idx[d];
        return Load(st->second, {Simplify(flat)});
      }
      Expr local = FragmentLocal(b, idx);
      Buffer nb = MapBuffer(b);
      int64_t c, n = 0;
      AsConstInt(nb->shape[0], &n);
      if (!as_value || AsConstInt(local, &c) || n > 16) return Load(nb, {local});
      // A thread-dependent register index into a small array: a select chain over constant
      // indices keeps the array in registers.
      Expr v = Load(nb, {C(n - 1)});
      for (int64_t i = n - 2; i >= 0; --i) v = Select(Eq(local, C(i)), Load(nb, {C(i)}), v);
      return v;
    }
  }
  return nullptr;
}

}  // namespace gpu_lowering
}  // namespace tl
