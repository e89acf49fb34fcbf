// PlanSharedMemory: places every shared buffer of the kernel in one shared byte buffer, with
// liveness-based reuse. Requires thread-level IR whose shared buffers are one-dimensional with
// constant sizes. Produces: a uint8 shared buffer `smem` allocated first in the kernel, and each
// shared buffer replaced everywhere by a view of it at a 16-byte-aligned byte offset, so the
// code generator and the emulator both execute this plan. Also the per-buffer table for the
// user and the compile-time error when the kernel exceeds the target's limit.
#include <algorithm>
#include <functional>
#include <iomanip>
#include <set>
#include <sstream>

#include "ir/functor.h"
#include "ir/printer.h"
#include "transform/gpu_passes.h"

namespace tl {
namespace {

// Shared buffers a statement (an expression) touches.
struct SharedUseVisitor : IRVisitor {
  std::set<const BufferNode*>* o;
  void VisitBuffer(const Buffer& b) override {
    if (b->scope == Scope::kShared) o->insert(b.get());
  }
};
std::set<const BufferNode*> SharedUses(const Stmt& s) {
  std::set<const BufferNode*> out;
  SharedUseVisitor v;
  v.o = &out;
  v.VisitStmt(s);
  return out;
}
std::set<const BufferNode*> SharedUsesExpr(const Expr& e) {
  std::set<const BufferNode*> out;
  if (!e) return out;
  SharedUseVisitor v;
  v.o = &out;
  v.VisitExpr(e);
  return out;
}

// Asynchronous work in a loop body: copies, TMA, mbarriers and async MMAs complete after the statement that
// issues them, so a body's units do not say when their shared writes land.
bool HasAsyncWork(const Stmt& s) {
  bool found = false;
  PostOrderVisitStmt(s, [&](const Stmt& x) {
    auto* ev = As<EvaluateNode>(x);
    auto* c = ev ? As<CallNode>(ev->value) : nullptr;
    if (!c) return;
    const std::string& op = c->op;
    for (const char* k : {"cp_async", "tma", "mbarrier", "wgmma", "tcgen05", "bulk"})
      if (op.find(k) != std::string::npos) found = true;
  });
  return found;
}

// Whether the first access to `b` in `s` (in program order) is inside a `tl.shared_overwrite` of it: a
// statement that writes all of `b` before reading any of it. Any other first access, and any access under a
// condition or a loop that may not run, answers no.
bool FirstTouchOverwrites(const Stmt& s, const BufferNode* b) {
  int verdict = 0;  // 0: not yet touched, 1: overwritten first, -1: touched otherwise first
  std::function<void(const Stmt&)> walk = [&](const Stmt& st) {
    if (!st || verdict) return;
    if (auto* a = As<AttrStmtNode>(st)) {
      if (a->key == "tl.shared_overwrite" && a->node.get() == b) {
        verdict = 1;
        return;
      }
      if (SharedUsesExpr(a->value).count(b)) verdict = -1;
      walk(a->body);
      return;
    }
    if (auto* q = As<SeqNode>(st)) {
      for (auto& x : q->seq) walk(x);
      return;
    }
    if (auto* l = As<LetNode>(st)) {
      if (SharedUsesExpr(l->value).count(b)) verdict = -1;
      walk(l->body);
      return;
    }
    if (auto* f = As<ForNode>(st)) {
      int64_t n = 0;
      if (!AsConstInt(f->extent, &n) || n < 1) {
        if (SharedUses(st).count(b)) verdict = -1;
        return;
      }
      walk(f->body);
      return;
    }
    if (SharedUses(st).count(b)) verdict = -1;  // an `if`, a store, a call, ...
  };
  walk(s);
  return verdict == 1;
}

struct Item {
  Buffer b;
  int64_t bytes;
  int64_t stages = 1;
  std::string shape;  // the tile's shape before flattening
  int first = 1 << 30, last = -1;
  int64_t off = -1;
  int64_t align = 16;  // sm_90: 1024 for tiles of 1 KB or more (wgmma / TMA swizzle atoms)
};

// First-fit by decreasing size: a buffer may share bytes with any buffer whose live range (in
// top-level statements of the kernel body) does not overlap its own.
int64_t Place(std::vector<Item>* items) {
  std::vector<size_t> order(items->size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return (*items)[a].bytes > (*items)[b].bytes; });
  int64_t total = 0;
  std::vector<size_t> placed;
  for (size_t i : order) {
    Item& it = (*items)[i];
    int64_t off = 0;
    bool moved = true;
    while (moved) {
      moved = false;
      for (size_t j : placed) {
        Item& o = (*items)[j];
        bool live_overlap = !(it.last < o.first || o.last < it.first) || it.last < 0 || o.last < 0;
        bool mem_overlap = off < o.off + o.bytes && o.off < off + it.bytes;
        if (live_overlap && mem_overlap) {
          off = (o.off + o.bytes + it.align - 1) / it.align * it.align;
          moved = true;
        }
      }
    }
    it.off = off;
    placed.push_back(i);
    total = std::max(total, off + it.bytes);
  }
  return total;
}

}  // namespace

PrimFunc PlanSharedMemory(const PrimFunc& f, const PassContext& ctx) {
  const KernelNode* k = FindKernel(f->body);
  TL_ICHECK(k, "no kernel");
  std::vector<Item> items;
  for (auto& b : k->alloc_buffers) {
    if (b->scope != Scope::kShared) continue;
    TL_ICHECK(!b->data, "PlanSharedMemory ran twice");
    int64_t n = 0;
    TL_ICHECK(b->shape.size() == 1 && AsConstInt(b->shape[0], &n),
              "shared buffer '" + b->name + "' is not flat");
    Item it;
    it.b = b;
    it.bytes = (n * b->dtype.bytes() + 15) / 16 * 16;
    if (ctx.features.swizzle == SharedSwizzle::kTma && it.bytes >= 1024) it.align = 1024;
    it.shape = std::to_string(n);
    items.push_back(it);
  }
  if (items.empty()) {
    ctx.info->smem_report = "no shared memory\n";
    ctx.info->smem_bytes = 0;
    return f;
  }
  // Liveness at the granularity of the kernel body's top-level statements.
  Stmt body = k->body;
  for (;;) {
    if (auto* l = As<LetNode>(body)) {
      body = l->body;
      continue;
    }
    if (auto* a = As<AttrStmtNode>(body)) {
      auto* tile = As<CallNode>(a->value);
      if (a->key == "tl.shared_align")  // a TMA destination (lower_tma.cc): 128 B or a whole swizzle pattern
        for (auto& it : items)
          if (it.b == a->node) {
            int64_t al = 16;
            AsConstInt(a->value, &al);
            it.align = std::max(it.align, al);
          }
      if (a->key == "tl.shared_tile" && tile && !tile->args.empty())
        for (auto& it : items)
          if (it.b == a->node) {
            AsConstInt(tile->args[0], &it.stages);
            it.shape.clear();
            for (size_t d = 1; d < tile->args.size(); ++d)
              it.shape += (d > 1 ? "x" : "") + PrintExpr(tile->args[d]);
          }
      body = a->body;
      continue;
    }
    break;
  }
  // Liveness over units in program order: the statements of the kernel body, with sequences and the
  // bodies of lets flattened (a let's value is a unit of its own). A warp-specialised split
  // (gpu/warp_specialize.cc) contributes its consumers' statements as units; the producer runs
  // beside them from their start, so what it touches is live from the consumers' first unit to
  // their last use of it (the consumers' waits on its stages order every producer write before the
  // consumers go past that use).
  //
  // Loops and branches are flattened too. The units of an `if` on a block-uniform condition (block indices
  // and kernel parameters only: every thread of the block takes the same branch) follow each other: only one
  // branch runs, so a buffer of one may share bytes with a buffer of the other. A condition that may differ
  // between threads keeps the `if` one unit (both branches may run at once, in different threads). A loop's
  // units are its body's: a buffer used in the loop is live across the whole loop (its value may be carried
  // from one iteration into the next) unless the first unit of the body that touches it begins by overwriting
  // it (`tl.shared_overwrite`, which a whole-tile T.copy and the lowerings' staging tiles carry, see
  // FirstTouchOverwrites): then nothing of it survives an iteration, and it is live only from that unit to
  // its last use in the body. Loops with asynchronous copies, TMA, mbarriers or async MMAs keep the
  // whole-loop rule (their writes land later than their units), as do multi-stage buffers.
  std::vector<Stmt> units;
  struct Producer {
    size_t first, last;  // the consumers' first and last units
    Stmt branch;
  };
  std::vector<Producer> producers;
  struct Loop {
    size_t first, last;  // its body's units
    bool refine;         // synchronous: iteration-local buffers may be found
  };
  std::vector<Loop> loops;
  std::set<const VarNode*> uniform_vars;
  for (auto& v : k->block_vars) uniform_vars.insert(v.get());
  for (auto& p : f->params) uniform_vars.insert(p.var.get());
  auto BlockUniform = [&](const Expr& cond) {
    struct V : IRVisitor {
      const std::set<const VarNode*>* ok_vars;
      bool ok = true;
      void VisitVar(const VarNode* v) override { ok &= ok_vars->count(v) > 0; }
      void VisitLoad(const BufferLoadNode*) override { ok = false; }
      void VisitCall(const CallNode*) override { ok = false; }
    } v;
    v.ok_vars = &uniform_vars;
    v.VisitExpr(cond);
    return v.ok;
  };
  std::function<void(const Stmt&)> flatten = [&](const Stmt& st) {
    if (!st) return;
    if (auto* q = As<SeqNode>(st)) {
      for (auto& x : q->seq) flatten(x);
      return;
    }
    if (auto* l = As<LetNode>(st)) {
      units.push_back(Evaluate(l->value, st->span));
      flatten(l->body);
      return;
    }
    if (auto* i = As<IfNode>(st); i && BlockUniform(i->cond)) {
      units.push_back(Evaluate(i->cond, st->span));
      flatten(i->then_case);
      flatten(i->else_case);
      return;
    }
    if (auto* f = As<ForNode>(st); f && !SharedUses(f->body).empty()) {
      units.push_back(Evaluate(f->extent, st->span));
      const size_t first = units.size();
      flatten(f->body);
      if (units.size() > first) loops.push_back({first, units.size() - 1, !HasAsyncWork(f->body)});
      return;
    }
    // notes on a buffer (its TMA alignment, its tile shape) or the launch (cluster dims), not regions of the code
    if (auto* a = As<AttrStmtNode>(st);
        a && (a->key == "tl.shared_align" || a->key == "tl.shared_tile" || a->key == "tl.cluster_dims")) {
      flatten(a->body);
      return;
    }
    if (auto* a = As<AttrStmtNode>(st); a && a->key == "tl.warp_specialized") {
      auto* i = As<IfNode>(a->body);
      auto* c = i ? As<AttrStmtNode>(i->then_case) : nullptr;
      if (c && c->key == "tl.ws_consumer") {
        size_t first = units.size();
        flatten(c->body);
        if (units.size() == first) units.push_back(Evaluate(Int(0), st->span));
        if (i->else_case) {
          producers.push_back({first, units.size() - 1, i->else_case});
        }
        return;
      }
    }
    units.push_back(st);
  };
  flatten(body);
  std::vector<std::set<const BufferNode*>> unit_uses(units.size());
  for (size_t i = 0; i < units.size(); ++i) {
    unit_uses[i] = SharedUses(units[i]);
    for (auto& it : items)
      if (unit_uses[i].count(it.b.get())) {
        it.first = std::min(it.first, static_cast<int>(i));
        it.last = std::max(it.last, static_cast<int>(i));
      }
  }
  // Loop-carried values: a buffer used in a loop covers the whole loop, unless it is iteration-local there.
  for (const Loop& l : loops)
    for (auto& it : items) {
      size_t touch = l.first;
      while (touch <= l.last && !unit_uses[touch].count(it.b.get())) ++touch;
      if (touch > l.last) continue;  // not used in this loop
      const bool local = l.refine && it.stages == 1 && FirstTouchOverwrites(units[touch], it.b.get());
      if (!local) {
        it.first = std::min(it.first, static_cast<int>(l.first));
        it.last = std::max(it.last, static_cast<int>(l.last));
      }
    }
  for (const Producer& p : producers) {
    const int first = static_cast<int>(p.first), end = static_cast<int>(p.last);
    auto uses = SharedUses(p.branch);
    for (auto& it : items)
      if (uses.count(it.b.get())) {
        // the consumers' last use of it, or (used by the producer alone) their whole run
        const bool consumers_use = it.last >= first && it.first <= end;
        it.first = std::min(it.first, first);
        it.last = std::max(it.last, consumers_use ? std::min(it.last, end) : end);
      }
  }
  // An mbarrier's bytes may not be repurposed without mbarrier.inval (PTX ISA): barriers (the uint64
  // allocations: T.alloc_barrier, TMA and warp-specialisation barriers) live for the whole kernel.
  for (auto& it : items)
    if (it.b->dtype == DataType::UInt(64)) {
      it.first = 0;
      it.last = std::max<int>(static_cast<int>(units.size()) - 1, 0);
    }
  int64_t total = Place(&items);

  std::ostringstream t;
  // columns at least as wide as their longest entry and a space (float4_e2m1fn, long names)
  int wn = 16, ws = 14, wd = 10;
  for (auto& it : items) {
    wn = std::max(wn, static_cast<int>(it.b->name.size()) + 1);
    ws = std::max(ws, static_cast<int>(it.shape.size()) + 1);
    wd = std::max(wd, static_cast<int>(it.b->dtype.str().size()) + 1);
  }
  t << std::left << std::setw(wn) << "buffer" << std::setw(ws) << "shape" << std::setw(wd) << "dtype"
    << std::setw(8) << "stages" << std::right << std::setw(10) << "bytes";
  // sm_90+: how each buffer is aligned (1 KB swizzle atoms; TMA tiles: whole swizzle patterns)
  const bool show_align = ctx.features.swizzle == SharedSwizzle::kTma;
  if (show_align) t << std::setw(8) << "align";
  t << std::setw(10) << "offset"
    << "\n";
  int64_t sum = 0;
  for (auto& it : items) {
    t << std::left << std::setw(wn) << it.b->name << std::setw(ws) << it.shape << std::setw(wd)
      << it.b->dtype.str() << std::setw(8) << it.stages << std::right << std::setw(10) << it.bytes;
    if (show_align) t << std::setw(8) << it.align;
    t << std::setw(10) << it.off << "\n";
    sum += it.bytes;
  }
  int64_t pad = total;  // bytes lost to alignment (TMA / swizzle patterns), when nothing is reused
  for (auto& it : items) pad -= it.bytes;
  t << "total " << total << " bytes (" << sum << " before reuse"
    << (pad > 0 ? ", " + std::to_string(pad) + " of alignment padding" : "") << "), limit "
    << ctx.features.smem_limit << " bytes on " << ctx.features.arch << "\n";
  ctx.info->smem_report = t.str();
  ctx.info->smem_bytes = total;
  if (total > ctx.features.smem_limit)
    throw UserError(ErrorKind::kResource,
                    "kernel '" + f->name + "' needs " + std::to_string(total) + " bytes of " +
                        ctx.features.shared_memory_name + " memory, over the " +
                        std::to_string(ctx.features.smem_limit) + "-byte limit of " + ctx.features.arch +
                        "; reduce the tile sizes or num_stages:\n" + t.str(),
                    k->span);

  Buffer smem = MakeBuffer("smem", DataType::UInt(8), {Int(total)}, Scope::kShared, k->span);
  struct Rebind : IRMutator {
    std::map<const BufferNode*, Buffer> views;
    Buffer smem;
    Buffer VisitBuffer(const Buffer& b) override {
      auto it = views.find(b.get());
      return it == views.end() ? b : it->second;
    }
    Stmt VisitAttr(const Stmt& s, const AttrStmtNode* n) override {  // the liveness marks end here
      if (n->key == "tl.shared_overwrite") return VisitStmt(n->body);
      return IRMutator::VisitAttr(s, n);
    }
    Stmt VisitKernel(const Stmt& s, const KernelNode* n) override {
      Stmt r = IRMutator::VisitKernel(s, n);
      auto* k = As<KernelNode>(r);
      std::vector<Buffer> allocs{smem};
      allocs.insert(allocs.end(), k->alloc_buffers.begin(), k->alloc_buffers.end());
      return std::make_shared<KernelNode>(k->grid, k->block_vars, k->threads, allocs, k->var_inits, k->body,
                                          k->span);
    }
  } rebind;
  rebind.smem = smem;
  for (auto& it : items) rebind.views[it.b.get()] = MakeBufferView(it.b, smem, it.off);
  return WithBody(f, rebind.VisitStmt(f->body));
}

}  // namespace tl
