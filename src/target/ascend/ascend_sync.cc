// InsertAscendSync: orders the Ascend core's pipes (docs/ascend.md, "Synchronisation").
//
// The scalar unit issues every instruction in program order to its pipe; each pipe runs its own in order,
// and pipes run concurrently. An instruction on pipe Q that reads what pipe P wrote (or writes what P read
// or wrote) must wait for P: SetFlag<P_Q>(e) queued on P after P's instruction, WaitFlag<P_Q>(e) queued on Q
// before Q's. This pass computes, over the lowered instruction stream, which earlier instructions each one
// depends on across pipes -- per buffer, a compile-time vector clock of what each pipe has issued and what
// each pipe is already known to be ordered after -- and inserts a SetFlag/WaitFlag pair right before the
// dependent instruction only where no earlier pair (directly or through a third pipe) already orders them.
// Loops are analysed with the state their previous iteration leaves (loop-carried dependences: the next
// iteration's copy into a tile the cube still reads), and both ways through an if.
#include <array>
#include <map>
#include <set>

#include "ir/functor.h"
#include "support/error.h"
#include "target/ascend/target.h"

namespace tl {
namespace {

struct OpInfo {
  int pipe;
  std::vector<int> writes, reads;  // argument positions of memory operands
  int scalar_read = -1;  // an operand the scalar unit reads (GetValue) before issuing the instruction
};

const OpInfo* InfoOf(const std::string& op) {
  static const std::map<std::string, OpInfo> t = {
      {"ascend.copy_gm_to_l1", {kMTE2, {0}, {1}}},
      {"ascend.load2d", {kMTE1, {0}, {1}}},
      {"ascend.mmad", {kM, {0}, {0, 1, 2}}},
      {"ascend.fixpipe", {kFIX, {0}, {1}}},
      {"ascend.copy_gm_to_ub", {kMTE2V, {0}, {1}}},
      {"ascend.copy_ub_to_gm", {kMTE3, {0}, {1}}},
      {"ascend.vbin", {kV, {1}, {2, 3}}},
      {"ascend.vscalar", {kV, {1}, {2}}},
      {"ascend.vun", {kV, {1}, {2}}},
      {"ascend.vdup", {kV, {0}, {}}},
      {"ascend.vcast", {kV, {0}, {1}}},
      {"ascend.vcast_rows", {kV, {0}, {1}}},
      {"ascend.vscalar_row", {kV, {1}, {2}, 3}},
      {"ascend.vdup_row", {kV, {0}, {}, 1}},
      {"ascend.vreduce", {kV, {1, 3}, {2}}},
      {"ascend.vcmp", {kV, {1}, {2, 3}}},
      {"ascend.vsel", {kV, {0}, {1, 2, 3}}},
  };
  auto it = t.find(op);
  return it == t.end() ? nullptr : &it->second;
}

using Row = std::array<int64_t, kNumPipes>;

struct State {
  Row issued{};                          // instructions issued so far per pipe (analysis counters)
  std::array<Row, kNumPipes> ordered{};  // ordered[P][Q]: P's instructions up to this count precede Q's next
  std::map<const BufferNode*, std::array<std::pair<int64_t, int64_t>, kNumPipes>>
      last;  // (read, write) per pipe

  static State Merge(const State& a, const State& b) {
    State m = a;
    for (int p = 0; p < kNumPipes; ++p) {
      m.issued[p] = std::max(a.issued[p], b.issued[p]);
      for (int q = 0; q < kNumPipes; ++q) m.ordered[p][q] = std::min(a.ordered[p][q], b.ordered[p][q]);
    }
    for (auto& [buf, row] : b.last) {
      auto& r = m.last[buf];
      for (int p = 0; p < kNumPipes; ++p)
        r[p] = {std::max(r[p].first, row[p].first), std::max(r[p].second, row[p].second)};
    }
    return m;
  }
};

class Sync {
 public:
  // SetFlag<p_q> + WaitFlag<p_q> here: q's next instructions come after everything p issued so far.
  static void Pair(int p, int q, State& st, std::vector<Stmt>* out, const Span& sp) {
    if (out) {
      std::vector<Expr> a = {StringImm(AscendPipeName(p)), StringImm(AscendPipeName(q)), Int(0)};
      out->push_back(Evaluate(Call(DataType::Void(), "ascend.set_flag", a), sp));
      out->push_back(Evaluate(Call(DataType::Void(), "ascend.wait_flag", a), sp));
    }
    st.ordered[p][q] = st.issued[p];
    for (int r = 0; r < kNumPipes; ++r) st.ordered[r][q] = std::max(st.ordered[r][q], st.ordered[r][p]);
  }

  // Returns `s` with the flags it needs; `emit` false only analyses (the state moves on either way).
  Stmt Visit(const Stmt& s, State& st, bool emit, std::set<std::pair<int, int>>* need_log = nullptr) {
    if (!s) return s;
    if (auto* q = As<SeqNode>(s)) {
      std::vector<Stmt> v;
      for (auto& x : q->seq) v.push_back(Visit(x, st, emit, need_log));
      return emit ? Seq(v, q->span) : s;
    }
    if (auto* f = As<ForNode>(s)) {
      // Pairs the body needs only because of what came before the loop (not because of its own previous
      // iteration) are set and waited once, before the loop.
      std::set<std::pair<int, int>> first, steady;
      State once = st;
      Visit(f->body, once, false, &first);  // the first iteration
      State probe = once;
      Visit(f->body, probe, false, &steady);  // an iteration after one of its own
      std::vector<Stmt> pre;
      bool hoisted = false;
      for (auto [p, q] : first)
        if (!steady.count({p, q})) {
          if (need_log) need_log->insert({p, q});
          Pair(p, q, st, emit ? &pre : nullptr, s->span);
          hoisted = true;
        }
      const State before = st;
      if (hoisted) {  // else the first iteration's analysis above started from this same state
        once = st;
        Visit(f->body, once, false);
      }
      State head = State::Merge(before, once);
      Stmt body = Visit(f->body, head, emit, need_log);
      st = State::Merge(before, head);  // zero or more iterations
      if (!emit) return s;
      pre.push_back(For(f->var, f->min, f->extent, f->for_kind, body, f->annotations, f->span));
      return Seq(pre, f->span);
    }
    if (auto* i = As<IfNode>(s)) {
      State a = st, b = st;
      Stmt t = Visit(i->then_case, a, emit, need_log);
      Stmt e = Visit(i->else_case, b, emit, need_log);
      st = State::Merge(a, b);
      return emit ? If(i->cond, t, e, i->span) : s;
    }
    if (auto* l = As<LetNode>(s)) {
      Stmt b = Visit(l->body, st, emit, need_log);
      return emit ? Let(l->var, l->value, b, l->span) : s;
    }
    if (auto* a = As<AttrStmtNode>(s)) {
      Stmt b = Visit(a->body, st, emit, need_log);
      return emit ? AttrStmt(a->node, a->key, a->value, b, a->span) : s;
    }
    if (auto* k = As<KernelNode>(s)) {
      Stmt b = Visit(k->body, st, emit, need_log);
      return emit ? std::make_shared<KernelNode>(k->grid, k->block_vars, k->threads, k->alloc_buffers,
                                                 k->var_inits, b, k->span)
                  : s;
    }
    auto* ev = As<EvaluateNode>(s);
    auto* c = ev ? As<CallNode>(ev->value) : nullptr;
    const OpInfo* info = c ? InfoOf(c->op) : nullptr;
    if (!info) return s;
    auto buf = [&](int i) { return As<BufferLoadNode>(c->args[static_cast<size_t>(i)])->buffer.get(); };
    std::vector<Stmt> pre;
    if (info->scalar_read >= 0) {  // the scalar unit's read first; it precedes everything issued after it
      const OpInfo read{kS, {}, {info->scalar_read}};
      Need(read, buf, st, emit ? &pre : nullptr, s->span, need_log);
      // the scalar unit issues everything after its read: what it waited for precedes all of it
      for (int q = 0; q < kNumPipes; ++q)
        if (!AscendPipeOnCube(q))
          for (int r = 0; r < kNumPipes; ++r)
            st.ordered[r][q] = std::max(st.ordered[r][q], st.ordered[r][kS]);
      for (int r = 0; r < kNumPipes; ++r)
        if (!AscendPipeOnCube(r)) st.ordered[kS][r] = st.issued[kS];
    }
    Need(*info, buf, st, emit ? &pre : nullptr, s->span, need_log);
    if (!emit || pre.empty()) return s;
    pre.push_back(s);
    return Seq(pre, s->span);
  }

  // The flags instruction `info` needs before it; then it is issued.
  template <typename BufOf>
  static void Need(const OpInfo& info_, BufOf buf, State& st, std::vector<Stmt>* pre, const Span& span,
                   std::set<std::pair<int, int>>* need_log) {
    const OpInfo* info = &info_;
    const int q = info->pipe;
    // the pipes whose earlier accesses this instruction conflicts with and that nothing orders before it yet
    auto needed = [&](const State& s) {
      std::vector<int> n;
      for (int p = 0; p < kNumPipes; ++p) {
        if (p == q) continue;
        bool need = false;
        for (int i : info->reads) {
          auto it = s.last.find(buf(i));
          need |= it != s.last.end() && it->second[p].second > s.ordered[p][q];
        }
        for (int i : info->writes) {
          auto it = s.last.find(buf(i));
          need |= it != s.last.end() && std::max(it->second[p].first, it->second[p].second) > s.ordered[p][q];
        }
        if (need) n.push_back(p);
      }
      return n;
    };
    // fewest pairs: first the pipe whose flag also orders the most of the others (a pipe that waited for
    // them)
    for (std::vector<int> n = needed(st); !n.empty(); n = needed(st)) {
      int best = n[0];
      size_t left = n.size();
      for (int p : n) {
        State trial = st;
        Pair(p, q, trial, nullptr, span);
        const size_t l = needed(trial).size();
        if (l < left) best = p, left = l;
      }
      if (need_log) need_log->insert({best, q});
      Pair(best, q, st, pre, span);
    }
    ++st.issued[q];
    for (int i : info->reads) st.last[buf(i)][q].first = st.issued[q];
    for (int i : info->writes) st.last[buf(i)][q].second = st.issued[q];
  }
};

}  // namespace

PrimFunc InsertAscendSync(const PrimFunc& f, const PassContext& ctx) {
  if (ctx.config.test_skip_ascend_sync) return f;  // test hook: the emulator must then report the races
  State st;
  Stmt body = Sync().Visit(f->body, st, true);
  return std::make_shared<PrimFuncNode>(f->name, f->params, body, f->attrs, f->span);
}

}  // namespace tl
