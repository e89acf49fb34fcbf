// Entry point of the emulator (see emulator.h), and the cooperative grid of T.sync_grid.
#include "emulator/emulator.h"

#include <cstring>

#include "emulator/executor.h"
#include "emulator/grid_turns.h"
#include "ir/functor.h"

namespace tl::emu {

// A grid whose blocks meet at T.sync_grid must all be live at once (a GPU launches it cooperatively, every
// block resident): each block is an Executor on a thread of its own, taking turns (grid_turns.h). A block
// runs until it reaches the grid barrier or ends, then hands the turn on; when every block has arrived, the
// barrier's generation moves on and the waiting blocks continue in turn. A block that ends while others wait
// at the barrier leaves them waiting forever on a GPU: reported as a deadlock, and the run stops.
struct GridCoop : GridTurns {
  int64_t arrived = 0;  // at the barrier, this generation
  int64_t gen = 0;
};

void Executor::SyncGrid(const Lanes& act, const Span& span) {
  (void)act;
  if (!coop_) Unsupported("T.sync_grid outside a cooperative run", span);
  GridCoop& G = *coop_;
  std::unique_lock<std::mutex> lk(G.m);
  const int64_t gen = G.gen;
  if (++G.arrived == G.n) {  // the last block: the barrier opens, this block goes on
    G.arrived = 0;
    ++G.gen;
    return;
  }
  G.HandOff(lk, only_block_, [&] { return G.gen != gen; });
}

// A thread-block cluster (T.ClusterKernel; PTX ISA "Cluster of Cooperative Thread Arrays"): its blocks are
// resident at once, so a block may wait for a peer (an mbarrier a peer arrives on remotely, the cluster
// barrier). Clusters run one after another; within one, each block is an Executor on a thread of its own,
// taking turns (grid_turns.h). A block runs until it ends or cannot go on (every fiber of it blocked), then
// hands the turn on. Whatever one block does that another's wait may see (a remote arrival, a cluster barrier
// arrival) moves `progress`; when every live block of the cluster has failed its wait at the same `progress`,
// none ever can: a deadlock.
// Cluster launch control (PTX ISA "clusterlaunchcontrol"): the clusters of the launch in order (x fastest),
// and which have started or been cancelled. Clusters run one after another here, so every cluster after the
// running one has not started: T.clc_try_cancel cancels the first of those not yet cancelled (a GPU may
// cancel any pending one, or fail) and its blocks never run.
struct ClcQueue {
  std::array<int64_t, 3> cdim{1, 1, 1}, grid{1, 1, 1};
  std::vector<bool> taken;  // per cluster: started or cancelled
};

struct ClusterRun : ClusterTurns {
  ClcQueue* queue = nullptr;
  std::vector<Executor*> blocks;       // by rank
  int64_t threads = 0;                 // of the whole cluster: barrier.cluster's expected arrivals
  int64_t cb_arrived = 0, cb_gen = 0;  // the cluster barrier's arrivals in the current generation
};

Executor* Executor::ClusterPeer(int64_t rank, int tid, const char* what) {
  ClusterRun& G = *cluster_;
  if (rank < 0 || rank >= G.n) {
    Report("cluster_rank", tid, [&] {
      return std::string(what) + " names block " + std::to_string(rank) + " of a cluster of " +
             std::to_string(G.n) + " blocks";
    });
    return nullptr;
  }
  if (rank == rank_) return this;
  if (G.done[static_cast<size_t>(rank)]) {
    Report("cluster_exited", tid, [&] {
      return std::string(what) + " reaches block " + std::to_string(rank) +
             " of the cluster after it ended (its shared memory is gone: keep every block of a cluster "
             "alive, "
             "e.g. with T.cluster_sync() at the end, while its peers may still access it)";
    });
    return nullptr;
  }
  Executor* peer = G.blocks[static_cast<size_t>(rank)];
  if (!peer->started_) {
    Report("cluster_not_started", tid, [&] {
      return std::string(what) + " reaches block " + std::to_string(rank) +
             " of the cluster before it started running (its shared memory may not exist yet): meet the "
             "cluster at "
             "T.cluster_sync() first";
    });
    return nullptr;
  }
  return peer;
}

int64_t Executor::ClusterSize() const { return cluster_ ? cluster_->n : 1; }

void Executor::ClusterProgress() {
  if (cluster_) ++cluster_->progress;
}

bool Executor::ClusterStall() {
  if (!cluster_) return false;
  if (!cluster_->Stall(rank_)) return false;
  FiberProgress();  // the peers ran: this block's fibers get another round each
  return true;
}

void Executor::ClusterBarrier(const std::string& op, const Lanes& act) {
  if (!cluster_) Unsupported("the cluster barrier outside a cluster run", stmt_ ? stmt_->span : Span{});
  ClusterRun& G = *cluster_;
  if (cb_pending_.size() != static_cast<size_t>(T_)) cb_pending_.assign(static_cast<size_t>(T_), -1);
  if (op != "tl.cluster_wait") {
    for (int t : act) {
      if (cb_pending_[static_cast<size_t>(t)] >= 0) {
        Report("cluster_barrier", t, [&] {
          return "T.cluster_arrive: thread " + std::to_string(t) +
                 " arrives on the cluster barrier again before waiting for its previous arrival "
                 "(T.cluster_wait)";
        });
        continue;
      }
      cb_pending_[static_cast<size_t>(t)] = G.cb_gen;
      if (++G.cb_arrived == G.threads) {
        G.cb_arrived = 0;
        ++G.cb_gen;
      }
    }
    ClusterProgress();
    FiberProgress();
    return;
  }
  for (int t : act)
    if (cb_pending_[static_cast<size_t>(t)] < 0)
      Report("cluster_barrier", t, [&] {
        return "T.cluster_wait: thread " + std::to_string(t) +
               " waits on the cluster barrier without having arrived (T.cluster_arrive)";
      });
  for (;;) {
    bool ready = true;
    for (int t : act) ready &= cb_pending_[static_cast<size_t>(t)] < G.cb_gen;
    if (ready) break;
    if (InFibers() && !FiberYield()) continue;
    if (!ClusterStall()) {
      Report("deadlock", act.empty() ? 0 : act[0], [&] {
        return "the cluster barrier (T.cluster_sync / T.cluster_wait) is reached by " +
               std::to_string(G.cb_arrived) + " of the " + std::to_string(G.threads) +
               " threads of the cluster; the others never arrive (a block ended or waits elsewhere)";
      });
      break;  // the block goes on, as after any reported deadlock
    }
  }
  for (int t : act) cb_pending_[static_cast<size_t>(t)] = -1;
  ++epoch_;  // the barrier orders the threads' accesses before it against those after it
}

bool Executor::ExecClc(const CallNode* c, const Lanes& act) {
  if (c->op == "tl.st_cluster") {  // (peer element, value, rank): a store into block rank's shared memory
    auto* dst = As<BufferLoadNode>(c->args.at(0));
    TL_ICHECK(dst && dst->buffer->scope == Scope::kShared, "malformed tl.st_cluster");
    TmpScope ts(this);
    Slot* flat = Tmp();
    Slot* v = Tmp();
    Slot* r = Tmp();
    Locate(dst->buffer, dst->indices, act, flat);  // the peer's buffer has this block's shape
    Eval(c->args[1], act, v);
    Eval(c->args[2], act, r);
    for (int t : act) {
      if (flat[t].i < 0) continue;
      Executor* e = cluster_ ? ClusterPeer(r[t].i, t, "T.copy_cluster(..., dst_block=)") : nullptr;
      if (!e) continue;
      Mem& m = e->MemOf(dst->buffer.get());
      e->Write(m, t, flat[t].i, Convert(v[t], c->args[1]->dtype, m.t));
    }
    ClusterProgress();
    return true;
  }
  const bool multicast = c->op == "tl.clc_try_cancel_multicast";
  if (c->op != "tl.clc_try_cancel" && !multicast) return false;
  auto* res = As<BufferLoadNode>(c->args.at(0));
  auto* bar = As<BufferLoadNode>(c->args.at(1));
  TL_ICHECK(res && bar, "malformed ", c->op);
  if (!cluster_) Unsupported("cluster launch control outside a cluster run", stmt_ ? stmt_->span : Span{});
  ClusterRun& G = *cluster_;
  ClcQueue& Q = *G.queue;
  TmpScope ts(this);
  Slot* rf = Tmp();
  Slot* bf = Tmp();
  Locate(res->buffer, res->indices, act, rf, 16 / res->buffer->dtype.bytes());
  Locate(bar->buffer, bar->indices, act, bf);
  const int64_t per = 16 / res->buffer->dtype.bytes();
  for (int t : act) {
    if (rf[t].i < 0 || bf[t].i < 0) continue;
    if (rf[t].i * res->buffer->dtype.bytes() % 16)
      Report("misaligned", t, [&] { return "the cluster launch control response must be 16-byte aligned"; });
    if (clc_failed_)
      Report("clc_after_failure", t, [&] {
        return std::string(
            "T.clc_try_cancel after this block saw one fail: undefined behaviour (PTX ISA "
            "clusterlaunchcontrol.try_cancel); stop asking once a response says not cancelled");
      });
    uint32_t words[4] = {0, 0, 0, 0};
    for (size_t q = 0; q < Q.taken.size(); ++q) {
      if (Q.taken[q]) continue;
      Q.taken[q] = true;
      const int64_t nx = Q.grid[0] / Q.cdim[0], ny = Q.grid[1] / Q.cdim[1], i = static_cast<int64_t>(q);
      words[0] = 1;
      words[1] = static_cast<uint32_t>(i % nx * Q.cdim[0]);
      words[2] = static_cast<uint32_t>(i / nx % ny * Q.cdim[1]);
      words[3] = static_cast<uint32_t>(i / (nx * ny) * Q.cdim[2]);
      break;
    }
    if (!words[0]) clc_failed_ = true;  // (multicast: every block of the cluster observes it)
    const int64_t bar_addr = (bar->buffer->data ? bar->buffer->byte_offset : 0) + bf[t].i * 8;
    for (int64_t r = 0; r < (multicast ? G.n : 1); ++r) {
      Executor* e = multicast ? ClusterPeer(r, t, "T.clc_try_cancel_multicast") : this;
      if (!e) continue;
      if (!words[0]) e->clc_failed_ = true;
      Mem& m = e->MemOf(res->buffer.get());
      TL_ICHECK(m.shared(), "the cluster launch control response is in shared memory");
      // written by the async proxy and ordered by the mbarrier's completion, not by thread t: initialised, no
      // writer
      for (int64_t k = 0; k < per; ++k) {
        m.written[static_cast<size_t>(rf[t].i + k)] = 1;
        m.shadow[static_cast<size_t>(rf[t].i + k)] = Shadow();
      }
      std::memcpy(m.Addr(t, rf[t].i), words, 16);
      e->MbarrierCompleteTx(bar_addr, 16, t,
                            "mbarrier '" + bar->buffer->name + "' of the cluster launch control response",
                            e != this);
    }
  }
  ClusterProgress();
  return true;
}

bool Executor::EvalClc(const CallNode* c, const Lanes& act, Slot* out) {
  int word = -1;
  if (c->op == "tl.clc_is_canceled") word = 0;
  if (c->op == "tl.clc_get_first_ctaid_x") word = 1;
  if (c->op == "tl.clc_get_first_ctaid_y") word = 2;
  if (c->op == "tl.clc_get_first_ctaid_z") word = 3;
  if (word < 0) return false;
  auto* res = As<BufferLoadNode>(c->args.at(0));
  TL_ICHECK(res, "malformed ", c->op);
  const int64_t per = 16 / res->buffer->dtype.bytes();
  TmpScope ts(this);
  Slot* rf = Tmp();
  Locate(res->buffer, res->indices, act, rf, per);
  Mem& m = MemOf(res->buffer.get());
  for (int t : act) {
    out[t].i = 0;
    if (rf[t].i < 0) continue;
    for (int64_t k = 0; k < per; ++k) NoteRead(m, t, rf[t].i + k);
    uint32_t words[4];
    std::memcpy(words, m.Addr(t, rf[t].i), 16);
    out[t].i = word == 0 ? (words[0] & 1) : words[word];
  }
  return true;
}

namespace {

// Runs every cluster of a T.ClusterKernel grid (or of a kernel that uses the cluster calls: clusters of one).
Result RunClusters(const PrimFunc& lowered, const std::vector<void*>& args,
                   const std::map<const VarNode*, double>& syms, const Options& opt,
                   const std::array<int64_t, 3>& cdim, const std::array<int64_t, 3>& grid, int64_t threads) {
  Result result;
  for (int64_t i = 0; i < 3; ++i)
    if (grid[i] % cdim[i])
      throw UserError(ErrorKind::kArgument, "emulator: the grid's " + std::string(1, "xyz"[i]) + " extent " +
                                                std::to_string(grid[i]) +
                                                " is not a multiple of the cluster's " +
                                                std::to_string(cdim[i]) + " (T.ClusterKernel)");
  const int64_t n = cdim[0] * cdim[1] * cdim[2];
  ClcQueue Q;
  Q.cdim = cdim;
  Q.grid = grid;
  Q.taken.assign(static_cast<size_t>(grid[0] / cdim[0] * (grid[1] / cdim[1]) * (grid[2] / cdim[2])), false);
  size_t index = 0;
  for (int64_t cz = 0; cz < grid[2] / cdim[2]; ++cz)
    for (int64_t cy = 0; cy < grid[1] / cdim[1]; ++cy)
      for (int64_t cx = 0; cx < grid[0] / cdim[0]; ++cx) {
        if (Q.taken[index++]) continue;  // cancelled by a T.clc_try_cancel
        Q.taken[index - 1] = true;
        ClusterRun G;
        G.queue = &Q;
        G.blocks.assign(static_cast<size_t>(n), nullptr);
        G.failed.assign(static_cast<size_t>(n), -1);
        std::vector<std::unique_ptr<Executor>> ex;
        for (int64_t r = 0; r < n; ++r) ex.push_back(std::make_unique<Executor>(opt, &result));
        for (int64_t r = 0; r < n; ++r) {
          // rank r: x fastest (%cluster_ctarank)
          const int64_t x = cx * cdim[0] + r % cdim[0], y = cy * cdim[1] + r / cdim[0] % cdim[1],
                        z = cz * cdim[2] + r / (cdim[0] * cdim[1]);
          ex[static_cast<size_t>(r)]->RunInCluster(&G, static_cast<int>(r), (z * grid[1] + y) * grid[0] + x);
          G.blocks[static_cast<size_t>(r)] = ex[static_cast<size_t>(r)].get();
        }
        G.threads = n * threads;
        G.Run(
            n, [&](int64_t r) { ex[static_cast<size_t>(r)]->Run(lowered, args, syms); }, [&](int64_t) {});
      }
  return result;
}

Result RunCooperative(const PrimFunc& lowered, const std::vector<void*>& args,
                      const std::map<const VarNode*, double>& syms, const Options& opt, int64_t blocks) {
  constexpr int64_t kMaxBlocks = 4096;
  if (blocks > kMaxBlocks)
    throw UserError(ErrorKind::kUnsupported,
                    "emulator: a grid of " + std::to_string(blocks) +
                        " blocks meets at T.sync_grid; the emulator "
                        "runs cooperative grids of at most " +
                        std::to_string(kMaxBlocks) +
                        " blocks (a GPU holds far fewer at once: launch one block per SM)");
  Result result;
  GridCoop G;
  G.Run(
      blocks,
      [&](int64_t b) {
        Executor ex(opt, &result);
        ex.RunCooperative(&G, b);
        ex.Run(lowered, args, syms);
      },
      [&](int64_t b) {
        if (G.abort || G.arrived == 0) return;
        // others wait at the grid barrier this block never reaches
        if (++result.total_reports <= opt.max_reports)
          result.reports.push_back(
              {"deadlock",
               "deadlock: block " + std::to_string(b) + " ends while " + std::to_string(G.arrived) +
                   " block(s) wait at T.sync_grid for it (every block must reach the grid barrier)"});
        G.abort = true;
      });
  return result;
}

}  // namespace

Result Run(const PrimFunc& lowered, const std::vector<void*>& args,
           const std::map<const VarNode*, double>& syms, const Options& opt) {
  bool grid_sync = false;
  const KernelNode* kernel = nullptr;
  PostOrderVisitStmt(lowered->body, [&](const Stmt& s) {
    if (auto* k = As<KernelNode>(s)) kernel = k;
    auto* ev = As<EvaluateNode>(s);
    auto* c = ev ? As<CallNode>(ev->value) : nullptr;
    grid_sync |= c && c->op == "tl.sync_grid";
  });
  std::array<int64_t, 3> cdim = ClusterDims(lowered->body);
  bool cluster_ops = false;
  PostOrderVisitStmt(lowered->body, [&](const Stmt& s) {
    auto* ev = As<EvaluateNode>(s);
    auto* c = ev ? As<CallNode>(ev->value) : nullptr;
    if (auto* a = As<AttrStmtNode>(s); a && a->key == "tl.tma_multicast") cluster_ops = true;
    cluster_ops |=
        c && (c->op == "tl.mbarrier_arrive_cluster" || c->op.rfind("tl.clc_", 0) == 0 ||
              c->op == "tl.st_cluster" || c->op == "tl.cluster_sync" || c->op == "tl.cluster_arrive" ||
              c->op == "tl.cluster_arrive_relaxed" || c->op == "tl.cluster_wait");
  });
  if (kernel && (cdim != std::array<int64_t, 3>{1, 1, 1} || cluster_ops)) {
    Result probe;
    std::array<int64_t, 3> grid{1, 1, 1};
    {
      Executor ex(opt, &probe);
      grid = ex.GridShape(lowered, args, syms);
    }
    int64_t threads = 0;
    if (kernel->threads.size() != 1 || !AsConstInt(kernel->threads[0], &threads))
      Unsupported("a cluster kernel's block size must be a constant", kernel->span);
    return RunClusters(lowered, args, syms, opt, cdim, grid, threads);
  }
  if (grid_sync && kernel) {
    // the grid's size: the executor evaluates it (it may read the arguments); one run that only counts blocks
    Result probe;
    Options count = opt;
    int64_t blocks = 1;
    {
      Executor ex(count, &probe);
      blocks = ex.GridBlocks(lowered, args, syms);
    }
    return RunCooperative(lowered, args, syms, opt, blocks);
  }
  Result result;
  Executor ex(opt, &result);
  ex.Run(lowered, args, syms);
  return result;
}

}  // namespace tl::emu
