// Warp specialisation on sm_90a (src/transform/cuda/warp_specialize.cc, docs/warp_specialization.md).
#pragma once
#include <functional>
#include <set>
#include <vector>

#include "transform/gpu_passes.h"

namespace tl {

/// AttrStmt key around a warp-specialised region (its value: the consumer thread count T). The
/// emulator runs a kernel holding one with one fiber per warp group, so that a wait in one warp group
/// lets the others run.
extern const char* const kWarpSpecializedKey;
/// AttrStmt key around statements only the first T threads (the consumers) execute.
extern const char* const kWsConsumerKey;
/// AttrStmt key around the consumers' pipeline loop (found again by WsSplitKernel).
extern const char* const kWsPipelineKey;

/// The warp groups a T.ws block runs on (its `tl.warp_specialized` attribute wraps
/// `if (tx // 128 == g0 || tx // 128 == g1 ...)`), and the threads its tile ops are lowered for: the block's
/// warp groups when they are consecutive (threads base .. base + count - 1; count 0 otherwise).
struct WsBlock {
  std::vector<int64_t> groups;
  int64_t base = 0, count = 0;
};
/// The T.ws block `a` marks, or nullopt-like (no groups) when `a` is not one.
WsBlock WsBlockOf(const AttrStmtNode* a);
/// Whether `body` (a T.ws block's) holds work lowered per thread partition: tile ops other than T.tma_copy,
/// T.wait_wgmma (which work per warp group by nature) and scalar T.atomic_add (per thread), T.Parallel or
/// T.Pipelined loops.
bool WsBlockHasTileWork(const Stmt& body);
/// Tile work inside a T.ws block is lowered for the block's warp groups only (their threads, rebased to 0,
/// and their own named barrier). Refused with a UserError at the first such op's line where that cannot be
/// done: warp groups that are not consecutive, a target without named barriers.
void CheckWsBlockOps(const AttrStmtNode* ws, const GpuFeatures& features);
/// A range of the block's threads, [lo, hi).
struct ThreadRange {
  int64_t lo = 0, hi = 0;
  bool ok() const { return hi > lo; }
  bool operator==(const ThreadRange& o) const { return lo == o.lo && hi == o.hi; }
};
/// The threads of `in` for which `cond` holds, when `cond` is a conjunction (&&) of comparisons (<, <=, >, >=)
/// of the thread index with constants (`tx < 128`, `tx >= 128 && tx < 256`); not ok() otherwise. `is_tx` says
/// which expressions are the thread index (the tl.thread_idx call, a variable bound to it).
ThreadRange ThreadRangeWhere(const Expr& cond, ThreadRange in, const std::function<bool(const Expr&)>& is_tx);
/// The threads of `in` outside `then` (an else branch), when they are one range; not ok() otherwise.
ThreadRange ThreadRangeElse(ThreadRange then, ThreadRange in);
/// Whether `e` is the thread index: the tl.thread_idx call, or a variable of `vars` (bound to it).
bool IsThreadIndex(const Expr& e, const std::set<const VarNode*>& vars);
/// Tile work under a branch on the thread index (`if tx < 128:` ... `else:`) is lowered for the branch's threads,
/// as in a T.ws block, when they are whole warp groups other than the whole block. The region of a branch
/// over `r` inside `in` (the enclosing region): `r` itself, `in` when it is the same range, or a UserError at
/// `work`'s line when its threads are not whole warp groups.
ThreadRange BranchRegion(ThreadRange r, ThreadRange in, const StmtNode* work);
/// The first tile work under `s` (see WsBlockHasTileWork), or null.
const StmtNode* FirstTileWork(const Stmt& s);
/// The named barrier of a region of whole warp groups starting at thread `lo`: 8 + its first warp group.
inline int64_t RegionBarrierId(int64_t lo) { return 8 + lo / 128; }

/// The named barrier a T.ws block over `b`'s warp groups synchronises its threads with: 8 + its first warp
/// group (ids 1..7 stay the program's and the automatic split's).
inline int64_t WsBlockBarrierId(const WsBlock& b) { return 8 + b.groups.front(); }
/// AttrStmt key around a T.ws block's lowered body whose barriers are its own: value `list(id, threads)`.
/// InsertBarriers makes the barriers it puts there `bar.sync id, threads` (SyncThreadsToNamedBarrier).
extern const char* const kWsBlockBarrierKey;
/// `s` with each __syncthreads a named barrier `id` over `threads` threads (those under a consumers-only region
/// of the automatic split: that region's).
Stmt SyncThreadsToNamedBarrier(const Stmt& s, int64_t id, int64_t threads);

/// After InsertBarriers: a __syncthreads inside a consumers-only region becomes `bar.sync 1, T`
/// (tl.named_barrier_sync), since the producer warp group never reaches it.
PrimFunc WsNamedBarriers(const PrimFunc& f, const PassContext& ctx);

}  // namespace tl
