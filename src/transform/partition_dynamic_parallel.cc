// PartitionDynamicParallel: a T.Parallel nest whose extent is known only at run time (a T.dynamic size, a
// value read from memory) becomes a guarded partition over the block's threads:
//
//   for i, j in T.Parallel(n, 64):  body(i, j)
// =>
//   for o in T.serial(ceildiv(n * 64, W)):
//     for t in T.Parallel(W):
//       if o * W + t < n * 64:  body((o * W + t) // 64, (o * W + t) % 64)
//
// with W = T x (16 bytes / the widest element), so every later pass sees a constant-extent nest that
// keeps all T threads busy. The body may read
// and write global and shared memory, locals and scalars; a fragment has a layout fixed at compile time,
// so a nest that touches one stays an error, now naming the fragment. Runs after LegalizeTileOpsGPU (tile
// copies with run-time extents become such nests there) and before LayoutInference.
#include <algorithm>

#include "arith/simplify.h"
#include "ir/functor.h"
#include "transform/gpu_passes.h"
#include "transform/gpu_util.h"

namespace tl {
namespace {

class Partition : public IRMutator {
 public:
  explicit Partition(int64_t threads) : T_(threads) {}

 protected:
  Stmt VisitFor(const Stmt& s, const ForNode* n) override {
    if (n->for_kind != ForKind::kParallel) return IRMutator::VisitFor(s, n);
    std::vector<const ForNode*> nest;
    Stmt body = s;
    while (auto* f = As<ForNode>(body)) {
      if (f->for_kind != ForKind::kParallel) break;
      nest.push_back(f);
      body = f->body;
    }
    bool dynamic = false;
    for (auto* f : nest) {
      int64_t c;
      dynamic |= !AsConstInt(Simplify(f->extent), &c);
    }
    if (!dynamic) return IRMutator::VisitFor(s, n);
    for (auto* f : nest)
      if (!IsConstInt(Simplify(f->min), 0))
        throw UserError(ErrorKind::kUnsupported, "T.Parallel loops must start at 0", f->span);
    struct BodyBuffers : IRVisitor {  // refuses fragments; the widest element
      Span span;
      int max_bytes = 1;
      void VisitBuffer(const Buffer& b) override {
        max_bytes = std::max(max_bytes, b->dtype.bytes());
        if (b->scope == Scope::kFragment)
          throw UserError(ErrorKind::kUnsupported,
                          "a T.Parallel loop whose extent is known only at run time cannot touch the fragment '" +
                              b->name +
                              "': a fragment's layout over the threads is fixed at compile time; give the loop a "
                              "constant extent (and guard the ragged part with an if)",
                          span);
      }
    } uses;
    uses.span = n->span;
    uses.VisitStmt(body);
    // (a T.Parallel nested under other statements of the body stays there: LayoutInference reports it)
    Expr total = nest[0]->extent;
    for (size_t d = 1; d < nest.size(); ++d) total = total * nest[d]->extent;
    total = Simplify(total);
    // One round covers T x V iterations, V = 16 bytes of the widest element the body touches, so a
    // partition that gives each thread V consecutive elements (16-byte accesses) still uses every thread.
    const int64_t W = T_ * std::max<int64_t>(1, 16 / uses.max_bytes);
    Var o = MakeVar("o"), t = MakeVar("t");
    Expr flat = Expr(o) * Int(W) + Expr(t);
    std::map<const VarNode*, Expr> vmap;
    Expr rest = flat;
    for (size_t d = nest.size(); d-- > 0;) {
      const Expr& ext = nest[d]->extent;
      vmap[nest[d]->var.get()] = d == 0 ? rest : Binary(BinaryOp::kFloorMod, rest, ext);
      rest = Binary(BinaryOp::kFloorDiv, rest, ext);
    }
    Stmt inner = IRMutator::VisitStmt(Substitute(body, vmap));
    Stmt guarded = If(Binary(BinaryOp::kLT, flat, total), inner, nullptr, n->span);
    Expr rounds = Simplify(Binary(BinaryOp::kFloorDiv, total + Int(W - 1), Int(W)));
    return For(o, Int(0), rounds, ForKind::kSerial,
               For(t, Int(0), Int(W), ForKind::kParallel, guarded, nest.back()->annotations, n->span), {},
               n->span);
  }

 private:
  int64_t T_;
};

}  // namespace

PrimFunc PartitionDynamicParallel(const PrimFunc& f) {
  const KernelNode* k = FindKernel(f->body);
  if (!k) return f;
  return WithBody(f, Partition(gpu_pass::KernelThreads(k)).VisitStmt(f->body));
}

}  // namespace tl
