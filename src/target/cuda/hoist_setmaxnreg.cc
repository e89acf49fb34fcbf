// HoistSetMaxNregCUDA: setmaxnreg is warp-group-collective and .aligned (PTX ISA, setmaxnreg): all warps of a
// warp group must execute the same instruction. TileLang's warp-specialised Blackwell kernels give each warp
// role its own branch and start every branch with its own T.set_max_nreg:
//
//   if tx < 32:                    # warp 0                  if 0 <= tx < 128: T.set_max_nreg(40, 0)
//       T.set_max_nreg(40, 0)                                 elif 128 <= tx < 256: T.set_max_nreg(224, 1)
//       ...                                                   if tx < 32:
//   elif tx < 64:                  # warp 1          ->           ...
//       T.set_max_nreg(40, 0)                                 elif tx < 64:
//       ...                                                       ...
//   elif tx < 128:                 # warps 2-3                elif tx < 128:
//       T.set_max_nreg(40, 0)                                     pass
//   elif 128 <= tx < 256:          # warps 4-7                elif 128 <= tx < 256:
//       T.set_max_nreg(224, 1)                                    ...
//       ...
//
// Where the branches of a chain on thread ranges split a warp group, and every branch reaching the group starts
// with the same T.set_max_nreg and together they cover it, that call runs once per warp group before the chain
// (the budget each warp ends up with is the one the program asks for). Where they disagree the program is left
// as written (the emulator reports the warps that run different setmaxnreg instructions).
#include "ir/functor.h"
#include "target/cuda/passes.h"
#include "transform/gpu/warp_specialize.h"
#include "transform/gpu_util.h"

namespace tl {
namespace {

using namespace gpu_pass;

struct Branch {
  ThreadRange range;
  Stmt body;
  const IfNode* node = nullptr;  // its `if` (null: the chain's final else)
  int64_t nreg = 0, inc = -1;    // its first statement's T.set_max_nreg (inc -1: none)
};

// The T.set_max_nreg(n, inc) that `body` starts with: sets *n and *inc.
bool LeadingSetMaxNreg(const Stmt& body, int64_t* n, int64_t* inc) {
  Stmt first = body;
  if (auto* q = As<SeqNode>(body); q && !q->seq.empty()) first = q->seq[0];
  auto* ev = As<EvaluateNode>(first);
  auto* c = ev ? As<CallNode>(ev->value) : nullptr;
  return c && c->op == "tl.set_max_nreg" && c->args.size() == 2 && AsConstInt(c->args[0], n) &&
         AsConstInt(c->args[1], inc);
}

Stmt DropFirst(const Stmt& body) {
  auto* q = As<SeqNode>(body);
  if (!q) return Seq({}, body->span);
  return Seq(std::vector<Stmt>(q->seq.begin() + 1, q->seq.end()), body->span);
}

struct Hoister : IRMutator {
  const PassContext& ctx;
  int64_t threads = 0;
  std::set<const VarNode*> tx_vars;
  std::map<const VarNode*, int64_t> div_vars;
  explicit Hoister(const PassContext& c) : ctx(c) {}

  bool IsTx(const Expr& e) const {
    if (auto* c = As<CallNode>(e)) return c->op == "tl.thread_idx";
    auto* v = As<VarNode>(e);
    return v && tx_vars.count(v) > 0;
  }

  // The chain `if c0: b0 elif c1: b1 ... else bn` as ranges of the block's threads, or empty where a condition
  // does not select one.
  std::vector<Branch> Chain(const IfNode* n) const {
    std::vector<Branch> out;
    ThreadRange in = cur_;
    for (const IfNode* i = n; i;) {
      ThreadRange r = ThreadRangeWhere(i->cond, in, [&](const Expr& e) { return IsTx(e); }, nullptr, nullptr,
                                       &div_vars);
      if (!r.ok()) return {};
      out.push_back({r, i->then_case, i});
      if (!i->else_case) break;
      in = ThreadRangeElse(r, in);
      if (!in.ok()) return {};
      if (auto* e = As<IfNode>(i->else_case)) {
        i = e;
        continue;
      }
      out.push_back({in, i->else_case, nullptr});
      break;
    }
    return out;
  }

  ThreadRange cur_;  // the threads that reach the statement being visited, as far as thread-range ifs say

  // The chain's branches visited each for its own threads.
  Stmt Rebuild(const std::vector<Branch>& chain, const std::function<bool(const Branch&)>& moves) {
    Stmt rebuilt;
    const ThreadRange saved = cur_;
    for (size_t k = chain.size(); k-- > 0;) {
      const Branch& b = chain[k];
      cur_ = b.range;
      Stmt body = VisitStmt(moves(b) ? DropFirst(b.body) : b.body);
      rebuilt = b.node ? If(b.node->cond, body, rebuilt, b.node->span) : body;
    }
    cur_ = saved;
    return rebuilt;
  }

  Stmt VisitIf(const Stmt& s, const IfNode* n) override {
    std::vector<Branch> chain = Chain(n);
    if (chain.empty()) return IRMutator::VisitIf(s, n);
    bool any = false;
    for (Branch& b : chain) any |= LeadingSetMaxNreg(b.body, &b.nreg, &b.inc);
    if (chain.size() < 2 || !any) return Rebuild(chain, [](const Branch&) { return false; });
    // per warp group: the budget all its branches start with, where they cover it
    struct Group {
      int64_t nreg = 0, inc = -1, covered = 0, branches = 0;
      bool ok = true;
    };
    std::map<int64_t, Group> groups;
    auto each_group = [](const Branch& b, const std::function<void(int64_t)>& fn) {
      for (int64_t g = b.range.lo / 128; g * 128 < b.range.hi; ++g) fn(g);
    };
    for (const Branch& b : chain)
      each_group(b, [&](int64_t g) {
        Group& gr = groups[g];
        gr.covered += std::min(b.range.hi, g * 128 + 128) - std::max(b.range.lo, g * 128);
        ++gr.branches;
        if (b.inc < 0 || (gr.inc >= 0 && (gr.inc != b.inc || gr.nreg != b.nreg))) gr.ok = false;
        gr.nreg = b.nreg;
        gr.inc = b.inc;
      });
    for (auto& [g, gr] : groups) gr.ok = gr.ok && gr.covered == 128;
    // a branch's call moves only if every warp group it reaches takes it
    auto moves = [&](const Branch& b) {
      bool all = b.inc >= 0;
      each_group(b, [&](int64_t g) { all = all && groups[g].ok; });
      return all;
    };
    for (bool changed = true; changed;) {
      changed = false;
      for (const Branch& b : chain)
        if (!moves(b)) each_group(b, [&](int64_t g) { changed |= std::exchange(groups[g].ok, false); });
    }
    // only where a warp group is split between branches (one branch per group already runs one instruction)
    bool split = false;
    for (auto& [g, gr] : groups) split |= gr.ok && gr.branches > 1;
    if (!split) return Rebuild(chain, [](const Branch&) { return false; });
    Stmt rebuilt = Rebuild(chain, moves);
    std::vector<Stmt> out;
    std::string where;
    for (auto& [g, gr] : groups) {
      if (!gr.ok) continue;
      Expr tx = Call(DataType::Int(32), "tl.thread_idx", {});
      out.push_back(If(Binary(BinaryOp::kAnd, Binary(BinaryOp::kGE, tx, C(g * 128)),
                              Binary(BinaryOp::kLT, tx, C(g * 128 + 128))),
                       Evaluate(Call(DataType::Void(), "tl.set_max_nreg", {C(gr.nreg), C(gr.inc)}), n->span),
                       nullptr, n->span));
      where += (where.empty() ? "" : ", ") + std::string("warp group ") + std::to_string(g) + " (setmaxnreg." +
               (gr.inc ? "inc " : "dec ") + std::to_string(gr.nreg) + ")";
    }
    ctx.info->choices.push_back(Loc(n->span) +
                                ": T.set_max_nreg at the start of branches that split a warp group runs once per "
                                "warp group before them (setmaxnreg is warp-group-collective and .aligned): " +
                                where);
    out.push_back(rebuilt);
    return Seq(out, s->span);
  }
};

}  // namespace

PrimFunc HoistSetMaxNregCUDA(const PrimFunc& f, const PassContext& ctx) {
  const KernelNode* k = FindKernel(f->body);
  if (!k || !ctx.features.setmaxnreg) return f;
  Hoister h(ctx);
  if (k->threads.size() != 1 || !AsConstInt(k->threads[0], &h.threads)) return f;
  h.cur_ = {0, h.threads};
  h.tx_vars = ThreadIndexVars(k->body, &h.div_vars);
  return WithBody(f, h.VisitStmt(f->body));
}

}  // namespace tl
