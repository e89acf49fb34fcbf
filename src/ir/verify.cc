// VerifyIR; see verify.h.
#include "ir/verify.h"

#include <set>

#include "ir/functor.h"

namespace tl {
namespace {

class Verifier : public IRVisitor {
 public:
  Verifier(IRStage stage, const std::string& pass) : stage_(stage), pass_(pass) {}

  void Run(const PrimFunc& f) {
    for (auto& p : f->params)
      if (!p.buffer) Bind(p.var);
    for (auto& p : f->params)
      if (p.buffer) {
        if (!known_.insert(p.buffer.get()).second)
          Fail("buffer parameter '" + p.buffer->name + "' appears twice");
        if (p.buffer->scope != Scope::kGlobal)
          Fail("parameter '" + p.buffer->name + "' is not a global buffer");
      }
    VisitStmt(f->body);
  }

  void VisitBuffer(const Buffer& b) override {
    if (!known_.count(b.get()))
      Fail("buffer '" + b->name + "' is used but neither a parameter nor allocated");
  }

 protected:
  void VisitLoad(const BufferLoadNode* n) override {
    Arity(n->buffer, n->indices.size());
    IRVisitor::VisitLoad(n);
  }
  void VisitStore(const StoreNode* n) override {
    Arity(n->buffer, n->indices.size());
    IRVisitor::VisitStore(n);
  }
  void VisitAttr(const AttrStmtNode* n) override {
    // T.make_tensor(table[i], ...): a global tensor bound to a run-time address for the attr's body
    if (n->key == "tl.buffer_bind" && n->node) {
      if (n->node->scope != Scope::kGlobal)
        Fail("tl.buffer_bind of non-global buffer '" + n->node->name + "'");
      if (!known_.insert(n->node.get()).second) Fail("buffer '" + n->node->name + "' is bound twice");
    }
    // A CPU tile bound to a slot of its tile cache (LowerTileOpsCPU; target/cpu/cache_gemm_tiles_cpu.h)
    // (the tile stays among the kernel's allocations, which CodegenCPU then does not materialise)
    if (n->key == "tl.cpu_cache_bind" && n->node && !known_.count(n->node.get()))
      Fail("tl.cpu_cache_bind of buffer '" + n->node->name + "', which the kernel does not allocate");
    if (n->key == "tl.cpu_tile_cache") {  // names the tile whose shape the cache holds; binds nothing
      VisitExpr(n->value);
      VisitStmt(n->body);
      return;
    }
    IRVisitor::VisitAttr(n);
  }
  void VisitLet(const LetNode* n) override {
    Bind(n->var);
    IRVisitor::VisitLet(n);
  }
  void VisitFor(const ForNode* n) override {
    Bind(n->var);
    if (stage_ != IRStage::kTile && (n->for_kind == ForKind::kParallel || n->for_kind == ForKind::kPipelined))
      Fail(std::string("a T.") + ForKindName(n->for_kind) + " loop is left in thread-level IR");
    IRVisitor::VisitFor(n);
  }
  void VisitKernel(const KernelNode* n) override {
    for (auto& v : n->block_vars) Bind(v);
    if (stage_ != IRStage::kTile && n->threads.size() != 1)
      Fail("thread-level IR has exactly one thread extent");
    const BufferNode* base = nullptr;
    for (auto& b : n->alloc_buffers) {
      if (!known_.insert(b.get()).second) Fail("buffer '" + b->name + "' is allocated twice");
      if (b->scope == Scope::kGlobal && !(stage_ == IRStage::kTile && b->data))
        Fail("global buffer '" + b->name + "' allocated inside a kernel");
      if (stage_ == IRStage::kTile) continue;
      if (b->scope == Scope::kFragment) Fail("fragment '" + b->name + "' is left in thread-level IR");
      if ((b->scope == Scope::kShared || b->scope == Scope::kLocal) && b->shape.size() != 1)
        Fail("buffer '" + b->name + "' is not flat in thread-level IR");
      if (stage_ == IRStage::kSharedPlanned && b->scope == Scope::kShared) {
        if (!b->data) {
          if (base || b->dtype != DataType::UInt(8))
            Fail("shared buffer '" + b->name + "' was not placed by the plan");
          base = b.get();
        } else {
          int64_t n_el = 0, n_base = 0;
          if (b->data.get() != base || !AsConstInt(b->shape[0], &n_el) ||
              !AsConstInt(base->shape[0], &n_base))
            Fail("shared view '" + b->name + "' is not a view of the kernel's shared byte buffer");
          if (b->byte_offset < 0 || b->byte_offset % 16 || b->byte_offset + n_el * b->dtype.bytes() > n_base)
            Fail("shared view '" + b->name + "' at byte " + std::to_string(b->byte_offset) +
                 " is misaligned or "
                 "outside the shared byte buffer");
        }
      } else if (b->data) {
        Fail("buffer '" + b->name + "' is a view before shared memory is planned");
      }
    }
    IRVisitor::VisitKernel(n);
  }
  void VisitTileOp(const StmtNode* n) override {
    if (stage_ != IRStage::kTile) Fail("a tile op is left in thread-level IR");
    IRVisitor::VisitTileOp(n);
  }

 private:
  void Bind(const Var& v) {
    if (!bound_.insert(v.get()).second)
      Fail("var '" + v->name + "' is bound twice (loops and lets bind fresh vars)");
  }
  void Arity(const Buffer& b, size_t n) {
    if (n != b->shape.size())
      Fail("buffer '" + b->name + "' of rank " + std::to_string(b->shape.size()) + " is indexed with " +
           std::to_string(n) + " indices");
  }
  [[noreturn]] void Fail(const std::string& what) {
    throw InternalError("IR verifier after " + pass_ + ": " + what);
  }

  IRStage stage_;
  std::string pass_;
  std::set<const BufferNode*> known_;
  std::set<const VarNode*> bound_;
};

}  // namespace

void VerifyIR(const PrimFunc& f, IRStage stage, const std::string& pass) { Verifier(stage, pass).Run(f); }

}  // namespace tl
