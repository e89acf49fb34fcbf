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
// lets: those would change when or whether they run).
void Collect(const Stmt& s, std::map<const BufferNode*, std::vector<const AttrStmtNode*>>* in,
             std::map<const BufferNode*, std::vector<const AttrStmtNode*>>* out) {
  if (!s) return;
  if (auto* q = As<SeqNode>(s)) {
    for (auto& x : q->seq) Collect(x, in, out);
  } else if (auto* a = As<AttrStmtNode>(s)) {
    if (a->key == kIn)
      (*in)[a->node.get()].push_back(a);
    else if (a->key == kOut)
      (*out)[a->node.get()].push_back(a);
    else
      Collect(a->body, in, out);
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
    std::map<const BufferNode*, std::vector<const AttrStmtNode*>> in, out;
    Collect(f->body, &in, &out);
    std::set<const VarNode*> bound = BoundIn(f->body);
    bound.insert(f->var.get());
    std::vector<Stmt> before, after;
    std::set<const StmtNode*> drop;
    for (auto& [buf, ins] : in) {
      auto o = out.find(buf);
      if (ins.size() != 1 || o == out.end() || o->second.size() != 1) continue;
      const AttrStmtNode *a = ins[0], *b = o->second[0];
      if (Uses(a->body, nullptr, bound) || Uses(b->body, nullptr, bound)) continue;
      std::set<const StmtNode*> both = {a, b};
      if (Uses(Remove(f->body, both), buf, {})) continue;  // the loop reads or writes the registers
      drop.insert(both.begin(), both.end());
      before.push_back(Keep(a));
      after.push_back(Keep(b));
    }
    if (drop.empty()) return r;
    Stmt loop = For(f->var, f->min, f->extent, f->for_kind, Remove(f->body, drop), f->annotations, f->span);
    before.push_back(loop);
    before.insert(before.end(), after.begin(), after.end());
    return Seq(before, f->span);
  }

 private:
  // The statement of a collected node (kept alive by the tree it came from).
  static Stmt Keep(const AttrStmtNode* a) { return AttrStmt(a->node, a->key, a->value, a->body, a->span); }
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

}  // namespace

PrimFunc HoistSimdgroupStaging(const PrimFunc& f, const PassContext& ctx) {
  if (ctx.features.matrix != MatrixUnit::kSimdgroupMatrix) return f;
  Stmt b = Hoister().VisitStmt(f->body);
  return b == f->body ? f : WithBody(f, b);
}

}  // namespace tl
