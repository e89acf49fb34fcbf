// Internal to the emulator: the lockstep (SIMT) executor of one kernel. Every expression is
// evaluated for a list of active threads of the block at once; `If` splits that list, loops run
// while any thread still iterates, and barriers/warp collectives check the list they are reached
// with. executor.cc holds control flow, expressions and memory checks; intrinsics.cc holds the
// thread-level builtins (barrier, cp.async, ldmatrix, mma.sync, shfl, atomics, math).
#pragma once
#include <functional>
#include <array>
#include <cstring>
#include <deque>
#include <memory>
#include <unordered_map>
#include <vector>

#include "emulator/emulator.h"
#include "emulator/numeric.h"

namespace tl::emu {

/// IR outside the thread-level contract: a UserError(kUnsupported) prefixed "emulator: ".
[[noreturn]] void Unsupported(const std::string& what, const Span& span = {});

/// Active thread ids (threadIdx.x) of the block, ascending.
using Lanes = std::vector<int>;

/// Race-detection state of one shared-memory element within the current barrier epoch.
struct Shadow {
  int32_t w_epoch = 0, w_tid = -1;  // last write; w_tid -2: several atomic writers
  int32_t r_epoch = 0, r_tid = -1;  // last read; r_tid -2: several readers
  int32_t reported_epoch = 0;       // a race on this element was reported in this epoch
  bool w_atomic = false;
};

/// Storage of one buffer: global (host memory), shared (one copy per block) or local (one copy
/// per thread, thread-major).
struct Mem {
  const BufferNode* buf = nullptr;
  DataType t;
  int esize = 0;
  std::vector<int64_t> shape;  // global: full shape; shared/local: {n}
  int64_t n = 0;               // elements in one copy
  uint8_t* data = nullptr;
  std::vector<uint8_t> own;
  std::vector<uint8_t> written;  // shared: n flags; local: T*n flags
  std::vector<Shadow> shadow;    // shared only
  std::vector<int32_t> pending;  // local: in-flight wgmma ops writing (thread, element) (intrinsics_hopper)
  // shared: the last generic-proxy writer of each element (tid + 1, 0: none) and that thread's count of
  // fence.proxy.async at the write; an async-proxy read (wgmma) of an unfenced write is reported
  std::vector<int32_t> proxy_writer, proxy_fences;
  bool global() const { return buf->scope == Scope::kGlobal; }
  /// Thread-private storage with nothing in flight (no wgmma writing it, no proxy tracking): an access
  /// needs only its written flag.
  bool plain_local() const { return buf->scope != Scope::kShared && pending.empty() && proxy_writer.empty(); }
  bool shared() const { return buf->scope == Scope::kShared; }
  uint8_t* Addr(int tid, int64_t flat) {
    return data + ((shared() || global() ? 0 : tid * n) + flat) * esize;
  }
};

/// A cp.async in flight: its bytes are captured at issue and land in shared memory at the wait
/// that completes its group.
struct AsyncCopy {
  Mem* dst;
  int64_t dst_flat;
  int nbytes;
  bool zero_fill;
  std::array<uint8_t, 16> bytes;
  const StmtNode* stmt;
};
struct AsyncState {
  std::vector<AsyncCopy> open;                   // not yet committed
  std::deque<std::vector<AsyncCopy>> committed;  // oldest first
};

/// A cooperative grid (T.sync_grid): one OS thread per block, one running at a time; a block that reaches the
/// grid barrier hands the turn on until every block has arrived (emulator.cc).
struct GridCoop;
/// The blocks of one thread-block cluster (T.ClusterKernel): one OS thread per block, one running at a time;
/// a block that cannot go on (an mbarrier wait, the cluster barrier) hands the turn to a peer (emulator.cc).
struct ClusterRun;

class Executor {
 public:
  Executor(const Options& opt, Result* result) : opt_(opt), res_(result) {}
  void Run(const PrimFunc& f, const std::vector<void*>& args, const std::map<const VarNode*, double>& syms);
  /// The number of blocks of the kernel's grid for these arguments (nothing runs).
  int64_t GridBlocks(const PrimFunc& f, const std::vector<void*>& args,
                     const std::map<const VarNode*, double>& syms) {
    count_blocks_ = true;
    Run(f, args, syms);
    return counted_blocks_;
  }
  /// The kernel's grid extents (x, y, z) for these arguments (nothing runs).
  std::array<int64_t, 3> GridShape(const PrimFunc& f, const std::vector<void*>& args,
                                   const std::map<const VarNode*, double>& syms) {
    count_blocks_ = true;
    Run(f, args, syms);
    return counted_grid_;
  }
  /// Runs one block (flattened index `block`) of a cooperative grid.
  void RunCooperative(GridCoop* coop, int64_t block) {
    coop_ = coop;
    only_block_ = block;
  }
  /// Runs the block of rank `rank` (flattened grid index `block`) of a cluster.
  void RunInCluster(ClusterRun* cluster, int rank, int64_t block) {
    cluster_ = cluster;
    rank_ = rank;
    only_block_ = block;
  }

  // ---- used by intrinsics.cc ---------------------------------------------------------------
  void Eval(const Expr& e, const Lanes& act, Slot* out);
  /// Evaluates the indices of a memory operand / load / store and locates the element for each
  /// lane of `act`; flat[t].i is the flat element index, -1 where the access is out of bounds
  /// (reported). `count` consecutive elements starting there must be in bounds.
  void Locate(const Buffer& b, const std::vector<Expr>& indices, const Lanes& act, Slot* flat,
              int64_t count = 1);
  Slot Read(Mem& m, int tid, int64_t flat, bool atomic = false) {
    NoteRead(m, tid, flat, atomic);
    return LoadScalar(m.Addr(tid, flat), m.t);
  }
  void Write(Mem& m, int tid, int64_t flat, Slot v, bool atomic = false) {
    NoteWrite(m, tid, flat, atomic);
    StoreScalar(m.Addr(tid, flat), m.t, v);
  }
  /// Race and initialisation bookkeeping of a raw (byte-level) access to one element. The common case, a
  /// thread's own register already written, is decided inline.
  void NoteRead(Mem& m, int tid, int64_t flat, bool atomic = false) {
    if (m.global()) return;
    if (m.plain_local() && m.written[static_cast<size_t>(tid * m.n + flat)]) return;
    NoteReadSlow(m, tid, flat, atomic);
  }
  /// The raw values of N consecutive elements (of E's size) of thread `tid`'s buffer `m` from element `flat`,
  /// each access checked as by NoteRead (for a register run already written: one test for the run).
  template <int N, typename E>
  void ReadLocalRun(Mem& m, int tid, int64_t flat, E (&out)[N]) {
    const uint8_t* w = m.written.data() + (m.shared() ? flat : tid * m.n + flat);
    bool all = m.plain_local();
    for (int i = 0; i < N; ++i) all &= w[i] != 0;
    if (!all)
      for (int i = 0; i < N; ++i) NoteRead(m, tid, flat + i);
    std::memcpy(out, m.Addr(tid, flat), sizeof(out));
  }
  /// The same for a write (NoteWrite per element unless the buffer is a plain register run).
  template <int N, typename E>
  void WriteLocalRun(Mem& m, int tid, int64_t flat, const E (&in)[N]) {
    if (m.plain_local())
      std::memset(m.written.data() + tid * m.n + flat, 1, N);
    else
      for (int i = 0; i < N; ++i) NoteWrite(m, tid, flat + i);
    std::memcpy(m.Addr(tid, flat), in, sizeof(in));
  }
  /// `init` false: a race check only (a cp.async issued but not landed yet).
  void NoteWrite(Mem& m, int tid, int64_t flat, bool atomic = false, bool init = true) {
    if (m.global()) return;
    if (m.plain_local()) {
      if (init) m.written[static_cast<size_t>(tid * m.n + flat)] = 1;
      return;
    }
    NoteWriteSlow(m, tid, flat, atomic, init);
  }
  /// Bank accounting (Result::banks) of one shared-memory instruction: lane t of `act` accesses `bytes`
  /// bytes at element flat[t].i of `m` (skipped where negative). Nothing for other memories.
  void NoteBanks(const Mem& m, const Lanes& act, const Slot* flat, int64_t bytes, bool write);
  Mem& MemOf(const BufferNode* b);
  void BindBuffer(const AttrStmtNode* a, const Lanes& act);  // tl.buffer_bind: a tensor at a run-time address
  /// Records a finding; `what()` builds the detail text only when the report is kept.
  template <typename F>
  void Report(const char* kind, int tid, F&& what) {
    if (++res_->total_reports <= opt_.max_reports) Push(kind, tid, what());
  }
  /// A read of tensor memory nothing has written ("uninitialized"), kept unless emulator.check_uninit is off;
  /// such cells hold all-ones bits either way (NaN as f32 / f16), so a value that reaches an output shows.
  template <typename F>
  void ReportUninit(int tid, F&& what) {
    if (opt_.check_uninit) Report("uninitialized", tid, std::forward<F>(what));
  }
  void Push(const char* kind, int tid, const std::string& what);
  Slot* Tmp();  // scratch of T slots, released by TmpMark/TmpRelease
  size_t TmpMark() const { return tmp_top_; }
  void TmpRelease(size_t mark) { tmp_top_ = mark; }
  /// Warps of `act` that are not fully active are reported (inactive_lanes, naming `op`) and
  /// removed; returns the threads of the complete warps.
  /// With `partial_ok`, the lanes a block of fewer threads does not have (the last warp of a block whose size
  /// is not a multiple of 32) count as exited: shfl.sync / vote.sync wait for the member lanes that have not
  /// exited (PTX ISA, sm_70+), so such a warp is complete when every lane it has executes the operation.
  Lanes FullWarps(const Lanes& act, const char* op, bool partial_ok = false);
  /// The same for AMD's 64-lane waves (intrinsics_hip.cc).
  Lanes FullWaves64(const Lanes& act, const char* op);

  int T() const { return T_; }
  int64_t& lane_ops() { return res_->lane_ops; }

  // intrinsics.cc
  bool ExecIntrinsic(const CallNode* c, const Lanes& act);       // void builtins; false if not one
  bool ExecMetalIntrinsic(const CallNode* c, const Lanes& act);  // intrinsics_metal.cc
  bool ExecMetalCoop(const CallNode* c, const Lanes& act);       // intrinsics_metal.cc (Metal 4)
  void EvalCall(const CallNode* c, const Lanes& act, Slot* out);
  bool EvalSubgroup(const CallNode* c, const Lanes& act, Slot* out);  // OpenCL: intrinsics_opencl.cc

 private:
  struct Binding {
    bool uniform = true;
    Slot u{};
    std::vector<Slot> v;
  };
  /// `e` has the same value in every lane and no per-lane effect (evaluated once where it is an index).
  bool LaneInvariant(const Expr& e) const;
  void NoteReadSlow(Mem& m, int tid, int64_t flat, bool atomic);
  void NoteWriteSlow(Mem& m, int tid, int64_t flat, bool atomic, bool init);
  void RunBlock(const KernelNode* k, const std::array<int64_t, 3>& block);
  void Exec(const Stmt& s, const Lanes& act);
  void ExecFor(const ForNode* n, const Lanes& act);
  void ExecStore(const StoreNode* n, const Lanes& act);
  void EvalBinary(const BinaryNode* b, const Lanes& act, Slot* out);
  void EvalLoad(const BufferLoadNode* l, const Lanes& act, Slot* out);
  Binding& Bind(const VarNode* v);
  void BindUniform(const VarNode* v, Slot s) {
    auto& b = vars_[v];
    b.uniform = true;
    b.u = s;
  }
  int64_t HostInt(const Expr& e);

  // intrinsics.cc
  void Barrier(const Lanes& act);
  void CpAsync(const CallNode* c, const Lanes& act);
  void CpAsyncWait(int64_t n, const Lanes& act);
  void LandAsyncCopy(int t, const AsyncCopy& cp);  // a cp.async's bytes reach shared memory
  void VectorAccess(const CallNode* c, const Lanes& act);
  void LdMatrix(const CallNode* c, const Lanes& act);
  void MmaSync(const CallNode* c, const Lanes& act);
  void MmaSyncK32(const CallNode* c, const Lanes& act);   // m16n8k32 s8
  void MmaSyncTf32(const CallNode* c, const Lanes& act);  // m16n8k8 tf32 (intrinsics_tf32.cc)
  void MmaSyncBlockScaled(const CallNode* c, const Lanes& act);  // sm_120a NVFP4 (intrinsics_mma_scaled.cc)
  void ToTf32(const CallNode* c, const Lanes& act, Slot* out);
  void Mfma(const CallNode* c, const Lanes& act);       // intrinsics_hip.cc
  void Fp8ToFnuz(const CallNode* c, const Lanes& act);  // intrinsics_hip.cc
  void Fp4Pack(const CallNode* c, const Lanes& act);    // intrinsics_hip.cc
  void Fp6Pack(const CallNode* c, const Lanes& act);    // intrinsics_hip.cc
  void RepackOperand(const CallNode* c, const Lanes& act, const char* name, int64_t group, int bits,
                     const std::function<void(const std::vector<uint8_t>&, std::vector<uint8_t>*)>& pack);
  void AtomicAdd(const CallNode* c, const Lanes& act, Slot* old);
  void AtomicAddVec(const CallNode* c, const Lanes& act);
  void StMatrix(const CallNode* c, const Lanes& act);
  void ShflXor(const CallNode* c, const Lanes& act, Slot* out);
  void Vote(const CallNode* c, const Lanes& act, Slot* out);      // T.any_sync / T.all_sync
  void ShflSync(const CallNode* c, const Lanes& act, Slot* out);  // T.tvm_warp_shuffle
  void AtomicLoadStore(const CallNode* c, const Lanes& act, Slot* out);

 public:
  // intrinsics_hopper.cc: wgmma (asynchronous, per warp group) and its descriptors
  struct HopperState;
  bool ExecHopper(const CallNode* c, const Lanes& act);
  bool EvalHopper(const CallNode* c, const Lanes& act, Slot* out);
  void CheckPending(Mem& m, int tid, int64_t flat, bool write);
  // An asynchronous write of shared bytes [lo, hi) (a TMA copy) issued while a wgmma that reads them has
  // not completed is reported (wgmma_operand_overwritten).
  void CheckWgmmaReaders(int64_t lo, int64_t hi, int tid);
  void NoteGenericWrite(Mem& m, int tid, int64_t flat);
  void HopperBlockStart();
  void HopperBlockEnd();
  /// One arrival on the mbarrier at shared byte address `addr` (named `name` in reports).
  /// Returns the phase the arrival is in, or -1 (reported).
  /// `remote`: another block of the cluster arrives (a phase it completes orders this block's accesses before
  /// it against those after it: the chain of waits behind a remote arrival is not tracked across blocks, so
  /// the race checks take it as a barrier of the block; it may hide a race, never invent one).
  int64_t MbarrierArrive(int64_t addr, int tid, const std::string& name, bool remote = false);
  // Thread-block clusters (emulator.cc). The executor of block `rank` of this block's cluster, or null
  // (reported: a rank outside the cluster, a block that ended).
  Executor* ClusterPeer(int64_t rank, int tid, const char* what);
  /// Another block of the cluster changed what a wait may see (a remote arrival, the cluster barrier).
  void ClusterProgress();
  /// This block cannot go on (every fiber blocked): the peers run; false when none can either (a deadlock).
  bool ClusterStall();
  bool InCluster() const { return cluster_ != nullptr; }
  int64_t ClusterSize() const;  // blocks of the cluster (1 outside one)
  int ClusterRank() const { return rank_; }
  /// Cluster launch control (emulator.cc): T.clc_try_cancel[_multicast] and the response queries.
  bool ExecClc(const CallNode* c, const Lanes& act);
  bool EvalClc(const CallNode* c, const Lanes& act, Slot* out);
  /// `bytes` transaction bytes complete on the mbarrier at shared byte `addr` (intrinsics_hopper.cc).
  void MbarrierCompleteTx(int64_t addr, int64_t bytes, int tid, const std::string& name, bool remote = false);
  // intrinsics_tcgen05.cc: tensor memory and tcgen05 (sm_100a family)
  struct Tcgen05State;
  bool ExecTcgen05(const CallNode* c, const Lanes& act);
  bool EvalTcgen05(const CallNode* c, const Lanes& act, Slot* out);
  void Tcgen05BlockStart();
  void Tcgen05BlockEnd();
  // A wait by thread t on the mbarrier at shared byte addr saw `phases` phases complete: the tcgen05.mma
  // whose commits arrived in them are complete for t. A barrier of the threads `act` shares what each knows.
  void Tcgen05Observe(int64_t addr, int t, int64_t phases);
  void Tcgen05Carry(int64_t addr, int t, int64_t phase);
  void Tcgen05Share(const Lanes& act);
  // intrinsics_tma.cc: cp.async.bulk.tensor (tl.tma_load), landing at waits on its mbarrier
  struct TmaState;
  struct TmaDecoded {  // a tensor map as the copy instruction reads it from the 128-byte image
    int r = 0, eb = 0, sw = 0, format = 0;  // format 1: 16U4_ALIGN16B (tensor_map_image.h)
    uint8_t* base = nullptr;
    int64_t dims[5] = {}, strides[5] = {}, bx[5] = {}, count = 0;
  };
  TmaDecoded TmaMapOf(const CallNode* map, Mem& g);  // encodes the image at the first use in a launch
  bool ExecTma(const CallNode* c, const Lanes& act);
  bool ExecTmaStore(const CallNode* c, const Lanes& act);
  /// The last generic-proxy writer (tid + 1) of a shared element if it has not executed
  /// fence.proxy.async since (intrinsics_hopper.cc), else 0.
  int UnfencedGenericWriter(Mem& m, int64_t flat);
  int64_t TmaLand(int64_t bar_addr);  // lands the copies completing on the barrier; returns their bytes
  // intrinsics_ascend.cc: the Ascend AI Core's pipes and instructions (ascend.* calls)
  struct AscendState;
  bool ExecAscend(const CallNode* c, const Lanes& act);
  void AscendBlockStart();
  void AscendBlockEnd();
  // fibers.cc: warp-specialised blocks run one fiber per warp group (see there)
  struct FiberSched;
  bool InFibers() const { return fib_ != nullptr; }
  /// A blocked fiber lets the others run; true when none can make progress (a deadlock).
  bool FiberYield();
  void FiberProgress();  // an arrival, transaction or copy that may unblock another fiber
  /// A barrier over `count` threads (id 0: __syncthreads) reached by `act` of the running fiber.
  void FiberBarrier(const Lanes& act, int64_t id, int64_t count, const char* what);
  void TmaBlockStart();
  void TmaBlockEnd();

 private:
  std::shared_ptr<HopperState> hopper_;
  bool count_blocks_ = false;
  int64_t counted_blocks_ = 0;
  std::array<int64_t, 3> counted_grid_{1, 1, 1};
  GridCoop* coop_ = nullptr;  // a cooperative grid: this executor runs block only_block_
  int64_t only_block_ = -1;
  void SyncGrid(const Lanes& act, const Span& span);  // emulator.cc
  ClusterRun* cluster_ = nullptr;  // a cluster launch: this executor runs the block of rank rank_
  int rank_ = 0;
  bool clc_failed_ = false;
  bool started_ = false;       // the block has started running (a peer may reach its shared memory)
  int64_t tma_multicast_ = 0;  // inside a tl.tma_multicast attribute: the cluster mask of its TMA loads  //
                               // this block saw a T.clc_try_cancel fail (a later one is undefined behaviour)
  std::vector<int64_t> cb_pending_;  // per thread: the cluster barrier generation it arrived in, or -1
  void ClusterBarrier(const std::string& op,
                      const Lanes& act);  // barrier.cluster.arrive / wait (emulator.cc)
  std::shared_ptr<Tcgen05State> tc_;  // created at a block's first tcgen05 instruction
  std::shared_ptr<TmaState> tma_;
  std::shared_ptr<AscendState> asc_;
  std::shared_ptr<FiberSched> fib_;
  bool warp_specialized_ = false;  // the kernel holds a tl.warp_specialized region: fibers per warp group
  int fiber_width_ = 128;          // threads per fiber (32: branches split warps within a warp group)
  void RunFibers(const Stmt& body, const Lanes& all);
  void FiberSwapState(int fiber);
  int FiberNext(int from) const;
  void FiberHandOff(int to, bool wait);

  const Options& opt_;
  Result* res_;
  int T_ = 1;
  std::unordered_map<const VarNode*, Binding> vars_;
  std::unordered_map<const BufferNode*, std::unique_ptr<Mem>> mems_;
  std::vector<std::unique_ptr<Slot[]>> tmp_;
  size_t tmp_top_ = 0;
  std::vector<AsyncState> async_;  // per thread
  std::array<int64_t, 3> block_{0, 0, 0};
  int32_t epoch_ = 1;               // barrier epoch of the running block
  const StmtNode* stmt_ = nullptr;  // statement being executed, for reports
};

/// RAII release of scratch slots taken with Executor::Tmp.
class TmpScope {
 public:
  explicit TmpScope(Executor* e) : e_(e), mark_(e->TmpMark()) {}
  ~TmpScope() { e_->TmpRelease(mark_); }
  TmpScope(const TmpScope&) = delete;
  TmpScope& operator=(const TmpScope&) = delete;

 private:
  Executor* e_;
  size_t mark_;
};

}  // namespace tl::emu
