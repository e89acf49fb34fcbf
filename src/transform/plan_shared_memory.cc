// PlanSharedMemory: byte offsets of the shared buffers with liveness-based reuse, the per-buffer
// footprint table, and the compile-time error when a kernel exceeds the target's limit.
#include <algorithm>
#include <iomanip>
#include <set>
#include <sstream>

#include "ir/functor.h"
#include "transform/cuda_passes.h"

namespace tl {
namespace {

// Shared buffers a statement touches.
std::set<std::string> SharedUses(const Stmt& s) {
  std::set<std::string> out;
  struct V : IRVisitor {
    std::set<std::string>* o;
    void VisitLoad(const BufferLoadNode* n) override {
      if (n->buffer->scope == Scope::kShared) o->insert(n->buffer->name);
      IRVisitor::VisitLoad(n);
    }
    void VisitStore(const StoreNode* n) override {
      if (n->buffer->scope == Scope::kShared) o->insert(n->buffer->name);
      IRVisitor::VisitStore(n);
    }
  } v;
  v.o = &out;
  v.VisitStmt(s);
  return out;
}

}  // namespace

PrimFunc PlanSharedMemory(const PrimFunc& f, CudaCtx* ctx) {
  const KernelNode* k = FindKernel(f->body);
  TL_ICHECK(k, "no kernel");
  struct Item { Buffer b; int64_t bytes; int first = 1 << 30, last = -1; int64_t off = -1; };
  std::vector<Item> items;
  for (auto& b : k->alloc_buffers) {
    if (b->scope != Scope::kShared) continue;
    int64_t n = 0;
    AsConstInt(b->shape[0], &n);
    items.push_back({b, (n * b->dtype.bytes() + 15) / 16 * 16});
  }
  // Liveness at the granularity of the kernel body's top-level statements.
  Stmt body = k->body;
  while (auto* l = As<LetNode>(body)) body = l->body;
  std::vector<Stmt> top;
  if (auto* q = As<SeqNode>(body)) top = q->seq; else top.push_back(body);
  for (size_t i = 0; i < top.size(); ++i) {
    auto uses = SharedUses(top[i]);
    for (auto& it : items)
      if (uses.count(it.b->name)) {
        it.first = std::min(it.first, static_cast<int>(i));
        it.last = std::max(it.last, static_cast<int>(i));
      }
  }
  std::vector<size_t> order(items.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return items[a].bytes > items[b].bytes; });
  int64_t total = 0;
  std::vector<size_t> placed;
  for (size_t i : order) {
    Item& it = items[i];
    int64_t off = 0;
    bool moved = true;
    while (moved) {
      moved = false;
      for (size_t j : placed) {
        Item& o = items[j];
        bool live_overlap = !(it.last < o.first || o.last < it.first) || it.last < 0 || o.last < 0;
        bool mem_overlap = off < o.off + o.bytes && o.off < off + it.bytes;
        if (live_overlap && mem_overlap) {
          off = o.off + o.bytes;
          moved = true;
        }
      }
    }
    it.off = off;
    placed.push_back(i);
    total = std::max(total, off + it.bytes);
  }
  std::ostringstream t;
  t << std::left << std::setw(16) << "buffer" << std::setw(14) << "shape" << std::setw(10) << "dtype" << std::setw(8)
    << "stages" << std::right << std::setw(10) << "bytes" << std::setw(10) << "offset" << "\n";
  int64_t sum = 0;
  for (auto& it : items) {
    auto m = ctx->shared_meta.count(it.b->name) ? ctx->shared_meta[it.b->name] : SharedMeta{"?", it.b->dtype.str(), 1};
    t << std::left << std::setw(16) << it.b->name << std::setw(14) << m.shape << std::setw(10) << m.dtype << std::setw(8)
      << m.stages << std::right << std::setw(10) << it.bytes << std::setw(10) << it.off << "\n";
    sum += it.bytes;
    ctx->smem[it.b->name] = {it.off, it.off + it.bytes};
  }
  t << "total " << total << " bytes (" << sum << " before reuse), limit " << ctx->target.smem_limit << " bytes on "
    << ctx->target.arch << "\n";
  ctx->info->smem_report = t.str();
  ctx->info->smem_bytes = total;
  if (total > ctx->target.smem_limit)
    throw UserError(ErrorKind::kResource,
                    "kernel '" + f->name + "' needs " + std::to_string(total) + " bytes of shared memory, over the " +
                        std::to_string(ctx->target.smem_limit) + "-byte limit of " + ctx->target.arch +
                        "; reduce the tile sizes or num_stages:\n" + t.str(),
                    k->span);
  auto attrs = f->attrs;
  attrs["smem.bytes"] = std::to_string(total);
  for (auto& it : items) attrs["smem.offset." + it.b->name] = std::to_string(it.off);
  return MakePrimFunc(f->name, f->params, f->body, attrs, f->span);
}

}  // namespace tl
