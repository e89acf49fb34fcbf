// ElideWgmmaProxyFences: see wgmma_proxy_fence.h.
//
// PTX's memory consistency model (the "proxies" section): wgmma.mma_async reads its shared-memory
// operands through the async proxy, so a thread's earlier generic-proxy writes to them (st.shared,
// cp.async, stmatrix) are seen only after that thread's fence.proxy.async. Writes made by the async
// proxy itself (cp.async.bulk.tensor, TMA) need no fence: the mbarrier wait that completes them orders
// them. The lowering of a wgmma gemm marks where the fence goes with tl.wgmma_operand_fence(operand
// tiles); here, once shared memory is planned (so tiles that share bytes are known), the mark becomes
// tl.fence_proxy_async when any generic write in the function touches the bytes of an operand, and
// nothing otherwise.
#include <vector>

#include "ir/functor.h"
#include "support/error.h"
#include "transform/cuda/wgmma_proxy_fence.h"
#include "transform/cuda_util.h"

namespace tl {
namespace {

using cuda_pass::Call0;

struct Range {
  const BufferNode* pool;  // the planned shared byte buffer (or the tile itself when unplanned)
  int64_t lo, hi;          // bytes [lo, hi); hi < 0: to the end
};

Range RangeOf(const Buffer& b) {
  int64_t n = b->dtype.bytes();
  for (auto& e : b->shape) {
    int64_t v;
    if (!AsConstInt(e, &v)) {
      n = -1;
      break;
    }
    n *= v;
  }
  const BufferNode* pool = b->data ? b->data.get() : b.get();
  const int64_t lo = b->data ? b->byte_offset : 0;
  return {pool, lo, n < 0 ? -1 : lo + n};
}

bool Overlap(const Range& a, const Range& b) {
  if (a.pool != b.pool) return false;
  const bool a_before = a.hi >= 0 && a.hi <= b.lo, b_before = b.hi >= 0 && b.hi <= a.lo;
  return !a_before && !b_before;
}

// Every shared store, and every call with a shared operand other than those that only read it or write
// it through the async proxy, is a generic write to that operand's bytes (conservative: calls not
// listed count as writes).
struct GenericWrites : IRVisitor {
  std::vector<Range> writes;
  void VisitStore(const StoreNode* n) override {
    if (n->buffer->scope == Scope::kShared) writes.push_back(RangeOf(n->buffer));
    IRVisitor::VisitStore(n);
  }
  void VisitCall(const CallNode* n) override {
    const std::string& op = n->op;
    const bool reads_only = op == "tl.wgmma_desc" || op == "tl.wgmma_operand_fence" || op == "tl.ldmatrix" ||
                            op == "tl.tma_store";
    for (size_t i = 0; i < n->args.size(); ++i) {
      auto* l = As<BufferLoadNode>(n->args[i]);
      if (!l || l->buffer->scope != Scope::kShared || reads_only) continue;
      if (op == "tl.tma_load" && i == 0) continue;  // the destination, written by the async proxy
      if (op.rfind("tl.mbarrier_", 0) == 0 || (op == "tl.tma_load" && i == 1)) continue;  // barrier words
      writes.push_back(RangeOf(l->buffer));
    }
    IRVisitor::VisitCall(n);
  }
};

struct Elide : IRMutator {
  const std::vector<Range>* writes;
  Stmt VisitStmt(const Stmt& s) override {
    auto* ev = As<EvaluateNode>(s);
    auto* c = ev ? As<CallNode>(ev->value) : nullptr;
    if (!c || c->op != "tl.wgmma_operand_fence") return IRMutator::VisitStmt(s);
    bool needed = false;
    for (auto& a : c->args) {
      auto* l = As<BufferLoadNode>(a);
      TL_ICHECK(l && l->buffer->scope == Scope::kShared, "tl.wgmma_operand_fence takes shared tiles");
      const Range r = RangeOf(l->buffer);
      for (auto& w : *writes) needed = needed || Overlap(r, w);
    }
    return needed ? Call0("tl.fence_proxy_async", {}, s->span) : Seq({}, s->span);
  }
};

}  // namespace

PrimFunc ElideWgmmaProxyFences(const PrimFunc& f, const CudaPassContext&) {
  GenericWrites w;
  w.VisitStmt(f->body);
  Elide e;
  e.writes = &w.writes;
  Stmt body = e.VisitStmt(f->body);
  return body == f->body ? f : WithBody(f, body);
}

}  // namespace tl
