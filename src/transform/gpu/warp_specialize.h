// Warp specialisation on sm_90a (src/transform/gpu/warp_specialize.cc, docs/warp_specialization.md).
#pragma once
#include <functional>
#include <map>
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
/// The threads of `in` for which `cond` holds, when `cond` is a conjunction (&&) of comparisons (<, <=, >,
/// >=) of the thread index with constants (`tx < 128`, `tx >= 128 && tx < 256`); not ok() otherwise. `is_tx`
/// says which expressions are the thread index (the tl.thread_idx call, a variable bound to it). With
/// `is_uniform` (which expressions every thread of a block evaluates alike), a conjunct that is uniform
/// (`cta_id == 0 and tx < 64`) does not change the range: the branch runs on it in the blocks where the
/// conjunct holds, on no thread elsewhere; `*guarded` is then set (the else branch is no range).
/// `div_vars`: variables bound to the thread index divided by a constant (`warp_idx = tx // 32`), with it;
/// comparisons of those, or of `tx // d` itself, with constants select ranges too (`warp_idx == 1`: 32..63).
ThreadRange ThreadRangeWhere(const Expr& cond, ThreadRange in, const std::function<bool(const Expr&)>& is_tx,
                             const std::function<bool(const Expr&)>& is_uniform = nullptr,
                             bool* guarded = nullptr,
                             const std::map<const VarNode*, int64_t>* div_vars = nullptr);
/// The variables of kernel `k` every thread of a block holds alike: its block indices, and lets
/// (transitively) of such values that read no memory and not the thread index (`cta_id =
/// T.block_rank_in_cluster()`).
std::set<const VarNode*> BlockUniformVars(const KernelNode* k);
/// The threads of `in` outside `then` (an else branch), when they are one range; not ok() otherwise.
ThreadRange ThreadRangeElse(ThreadRange then, ThreadRange in);
/// The variables of `body` bound to the thread index (`tx = T.get_thread_binding()`); with `div_vars`, also
/// those bound to it divided by a constant (`warp_idx = tx // 32`), each with the divisor.
std::set<const VarNode*> ThreadIndexVars(const Stmt& body,
                                         std::map<const VarNode*, int64_t>* div_vars = nullptr);
/// `if (cond) then else` inside the threads `in`, when `cond` selects a range of them (ThreadRangeWhere; `split`
/// false otherwise): the threads each branch runs on (`then_range`; `else_range` not ok() when they are not one
/// range), and the region its tile work is lowered for: its own range where it has tile work and is not all of
/// `in`, else `in`. Tile work is lowered for the branch's threads as in a T.ws block; a UserError at its line
/// where that cannot be done (not whole warp groups, an else branch over two ranges, no named barriers).
struct BranchThreads {
  bool split = false;
  bool guarded = false;  // the condition has a block-uniform conjunct (`cta_id == 0 and tx < 64`)
  ThreadRange then_range, else_range, then_region, else_region;
};
BranchThreads SplitBranches(const IfNode* i, ThreadRange in, const std::set<const VarNode*>& tx_vars,
                            const GpuFeatures& features,
                            const std::set<const VarNode*>* uniform_vars = nullptr,
                            const std::map<const VarNode*, int64_t>* div_vars = nullptr);
/// The first tile work under `s`, or null: tile ops other than those TileOpNode::SelfContained says need no
/// barrier of their threads (single-thread issues, T.wait_wgmma, scalar T.atomic_add), T.Parallel or T.Pipelined
/// loops.
const StmtNode* FirstTileWork(const Stmt& s);

/// Whether `e` reads memory a producer warp group cannot read as the consumers do (anything but global
/// tensors: shared tiles, registers, T.alloc_var values).
bool ReadsOnChip(const Expr& e);
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
