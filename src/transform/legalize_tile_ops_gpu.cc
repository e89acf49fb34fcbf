// LegalizeTileOpsGPU: copies that cannot use cp.async, fills and tile atomics become T.Parallel
// nests; cp.async-eligible global->shared copies stay ops; pipeline stages are planned. See gpu_passes.h.
#include <algorithm>
#include <set>

#include "arith/simplify.h"
#include "ir/functor.h"
#include "ir/printer.h"
#include "op/copy.h"
#include "layout/fragment.h"
#include "layout/user_layout.h"
#include "transform/gpu/lower_tma.h"
#include "transform/gpu_passes.h"
#include "transform/gpu_util.h"
#include "transform/lower_tile_ops_cpu.h"
#include "transform/materialize_ws_schedule.h"

namespace tl {
namespace {

using namespace gpu_pass;

// Why a global->shared copy cannot use 16-byte cp.async ("" when it can).
std::string AsyncCopyBlocker(const CopyNode* n, const GpuOptions& opt) {
  const Buffer& s = n->src.buffer;
  const Buffer& d = n->dst.buffer;
  if (opt.disable_cp_async) return "cp.async is disabled by the pass config tl.disable_async_copy";
  if (s->dtype != d->dtype)
    return "source and destination dtypes differ (" + s->dtype.str() + " -> " + d->dtype.str() + ")";
  int eb = s->dtype.bytes();
  if (eb > 16 || 16 % eb) return "the element type " + s->dtype.str() + " does not pack into 16-byte chunks";
  int64_t vec = 16 / eb;
  auto sd = TileDims(n->src), dd = TileDims(n->dst);
  if (sd.empty() || dd.empty()) return "the tile is a single element";
  size_t sl = n->src.ranges.size() - 1, dl = n->dst.ranges.size() - 1;
  if (sd.back() != sl || dd.back() != dl)
    return "the innermost tile axis is not the tensors' contiguous axis";
  int64_t ext;
  if (!AsConstInt(Simplify(n->src.ranges[sl].extent), &ext) || ext % vec)
    return "the tile's innermost extent is not a multiple of " + std::to_string(vec) + " elements (16 bytes)";
  int64_t row;
  if (!AsConstInt(Simplify(s->shape.back()), &row))
    return "the row length of '" + s->name +
           "' is symbolic, so 16-byte alignment of its rows cannot be proven";
  if (row % vec)
    return "the row length of '" + s->name + "' (" + std::to_string(row) + ") is not a multiple of " +
           std::to_string(vec) + " elements, so its rows are not 16-byte aligned";
  if (!IsConstInt(Simplify(Mod(n->src.ranges[sl].min, vec)), 0))
    return "the tile's first column (" + PrintExpr(n->src.ranges[sl].min) +
           ") is not provably a multiple of " + std::to_string(vec);
  if (!IsConstInt(Simplify(Mod(n->dst.ranges[dl].min, vec)), 0))
    return "the destination's first column is not 16-byte aligned";
  int64_t cols;
  if (!AsConstInt(Simplify(d->shape.back()), &cols) || cols % vec)
    return "the shared tile's rows are not 16-byte aligned";
  return "";
}

std::string BoxText(const std::vector<int64_t>& box) {
  std::string s;
  for (auto b : box) s += (s.empty() ? "" : "x") + std::to_string(b);
  return s;
}

// A synchronous T.copy into a whole shared tile writes every element of it (out-of-bounds source elements as
// zeros) and reads none: marked for PlanSharedMemory's liveness (`tl.shared_overwrite`), so that the tile's
// bytes can serve another buffer between its last use in a loop iteration and this copy in the next. Marked
// on the targets without async copies (Metal, OpenCL): on CUDA and HIP the loops that matter copy
// asynchronously (and keep the whole-loop rule), and their copy lowerings look for the bare loop nest.
Stmt Overwrites(const CopyNode* c, Stmt lowered) {
  if (c->dst.buffer->scope != Scope::kShared || !c->dst.IsWhole()) return lowered;
  return AttrStmt(c->dst.buffer, "tl.shared_overwrite", Int(1), std::move(lowered), c->span);
}

class Legalizer : public IRMutator {
 public:
  explicit Legalizer(const PassContext& ctx) : ctx_(ctx) {}
  /// Shared tiles with a layout from T.annotate_layout -> the elements it keeps contiguous.
  std::map<const BufferNode*, int64_t> user_contig_;
  std::set<const BufferNode*> plain_;  // PlainSharedTiles
  /// Global tensors bound to run-time addresses (T.make_tensor of a pointer-table element): no tensor map.
  std::set<const BufferNode*> bound_;

  // A pipelined loop's cp.async copies with a fixed source region get `num_stages` rotating
  // buffers: the loop is wrapped in `T.attr(dst, "tl.num_stages", k)` for each destination.
  Stmt VisitFor(const Stmt& s, const ForNode* n) override {
    if (n->for_kind != ForKind::kPipelined) return IRMutator::VisitFor(s, n);
    int64_t stages = 1;
    auto it = n->annotations.find("num_stages");
    if (it != n->annotations.end()) AsConstInt(it->second, &stages);
    Stmt r = IRMutator::VisitFor(s, n);
    if (stages < 2) return r;
    auto* f = As<ForNode>(r);
    std::vector<Stmt> body;
    if (auto* sq = As<SeqNode>(f->body))
      body = sq->seq;
    else
      body.push_back(f->body);
    std::vector<Buffer> staged;
    bool any_tma = false, any_cp_async = false;
    for (auto& st : body) {
      auto* a = As<AttrStmtNode>(st);
      auto* c = a && a->key == "tl.copy_async" ? As<CopyNode>(a->body) : nullptr;
      if (c && !ReadsMemoryRegion(c->src) &&
          std::find(staged.begin(), staged.end(), c->dst.buffer) == staged.end()) {
        staged.push_back(c->dst.buffer);
        (IsConstInt(a->value, 2) ? any_tma : any_cp_async) = true;
      }
    }
    if (any_tma && any_cp_async) {  // one pipeline synchronises one way: its TMA copies use cp.async too
      for (auto& st : body) {
        auto* a = As<AttrStmtNode>(st);
        auto* c = a && a->key == "tl.copy_async" && IsConstInt(a->value, 2) ? As<CopyNode>(a->body) : nullptr;
        if (!c || ReadsMemoryRegion(c->src)) continue;
        std::string why = AsyncCopyBlocker(c, ctx_.opt);
        auto& ch = ctx_.info->choices;  // the copy's "TMA" choice no longer holds
        std::string was =
            Loc(c->span) + ": T.copy " + c->src.buffer->name + " -> " + c->dst.buffer->name + ": TMA (";
        ch.erase(
            std::remove_if(ch.begin(), ch.end(), [&](const std::string& x) { return x.rfind(was, 0) == 0; }),
            ch.end());
        ctx_.info->warnings.push_back(
            Loc(c->span) + ": T.copy " + c->src.buffer->name + " -> " + c->dst.buffer->name +
            " does not use TMA: the T.Pipelined loop at " + Loc(n->span) +
            " also has copies that cannot, and a pipeline uses one kind; " +
            (why.empty() ? "it uses cp.async" : "it is lowered to synchronous loads"));
        ctx_.info->choices.push_back(ctx_.info->warnings.back());
        if (!why.empty()) staged.erase(std::find(staged.begin(), staged.end(), c->dst.buffer));
        st = why.empty() ? AttrStmt(nullptr, "tl.copy_async", Int(1), a->body, a->span)
                         : TileOpToParallelLoops(a->body);
      }
      r = For(f->var, f->min, f->extent, f->for_kind, Seq(body, f->span), f->annotations, f->span);
    }
    for (auto b = staged.rbegin(); b != staged.rend(); ++b)
      r = AttrStmt(*b, "tl.num_stages", IntImm(DataType::Int(32), stages), r, n->span);
    return r;
  }

  // A producer's copy into a pipeline buffer of a warp-specialisation schedule (materialize_ws_schedule.cc):
  // TMA completing on the pipeline's full barrier without a wait (T.tma_copy's form) where the copy can be
  // TMA; otherwise the plain copy, which completes before the producer's arrival.
  Stmt VisitAttr(const Stmt& s, const AttrStmtNode* n) override {
    if (n->key ==
        "tl.copy_multicast") {  // T.copy_cluster(global tile, shared tile, cluster_mask=): TMA or an error
      auto* c = As<CopyNode>(n->body);
      TL_ICHECK(c, "tl.copy_multicast wraps a T.copy");
      PassContext explicit_ctx = ctx_;
      explicit_ctx.opt.disable_tma = false;
      TmaPlan p;
      std::string why = !ctx_.features.clusters
                            ? "clusters need CUDA sm_90 or newer; the target is " + ctx_.features.label
                        : c->src.buffer->scope != Scope::kGlobal || c->dst.buffer->scope != Scope::kShared
                            ? std::string("it copies a global tile into a shared one")
                            : TmaBlocker(c, explicit_ctx, &p, plain_);
      if (!why.empty())
        throw UserError(ErrorKind::kUnsupported,
                        "T.copy_cluster(..., cluster_mask=) is a TMA multicast, and " + why, c->span);
      ctx_.info->choices.push_back(Loc(c->span) + ": T.copy_cluster " + c->src.buffer->name + " -> " +
                                   c->dst.buffer->name + ": TMA multicast to the blocks of a cluster mask (" +
                                   std::to_string(p.panels) + "x cp.async.bulk.tensor." +
                                   std::to_string(p.box.size()) +
                                   "d .multicast::cluster, issued by the mask's lowest rank, " +
                                   std::to_string(p.bytes) + " bytes on each block's mbarrier)");
      return AttrStmt(nullptr, n->key, n->value, AttrStmt(nullptr, "tl.copy_async", Int(2), n->body, n->span),
                      n->span);
    }
    if (n->key != kWsCopyBarrierKey) return IRMutator::VisitAttr(s, n);
    auto* c = As<CopyNode>(n->body);
    TmaPlan p;
    std::string why = !c                   ? "it is not a plain T.copy here"
                      : !ctx_.features.tma ? "the target has no TMA"
                                           : TmaBlocker(c, ctx_, &p, plain_);
    if (!why.empty()) {
      if (c)
        ctx_.info->choices.push_back(Loc(c->span) + ": T.copy " + c->src.buffer->name + " -> " +
                                     c->dst.buffer->name + " (scheduled producer copy): completes before the "
                                     "producer's arrival, not on the pipeline barrier: " + why);
      return VisitStmt(n->body);
    }
    ctx_.info->choices.push_back(Loc(c->span) + ": T.copy " + c->src.buffer->name + " -> " + c->dst.buffer->name +
                                 " (scheduled producer copy): TMA (" + std::to_string(p.panels) +
                                 "x cp.async.bulk.tensor." + std::to_string(p.box.size()) + "d, box " +
                                 BoxText(p.box) + ", " + std::to_string(p.bytes) +
                                 " bytes) completing on the pipeline's full barrier; no wait");
    return std::make_shared<TmaCopyNode>(c->src, c->dst, n->value, false, c->span);
  }

  Stmt VisitTileOp(const Stmt& s) override {
    if (auto* g = As<GemmNode>(s); g && g->k_pack != 1 && ctx_.features.matrix != MatrixUnit::kMfma)
      ctx_.info->warnings.push_back(Loc(g->span) + ": T.gemm k_pack=" + std::to_string(g->k_pack) +
                                    " is an AMD MFMA option; it has no effect on " + ctx_.features.name);
    if (auto* t = As<TmaCopyNode>(s)) {  // T.tma_copy: TMA or an error (lower_tma.cc lowers it)
      if (!ctx_.features.tma)
        throw UserError(
            ErrorKind::kUnsupported,
            "T.tma_copy needs a Hopper target (cuda sm_90 / sm_90a); the target is " + ctx_.features.label,
            t->span);
      PassContext explicit_ctx = ctx_;
      explicit_ctx.opt.disable_tma = false;  // an explicit TMA copy is not subject to tl.disable_tma_lower
      TmaPlan p;
      std::string why = TmaCopyBlocker(*t, explicit_ctx, &p, plain_);
      if (!why.empty())
        throw UserError(ErrorKind::kUnsupported, "T.tma_copy cannot be a TMA copy: " + why, t->span);
      ctx_.info->choices.push_back(
          Loc(t->span) + ": T.tma_copy " + t->src.buffer->name + " -> " + t->dst.buffer->name + ": TMA (" +
          std::to_string(p.panels) + "x cp.async.bulk.tensor." + std::to_string(p.box.size()) + "d, box " +
          BoxText(p.box) + ", " + std::to_string(p.bytes) + " bytes arriving on the given mbarrier; no wait" +
          (p.format == 1
               ? "; fp4 two values a byte in global memory, 16 values in the first 8 bytes of each 16 "
                 "in shared memory (format 16U4_ALIGN16B)"
           : p.format == 2
               ? "; fp6 four values in 3 bytes in global memory, 16 values in the first 12 bytes of "
                 "each 16 in shared memory (format 16U6_ALIGN16B)"
               : "") +
          ")");
      return s;
    }
    if (auto* c = As<CopyNode>(s); c && (c->src.buffer->scope == Scope::kTensorMemory ||
                                         c->dst.buffer->scope == Scope::kTensorMemory)) {
      const bool load =
          c->src.buffer->scope == Scope::kTensorMemory && c->dst.buffer->scope == Scope::kFragment;
      const bool store =
          c->dst.buffer->scope == Scope::kTensorMemory && c->src.buffer->scope == Scope::kFragment;
      if (!load && !store)
        throw UserError(ErrorKind::kUnsupported,
                        "T.copy of tensor memory goes between it and a fragment (tcgen05.ld / st); '" +
                            c->src.buffer->name + "' -> '" + c->dst.buffer->name + "' is not implemented",
                        c->span);
      return s;  // the backend's copy lowering (src/target/cuda/lower_tcgen05.cc), after layout inference
    }
    if (auto* c = As<CopyNode>(s)) {
      bool to_shared = c->src.buffer->scope == Scope::kGlobal && c->dst.buffer->scope == Scope::kShared;
      if (to_shared && ctx_.features.async_copy == AsyncCopy::kNone) {  // nothing to warn about
        ctx_.info->choices.push_back(Loc(c->span) + ": T.copy " + c->src.buffer->name + " -> " +
                                     c->dst.buffer->name + ": synchronous loads (" + ctx_.features.name +
                                     " has no async copy)");
        return Overwrites(c, TileOpToParallelLoops(s));
      }
      bool from_shared = c->src.buffer->scope == Scope::kShared && c->dst.buffer->scope == Scope::kGlobal;
      if (from_shared && bound_.count(c->dst.buffer.get()) && ctx_.features.tma) {
        ctx_.info->choices.push_back(Loc(c->span) + ": T.copy " + c->src.buffer->name + " -> " +
                                     c->dst.buffer->name + ": thread stores (not a TMA store: '" +
                                     c->dst.buffer->name + "' is at an address read from a pointer table)");
      } else if (from_shared && user_contig_.count(c->src.buffer.get()) && ctx_.features.tma) {
        ctx_.info->warnings.push_back(
            Loc(c->span) + ": T.copy " + c->src.buffer->name + " -> " + c->dst.buffer->name +
            " is not a TMA store: '" + c->src.buffer->name +
            "' has a layout from T.annotate_layout, which no TMA swizzle mode reads; "
            "it uses thread stores");
        ctx_.info->choices.push_back(ctx_.info->warnings.back());
      } else if (from_shared && ctx_.features.tma) {
        TmaPlan p;
        std::string why = TmaBlocker(c, ctx_, &p, plain_);
        if (why.empty()) {
          ctx_.info->choices.push_back(Loc(c->span) + ": T.copy " + c->src.buffer->name + " -> " +
                                       c->dst.buffer->name + ": TMA store (" + std::to_string(p.panels) +
                                       "x cp.async.bulk.tensor." + std::to_string(p.box.size()) + "d, box " +
                                       BoxText(p.box) + ", " + std::to_string(p.bytes) +
                                       " bytes, bulk group)");
          return AttrStmt(nullptr, "tl.copy_tma_store", Int(1), s, s->span);
        }
        ctx_.info->choices.push_back(Loc(c->span) + ": T.copy " + c->src.buffer->name + " -> " +
                                     c->dst.buffer->name + ": thread stores (not a TMA store: " + why + ")");
      }
      std::string no_tma;  // sm_90+: why the copy is not TMA
      auto user = to_shared ? user_contig_.find(c->dst.buffer.get()) : user_contig_.end();
      bool hopper = ctx_.features.tma;
      if (to_shared && bound_.count(c->src.buffer.get()) && hopper)
        no_tma = "'" + c->src.buffer->name +
                 "' is at an address read from a pointer table, and TMA tensor maps "
                 "are built on the host from kernel parameters";
      else if (user != user_contig_.end() && hopper)
        no_tma = "'" + c->dst.buffer->name +
                 "' has a layout from T.annotate_layout, which no TMA swizzle mode writes";
      else if (to_shared && ctx_.features.tma) {
        TmaPlan p;
        no_tma = TmaBlocker(c, ctx_, &p, plain_);
        if (no_tma.empty()) {
          ctx_.info->choices.push_back(
              Loc(c->span) + ": T.copy " + c->src.buffer->name + " -> " + c->dst.buffer->name + ": TMA (" +
              std::to_string(p.panels) + "x cp.async.bulk.tensor." + std::to_string(p.box.size()) +
              "d, box " + BoxText(p.box) +
              (p.swizzle ? ", " + std::to_string(p.swizzle) + "B swizzle" : ", no swizzle") + ", " +
              std::to_string(p.bytes) + " bytes on an mbarrier)");
          return AttrStmt(nullptr, "tl.copy_async", Int(2), s, s->span);
        }
      }
      if (to_shared) {
        std::string why = AsyncCopyBlocker(c, ctx_.opt);
        int eb = c->dst.buffer->dtype.bytes();
        if (why.empty() && user != user_contig_.end() && user->second * eb < 16)
          why = "the layout T.annotate_layout gives '" + c->dst.buffer->name + "' keeps " +
                std::to_string(user->second) + " element(s) (" + std::to_string(user->second * eb) +
                " bytes) of a row together, and cp.async writes 16";
        // Not TMA because the user asked (disable_tma, the pass config): silent; otherwise a warning.
        bool asked = c->disable_tma || ctx_.opt.disable_tma;
        if (why.empty()) {
          std::string line = Loc(c->span) + ": T.copy " + c->src.buffer->name + " -> " + c->dst.buffer->name;
          if (!no_tma.empty() && !asked) {
            ctx_.info->warnings.push_back(line + " does not use TMA: " + no_tma + "; it uses cp.async");
            ctx_.info->choices.push_back(ctx_.info->warnings.back());
          } else {
            ctx_.info->choices.push_back(
                line +
                (ctx_.features.async_copy == AsyncCopy::kSynchronous
                     ? ": 16-byte copies into a swizzled LDS tile (tl.cp_async; "
                       "synchronous on HIP, docs/hip.md)"
                 : user != user_contig_.end()
                     ? ": 16-byte cp.async into a shared tile with its T.annotate_layout layout"
                     : ": 16-byte cp.async into a swizzled shared tile") +
                (no_tma.empty() ? "" : " (not TMA: " + no_tma + ")"));
          }
          return AttrStmt(nullptr, "tl.copy_async", Int(1), s, s->span);
        }
        if (!no_tma.empty() && !asked) why = "TMA cannot be used (" + no_tma + ") and " + why;
        ctx_.info->warnings.push_back(Loc(c->span) + ": T.copy " + c->src.buffer->name + " -> " +
                                      c->dst.buffer->name + " does not use cp.async: " + why +
                                      "; it is lowered to synchronous loads");
        ctx_.info->choices.push_back(ctx_.info->warnings.back());
      }
      return TileOpToParallelLoops(s);
    }
    if (auto* a = As<AtomicAddNode>(s); a && a->use_tma) {
      // T.atomic_add(global tile, shared tile, use_tma=True): TMA reductions where TMA can add the tile
      const DataType t = a->dst.buffer->dtype;
      std::string why = !ctx_.features.tma ? "TMA needs sm_90 / sm_90a; the target is " + ctx_.features.label
                        : a->src->buffer->scope != Scope::kShared || a->dst.buffer->scope != Scope::kGlobal
                            ? "it adds a shared tile into global memory only"
                        : !(t == DataType::Float(16) || t == DataType::BFloat16() || t == DataType::Float(32))
                            ? "TMA adds float16, bfloat16 and float32 elements, not " + t.str()
                            : "";
      CopyNode c(*a->src, a->dst, false, a->span);
      TmaPlan p;
      if (why.empty()) why = TmaBlocker(&c, ctx_, &p, plain_);
      if (why.empty()) {
        ctx_.info->choices.push_back(Loc(a->span) + ": T.atomic_add " + a->dst.buffer->name + " += " +
                                     a->src->buffer->name + ": TMA reduction (" + std::to_string(p.panels) +
                                     "x cp.reduce.async.bulk.tensor." + std::to_string(p.box.size()) +
                                     "d .add, box " + BoxText(p.box) + ")");
        return AttrStmt(nullptr, "tl.copy_tma_reduce", Int(1), std::make_shared<CopyNode>(c.src, c.dst, false, c.span),
                        s->span);
      }
      ctx_.info->warnings.push_back(Loc(a->span) + ": T.atomic_add(..., use_tma=True) uses element-wise atomics: " +
                                    why);
      ctx_.info->choices.push_back(ctx_.info->warnings.back());
      return TileOpToParallelLoops(s);
    }
    if (As<FillNode>(s) || As<AtomicAddNode>(s)) {
      if (auto* a = As<AtomicAddNode>(s); a && !a->src) return s;  // a scalar atomic stays a statement
      return TileOpToParallelLoops(s);
    }
    return s;
  }

 private:
  static bool ReadsMemoryRegion(const Region& r) {
    for (auto& rg : r.ranges)
      if (ReadsMemory(rg.min) || ReadsMemory(rg.extent)) return true;
    return false;
  }
  const PassContext& ctx_;
};

}  // namespace

PrimFunc LegalizeTileOpsGPU(const PrimFunc& f, const PassContext& ctx) {
  const KernelNode* k = FindKernel(f->body);
  if (!k) throw UserError(ErrorKind::kSyntax, "kernel '" + f->name + "' has no T.Kernel scope", f->span);
  int64_t T = KernelThreads(k);
  if (T < 1 || T > ctx.features.max_threads)
    throw UserError(ErrorKind::kResource,
                    "a " + ctx.features.name + " block has at most " +
                        std::to_string(ctx.features.max_threads) + " threads; this kernel asks for " +
                        std::to_string(T),
                    k->span);
  ctx.info->threads = T;
  for (const Buffer& b : k->alloc_buffers)  // tensor memory exists on the tcgen05 family only
    if (b->scope == Scope::kTensorMemory && !ctx.features.tcgen05)
      throw UserError(ErrorKind::kUnsupported,
                      "tensor memory (T.alloc_tmem '" + b->name + "') needs the tcgen05 family (cuda -arch=sm_100a / "
                      "sm_103a / sm_110a); the target is " + ctx.features.label,
                      b->span);
  Legalizer leg(ctx);
  leg.plain_ = PlainSharedTiles(k->body);
  PostOrderVisitStmt(k->body, [&](const Stmt& x) {
    auto* a = As<AttrStmtNode>(x);
    if (a && a->key == "tl.buffer_bind" && !ctx.features.int_to_global_pointer)
      throw UserError(ErrorKind::kUnsupported,
                      "T.make_tensor at an address from a pointer table ('" + a->node->name +
                          "') is not supported on " + ctx.features.name +
                          ", whose kernels cannot turn an integer into a global pointer; it "
                          "works on CUDA, HIP and the CPU",
                      a->span);
    if (a && a->key == "tl.buffer_bind") leg.bound_.insert(a->node.get());
    if (a && a->key == "tl.user_layout" && a->node && a->node->scope == Scope::kShared) {
      SharedLayout l = SharedLayoutFromExpr(a->value);
      leg.user_contig_[a->node.get()] = l.contiguous;
      ctx.info->choices.push_back(Loc(a->span) + ": shared tile '" + a->node->name + "' has the " + l.desc +
                                  " from T.annotate_layout (" + std::to_string(l.contiguous) +
                                  " contiguous element(s) per row chunk, " + std::to_string(l.size) +
                                  " elements allocated)");
    }
  });
  return Simplify(WithBody(f, leg.VisitStmt(f->body)));
}

}  // namespace tl
