// HoistSimdgroupStaging; see passes.h.
#include <map>
#include <set>
#include <vector>

#include "ir/functor.h"
#include "transform/gpu_util.h"
#include "target/metal/passes.h"

namespace tl {
namespace {

const char* const kIn = "tl.simdgroup_stage_in";
const char* const kOut = "tl.simdgroup_stage_out";

// The marked moves reachable from `s` through sequences and attributes (not through loops, ifs or
// lets: those would change when or whether they run), with the tile op (`tl.tile_op`) each belongs to.
using Moves = std::map<const BufferNode*, std::vector<std::pair<const AttrStmtNode*, const AttrStmtNode*>>>;
void Collect(const Stmt& s, Moves* in, Moves* out, const AttrStmtNode* op = nullptr) {
  if (!s) return;
  if (auto* q = As<SeqNode>(s)) {
    for (auto& x : q->seq) Collect(x, in, out, op);
  } else if (auto* a = As<AttrStmtNode>(s)) {
    if (a->key == kIn)
      (*in)[a->node.get()].push_back({a, op});
    else if (a->key == kOut)
      (*out)[a->node.get()].push_back({a, op});
    else
      Collect(a->body, in, out, a->key == "tl.tile_op" ? a : op);
  }
}

// Whether `s` reads or writes `b`, or uses a var of `vars`.
bool Uses(const Stmt& s, const BufferNode* b, const std::set<const VarNode*>& vars) {
  struct V : IRVisitor {
    const BufferNode* b;
    const std::set<const VarNode*>* vars;
    bool hit = false;
    void VisitLoad(const BufferLoadNode* n) override {
      hit |= n->buffer.get() == b;
      IRVisitor::VisitLoad(n);
    }
    void VisitStore(const StoreNode* n) override {
      hit |= n->buffer.get() == b;
      IRVisitor::VisitStore(n);
    }
    void VisitVar(const VarNode* v) override { hit |= vars->count(v) > 0; }
  } v;
  v.b = b;
  v.vars = &vars;
  v.VisitStmt(s);
  return v.hit;
}

// Vars bound inside `s` (loops and lets).
std::set<const VarNode*> BoundIn(const Stmt& s) {
  std::set<const VarNode*> out;
  PostOrderVisitStmt(s, [&](const Stmt& x) {
    if (auto* f = As<ForNode>(x)) out.insert(f->var.get());
    if (auto* l = As<LetNode>(x)) out.insert(l->var.get());
  });
  return out;
}

class Hoister : public IRMutator {
 protected:
  Stmt VisitFor(const Stmt& s, const ForNode* n) override {
    Stmt r = IRMutator::VisitFor(s, n);  // inner loops first: their moves may go further out
    auto* f = As<ForNode>(r);
    if (!f || f->for_kind != ForKind::kSerial) return r;
    Moves in, out;
    Collect(f->body, &in, &out);
    std::set<const VarNode*> bound = BoundIn(f->body);
    bound.insert(f->var.get());
    std::vector<Stmt> before, after;
    std::set<const StmtNode*> drop;
    for (auto& [buf, ins] : in) {
      auto o = out.find(buf);
      if (ins.size() != 1 || o == out.end() || o->second.size() != 1) continue;
      const AttrStmtNode *a = ins[0].first, *b = o->second[0].first;
      if (Uses(a->body, nullptr, bound) || Uses(b->body, nullptr, bound)) continue;
      std::set<const StmtNode*> both = {a, b};
      if (Uses(Remove(f->body, both), buf, {})) continue;  // the loop reads or writes the registers
      drop.insert(both.begin(), both.end());
      // (still inside their gemm's tile op, so that the barrier pass sees one op's writes of the staging
      // tile)
      before.push_back(Keep(a, ins[0].second));
      after.push_back(Keep(b, o->second[0].second));
    }
    if (drop.empty()) return r;
    Stmt loop = For(f->var, f->min, f->extent, f->for_kind, Remove(f->body, drop), f->annotations, f->span);
    before.push_back(loop);
    before.insert(before.end(), after.begin(), after.end());
    return Seq(before, f->span);
  }

 private:
  // The statement of a collected node (kept alive by the tree it came from).
  static Stmt Keep(const AttrStmtNode* a, const AttrStmtNode* op) {
    Stmt s = AttrStmt(a->node, a->key, a->value, a->body, a->span);
    return op ? AttrStmt(op->node, op->key, op->value, s, op->span) : s;
  }
  static Stmt Remove(const Stmt& s, const std::set<const StmtNode*>& drop) {
    struct R : IRMutator {
      const std::set<const StmtNode*>* drop;
      Stmt VisitStmt(const Stmt& x) override {
        if (x && drop->count(x.get())) return Seq({}, x->span);
        return IRMutator::VisitStmt(x);
      }
    } m;
    m.drop = &drop;
    return m.VisitStmt(s);
  }
};

// ---- HoistSimdgroupOperands ---------------------------------------------------------------------
const char* const kALoads = "tl.simdgroup_a_loads";

// The K-step loops of gemms reachable from `s` through sequences and attributes: loops whose body begins
// with the marked A loads.
void CollectKLoops(const Stmt& s, std::vector<const ForNode*>* out) {
  if (!s) return;
  if (auto* q = As<SeqNode>(s)) {
    for (auto& x : q->seq) CollectKLoops(x, out);
  } else if (auto* a = As<AttrStmtNode>(s)) {
    CollectKLoops(a->body, out);
  } else if (auto* f = As<ForNode>(s)) {
    auto* q = As<SeqNode>(f->body);
    auto* a = q && !q->seq.empty() ? As<AttrStmtNode>(q->seq[0]) : nullptr;
    if (a && a->key == kALoads) out->push_back(f);
  }
}

// The shared buffers `s` reads or writes.
std::set<const BufferNode*> SharedIn(const Stmt& s) {
  std::set<const BufferNode*> out;
  struct V : IRVisitor {
    std::set<const BufferNode*>* o;
    void VisitBuffer(const Buffer& b) override {
      if (b->scope == Scope::kShared) o->insert(b.get());
    }
  } v;
  v.o = &out;
  v.VisitStmt(s);
  return out;
}

// `from[i]` -> `to[k * per + i]` everywhere in `s`.
Stmt Retarget(const Stmt& s, const BufferNode* from, const Buffer& to, const Expr& k, int64_t per) {
  struct R : IRMutator {
    const BufferNode* from;
    Buffer to;
    Expr k;
    int64_t per;
    Expr VisitLoad(const Expr& e, const BufferLoadNode* n) override {
      if (n->buffer.get() != from) return IRMutator::VisitLoad(e, n);
      return Load(to,
                  {Binary(BinaryOp::kAdd, Binary(BinaryOp::kMul, k, Int(per)), VisitExpr(n->indices.at(0)))});
    }
  } m;
  m.from = from;
  m.to = to;
  m.k = k;
  m.per = per;
  return m.VisitStmt(s);
}

class OperandHoister : public IRMutator {
 public:
  std::vector<Buffer> extra;
  std::set<const BufferNode*> retired;

 protected:
  Stmt VisitKernel(const Stmt& s, const KernelNode* n) override {
    Stmt r = IRMutator::VisitKernel(s, n);
    if (extra.empty()) return r;
    auto* k = As<KernelNode>(r);
    std::vector<Buffer> allocs;
    for (auto& b : k->alloc_buffers)
      if (!retired.count(b.get())) allocs.push_back(b);  // the per-step registers the hoisted loads replaced
    allocs.insert(allocs.end(), extra.begin(), extra.end());
    return std::make_shared<KernelNode>(k->grid, k->block_vars, k->threads, allocs, k->var_inits, k->body,
                                        k->span);
  }
  Stmt VisitFor(const Stmt& s, const ForNode* n) override {
    Stmt r = IRMutator::VisitFor(s, n);
    auto* L = As<ForNode>(r);
    if (!L || L->for_kind != ForKind::kSerial) return r;
    std::vector<const ForNode*> kloops;
    CollectKLoops(L->body, &kloops);
    std::set<const VarNode*> bound = BoundIn(L->body);
    bound.insert(L->var.get());
    std::vector<Stmt> before;
    std::set<const StmtNode*> drop;
    std::map<const StmtNode*, Stmt> replace;
    for (const ForNode* kl : kloops) {
      auto* q = As<SeqNode>(kl->body);
      auto* a = As<AttrStmtNode>(q->seq[0]);
      int64_t E = 0, per = 0;  // K steps; register elements of one step's A operand (the attribute's value)
      if (!IsConstInt(kl->min, 0) || !AsConstInt(kl->extent, &E) || !AsConstInt(a->value, &per)) continue;
      std::set<const VarNode*> others = bound;
      others.erase(kl->var.get());
      if (Uses(a->body, nullptr, others)) continue;  // the tiles move with the loop
      bool ok = true;
      const Stmt rest = RemoveOne(L->body, a);
      const std::set<const BufferNode*> elsewhere = SharedIn(rest);
      for (const BufferNode* t : SharedIn(a->body)) ok &= !elsewhere.count(t);
      ok &= !Uses(RemoveOne(L->body, kl), a->node.get(), {});  // the registers serve this K loop alone
      if (!ok) continue;
      Buffer all = MakeBuffer(a->node->name + "_all", a->node->dtype, {Int(E * per)}, Scope::kLocal, a->span);
      extra.push_back(all);
      retired.insert(a->node.get());
      Var k2 = MakeVar(kl->var->name);
      Stmt loads = Retarget(Substitute(a->body, {{kl->var.get(), Expr(k2)}}), a->node.get(), all, k2, per);
      before.push_back(For(k2, Int(0), Int(E), ForKind::kUnrolled, loads, {}, kl->span));
      std::vector<Stmt> body(q->seq.begin() + 1, q->seq.end());
      Stmt nb = Retarget(Seq(body, kl->span), a->node.get(), all, kl->var, per);
      // unrolled, so that every simdgroup matrix of the operand is a register
      replace[kl] = For(kl->var, kl->min, kl->extent, ForKind::kUnrolled, nb, kl->annotations, kl->span);
    }
    if (replace.empty()) return r;
    struct Rep : IRMutator {
      std::map<const StmtNode*, Stmt>* rep;
      Stmt VisitStmt(const Stmt& x) override {
        if (x) {
          auto it = rep->find(x.get());
          if (it != rep->end()) return it->second;
        }
        return IRMutator::VisitStmt(x);
      }
    } m;
    m.rep = &replace;
    before.push_back(m.VisitStmt(r));
    return Seq(before, L->span);
  }

 private:
  static Stmt RemoveOne(const Stmt& s, const StmtNode* drop) {
    struct R : IRMutator {
      const StmtNode* drop;
      Stmt VisitStmt(const Stmt& x) override {
        if (x && x.get() == drop) return Seq({}, x->span);
        return IRMutator::VisitStmt(x);
      }
    } m;
    m.drop = drop;
    return m.VisitStmt(s);
  }
};

}  // namespace

PrimFunc HoistSimdgroupOperands(const PrimFunc& f, const PassContext& ctx) {
  if (ctx.features.matrix != MatrixUnit::kSimdgroupMatrix) return f;
  Stmt b = OperandHoister().VisitStmt(f->body);
  return b == f->body ? f : WithBody(f, b);
}

PrimFunc HoistSimdgroupStaging(const PrimFunc& f, const PassContext& ctx) {
  if (ctx.features.matrix != MatrixUnit::kSimdgroupMatrix) return f;
  Stmt b = Hoister().VisitStmt(f->body);
  return b == f->body ? f : WithBody(f, b);
}

}  // namespace tl
