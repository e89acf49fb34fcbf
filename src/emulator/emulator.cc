// Entry point of the emulator (see emulator.h), and the cooperative grid of T.sync_grid.
#include "emulator/emulator.h"

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
