// Entry point of the emulator (see emulator.h), and the cooperative grid of T.sync_grid.
#include "emulator/emulator.h"

#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>

#include "emulator/executor.h"
#include "ir/functor.h"

namespace tl::emu {

// A grid whose blocks meet at T.sync_grid must all be live at once (a GPU launches it cooperatively, every
// block resident). Here each block is an Executor on an OS thread of its own; exactly one runs at a time (the
// turn), so the run stays deterministic and the shared Result needs no lock. A block runs until it reaches
// the grid barrier or ends, then hands the turn to the next block still running; when every block has
// arrived, the barrier's generation moves on and the waiting blocks continue in turn. A block that ends while
// others wait at the barrier leaves them waiting forever on a GPU: reported as a deadlock, and the run stops.
struct GridCoop {
  std::mutex m;
  std::condition_variable cv;
  int64_t n = 0;        // blocks
  int64_t turn = 0;     // the block allowed to run
  int64_t arrived = 0;  // at the barrier, this generation
  int64_t gen = 0;
  std::vector<bool> done;
  bool abort = false;
  std::exception_ptr err;

  // The next block after b that has not ended (b itself if none other).
  int64_t Next(int64_t b) const {
    for (int64_t d = 1; d <= n; ++d)
      if (!done[static_cast<size_t>((b + d) % n)]) return (b + d) % n;
    return b;
  }
};

namespace {
struct CoopAbort {};  // unwinds a block's thread after another failed
}  // namespace

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
  G.turn = G.Next(only_block_);
  G.cv.notify_all();
  G.cv.wait(lk, [&] { return G.abort || (G.gen != gen && G.turn == only_block_); });
  if (G.abort) throw CoopAbort{};
}

namespace {

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
  G.n = blocks;
  G.done.assign(static_cast<size_t>(blocks), false);
  std::vector<std::thread> threads;
  for (int64_t b = 0; b < blocks; ++b)
    threads.emplace_back([&, b] {
      {
        std::unique_lock<std::mutex> lk(G.m);
        G.cv.wait(lk, [&] { return G.abort || G.turn == b; });
        if (G.abort) {
          G.done[static_cast<size_t>(b)] = true;
          return;
        }
      }
      try {
        Executor ex(opt, &result);
        ex.RunCooperative(&G, b);
        ex.Run(lowered, args, syms);
      } catch (const CoopAbort&) {
      } catch (...) {
        std::lock_guard<std::mutex> lk(G.m);
        if (!G.err) G.err = std::current_exception();
        G.abort = true;
      }
      std::lock_guard<std::mutex> lk(G.m);
      G.done[static_cast<size_t>(b)] = true;
      if (!G.abort && G.arrived > 0) {  // others wait at the grid barrier this block never reaches
        ++result.total_reports;
        if (result.total_reports <= opt.max_reports)
          result.reports.push_back(
              {"deadlock",
               "deadlock: block " + std::to_string(b) + " ends while " + std::to_string(G.arrived) +
                   " block(s) wait at T.sync_grid for it (every block must reach the grid barrier)"});
        G.abort = true;
      }
      G.turn = G.Next(b);
      G.cv.notify_all();
    });
  for (std::thread& t : threads) t.join();
  if (G.err) std::rethrow_exception(G.err);
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
