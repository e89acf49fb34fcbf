// CoalesceGemmKStepsCPU; see coalesce_k_steps_cpu.h.
#include "target/cpu/coalesce_k_steps_cpu.h"

#include <map>

#include "arith/simplify.h"
#include "ir/functor.h"
#include "op/copy.h"
#include "op/fill.h"
#include "op/gemm.h"
#include "transform/cpu/tile_lowerer.h"

namespace tl {
namespace {

// How often each buffer is named in a statement (allocations, loads, stores, tile-op regions).
struct BufferUses : IRVisitor {
  std::map<const BufferNode*, int> n;
  void VisitBuffer(const Buffer& b) override { ++n[b.get()]; }
};

class Coalescer : public IRMutator {
 public:
  Coalescer(std::vector<std::string>* choices, int64_t target_k) : choices_(choices), kTargetK(target_k) {}

  Stmt VisitKernel(const Stmt& s, const KernelNode* n) override {
    BufferUses uses;
    uses.VisitStmt(s);
    uses_ = std::move(uses.n);
    replaced_.clear();
    Stmt body = VisitStmt(n->body);
    if (replaced_.empty()) return s;
    std::vector<Buffer> allocs;
    for (auto& b : n->alloc_buffers) {
      auto it = replaced_.find(b.get());
      allocs.push_back(it == replaced_.end() ? b : it->second);
    }
    return std::make_shared<KernelNode>(n->grid, n->block_vars, n->threads, allocs, n->var_inits, body,
                                        n->span);
  }

  Stmt VisitFor(const Stmt& s, const ForNode* n) override {
    if (n->for_kind != ForKind::kSerial && n->for_kind != ForKind::kPipelined)
      return IRMutator::VisitFor(s, n);
    std::vector<Stmt> items;
    if (auto* seq = As<SeqNode>(n->body))
      items = seq->seq;
    else
      items = {n->body};
    if (items.size() < 3) return IRMutator::VisitFor(s, n);
    auto* g = As<GemmNode>(items.back());
    if (!g || g->clear_accum || !g->A.IsWhole() || !g->B.IsWhole() ||
        g->A.buffer == g->B.buffer)
      return IRMutator::VisitFor(s, n);
    const Buffer a = g->A.buffer, b = g->B.buffer;
    if (a->shape.size() != 2 || b->shape.size() != 2 || a->scope == Scope::kGlobal ||
        b->scope == Scope::kGlobal)
      return IRMutator::VisitFor(s, n);
    // Every other statement copies a global tile into the whole of A_s or B_s, once each.
    std::vector<const CopyNode*> copies;
    int to_a = 0, to_b = 0;
    for (size_t i = 0; i + 1 < items.size(); ++i) {
      auto* c = As<CopyNode>(items[i]);
      if (!c || c->src.buffer->scope != Scope::kGlobal || !c->dst.IsWhole())
        return IRMutator::VisitFor(s, n);
      to_a += c->dst.buffer == a;
      to_b += c->dst.buffer == b;
      copies.push_back(c);
    }
    if (to_a != 1 || to_b != 1 || copies.size() != 2) return IRMutator::VisitFor(s, n);
    // Named only by their allocation, their copy and the gemm.
    if (uses_[a.get()] != 3 || uses_[b.get()] != 3) return IRMutator::VisitFor(s, n);
    const int ka = g->trans_A ? 0 : 1, kb = g->trans_B ? 1 : 0;  // the K dim of each tile
    int64_t bk = 0, bk_b = 0;
    if (!AsConstInt(a->shape[ka], &bk) || !AsConstInt(b->shape[kb], &bk_b) || bk != bk_b || bk <= 0 ||
        bk >= kTargetK || kTargetK % bk != 0)
      return IRMutator::VisitFor(s, n);
    const int64_t U = kTargetK / bk;

    auto deeper = [&](const Buffer& t, int kdim) {
      std::vector<Expr> shape = t->shape;
      shape[kdim] = Int(bk * U);
      Buffer nb = MakeBuffer(t->name, t->dtype, shape, t->scope, t->span);
      replaced_[t.get()] = nb;
      return nb;
    };
    const Buffer a2 = deeper(a, ka), b2 = deeper(b, kb);
    const DataType vt = n->var->dtype;
    Var ko = MakeVar(n->var->name, vt);
    const Expr u = IntImm(vt, U);
    std::vector<Stmt> body;
    // One copy of the whole deeper tile when the U steps' slices of the source are adjacent along
    // K and every trip is full: one pass over rows of U * block_K contiguous elements instead of U
    // passes over the same rows, each reading block_K of them (and no zero-fill branches).
    int64_t trips_c = 0;
    const Expr k0 = Binary(BinaryOp::kAdd, n->min, Binary(BinaryOp::kMul, ko, u));
    const Expr k1 = Binary(BinaryOp::kAdd, n->var, IntImm(vt, 1));
    std::vector<Stmt> whole;
    for (const CopyNode* c : copies) {
      if (!AsConstInt(n->extent, &trips_c) || trips_c % U != 0 || c->src.ranges.size() != 2) break;
      const bool is_a = c->dst.buffer == a;
      const int kdim = is_a ? ka : kb;
      Region src = c->src;
      bool ok = true;
      for (int d = 0; d < 2 && ok; ++d) {
        Range& r = src.ranges[d];
        int64_t delta = -1, ext = -1;
        ok = AsConstInt(Simplify(Binary(BinaryOp::kSub, Substitute(r.min, {{n->var.get(), k1}}), r.min)),
                        &delta) &&
             AsConstInt(Simplify(r.extent), &ext) && delta == (d == kdim ? bk : 0) && ext >= 0;
        if (d == kdim) ok = ok && ext == bk;
        r = {Substitute(r.min, {{n->var.get(), k0}}), d == kdim ? Int(bk * U) : r.extent};
      }
      if (!ok) break;
      whole.push_back(c->WithOperands({src, Region::Full(is_a ? a2 : b2)}, {}));
    }
    if (whole.size() != copies.size()) whole.clear();
    for (int64_t ki = 0; whole.empty() && ki < U; ++ki) {
      const Expr step = Binary(BinaryOp::kAdd, Binary(BinaryOp::kMul, ko, u), IntImm(vt, ki));
      const Expr k = Binary(BinaryOp::kAdd, n->min, step);
      for (const CopyNode* c : copies) {
        const bool is_a = c->dst.buffer == a;
        const Buffer nb = is_a ? a2 : b2;
        const int kdim = is_a ? ka : kb;
        Region slice = Region::Full(nb);
        slice.ranges[kdim] = {Int(ki * bk), Int(bk)};
        Region src = c->src;
        for (auto& r : src.ranges) {
          r.min = Substitute(r.min, {{n->var.get(), k}});
          r.extent = Substitute(r.extent, {{n->var.get(), k}});
        }
        Stmt copy = c->WithOperands({src, slice}, {});
        const Expr zero = nb->dtype.is_float() ? FloatImm(nb->dtype, 0.0) : IntImm(nb->dtype, 0);
        Stmt fill = std::make_shared<FillNode>(slice, zero, c->span);
        // A step past the loop's end contributes nothing (its source may be valid memory).
        body.push_back(If(Binary(BinaryOp::kLT, step, n->extent), copy, fill, c->span));
      }
    }
    body.insert(body.end(), whole.begin(), whole.end());
    body.push_back(g->WithOperands({Region::Full(a2), Region::Full(b2), g->C}, {}));
    const Expr trips = Binary(BinaryOp::kFloorDiv, Binary(BinaryOp::kAdd, n->extent, IntImm(vt, U - 1)), u);
    if (choices_)
      choices_->push_back(
          cpu_lowering::SpanLine(g->span) + ": T.gemm K loop: " + std::to_string(U) + " steps of K=" +
          std::to_string(bk) + " per gemm call (tiles " + a->name + ", " + b->name + " " + std::to_string(U) +
          "x deeper), so the accumulator is reloaded once per K=" + std::to_string(kTargetK) +
          (whole.empty()
               ? std::string()
               : "; one copy fills each deeper tile (rows of K=" + std::to_string(bk * U) + " from global)"));
    return For(ko, IntImm(vt, 0), trips, n->for_kind, Seq(body, n->span), n->annotations, n->span);
  }

 private:
  std::vector<std::string>* choices_;
  const int64_t kTargetK;  // the gemm depth the micro-kernels amortise C traffic over
  std::map<const BufferNode*, int> uses_;
  std::map<const BufferNode*, Buffer> replaced_;
};

}  // namespace

PrimFunc CoalesceGemmKStepsCPU(const PrimFunc& f, std::vector<std::string>* choices, int64_t target_k) {
  Stmt body = Coalescer(choices, target_k).VisitStmt(f->body);
  return body == f->body ? f : WithBody(f, body);
}

}  // namespace tl
