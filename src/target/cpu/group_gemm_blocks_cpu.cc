// GroupGemmBlocksCPU; see group_gemm_blocks_cpu.h.
#include "target/cpu/group_gemm_blocks_cpu.h"

#include <map>
#include <set>

#include "arith/simplify.h"
#include "ir/functor.h"
#include "op/copy.h"
#include "op/gemm.h"
#include "transform/cpu/tile_lowerer.h"

namespace tl {
namespace {

constexpr int64_t kGroup = 2;       // blocks per group along x and along y
constexpr int64_t kMinGroups = 64;  // fewer groups than this would leave cores idle on big hosts
constexpr int64_t kMaxGroupBytes = int64_t(256) << 20;  // codegen_cpu.cc's on-chip limit per block

struct Names : IRVisitor {
  std::set<const VarNode*> vars;
  std::set<const BufferNode*> buffers;
  void VisitVar(const VarNode* v) override { vars.insert(v); }
  void VisitBuffer(const Buffer& b) override { buffers.insert(b.get()); }
};
Names NamesIn(const Stmt& s) {
  Names n;
  n.VisitStmt(s);
  return n;
}
bool NamesVar(const Region& r, const Var& v) {
  Names n;
  for (auto& rg : r.ranges) {
    n.VisitExpr(rg.min);
    n.VisitExpr(rg.extent);
  }
  return n.vars.count(v.get()) != 0;
}

// A statement with some buffers replaced.
struct BufferSwap : IRMutator {
  std::map<const BufferNode*, Buffer> to;
  Buffer VisitBuffer(const Buffer& b) override {
    auto it = to.find(b.get());
    return it == to.end() ? b : it->second;
  }
};
Stmt Replace(const Stmt& s, const std::map<const VarNode*, Expr>& vars,
             const std::map<const BufferNode*, Buffer>& bufs) {
  BufferSwap w;
  w.to = bufs;
  return w.VisitStmt(Substitute(s, vars));
}

int64_t Bytes(const Buffer& b) {
  int64_t n = b->dtype.bits() < 8 ? 1 : b->dtype.bytes();
  for (auto& e : b->shape) {
    int64_t d = 0;
    if (!AsConstInt(e, &d) || d <= 0) return -1;
    n *= d;
  }
  return n;
}

class Grouper : public IRMutator {
 public:
  explicit Grouper(std::vector<std::string>* choices) : choices_(choices) {}

  Stmt VisitKernel(const Stmt& s, const KernelNode* n) override {
    Stmt r = Group(n);
    return r ? r : s;
  }

 private:
  Stmt Group(const KernelNode* n) {
    if (n->grid.size() < 2 || n->block_vars.size() != n->grid.size() || !n->var_inits.empty() ||
        n->alloc_buffers.size() != 3)
      return nullptr;
    int64_t gx = 0, gy = 0;
    if (!AsConstInt(n->grid[0], &gx) || !AsConstInt(n->grid[1], &gy) || gx < kGroup || gy < kGroup)
      return nullptr;
    const int64_t groups = ((gx + kGroup - 1) / kGroup) * ((gy + kGroup - 1) / kGroup);
    if (groups < kMinGroups) return nullptr;
    const Var bx = n->block_vars[0], by = n->block_vars[1];
    // prologue; the K loop; epilogue.
    std::vector<Stmt> items;
    if (auto* seq = As<SeqNode>(n->body))
      items = seq->seq;
    else
      items = {n->body};
    int loop_at = -1;
    for (size_t i = 0; i < items.size(); ++i)
      if (As<ForNode>(items[i])) {
        if (loop_at >= 0) return nullptr;
        loop_at = int(i);
      }
    if (loop_at < 0) return nullptr;
    auto* loop = As<ForNode>(items[loop_at]);
    if (loop->for_kind != ForKind::kSerial && loop->for_kind != ForKind::kPipelined) return nullptr;
    auto* body = As<SeqNode>(loop->body);
    if (!body || body->seq.size() != 3) return nullptr;
    auto* ca = As<CopyNode>(body->seq[0]);
    auto* cb = As<CopyNode>(body->seq[1]);
    auto* g = As<GemmNode>(body->seq[2]);
    if (!ca || !cb || !g || g->clear_accum) return nullptr;
    if (ca->dst.buffer != g->A.buffer) std::swap(ca, cb);
    const Buffer a = g->A.buffer, b = g->B.buffer, c = g->C.buffer;
    if (ca->dst.buffer != a || cb->dst.buffer != b || a == b || a == c || b == c) return nullptr;
    if (ca->src.buffer->scope != Scope::kGlobal || cb->src.buffer->scope != Scope::kGlobal) return nullptr;
    if (c->scope == Scope::kGlobal || c->dtype != DataType::Float(32)) return nullptr;
    for (auto& buf : n->alloc_buffers)
      if (buf != a && buf != b && buf != c) return nullptr;
    // Tiles shared along a row / column of the group.
    if (NamesVar(ca->src, bx) || NamesVar(cb->src, by)) return nullptr;
    // Outside the loop: only the accumulator among the on-chip buffers.
    for (size_t i = 0; i < items.size(); ++i) {
      if (int(i) == loop_at) continue;
      Names u = NamesIn(items[i]);
      if (u.buffers.count(a.get()) || u.buffers.count(b.get())) return nullptr;
    }
    const int64_t ba = Bytes(a), bb = Bytes(b), bc = Bytes(c);
    if (ba < 0 || bb < 0 || bc < 0 || kGroup * (ba + bb) + kGroup * kGroup * bc > kMaxGroupBytes)
      return nullptr;

    // New block indices: group (gxv, gyv); block (m, nn) of it is by = gyv*2 + m, bx = gxv*2 + nn.
    const Var gxv = MakeVar(bx->name, bx->dtype), gyv = MakeVar(by->name, by->dtype);
    auto idx = [&](const Var& gv, int64_t o) {
      return Binary(BinaryOp::kAdd, Binary(BinaryOp::kMul, gv, IntImm(gv->dtype, kGroup)),
                    IntImm(gv->dtype, o));
    };
    auto inside = [&](const Var& gv, int64_t o, int64_t extent) -> Expr {
      if (extent % kGroup == 0) return nullptr;
      return Binary(BinaryOp::kLT, idx(gv, o), IntImm(gv->dtype, extent));
    };
    auto guard = [&](Expr cond, Stmt s) { return cond ? If(cond, s, nullptr, s->span) : s; };
    auto both = [](Expr p, Expr q) -> Expr { return p && q ? Binary(BinaryOp::kAnd, p, q) : p ? p : q; };
    auto copy_of = [&](const Buffer& t, const std::string& suffix) {
      return MakeBuffer(t->name + suffix, t->dtype, t->shape, t->scope, t->span);
    };
    std::vector<Buffer> as, bs, cs, allocs;
    for (int64_t m = 0; m < kGroup; ++m) as.push_back(copy_of(a, "_" + std::to_string(m)));
    for (int64_t j = 0; j < kGroup; ++j) bs.push_back(copy_of(b, "_" + std::to_string(j)));
    for (int64_t m = 0; m < kGroup; ++m)
      for (int64_t j = 0; j < kGroup; ++j)
        cs.push_back(copy_of(c, "_" + std::to_string(m) + std::to_string(j)));
    allocs.insert(allocs.end(), as.begin(), as.end());
    allocs.insert(allocs.end(), bs.begin(), bs.end());
    allocs.insert(allocs.end(), cs.begin(), cs.end());

    // One replica of `s` per block of the group, each under its edge guard.
    auto per_block = [&](const Stmt& s, std::vector<Stmt>* out) {
      for (int64_t m = 0; m < kGroup; ++m)
        for (int64_t j = 0; j < kGroup; ++j) {
          std::map<const VarNode*, Expr> vars{{bx.get(), idx(gxv, j)}, {by.get(), idx(gyv, m)}};
          std::map<const BufferNode*, Buffer> bufs{
              {a.get(), as[m]}, {b.get(), bs[j]}, {c.get(), cs[m * kGroup + j]}};
          out->push_back(guard(both(inside(gyv, m, gy), inside(gxv, j, gx)), Replace(s, vars, bufs)));
        }
    };
    std::vector<Stmt> out, step;
    for (int i = 0; i < loop_at; ++i) per_block(items[i], &out);
    const bool a_first = As<CopyNode>(body->seq[0]) == ca;
    const Stmt copy_a = body->seq[a_first ? 0 : 1], copy_b = body->seq[a_first ? 1 : 0];
    for (int64_t m = 0; m < kGroup; ++m)
      step.push_back(
          guard(inside(gyv, m, gy), Replace(copy_a, {{by.get(), idx(gyv, m)}}, {{a.get(), as[m]}})));
    for (int64_t j = 0; j < kGroup; ++j)
      step.push_back(
          guard(inside(gxv, j, gx), Replace(copy_b, {{bx.get(), idx(gxv, j)}}, {{b.get(), bs[j]}})));
    per_block(body->seq[2], &step);
    out.push_back(For(loop->var, loop->min, loop->extent, loop->for_kind, Seq(step, loop->span),
                      loop->annotations, loop->span));
    for (size_t i = loop_at + 1; i < items.size(); ++i) per_block(items[i], &out);

    std::vector<Expr> grid = n->grid;
    grid[0] = IntImm(n->grid[0]->dtype, (gx + kGroup - 1) / kGroup);
    grid[1] = IntImm(n->grid[1]->dtype, (gy + kGroup - 1) / kGroup);
    std::vector<Var> vars = n->block_vars;
    vars[0] = gxv;
    vars[1] = gyv;
    if (choices_)
      choices_->push_back(cpu_lowering::SpanLine(g->span) +
                          ": T.gemm blocks run in 2x2 groups in lockstep over k (" + std::to_string(groups) +
                          " groups): each copy of an A or B tile from global " + "memory serves two blocks");
    return std::make_shared<KernelNode>(grid, vars, n->threads, allocs, n->var_inits, Seq(out, n->span),
                                        n->span);
  }

  std::vector<std::string>* choices_;
};

}  // namespace

PrimFunc GroupGemmBlocksCPU(const PrimFunc& f, std::vector<std::string>* choices) {
  Stmt body = Grouper(choices).VisitStmt(f->body);
  return body == f->body ? f : WithBody(f, body);
}

}  // namespace tl
