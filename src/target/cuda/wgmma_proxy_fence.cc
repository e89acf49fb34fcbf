// ElideWgmmaProxyFences: see wgmma_proxy_fence.h.
//
// PTX's memory consistency model (the "proxies" section): wgmma.mma_async reads its shared-memory
// operands through the async proxy, so a thread's earlier generic-proxy writes to them (st.shared,
// cp.async, stmatrix) are seen only after that thread's fence.proxy.async. Writes made by the async
// proxy itself (cp.async.bulk.tensor, TMA) need no fence: the mbarrier wait that completes them orders
// them. The lowering of a wgmma gemm marks where the fence goes with tl.wgmma_operand_fence(operand
// tiles); here, once shared memory is planned (so tiles that share bytes are known), the mark becomes
// tl.fence_proxy_async when a generic write that can run before it (earlier in program order, or in a
// loop around both) touches the bytes of an operand, and nothing otherwise: an epilogue tile that reuses
// an operand's bytes after the main loop needs no fence in it.
#include <map>
#include <vector>

#include "ir/functor.h"
#include "support/error.h"
#include "target/cuda/wgmma_proxy_fence.h"
#include "transform/gpu_util.h"

namespace tl {
namespace {

using gpu_pass::Call0;

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

// A generic write or a fence mark, where it runs: its position in program order and the loops around it.
struct Site {
  Range range;
  int64_t pos;
  std::vector<const StmtNode*> loops;
};

// Every shared store, and every call with a shared operand other than those that only read it or write
// it through the async proxy, is a generic write to that operand's bytes (conservative: calls not
// listed count as writes). Marks and writes are numbered in program order with their enclosing loops.
struct Collect : IRVisitor {
  std::vector<Site> writes;
  std::map<const CallNode*, std::pair<int64_t, std::vector<const StmtNode*>>> marks;
  std::vector<const StmtNode*> loops;
  int64_t pos = 0;
  void VisitStmt(const Stmt& s) override {
    ++pos;
    IRVisitor::VisitStmt(s);
  }
  void VisitFor(const ForNode* n) override {
    loops.push_back(n);
    IRVisitor::VisitFor(n);
    loops.pop_back();
  }
  void VisitWhile(const WhileNode* n) override {
    loops.push_back(n);
    IRVisitor::VisitWhile(n);
    loops.pop_back();
  }
  void VisitStore(const StoreNode* n) override {
    if (n->buffer->scope == Scope::kShared) writes.push_back({RangeOf(n->buffer), pos, loops});
    IRVisitor::VisitStore(n);
  }
  void VisitCall(const CallNode* n) override {
    const std::string& op = n->op;
    if (op == "tl.wgmma_operand_fence" || op == "tl.wgmma_operand_fence_branch") {
      marks[n] = {pos, loops};
      return;
    }
    const bool reads_only = op == "tl.wgmma_desc" || op == "tl.tcgen05_desc" || op == "tl.ldmatrix" ||
                            op == "tl.tma_store" || op == "tl.tma_reduce_add" ||
                            op == "tl.tma_store_scatter4";
    for (size_t i = 0; i < n->args.size(); ++i) {
      auto* l = As<BufferLoadNode>(n->args[i]);
      if (!l || l->buffer->scope != Scope::kShared || reads_only) continue;
      const bool tma = op == "tl.tma_load" || op == "tl.tma_load_2sm" || op == "tl.tma_load_gather4";
      if (tma && i == 0) continue;  // the destination, written by the async proxy
      if (op.rfind("tl.mbarrier_", 0) == 0 || op.rfind("tl.tcgen05_commit", 0) == 0 || (tma && i == 1))
        continue;  // barrier words
      writes.push_back({RangeOf(l->buffer), pos, loops});
    }
    IRVisitor::VisitCall(n);
  }
};

// A write can run before the mark: it comes first in program order, or a loop holds both.
bool MayPrecede(const Site& w, int64_t pos, const std::vector<const StmtNode*>& loops) {
  if (w.pos < pos) return true;
  for (auto* l : w.loops)
    for (auto* m : loops)
      if (l == m) return true;
  return false;
}

struct Elide : IRMutator {
  const Collect* c;
  Stmt VisitStmt(const Stmt& s) override {
    auto* ev = As<EvaluateNode>(s);
    auto* call = ev ? As<CallNode>(ev->value) : nullptr;
    if (!call || (call->op != "tl.wgmma_operand_fence" && call->op != "tl.wgmma_operand_fence_branch"))
      return IRMutator::VisitStmt(s);
    const auto& [pos, loops] = c->marks.at(call);
    bool needed = false;
    for (auto& a : call->args) {
      auto* l = As<BufferLoadNode>(a);
      TL_ICHECK(l && l->buffer->scope == Scope::kShared, "tl.wgmma_operand_fence takes shared tiles");
      const Range r = RangeOf(l->buffer);
      for (auto& w : c->writes) needed = needed || (Overlap(r, w.range) && MayPrecede(w, pos, loops));
    }
    // In a branch on the thread index (a tcgen05 gemm issued by an MMA warp) the fence would run in the
    // branch's threads only, not in the other threads that wrote the operands: the program must write them
    // with TMA.
    if (needed && call->op == "tl.wgmma_operand_fence_branch")
      throw UserError(
          ErrorKind::kUnsupported,
          "T.tcgen05_gemm issued in a branch on the thread index reads operand tiles that threads write "
          "(st.shared / cp.async, the generic proxy); the writers' fence.proxy.async cannot be issued "
          "from inside the branch. Load the operands with TMA (T.tma_copy, or a T.copy that TMA takes) "
          "and order them with mbarriers, or issue the gemm where every thread reaches it",
          s->span);
    return needed ? Call0("tl.fence_proxy_async", {}, s->span) : Seq({}, s->span);
  }
};

}  // namespace

PrimFunc ElideWgmmaProxyFences(const PrimFunc& f, const PassContext&) {
  Collect w;
  w.VisitStmt(f->body);
  Elide e;
  e.c = &w;
  Stmt body = e.VisitStmt(f->body);
  return body == f->body ? f : WithBody(f, body);
}

}  // namespace tl
