// MaterializeWsSchedule (materialize_ws_schedule.h; docs/warp_specialization.md, "Schedules").
#include "transform/materialize_ws_schedule.h"

#include <algorithm>
#include <climits>
#include <functional>
#include <tuple>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "ir/functor.h"
#include "ir/index_expr.h"
#include "op/copy.h"
#include "support/error.h"
#include "transform/gpu_util.h"

namespace tl {

const char* const kWsCopyBarrierKey = "tl.ws_copy_barrier";

namespace {

using gpu_pass::Loc;

const char* const kOpId = "tl.ws_op_id";
const char* const kSchedule = "tl.ws_schedule";
const char* const kPipeline = "tl.ws_pipeline";
const char* const kRoot = "tl.ws_scope_root";
// Below this budget a role gives registers back (setmaxnreg.dec), at or above it it takes them (.inc).
constexpr int64_t kNregIncFrom = 128;

enum SyncKind : int64_t { kAcquire = 0, kCommit = 1, kWait = 2, kRelease = 3 };
const char* SyncName(int64_t k) {
  static const char* const names[] = {"producer_acquire", "producer_commit", "consumer_wait", "consumer_release"};
  return k >= 0 && k < 4 ? names[k] : "?";
}

std::string Str(const Expr& e) {
  auto* s = As<StringImmNode>(e);
  TL_ICHECK(s, "ws_schedule: a string was expected in the schedule's IR");
  return s->value;
}
int64_t Int64(const Expr& e) {
  int64_t v = 0;
  TL_ICHECK(AsConstInt(e, &v), "ws_schedule: an integer was expected in the schedule's IR");
  return v;
}
const CallNode* CallOf(const Expr& e, const char* op) {
  auto* c = As<CallNode>(e);
  TL_ICHECK(c && c->op == op, std::string("ws_schedule: a ") + op + " call was expected");
  return c;
}

struct Role {
  std::string name;
  int64_t lo = 0, hi = 0, nreg = 0;  // warps [lo, hi)
};
struct Step {
  bool sync = false;
  std::string op;  // an op or scope id (sync false)
  int64_t kind = 0, stage = 0;
  int pipe = -1;
};
struct Pipe {
  std::string name;
  int64_t depth = 1;
  std::vector<Buffer> bufs;
  Buffer full, empty;
  int producer = -1, consumer = -1;  // the roles on each side
};
// One statement of a scope's body, as the schedule sees it.
struct Item {
  std::string id;
  Stmt stmt;                 // the op (a let: null)
  Var let_var;               // `with T.ws_op(id): x = ...`
  Expr let_value;
  Expr guard;                // the conditions of the `if`s it sits in (null: none)
  int scope = -1;            // a loop scope: its index
  Span span;
  std::vector<Item> more;    // the op's next statements (a `with T.ws_op(id):` of several)
};
struct ScopeSpec {
  std::string id;
  std::map<std::string, std::vector<Step>> bodies;  // role name -> program
  std::vector<std::string> role_order;
  const StmtNode* loop = nullptr;  // For or While (null: the root)
  std::vector<Item> items;
  int parent = -1;
};

struct ThreadSpan {
  int64_t lo = 0, hi = 0;  // [lo, hi)
};

Expr Tx() { return Call(DataType::Int(32), "tl.thread_idx", {}); }
Stmt Eval(const std::string& op, std::vector<Expr> args, const Span& sp) {
  return Evaluate(Call(DataType::Void(), op, std::move(args)), sp);
}
Expr And(Expr a, Expr b) { return a ? Binary(BinaryOp::kAnd, a, b) : b; }

// `s` without ws op ids (AttrStmts and loop annotations): what runs once the schedule is placed or dropped.
struct StripIds : IRMutator {
  Stmt VisitAttr(const Stmt& s, const AttrStmtNode* n) override {
    if (n->key == kOpId || n->key == kSchedule || n->key == kPipeline) return VisitStmt(n->body);
    return IRMutator::VisitAttr(s, n);
  }
  Stmt VisitFor(const Stmt& s, const ForNode* n) override {
    Stmt out = IRMutator::VisitFor(s, n);
    auto* f = As<ForNode>(out);
    if (!f->annotations.count(kOpId)) return out;
    auto ann = f->annotations;
    ann.erase(kOpId);
    return For(f->var, f->min, f->extent, f->for_kind, f->body, ann, f->span);
  }
};
bool HasIds(const Stmt& s) {
  bool found = false;
  PostOrderVisitStmt(s, [&](const Stmt& x) {
    if (auto* a = As<AttrStmtNode>(x); a && (a->key == kOpId || a->key == kSchedule || a->key == kPipeline))
      found = true;
    if (auto* f = As<ForNode>(x); f && f->annotations.count(kOpId)) found = true;
  });
  return found;
}

// `s` with a fresh var for every loop and let it binds: each role's program is its own copy of the statements.
struct FreshBinders : IRMutator {
  std::map<const VarNode*, Var> sub;
  Expr VisitVar(const Var& v) override {
    auto it = sub.find(v.get());
    return it == sub.end() ? Expr(v) : Expr(it->second);
  }
  Var Renew(const Var& v) { return sub[v.get()] = MakeVar(v->name, v->dtype); }
  Stmt VisitFor(const Stmt& s, const ForNode* n) override {
    Expr mn = VisitExpr(n->min), ext = VisitExpr(n->extent);
    std::map<std::string, Expr> ann;
    for (auto& kv : n->annotations) ann[kv.first] = VisitExpr(kv.second);
    Var v = Renew(n->var);
    return For(v, mn, ext, n->for_kind, VisitStmt(n->body), ann, s->span);
  }
  Stmt VisitLet(const Stmt& s, const LetNode* n) override {
    Expr x = VisitExpr(n->value);
    Var v = Renew(n->var);
    return Let(v, x, VisitStmt(n->body), s->span);
  }
};

// Accesses of pipeline buffers become accesses of their versions: buffer[v, ...] with v the version the
// enclosing acquire / wait selected.
struct Versioner : IRMutator {
  const std::map<const BufferNode*, std::pair<int, Buffer>>* protected_;  // buffer -> (pipe, versioned)
  const std::map<int, Expr>* bound;                                          // pipe -> version
  const std::vector<Pipe>* pipes;
  std::string where;  // "op 'x' of role 'R'"
  Span span;

  Expr VersionOf(const BufferNode* b, Buffer* vb) {
    auto it = protected_->find(b);
    if (it == protected_->end()) return nullptr;
    auto v = bound->find(it->second.first);
    const Pipe& p = (*pipes)[it->second.first];
    if (v == bound->end())
      throw UserError(ErrorKind::kSyntax,
                      "T.annotate_ws_schedule: " + where + " uses '" + b->name + "', which pipeline '" + p.name +
                          "' protects (" + std::to_string(p.depth) +
                          " versions), outside an acquire/commit or wait/release of '" + p.name +
                          "': only between them is one version bound to it",
                      span);
    *vb = it->second.second;
    return v->second;
  }
  Expr VisitLoad(const Expr& e, const BufferLoadNode* n) override {
    Buffer vb;
    Expr v = VersionOf(n->buffer.get(), &vb);
    if (!v) return IRMutator::VisitLoad(e, n);
    std::vector<Expr> idx{v};
    for (auto& i : n->indices) idx.push_back(VisitExpr(i));
    return Load(vb, idx);
  }
  Stmt VisitStore(const Stmt& s, const StoreNode* n) override {
    Buffer vb;
    Expr v = VersionOf(n->buffer.get(), &vb);
    if (!v) return IRMutator::VisitStore(s, n);
    std::vector<Expr> idx{v};
    for (auto& i : n->indices) idx.push_back(VisitExpr(i));
    return Store(vb, VisitExpr(n->value), idx, n->span);
  }
  Stmt VisitTileOp(const Stmt& s) override {
    auto* op = As<TileOpNode>(s);
    std::vector<Region> regions;
    bool changed = false;
    for (auto& [r, access] : op->Regions()) {
      Buffer vb;
      Expr v = VersionOf(r->buffer.get(), &vb);
      if (!v) {
        regions.push_back(VisitRegion(*r));
        continue;
      }
      Region out{vb, {{v, Int(1)}}};
      for (auto& rg : r->ranges) out.ranges.push_back({VisitExpr(rg.min), VisitExpr(rg.extent)});
      regions.push_back(out);
      changed = true;
    }
    if (!changed) return IRMutator::VisitTileOp(s);
    std::vector<Expr> exprs;
    for (auto& e : op->Exprs()) exprs.push_back(e ? VisitExpr(e) : e);
    return op->WithOperands(std::move(regions), std::move(exprs));
  }
};

class Materializer {
 public:
  Materializer(const KernelNode* k, const PassContext& ctx) : k_(k), ctx_(ctx) {}

  Stmt Run(const Stmt& kernel_stmt) {
    // peel the kernel-level attributes: the schedule's are read, the others kept around the result
    Stmt body = k_->body;
    std::vector<const AttrStmtNode*> keep;
    Expr sched;
    std::vector<std::pair<Buffer, Expr>> pipes;
    while (auto* a = As<AttrStmtNode>(body)) {
      if (a->key == kSchedule) {
        sched = a->value;
        span_ = a->span;
      } else if (a->key == kPipeline) {
        pipes.push_back({a->node, a->value});
      } else if (a->key == kOpId) {
        break;
      } else {
        keep.push_back(a);
      }
      body = a->body;
    }
    if (!sched) {  // not at the top (inside a condition, a second kernel): the front end puts it there
      throw UserError(ErrorKind::kSyntax, "T.annotate_ws_schedule: the schedule must be at the top of the kernel",
                      k_->span);
    }
    ParseSchedule(sched, pipes);
    scopes_[root_].items = Flatten(body, nullptr, root_, true);
    for (size_t i = 0; i < scopes_.size(); ++i)
      if (!scopes_[i].loop && static_cast<int>(i) != root_)
        Fail("the schedule has a scope '" + scopes_[i].id + "' but no serial loop or `while` in the kernel carries "
             "that id (annotations={T.WSID: ...} on the loop, T.ws_op around a while)");

    // each role's program, each under its warps
    std::vector<std::pair<ThreadSpan, Stmt>> branches;
    for (size_t r = 0; r < roles_.size(); ++r) {
      bound_.clear();
      Stmt prog = Program(root_, static_cast<int>(r));
      std::vector<Stmt> seq;
      if (prog) seq.push_back(FreshBinders().VisitStmt(prog));
      branches.push_back({{roles_[r].lo * 32, roles_[r].hi * 32}, Seq(seq, span_)});
    }
    std::sort(branches.begin(), branches.end(),
              [](const auto& a, const auto& b) { return a.first.lo < b.first.lo; });
    for (auto& [id, where] : op_scope_)
      if (!placed_.count(id))
        Fail("op '" + id + "' is in no role's program: a schedule places every statement of the kernel (an op only "
             "some roles need is listed by those)", where.second);
    for (const Pipe& p : pipes_)
      if (p.producer < 0 || p.consumer < 0)
        Fail("pipeline '" + p.name + "' has no " + (p.producer < 0 ? "producer (producer_acquire / _commit)"
                                                                     : "consumer (consumer_wait / _release)"));

    // if (tx < hi0) {...} else if (tx >= lo1 && tx < hi1) {...} ...: a chain of thread ranges
    Stmt dispatch;
    for (auto it = branches.rbegin(); it != branches.rend(); ++it) {
      Expr cond = Binary(BinaryOp::kLT, Tx(), Int(it->first.hi));
      if (it->first.lo > 0) cond = Binary(BinaryOp::kAnd, Binary(BinaryOp::kGE, Tx(), Int(it->first.lo)), cond);
      dispatch = If(cond, it->second, dispatch, span_);
    }
    std::vector<Stmt> top = setup_;
    // setmaxnreg is warp-group-collective and .aligned: one instruction a warp group, before the roles' branches
    // (whose warps of one group would otherwise run different ones)
    for (auto& [g, nr] : group_nreg_)
      if (nr.first)
        top.push_back(If(Binary(BinaryOp::kAnd, Binary(BinaryOp::kGE, Tx(), Int(g * 128)),
                                Binary(BinaryOp::kLT, Tx(), Int(g * 128 + 128))),
                         SetNreg(nr.first), nullptr, span_));
    for (const Pipe& p : pipes_)
      for (int64_t v = 0; v < p.depth; ++v) {
        top.push_back(Eval("tl.mbarrier_init", {Load(p.full, {Int(v)}), Int(Threads(p.producer))}, span_));
        top.push_back(Eval("tl.mbarrier_init", {Load(p.empty, {Int(v)}), Int(Threads(p.consumer))}, span_));
      }
    top.push_back(dispatch);
    Stmt out = Seq(top, k_->body->span);
    for (auto& [var, value] : free_lets_) out = Let(var, value, out, k_->body->span);
    out = StripIds().VisitStmt(out);
    for (auto it = keep.rbegin(); it != keep.rend(); ++it)
      out = AttrStmt((*it)->node, (*it)->key, (*it)->value, out, (*it)->span);

    std::vector<Buffer> allocs;
    for (auto& b : k_->alloc_buffers) {
      auto it = versioned_.find(b.get());
      allocs.push_back(it == versioned_.end() ? b : it->second.second);
    }
    for (const Pipe& p : pipes_) {
      allocs.push_back(p.full);
      allocs.push_back(p.empty);
    }
    auto inits = k_->var_inits;
    for (auto& [key, c] : counters_) {
      allocs.push_back(c);
      inits.push_back({c, Int(0)});
    }
    (void)kernel_stmt;
    return std::make_shared<KernelNode>(k_->grid, k_->block_vars, std::vector<Expr>{Int(num_warps_ * 32)}, allocs,
                                        inits, out, k_->span);
  }

 private:
  [[noreturn]] void Fail(const std::string& msg, const Span& sp = {}) const {
    throw UserError(ErrorKind::kSyntax, "T.annotate_ws_schedule: " + msg, sp.defined() ? sp : span_);
  }
  int64_t Threads(int role) const { return (roles_[role].hi - roles_[role].lo) * 32; }
  Stmt SetNreg(int64_t n) const {
    return Eval("tl.set_max_nreg", {Int(n), Int(n >= kNregIncFrom ? 1 : 0)}, span_);
  }
  int RoleIndex(const std::string& name) const {
    for (size_t i = 0; i < roles_.size(); ++i)
      if (roles_[i].name == name) return static_cast<int>(i);
    return -1;
  }

  void ParseSchedule(const Expr& e, const std::vector<std::pair<Buffer, Expr>>& pipes) {
    auto* s = CallOf(e, "tl.ws_schedule");
    num_warps_ = Int64(s->args[0]);
    if (num_warps_ * 32 > ctx_.features.max_threads)
      Fail("num_warps=" + std::to_string(num_warps_) + " is " + std::to_string(num_warps_ * 32) +
           " threads; the target allows " + std::to_string(ctx_.features.max_threads) + " per block");
    for (auto& r : CallOf(s->args[1], "list")->args) {
      auto* c = CallOf(r, "tl.ws_role");
      roles_.push_back({Str(c->args[0]), Int64(c->args[1]), Int64(c->args[2]), Int64(c->args[3])});
    }
    for (auto& [buf, value] : pipes) {
      auto* c = CallOf(value, "tl.ws_pipeline");
      std::string name = Str(c->args[0]);
      auto it = std::find_if(pipes_.begin(), pipes_.end(), [&](const Pipe& p) { return p.name == name; });
      if (it == pipes_.end()) {
        pipes_.push_back({name, Int64(c->args[1]), {}, nullptr, nullptr});
        it = pipes_.end() - 1;
      }
      if (versioned_.count(buf.get()))
        Fail("'" + buf->name + "' is protected by two pipelines; a buffer has one set of versions");
      it->bufs.push_back(buf);
    }
    for (auto& b : k_->alloc_buffers) names_.insert(b->name);
    auto fresh = [this](const std::string& base) {
      std::string n = base;
      for (int i = 1; names_.count(n); ++i) n = base + "_" + std::to_string(i);
      names_.insert(n);
      return n;
    };
    for (size_t i = 0; i < pipes_.size(); ++i) {
      Pipe& p = pipes_[i];
      for (auto& b : p.bufs) {
        std::vector<Expr> shape{Int(p.depth)};
        shape.insert(shape.end(), b->shape.begin(), b->shape.end());
        versioned_[b.get()] = {static_cast<int>(i), MakeBuffer(b->name, b->dtype, shape, b->scope, b->span)};
      }
      p.full = MakeBuffer(fresh(p.name + "_full"), DataType::UInt(64), {Int(p.depth)}, Scope::kShared, span_);
      p.empty = MakeBuffer(fresh(p.name + "_empty"), DataType::UInt(64), {Int(p.depth)}, Scope::kShared, span_);
    }
    fresh_ = fresh;
    for (auto& sc : CallOf(s->args[2], "list")->args) {
      auto* c = CallOf(sc, "tl.ws_scope");
      ScopeSpec scope;
      scope.id = Str(c->args[0]);
      for (size_t j = 1; j < c->args.size(); ++j) {
        auto* b = CallOf(c->args[j], "tl.ws_body");
        std::string role = Str(b->args[0]);
        std::vector<Step> steps;
        for (size_t t = 1; t < b->args.size(); ++t) {
          Step st;
          if (As<StringImmNode>(b->args[t])) {
            st.op = Str(b->args[t]);
          } else {
            auto* y = CallOf(b->args[t], "tl.ws_sync");
            st.sync = true;
            st.kind = Int64(y->args[0]);
            std::string pn = Str(y->args[1]);
            st.stage = Int64(y->args[2]);
            for (size_t q = 0; q < pipes_.size(); ++q)
              if (pipes_[q].name == pn) st.pipe = static_cast<int>(q);
            if (st.pipe < 0) Fail("scope '" + scope.id + "': pipeline '" + pn + "' protects no buffer");
          }
          steps.push_back(st);
        }
        scope.bodies[role] = steps;
        scope.role_order.push_back(role);
      }
      if (scope.id == kRoot) root_ = static_cast<int>(scopes_.size());
      scopes_.push_back(std::move(scope));
    }
    TL_ICHECK(root_ >= 0, "ws_schedule: the front end checks for a root scope");
    // setmaxnreg is per warp group: the roles of one warp group ask for the same budget
    std::map<int64_t, std::pair<int64_t, std::string>> group_nreg;
    for (auto& r : roles_)
      for (int64_t w = r.lo; w < r.hi; ++w) {
        auto [it, fresh_group] = group_nreg.insert({w / 4, {r.nreg, r.name}});
        if (!fresh_group && it->second.first != r.nreg)
          Fail("roles '" + it->second.second + "' (max_nreg " + std::to_string(it->second.first) + ") and '" +
               r.name + "' (max_nreg " + std::to_string(r.nreg) + ") share warp group " + std::to_string(w / 4) +
               " (warps " + std::to_string(w / 4 * 4) + ".." + std::to_string(w / 4 * 4 + 3) +
               "); setmaxnreg sets the budget of a whole warp group, so they must ask for the same");
      }
    group_nreg_ = group_nreg;
  }

  int ScopeIndex(const std::string& id) const {
    for (size_t i = 0; i < scopes_.size(); ++i)
      if (scopes_[i].id == id) return static_cast<int>(i);
    return -1;
  }

  // Appends `it` to `out`: the next statement of the op before it when it has the same id (one T.ws_op block).
  void Record(const Item& it, int scope, std::vector<Item>* out) {
    if (!out->empty() && out->back().id == it.id && it.scope < 0 && out->back().scope < 0) {
      out->back().more.push_back(it);
      return;
    }
    auto [pos, fresh] = op_scope_.insert({it.id, {scope, it.span}});
    if (!fresh)
      Fail("two statements carry the ws op id '" + it.id + "' (the other at " + Loc(pos->second.second) +
           "); each op needs its own", it.span);
    out->push_back(it);
  }

  // The statements of a scope's body as the schedule's items.
  std::vector<Item> Flatten(const Stmt& s, const Expr& guard, int scope, bool root) {
    std::vector<Item> out;
    FlattenInto(s, guard, scope, root, &out);
    return out;
  }
  void FlattenInto(const Stmt& s, const Expr& guard, int scope, bool root, std::vector<Item>* out) {
    if (!s) return;
    if (auto* q = As<SeqNode>(s)) {
      for (auto& x : q->seq) FlattenInto(x, guard, scope, root, out);
      return;
    }
    if (auto* a = As<AttrStmtNode>(s); a && a->key == kOpId) {
      Item it;
      it.id = Str(a->value);
      it.guard = guard;
      it.span = a->span;
      if (auto* l = As<LetNode>(a->body)) {
        it.let_var = l->var;
        it.let_value = l->value;
        op_lets_.insert(l->var.get());
        Record(it, scope, out);
        FlattenInto(l->body, guard, scope, root, out);
        return;
      }
      it.stmt = a->body;
      if (auto* w = As<WhileNode>(a->body)) {
        int child = ScopeIndex(it.id);
        if (child >= 0) EnterScope(&it, child, w, w->body, guard, scope);
      } else if (ScopeIndex(it.id) >= 0) {
        Fail("scope '" + it.id + "' is a `with T.ws_op(...)` around something other than a `while` loop; a serial "
             "loop names its scope with annotations={T.WSID: ...}", a->span);
      }
      Record(it, scope, out);
      return;
    }
    if (auto* f = As<ForNode>(s); f && f->annotations.count(kOpId)) {
      Item it;
      it.id = Str(f->annotations.at(kOpId));
      it.guard = guard;
      it.stmt = s;
      it.span = f->span;
      int child = ScopeIndex(it.id);
      if (child >= 0) {
        if (f->for_kind != ForKind::kSerial && f->for_kind != ForKind::kPipelined)
          Fail("scope '" + it.id + "' is a T." + ForKindName(f->for_kind) + " loop; a scope is a serial loop "
               "(T.serial, T.Pipelined, range) or a `while` (an unrolled loop is one op: not a scope)", f->span);
        EnterScope(&it, child, f, f->body, guard, scope);
      }
      Record(it, scope, out);
      return;
    }
    if (auto* i = As<IfNode>(s); i && !i->else_case) {
      FlattenInto(i->then_case, And(guard, i->cond), scope, root, out);
      return;
    }
    if (auto* e = As<EvaluateNode>(s); root && !guard && e) {
      auto* c = As<CallNode>(e->value);
      if (c && c->op == "tl.mbarrier_init") {  // T.alloc_barrier's: before the roles, on every thread
        setup_.push_back(s);
        return;
      }
    }
    if (auto* l = As<LetNode>(s); root && !guard && l && !VarsOf(l->value).loads) {
      // a let of plain values (`tx = T.get_thread_binding()`): visible to every role
      for (const VarNode* v : VarsOf(l->value).vars)
        if (op_lets_.count(v))
          Fail("'" + l->var->name + "' is computed from '" + v->name + "', which a T.ws_op binds, but has no ws op id "
               "itself; put it in that T.ws_op (or one of its own)", s->span);
      free_lets_.push_back({l->var, l->value});
      FlattenInto(l->body, guard, scope, root, out);
      return;
    }
    Fail("this statement has no ws op id, so no role's program can place it; tile ops and loops take "
         "annotations={T.WSID: ...}, other statements go in `with T.ws_op(...)` (scope '" + scopes_[scope].id + "')",
         s->span);
  }

  void EnterScope(Item* it, int child, const StmtNode* loop, const Stmt& body, const Expr& guard, int parent) {
    ScopeSpec& c = scopes_[child];
    if (c.loop) Fail("two loops carry the scope id '" + c.id + "'", it->span);
    if (guard) Fail("scope '" + c.id + "' sits under an `if`; a scope's loop is a statement of its parent scope",
                    it->span);
    c.loop = loop;
    c.parent = parent;
    it->scope = child;
    c.items = Flatten(body, nullptr, child, false);
  }

  Buffer Counter(int role, int pipe, bool producer) {
    auto key = std::make_tuple(role, pipe, producer);
    auto it = counters_.find(key);
    if (it != counters_.end()) return it->second;
    Buffer b = MakeBuffer(fresh_(pipes_[pipe].name + (producer ? "_produced_" : "_consumed_") + roles_[role].name),
                          DataType::Int(32), {Int(1)}, Scope::kLocalVar, span_);
    counters_[key] = b;
    return b;
  }

  struct Entry {
    Stmt stmt;
    Var let_var;
    Expr let_value;
    int64_t stage = 0;
    Span span;
  };

  // Role `r`'s program for scope `si` (null where it has none): its steps in order, syncs as mbarrier waits and
  // arrivals, each op with the versions its open spans bound.
  Stmt Program(int si, int r) {
    const ScopeSpec& sc = scopes_[si];
    auto body = sc.bodies.find(roles_[r].name);
    if (body == sc.bodies.end() || body->second.empty()) return nullptr;
    std::map<int, std::pair<int64_t, int64_t>> open;  // pipe -> (kind, stage), this scope's
    const std::map<int, Expr> outer = bound_, outer_filling = filling_;
    std::vector<Entry> entries;
    std::set<std::string> seen;
    for (const Step& st : body->second) {
      if (st.sync) {
        Pipe& p = pipes_[st.pipe];
        const bool producer = st.kind == kAcquire || st.kind == kCommit;
        int& side = producer ? p.producer : p.consumer;
        if (side >= 0 && side != r)
          Fail("pipeline '" + p.name + "' has two " + (producer ? "producer" : "consumer") + " roles ('" +
               roles_[side].name + "' and '" + roles_[r].name + "'); each side is one role");
        side = r;
        Buffer ctr = Counter(r, st.pipe, producer);
        Expr c = Load(ctr, {Int(0)});
        const Expr g = index_expr::IterationNumber(c);  // never negative: a mask and a shift for depths of 2^k
        Expr slot = Binary(BinaryOp::kFloorMod, g, IntImm(g->dtype, p.depth));
        Expr parity = Binary(BinaryOp::kFloorMod, Binary(BinaryOp::kFloorDiv, g, IntImm(g->dtype, p.depth)),
                             IntImm(g->dtype, 2));
        auto at = "role '" + roles_[r].name + "' in scope '" + sc.id + "': " + SyncName(st.kind) + "('" + p.name + "')";
        Entry e;
        e.stage = st.stage;
        e.span = span_;
        if (st.kind == kAcquire || st.kind == kWait) {
          if (open.count(st.pipe) || outer.count(st.pipe))
            Fail(at + " while '" + p.name + "' is already acquired or waited on; close it (commit / release) first");
          open[st.pipe] = {st.kind, st.stage};
          bound_[st.pipe] = slot;
          if (st.kind == kAcquire) filling_[st.pipe] = Load(p.full, {slot});
          e.stmt = st.kind == kAcquire
                       ? Eval("tl.mbarrier_wait_parity", {Load(p.empty, {slot}), Binary(BinaryOp::kBitXor, parity, IntImm(g->dtype, 1))}, span_)
                       : Eval("tl.mbarrier_wait_parity", {Load(p.full, {slot}), parity}, span_);
        } else {
          auto o = open.find(st.pipe);
          const int64_t want = st.kind == kCommit ? kAcquire : kWait;
          if (o == open.end() || o->second.first != want)
            Fail(at + " without a " + SyncName(want) + " of '" + p.name + "' before it in the same scope");
          if (o->second.second != st.stage)
            Fail(at + " is at stage " + std::to_string(st.stage) + " but its " + SyncName(want) + " at stage " +
                 std::to_string(o->second.second) + "; a span's ends share one stage");
          open.erase(o);
          bound_.erase(st.pipe);
          filling_.erase(st.pipe);
          e.stmt = Seq({Eval("tl.mbarrier_arrive", {Load(st.kind == kCommit ? p.full : p.empty, {slot})}, span_),
                        Store(ctr, c + Int(1), {Int(0)}, span_)},
                       span_);
        }
        entries.push_back(e);
        continue;
      }
      // an op or a child scope: one of this scope's statements
      if (!seen.insert(st.op).second)
        Fail("role '" + roles_[r].name + "' places '" + st.op + "' twice in scope '" + sc.id + "'");
      const Item* item = nullptr;
      for (auto& it : sc.items)
        if (it.id == st.op) item = &it;
      if (!item) {
        auto where = op_scope_.find(st.op);
        Fail("role '" + roles_[r].name + "' of scope '" + sc.id + "' places '" + st.op + "', " +
             (where == op_scope_.end() ? std::string("which no statement of the kernel carries")
                                       : "a statement of scope '" + scopes_[where->second.first].id + "'"));
      }
      placed_.insert(st.op);
      int64_t stage = 0;
      bool first = true;
      for (auto& [pipe, ks] : open) {  // the stage of the spans it sits in
        if (!first && ks.second != stage)
          Fail("role '" + roles_[r].name + "' places '" + st.op + "' inside spans of different stages (" +
               std::to_string(stage) + " and " + std::to_string(ks.second) + ")");
        stage = ks.second;
        first = false;
      }
      std::vector<const Item*> parts{item};
      for (auto& m : item->more) parts.push_back(&m);
      for (const Item* part : parts) {
        Entry e;
        if (!OpEntry(*part, st.op, r, stage, &e)) continue;
        entries.push_back(e);
      }
    }
    if (!open.empty()) {
      const Pipe& p = pipes_[open.begin()->first];
      Fail("role '" + roles_[r].name + "' of scope '" + sc.id + "' " +
           (open.begin()->second.first == kAcquire ? "acquires" : "waits on") + " '" + p.name +
           "' and never " + (open.begin()->second.first == kAcquire ? "commits" : "releases") + " it");
    }
    bound_ = outer;
    filling_ = outer_filling;
    return Staged(si, entries, r);
  }

  // One statement of op `op` in role r's program at `stage`: false when there is nothing to run (a child scope the
  // role has no program for).
  bool OpEntry(const Item& item, const std::string& op, int r, int64_t stage, Entry* e) {
    Versioner vz;
    vz.protected_ = &versioned_;
    vz.bound = &bound_;
    vz.pipes = &pipes_;
    vz.where = "op '" + op + "' of role '" + roles_[r].name + "'";
    vz.span = item.span;
    e->span = item.span;
    e->stage = stage;
    if (item.let_var) {
      e->let_var = item.let_var;
      e->let_value = vz.VisitExpr(item.let_value);
    } else if (item.scope >= 0) {
      Stmt inner = Program(item.scope, r);
      if (!inner) return false;
      e->stmt = Loop(item.scope, inner, r);
    } else {
      e->stmt = ProducerCopy(vz.VisitStmt(item.stmt));
    }
    if (item.guard) {
      if (e->let_var) Fail("op '" + op + "' binds a name under an `if`; bind it outside", item.span);
      e->stmt = If(vz.VisitExpr(item.guard), e->stmt, nullptr, item.span);
    }
    return true;
  }

  // A copy from global memory into a buffer whose pipeline this role is filling: marked with the version's full
  // barrier (kWsCopyBarrierKey), on which the legalizer lets a TMA copy complete.
  Stmt ProducerCopy(const Stmt& s) const {
    auto* c = As<CopyNode>(s);
    if (!c || c->src.buffer->scope != Scope::kGlobal) return s;
    for (auto& [buf, pv] : versioned_) {
      auto it = filling_.find(pv.first);
      if (pv.second == c->dst.buffer && it != filling_.end())
        return AttrStmt(nullptr, kWsCopyBarrierKey, it->second, s, s->span);
    }
    return s;
  }

  // The entries in order; where their stages differ (a loop scope), iteration k runs each entry of stage s on
  // iteration k - s of the loop: the loop runs extent + (max - min stage) times with each entry guarded.
  Stmt Staged(int si, std::vector<Entry>& entries, int r) {
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (auto& e : entries) {
      lo = std::min(lo, e.stage);
      hi = std::max(hi, e.stage);
    }
    if (!entries.empty() && lo != hi) {
      const ScopeSpec& sc = scopes_[si];
      auto* f = As<ForNode>(sc.loop);
      if (!f)
        Fail("role '" + roles_[r].name + "' runs scope '" + sc.id + "' at stages " + std::to_string(lo) + ".." +
             std::to_string(hi) + "; stages are iteration offsets of a serial loop (not of the root or a `while`)");
      Var k = MakeVar(f->var->name + "_staged", f->var->dtype);
      for (auto& e : entries) {
        if (e.let_var) Fail("op binding '" + e.let_var->name + "' in scope '" + sc.id + "' of role '" +
                            roles_[r].name + "', whose entries are at different stages: bind it outside");
        const int64_t off = e.stage - lo;
        Expr it = off ? k - IntImm(k->dtype, off) : Expr(k);
        Stmt body = Substitute(e.stmt, {{f->var.get(), f->min + it}});
        Expr cond = Binary(BinaryOp::kLT, it, f->extent);
        if (off) cond = Binary(BinaryOp::kAnd, Binary(BinaryOp::kGE, Expr(k), IntImm(k->dtype, off)), cond);
        e.stmt = If(cond, body, nullptr, e.span);
      }
      staged_loop_[si] = {k, hi - lo};
    }
    Stmt out;
    for (auto it = entries.rbegin(); it != entries.rend(); ++it)
      out = it->let_var ? Let(it->let_var, it->let_value, out ? out : Seq({}, it->span), it->span)
                        : (out ? Seq({it->stmt, out}, it->span) : it->stmt);
    return out;
  }

  // The scope's loop around role r's program of it.
  Stmt Loop(int si, const Stmt& prog, int r) {
    (void)r;
    const ScopeSpec& sc = scopes_[si];
    if (auto* w = As<WhileNode>(sc.loop)) return While(w->cond, prog, w->span);
    auto* f = As<ForNode>(sc.loop);
    auto staged = staged_loop_.find(si);
    std::map<std::string, Expr> ann;  // a T.Pipelined scope is pipelined by the schedule: a serial loop
    if (staged != staged_loop_.end()) {
      auto [k, extra] = staged->second;
      staged_loop_.erase(staged);
      return For(k, IntImm(k->dtype, 0), f->extent + IntImm(f->extent->dtype, extra), ForKind::kSerial, prog, ann,
                 f->span);
    }
    return For(f->var, f->min, f->extent, ForKind::kSerial, prog, ann, f->span);
  }

  const KernelNode* k_;
  const PassContext& ctx_;
  Span span_;
  int64_t num_warps_ = 0;
  std::vector<Role> roles_;
  std::vector<Pipe> pipes_;
  std::vector<ScopeSpec> scopes_;
  int root_ = -1;
  std::map<const BufferNode*, std::pair<int, Buffer>> versioned_;
  std::map<int64_t, std::pair<int64_t, std::string>> group_nreg_;
  std::map<std::tuple<int, int, bool>, Buffer> counters_;
  std::set<std::string> names_;  // the kernel's buffer names and those made here
  std::function<std::string(const std::string&)> fresh_;
  std::map<int, Expr> bound_;  // pipe -> the version its open span selected
  std::map<int, Expr> filling_;  // pipe -> the full barrier of the version its open acquire selected
  std::map<std::string, std::pair<int, Span>> op_scope_;
  std::set<std::string> placed_;
  std::vector<Stmt> setup_;
  std::vector<std::pair<Var, Expr>> free_lets_;
  std::set<const VarNode*> op_lets_;  // the vars T.ws_op blocks bind
  std::map<int, std::pair<Var, int64_t>> staged_loop_;
};

struct FindSchedule : IRMutator {
  const PassContext& ctx;
  explicit FindSchedule(const PassContext& c) : ctx(c) {}
  Stmt VisitKernel(const Stmt& s, const KernelNode* n) override {
    bool has = false;
    for (Stmt b = n->body; auto* a = As<AttrStmtNode>(b); b = a->body) has |= a->key == kSchedule;
    if (!has) return s;
    if (!ctx.features.wgmma && !ctx.features.tcgen05) {
      if (ctx.info)
        ctx.info->warnings.push_back(
            Loc(n->span) + ": T.annotate_ws_schedule: target " + ctx.target.str() +
            " has no warp specialisation (it needs setmaxnreg and warp-group regions: cuda sm_90a or the tcgen05 "
            "family); the kernel runs as written, unscheduled (a schedule never changes what a kernel computes)");
      return StripIds().VisitStmt(s);
    }
    return Materializer(n, ctx).Run(s);
  }
};

}  // namespace

PrimFunc MaterializeWsSchedule(const PrimFunc& f, const PassContext& ctx) {
  if (!HasIds(f->body)) return f;
  Stmt body = FindSchedule(ctx).VisitStmt(f->body);
  if (HasIds(body)) {  // ids without a schedule: nothing places them, the statements run as written
    body = StripIds().VisitStmt(body);
  }
  return WithBody(f, body);
}

}  // namespace tl
