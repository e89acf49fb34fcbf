// The shared thread-level lowering of every GPU backend (LowerTileOpsGPU, src/transform/gpu/lower_tile_ops.cc):
// the one mutator that turns tile ops and T.Parallel / T.Pipelined loops into thread-level IR
// (docs/thread_ir.md) for what the target's GpuFeatures offer. Its parts live in one file per concept:
//   gpu/lower_tile_ops.cc        entry, op dispatch (per backend kind), facts read from the IR
//   gpu/lower_buffers.cc         buffer mapping: shared flattening + swizzle + stages, fragments to registers
//   gpu/lower_parallel.cc        T.Parallel partitioning by a layout, ownership checks, vectorised access
//   gpu/lower_copy_pipeline.cc   16-byte async copies and T.Pipelined software pipelines
//   gpu/lower_tma.cc             TMA copies and pipelines (features.tma)
//   gpu/warp_specialize.cc       producer / consumer warp groups (features.wgmma)
//   gpu/lower_gemm.cc            the shared T.gemm (per-thread multiply-adds) and operand staging
//   gpu/hopper_wgmma.cc          wgmma plans and the wgmma T.gemm (features.wgmma)
//   gpu/lower_reduce.cc          the shared T.reduce (shuffles / sub-groups + shared memory)
//   gpu/lower_cumsum.cc          the shared T.cumsum and its layout rule
//   gpu/lower_atomic_add.cc      the shared scalar T.atomic_add
//   gpu/mfma_lds.cc              shared-tile layouts of MFMA operands (features.matrix == kMfma)
// A backend's own op lowerings live in its folder and register for its kind (RegisterGpuOpLowering below):
// T.gemm in src/target/cuda/lower_gemm_mma.cc, src/target/hip/lower_gemm_mfma.cc and
// src/target/metal/lower_gemm_simdgroup.cc.
#pragma once
#include <functional>
#include <map>
#include <set>
#include <vector>

#include "arith/simplify.h"
#include "ir/functor.h"
#include "layout/fragment.h"
#include "layout/user_layout.h"
#include "transform/gpu/lower_tma.h"
#include "transform/gpu/warp_specialize.h"
#include "transform/gpu_passes.h"

namespace tl {
namespace gpu_lowering {

class GpuTileLowerer : public IRMutator {
 public:
  explicit GpuTileLowerer(const PassContext& ctx) : ctx_(ctx) {}

  Stmt VisitKernel(const Stmt& s, const KernelNode* n) override;

  Stmt VisitFor(const Stmt& s, const ForNode* n) override;

  Stmt VisitAttr(const Stmt& s, const AttrStmtNode* n) override;
  Stmt LowerWsBlock(const Stmt& s, const AttrStmtNode* n);  // a T.ws block (tl.warp_specialized)
  Stmt InRegion(const Stmt& b, ThreadRange g);                 // b run by the threads of g only
  Stmt LowerBranches(const Stmt& s, const IfNode* i, const BranchThreads& bt);  // `if tx < 128:` with tile ops
  Var tx_kernel_;                     // the block's thread index (tx_ is rebased inside a region)
  ThreadRange region_;                // the threads running what is lowered (InRegion)
  std::set<const VarNode*> tx_vars_;  // variables bound to the thread index (T.get_thread_binding())
  std::map<const VarNode*, int64_t> div_vars_;  // bound to it divided by a constant (warp_idx = tx // 32)
  std::set<const VarNode*> uniform_vars_;  // variables every thread of a block holds alike (BlockUniformVars)

  Stmt VisitTileOp(const Stmt& s) override { return FenceRegionWrites(s, OpScope(LowerTileOp(s), s->span)); }
  Stmt FenceRegionWrites(const Stmt& original, const Stmt& lowered);
  int64_t kernel_threads_ = 0;
  std::set<const BufferNode*> wgmma_operands_;  // shared tiles some T.gemm reads
  bool cp_async_wgmma_ = false;                  // T.ptx_cp_async writes one of them (sm_90a)

  Stmt LowerTileOp(const Stmt& s);
  /// The shared lowering of `n` (kind ""), for a backend's lowering that handles some forms of an op itself.
  Stmt LowerShared(const TileOpNode& n);

  Expr VisitLoad(const Expr& e, const BufferLoadNode* n) override;

  Stmt VisitStore(const Stmt& s, const StoreNode* n) override;

  Expr VisitCall(const Expr& e, const CallNode* n) override;
  Stmt VisitStmtAt(const Stmt& s);  // VisitStmt with stmt_span_ set to the statement's line
  Span stmt_span_;                       // the innermost statement with a source line being lowered

  Stmt VisitStmt(const Stmt& s) override;

  Stmt VisitSeq(const Stmt& s, const SeqNode* n) override;

  // ---- what op lowerings use (each op registers its lowering by name: RegisterGpuOpLowering) ----
  // The thread-level statements of one tile op (or T.Parallel nest), marked as one op for the
  // barrier analysis: writes of one op come from one thread partition.
  Stmt OpScope(const Stmt& body, const Span& sp);

  // Layouts decoded once per distinct value, so equal layouts are one Fragment object.
  const Fragment& Decode(const Expr& e);
  const Fragment& Layout(const BufferNode* b);

  // Statements outside T.Parallel that write global/shared memory run on thread 0 only;
  // in a replicated T.Parallel instance, on replica 0 only.
  Stmt GuardOne(const Stmt& st, const Span& sp);
  /// A statement outside T.Parallel that each thread runs for itself: it reads the thread index, or control flow
  /// on the thread index encloses it. Other scalar stores outside T.Parallel are made by one thread (GuardOne).
  bool PerThread(const Stmt& s) const;
  int thread_conditions_ = 0;  // enclosing `if` / `while` on the thread index (outside T.Parallel)
  // Let variables whose value is the thread's own (it reads the thread index or a value-returning atomic):
  // statements reading them are per thread too.
  std::set<const VarNode*> thread_vars_;
  std::set<const BufferNode*> thread_regs_;  // registers holding each thread's own value (ThreadRegisters)
  Stmt VisitLet(const Stmt& s, const LetNode* n) override;

  Buffer MapBuffer(const Buffer& b);
  int64_t Stages(const Buffer& b) const;

  // Physical index of a shared element: stage offset + swizzled (row, col) of its tile.
  Expr SharedIndex(const Buffer& b, const std::vector<Expr>& idx);

  // `as_value`: the access is read (a thread-dependent index into a small register array may then
  // become a select chain); a store target must stay a plain indexed access.
  Expr MapLoad(const Buffer& b, const std::vector<Expr>& idx, bool as_value = true);

  // The register index of fragment element `idx` in the current T.Parallel instance, with a check
  // (by enumerating threads) that the executing thread holds that element.
  Expr FragmentLocal(const Buffer& b, const std::vector<Expr>& idx);

  void CheckOwner(const Buffer& b, const Fragment& F, const std::vector<Expr>& idx);

  std::vector<std::vector<int64_t>>& Owners(const Buffer& b, const Fragment& F);

  // ---- T.Parallel --------------------------------------------------------------------------
  Stmt LowerParallel(const ForNode* outer);

  // Registers l = lo*V + v (v < V) of a thread hold V consecutive elements of the tile's last axis
  // (pairs in an mma accumulator, vec-wide chunks in a striped layout). When the loop body is one
  // (guarded) global store whose guard is the same for the whole chunk and whose address is
  // V-aligned, the chunk becomes one `kVectorized` loop under the guard, printed as a single wide
  // store. Returns null when that cannot be proven.
  Stmt Vectorized(const Fragment& F, const std::function<Stmt(const Expr&)>& instance, const Span& sp);
  Stmt StoreMatrices(const Fragment& F, const StoreNode* st, const Var& lo, const Var& v, const BoundMap& bm,
                     const Span& sp);

  bool OnlyOwnFragment(const Stmt& body, const std::vector<Var>& vars, const Fragment& F);

  // ---- copies --------------------------------------------------------------------------------
  Stmt AsyncCopy(const CopyNode* n);
  // MFMA targets: an operand tile an MFMA reads down its columns (a K x N B, a K x M A) whose every write is
  // a chunked copy from global memory is stored transposed, k contiguous (SwizzledOffset of [N, K]), so that
  // a lane's k values are one vector read. Its copies move blocks of q k-rows x c columns: q c-element global
  // loads into registers, then c q-element LDS stores (TransposedCopy, gpu/lower_copy_pipeline.cc).
  struct KTransposed {
    int64_t c = 0, q = 0;
  };
  std::map<const BufferNode*, KTransposed> k_transposed_;
  void ScanMfmaKTransposedTiles(const Stmt& body);  // gpu/mfma_lds.cc
  Stmt TransposedCopy(const CopyNode* n, const KTransposed& kt);
  /// The physical offset of (k, n) in such a tile of K rows (gpu/mfma_lds.cc).
  static Expr KTransposedOffset(const Expr& k, const Expr& n, int64_t K, int elem_bytes, int64_t c);
  /// Whether shared tile b (as the program names it) is stored k contiguous (k_transposed_).
  bool KTransposedTile(const BufferNode* b) const { return k_transposed_.count(b) > 0; }

  // ---- T.Pipelined -------------------------------------------------------------------------
  Stmt LowerPipelined(const ForNode* n);

  // ---- TMA (sm_90+, gpu/lower_tma.cc) -------------------------------------------------------
  Stmt TmaCopy(const CopyNode* n);  // a copy outside a pipeline: issue, then wait on its own barrier
  // the tl.tma_load calls (`op`: another load call of the same operands, e.g. CUDA's tl.tma_load_2sm)
  Stmt TmaIssue(const CopyNode* n, const TmaPlan& p, const Expr& bar, const std::string& op = "tl.tma_load");
  // T.tma_copy's producer half: the branch's first thread (where `expect` holds) adds the tile's bytes times
  // `expect_scale` to the barrier's expected transactions, and issues the copies as `load_op` calls
  Stmt TmaCopyProducer(const TmaCopyNode& t, const std::string& load_op, const Expr& expect,
                       int64_t expect_scale);
  int64_t multicast_ = 0;        // T.copy_cluster(..., cluster_mask=): the mask of the copy being lowered
  // Automatic TMA multicast (lower_tma.cc): the kernel's cluster dims, its block variables, and the serial
  // loops under an `if`, a `while` or a loop whose bounds may differ between blocks (the blocks of a cluster
  // may not run them alike: no cluster barrier there)
  std::array<int64_t, 3> cluster_{1, 1, 1};
  std::vector<Var> block_vars_;
  std::set<const StmtNode*> conditional_loops_;
  std::set<const VarNode*> bound_vars_;  // the kernel's loop and let variables (others are its symbols)
  // whether every block of the cluster copies the same tile: its indices read only `loop_var`, the block
  // variables of the grid axes the cluster does not span, and constants
  bool SameInCluster(const Region& r, const Var& loop_var) const;
  // Which of a pipeline's producer copies are multicast to the cluster (all false when the loop may not be:
  // lower_tma.cc), each said in the choice table; `cluster_tail_`: a cluster barrier ends the kernel
  std::vector<bool> MulticastCopies(const ForNode* n, const std::vector<const CopyNode*>& producers);
  bool cluster_tail_ = false;
  bool multicast_used_ = false;  // the kernel has one: its TMA barriers are initialised across the cluster
  Expr TmaPanel(const Region& r, const TmaPlan& p, int64_t q);  // &shared region at panel q (+ alignment fact)
  Stmt LowerPipelinedTma(const ForNode* n, const std::vector<const CopyNode*>& producers,
                         const std::vector<Stmt>& consumers, int64_t stages);
  Buffer TmaBarriers(int64_t count, const Span& sp);  // shared mbarriers, initialised at kernel start
  Buffer TmaCounter(const std::string& base);         // an int32 register variable starting at 0
  // shared -> global: fence, then thread 0 stores and waits (reduce_add: tl.tma_reduce_add, T.atomic_add(use_tma))
  Stmt TmaStore(const CopyNode* n, bool reduce_add = false);
  // ---- warp specialisation (sm_90a, gpu/warp_specialize.cc) -----------------------------------
  const ForNode* WsCandidate(const Stmt& kbody, std::string* why) const;  // the loop that may be split
  Stmt LowerPipelinedWs(const ForNode* n, const std::vector<const CopyNode*>& producers,
                        const std::vector<TmaPlan>& plans, const std::vector<Stmt>& consumers, int64_t stages,
                        int64_t bytes, const std::vector<bool>& multicast);
  Stmt WsSplitKernel(const Stmt& body);  // if (tx < T) { body (consumers) } else { producer }
  Stmt ws_producer_;      // the producer thread's loop (WsSplitKernel adds the loops around it)
  Stmt ws_producer_dec_;  // the producer warp group's setmaxnreg.dec (or null)
  Stmt ws_consumer_inc_;  // the consumers' setmaxnreg.inc (or null)
  // The gemm of a warp-specialised pipeline whose wgmma.wait_group becomes 1 (the consumers overlap
  // consecutive iterations; gpu/warp_specialize.cc), read by LowerGemmWgmma.
  const GemmNode* ws_relaxed_gemm_ = nullptr;

  // ---- T.gemm ------------------------------------------------------------------------------
  Buffer Scratch(const std::string& base, DataType t, int64_t n, Scope sc);
  /// A shared tile of fragment b's shape (row-major) that b's owners (replica 0) write b into; the writes are
  /// appended to `out` (the barrier pass orders later reads of the tile after them).
  Buffer StageFragment(const Buffer& b, const std::string& base, const Span& sp, std::vector<Stmt>* out);
  /// The 8-bit operand `r` (2-D, dims `dims`) stored MN-major ([K, mn]) copied by all threads into a new
  /// K-major [mn, K] shared tile, whose region is returned; the copy is appended to `out`.
  Region KMajorCopy(const Region& r, const std::vector<size_t>& dims, int64_t mn, int64_t K,
                    const std::string& base, const Span& sp, std::vector<Stmt>* out);


  const PassContext& ctx_;
  std::multimap<uint64_t, std::pair<Expr, Fragment>> decoded_;
  std::map<const BufferNode*, const Fragment*> layout_;
  std::map<const BufferNode*, int64_t> stages_;
  // MFMA targets: 16-bit shared operand tiles whose rows are k (a K x N B, a K x M A), swizzled for
  // their column reads (MfmaKRowsOffset) instead of the 16-byte-chunk-per-row XOR.
  std::map<const BufferNode*, bool> k_rows_;
  std::set<const BufferNode*> plain_shared_;  // row-major whatever the swizzle (PlainSharedTiles)
  // 16-bit tensor memory holding one value a 32-bit column (TileOpNode::UnpackedTensorMemory)
  std::set<const BufferNode*> tmem_unpacked_;
  // Shared tiles with a layout from T.annotate_layout (src/layout/user_layout.h): SharedIndex maps
  // through it and the tile occupies its physical size.
  std::map<const BufferNode*, SharedLayout> user_shared_;
  // MFMA targets: 16-bit epilogue tiles written only from an MFMA accumulator and read only by copies to
  // global memory; their chunks' 8-byte halves swap in alternate groups of 8 rows (MfmaHalfSwapOffset).
  std::set<const BufferNode*> half_swap_;
  void ScanMfmaHalfSwapTiles(const Stmt& body);  // src/transform/gpu/mfma_lds.cc
  /// The LDS elements of shared buffer b of n logical elements (more where its rows are padded: HIP).
  int64_t PaddedSharedSize(const Buffer& b, int64_t n);
  /// Whether b (a shared tile, or its flattened buffer) is in half_swap_.
  bool HalfSwappedTile(const BufferNode* b) const;
  int64_t op_count_ = 0;
  Var tx_;
  BoundMap kernel_bounds_;  // tx and the block indices, for simplifying with what the kernel knows
  int64_t T_ = 0;
  std::map<const BufferNode*, Buffer> bmap_;
  std::vector<Buffer> extra_;
  std::map<const BufferNode*, Expr> stage_;
  std::map<const BufferNode*, std::vector<std::vector<int64_t>>> owners_;
  // Fragments a T.Parallel nest reads where their owners do not run the reading iterations: staged in a shared
  // tile of the fragment's shape (StageForeignFragments), which the nest's loads read instead.
  std::map<const BufferNode*, Buffer> fragment_stage_;
  /// Stages every fragment that `body` (a nest partitioned by F over `vars`) only reads, at an index some
  /// iteration's thread does not hold; the owners' writes are appended to `out`.
  void StageForeignFragments(const Stmt& body, const std::vector<Var>& vars, const Fragment& F, const Span& sp,
                             std::vector<Stmt>* out);
  const Fragment* cur_loop_ = nullptr;
  std::vector<Expr> cur_idx_;
  int64_t cur_loc_ = 0;
  Expr cur_loc_expr_;  // the loop var when the instance is emitted as one unrolled loop
  Expr cur_valid_;
  Span cur_span_;
  int loop_depth_ = 0;                              // enclosing serial loops
  std::map<const BufferNode*, int64_t> tma_align_;  // TMA destination (flat) -> byte alignment
  std::vector<Stmt> tma_inits_;                     // mbarrier inits, run by thread 0 at kernel start
  std::vector<std::pair<Buffer, Expr>> tma_var_inits_;
  const ForNode* ws_candidate_ = nullptr;  // the T.Pipelined loop to warp-specialise if it is TMA
  std::string ws_why_;                     // why no loop may be (when a TMA pipeline is not split)
  // The lets at the top of a one-stage warp-specialised loop's body (a paged KV copy's page read from the
  // block table): the producer computes them again around its copies.
  std::vector<const LetNode*> ws_lets_;
  bool ws_reg_alloc_ = true;               // setmaxnreg (off: T.disable_warp_group_reg_alloc)
  bool ws_done_ = false;                   // the kernel was split: T_ + 128 threads
  int64_t ws_leader_ = 0;  // the thread that issues single-thread work: the first of an enclosing T.ws block
  // ws_leader_ is a thread of every enclosing branch on the thread index (their ranges are known); else a
  // lowering that must be issued by one thread of the branch cannot name it
  bool leader_in_branch_ = true;
  ThreadRange branch_range_;  // the threads that reach the statement being lowered, where known
  // in an else branch that is no one range: the then branch's threads, which branch_range_ then includes but
  // which do not reach the statement (a nested branch on threads outside them is known again)
  ThreadRange branch_excluded_;
};

using GpuOpLowering = std::function<Stmt(GpuTileLowerer&, const TileOpNode&)>;
/// Registers the lowering of the tile op named `op` (TileOpNode::op) for the GPU backend `kind`
/// (Target::kind), from the file that implements it: a backend's own lowerings live in its folder
/// (src/target/<kind>/). With kind "" it is the shared lowering, which every GPU backend without one of its
/// own uses. `where`: what of the backend it needs (an arch, a feature), said where a target without the
/// lowering is refused.
void RegisterGpuOpLowering(const std::string& op, GpuOpLowering f, const std::string& kind = "",
                           const std::string& where = "");
/// The kinds that have a lowering of `op` ("" for the shared one), sorted.
std::vector<std::string> GpuOpLoweringKinds(const std::string& op);
struct GpuOpLoweringRegistrar {
  GpuOpLoweringRegistrar(const std::string& op, GpuOpLowering f, const std::string& kind = "",
                         const std::string& where = "") {
    RegisterGpuOpLowering(op, std::move(f), kind, where);
  }
};

}  // namespace gpu_lowering
}  // namespace tl
