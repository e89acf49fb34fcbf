// The PTX emulator's executor: warps run warp-wide over decoded instructions (ptx_internal.h), with
// per-lane program counters for divergence, the block's shared memory with race / initialisation shadows,
// cp.async groups, barriers, and the warp-collective instructions. Semantics from the PTX ISA (9.0):
// the section of each instruction is named where its code is.
#include <algorithm>
#include <cfenv>
#include <cmath>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <cstring>
#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include "emulator/grid_turns.h"
#include "emulator/numeric.h"
#include "emulator/ptx/ptx_internal.h"
#include "emulator/smem_matrix.h"
#include "emulator/tensor_map_image.h"
#include "support/error.h"

namespace tl::emu::ptx {
namespace {

// Generic addresses of the shared and local windows (cvta): a tag in the top byte, far above any host
// pointer, so that a generic access can be routed. Global (host) addresses are used as they are.
constexpr uint64_t kSharedTag = uint64_t{0x5A} << 56, kLocalTag = uint64_t{0x5B} << 56,
                   kParamTag = uint64_t{0x5C} << 56, kConstTag = uint64_t{0x5D} << 56;
constexpr uint64_t kTagMask = uint64_t{0xFF} << 56;
constexpr int64_t kMaxInstructionsPerWarp = int64_t{1} << 31;

uint64_t WidthMask(int bits) { return bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1; }
int64_t SignExtend(uint64_t v, int bits) {
  if (bits >= 64) return static_cast<int64_t>(v);
  uint64_t m = uint64_t{1} << (bits - 1);
  v &= WidthMask(bits);
  return static_cast<int64_t>((v ^ m) - m);
}
float AsF32(uint64_t b) { return FloatOfBits(static_cast<uint32_t>(b)); }
uint64_t F32Bits(float f) { return BitsOfFloat(f); }
double AsF64(uint64_t b) {
  double d;
  std::memcpy(&d, &b, 8);
  return d;
}
uint64_t F64Bits(double d) {
  uint64_t u;
  std::memcpy(&u, &d, 8);
  return u;
}
double HalfValue(uint64_t b, Ty t) {
  switch (t) {
    case Ty::kF16: case Ty::kBF16: {
      const uint16_t h = static_cast<uint16_t>(b);
      return LoadHalf(&h, t == Ty::kBF16);  // exact, from the bits (emulator/numeric.h)
    }
    case Ty::kE4M3: return DecodeMinifloat(static_cast<uint32_t>(b & 0xFF), 4, 3, true);
    case Ty::kE5M2: return DecodeMinifloat(static_cast<uint32_t>(b & 0xFF), 5, 2, false);
    default: return 0;
  }
}
// The value of a register holding float type t, as a double (exact).
double FloatOf(uint64_t b, Ty t) {
  switch (t) {
    case Ty::kF32: case Ty::kTf32: return AsF32(b);
    case Ty::kF64: return AsF64(b);
    default: return HalfValue(b, t);
  }
}
// x (already a value representable in t, or to be rounded to nearest even) as t's bits.
uint64_t FloatBits(double x, Ty t) {
  switch (t) {
    case Ty::kF32: case Ty::kTf32: return F32Bits(static_cast<float>(x));
    case Ty::kF64: return F64Bits(x);
    case Ty::kF16: return EncodeMinifloat(x, 5, 10, false);
    case Ty::kBF16: return EncodeMinifloat(x, 8, 7, false);
    case Ty::kE4M3: return EncodeMinifloat(x, 4, 3, true);
    case Ty::kE5M2: return EncodeMinifloat(std::fabs(x) > 57344.0 ? std::copysign(57344.0, x) : x, 5, 2, false);
    default: return 0;
  }
}
float Ftz(float x) { return std::fpclassify(x) == FP_SUBNORMAL ? std::copysign(0.0f, x) : x; }

// Runs f under the IEEE rounding direction of a PTX rounding modifier (.rn is the default direction).
template <typename F>
auto Rounded(Rnd r, F&& f) {
  int dir = FE_TONEAREST;
  if (r == Rnd::kRz || r == Rnd::kRzi) dir = FE_TOWARDZERO;
  if (r == Rnd::kRm || r == Rnd::kRmi) dir = FE_DOWNWARD;
  if (r == Rnd::kRp || r == Rnd::kRpi) dir = FE_UPWARD;
  if (dir == FE_TONEAREST) return f();
  const int old = std::fegetround();
  std::fesetround(dir);
  auto v = f();
  std::fesetround(old);
  return v;
}

struct ShadowByte {
  int32_t w_epoch = 0, r_epoch = 0, reported = 0, written = 0;
  uint32_t w_seq =
      0;  // the warp-instruction that wrote it last (its low 32 bits: compared for equality only)
  int16_t w_tid = -1, r_tid = -1;  // threads (< 1024); -2: several
  bool w_atomic = false;
};
// The generic-to-async proxy rule, per shared byte (kernels with async-proxy readers only: TMA stores and
// reductions, wgmma, tcgen05.mma): the thread (+1) whose generic write is the byte's last (0: none, or the
// async proxy wrote it), that thread's count of fence.proxy.async at the time, and the barrier epoch.
struct ProxyByte {
  int32_t writer = 0, fences = 0, epoch = 0;
};

struct CpAsyncCopy {
  uint32_t dst = 0;  // shared offset
  int bytes = 0;
  uint8_t data[16] = {};
  int pc = 0;
};

struct Warp {
  std::vector<uint64_t> regs;  // register r of lane l at [r * 32 + l]
  std::array<int, 32> pc{};
  uint32_t live = 0;           // lanes that exist and have not exited
  bool waiting = false;        // at a barrier
  int64_t bar_id = -1;
  uint32_t bar_lanes = 0;      // the lanes that arrived (resume after the barrier)
  int bar_pc = 0;
  int64_t executed = 0;
  int64_t mbar_wait = -1;      // blocked in mbarrier.try_wait on this shared offset until its phase moves on
  int64_t mbar_phase = 0;
  int64_t cl_wait = -1;  // blocked in barrier.cluster.wait until the cluster barrier passes this generation
  uint32_t carry = 0;  // CC.CF of each lane (add.cc / addc ...)
  bool done() const { return live == 0; }
};

// An mbarrier (PTX ISA 9.7.13.15): the current phase completes when its pending arrivals and its transaction
// count are both zero; then the phase number advances and the arrivals reset to the expected count.
struct Mbarrier {
  int64_t expected = 0, pending = 0, tx = 0, phase = 0;
};

// Tensor memory (sm_100a; PTX ISA, "Tensor Memory"): 128 lanes x 512 columns of 32-bit cells per block, its
// column allocations, and the tcgen05.mma each thread issued and has not committed yet.
class Machine;
struct TcMma {
  Machine* target =
      nullptr;  // the block whose tensor memory D is (cta_group::2: one entry per block of the pair)
  int64_t lane0 = 0, col0 = 0, M = 0, N = 0;
  int eb = 2;
  bool integer = false, accumulate = false;
  bool d_f16 = false;                              // D holds float16 values (bits 0-15 of a column)
  int64_t Lane(int64_t m) const { return lane0 + Tcgen05RowLane(M, m); }  // D's row m (M = 64: layout F)
  std::vector<double> prod;                        // M x N products
  std::vector<std::pair<int64_t, uint16_t>> read;  // shared bytes read at issue (offset, value)
  std::vector<Machine*> read_from;                 // the block of each (either block of a pair)
};
struct Tmem {
  static constexpr int64_t kLanes = 128, kCols = 512;
  std::vector<uint32_t> cells;
  std::vector<uint8_t> written;
  std::vector<int32_t> in_flight;
  // per cell: the thread whose committed tcgen05.mma wrote it last (-1: none) and the number of that thread's
  // commit (1, 2, ...): a reader must know that commit, or a later one of the thread, complete
  std::vector<int32_t> ready_issuer;
  std::vector<int64_t> ready_commit;
  std::vector<int64_t> commits;                       // per thread: its tcgen05.commit so far
  std::map<int64_t, std::pair<int64_t, int>> allocs;  // first column -> (columns, allocating warp)
  bool relinquished = false;
  bool cg2 = false;                         // allocated with cta_group::2 (for a CTA pair's MMAs)
  std::vector<std::vector<TcMma>> pending;  // per thread
  static size_t Cell(int64_t lane, int64_t col) { return static_cast<size_t>(lane * kCols + col); }
  bool Allocated(int64_t col, int64_t n) const {
    auto it = allocs.upper_bound(col);
    if (it == allocs.begin()) return false;
    --it;
    return col + n <= it->first + it->second.first;
  }
};

// A TMA copy into shared memory, landing when its mbarrier's phase completes.
struct TmaCopy {
  int64_t bar = 0;
  std::vector<std::pair<int64_t, uint8_t>> bytes;  // (shared offset, value)
  int tid = 0;
};

// A cooperative launch (the kernel reads %envreg1/2: cooperative groups' grid sync, T.sync_grid): every block
// live at once. Each block runs on an OS thread of its own, one at a time (the turn); a warp that executes a
// load other blocks may answer (ld.acquire / .relaxed / .volatile: the grid barrier's spin) hands the turn to
// the next block. When every live block has handed it on 64 times with no global store or atomic anywhere in
// between, the spins can never end: reported as a deadlock. The module's .global variables and the grid
// workspace (zeroed, as the driver's) are shared by all blocks.
struct PtxGrid : GridTurns {
  std::vector<int64_t> stalls;  // per block: turns handed on since the last global write
  int64_t progress = 0;         // global stores and atomics so far
  int64_t last_progress = -1;
  std::vector<uint64_t> globals;
  std::vector<uint64_t> workspace;
};

// A thread-block cluster (.reqnctapercluster; T.ClusterKernel): its blocks are resident at once, so one may
// wait for a peer (barrier.cluster, an mbarrier a peer arrives on through a mapa address). Clusters run one
// after another; within one, each block is a Machine on an OS thread of its own, taking turns (grid_turns.h):
// a block runs until it ends or none of its warps can go on, then hands the turn on. A remote arrival or a
// cluster barrier arrival moves `progress`; when every live block has stalled at the same `progress`, none
// ever can go on: a deadlock. A shared::cluster address (mapa's result) is kClusterTag | rank << 24 | the
// shared offset; a shared::cta address is one of the executing block.
class Machine;
// Cluster launch control: the launch's clusters in order, started or cancelled
// (clusterlaunchcontrol.try_cancel).
struct ClcState {
  std::vector<bool> taken;
};
struct PtxCluster : ClusterTurns {
  ClcState* clc = nullptr;
  std::vector<Machine*> blocks;                     // by rank
  int64_t threads = 0, cb_arrived = 0, cb_gen = 0;  // barrier.cluster: expected, arrived this generation
};
constexpr uint64_t kClusterTag = uint64_t{1} << 31;

class Machine {
 public:
  Machine(const Module& m, const Kernel& k, const Launch& L, const Options& opt, Result* res,
          PtxGrid* grid = nullptr, int64_t only_block = -1, PtxCluster* cluster = nullptr, int rank = 0)
      : m_(m),
        k_(k),
        L_(L),
        opt_(opt),
        res_(res),
        grid_(grid),
        only_block_(only_block),
        cl_(cluster),
        rank_(rank) {
    for (const Instr& in : k_.code) uses_tmem_ |= in.op == Op::kTcAlloc || in.op == Op::kTcMma;
  }

  void Run() {
    T_ = L_.block[0] * L_.block[1] * L_.block[2];
    if (T_ < 1 || T_ > 1024) Fail("the block has " + std::to_string(T_) + " threads (1..1024)");
    for (int d = 0; d < 3; ++d)
      if (k_.reqntid[d] && k_.reqntid[d] != L_.block[d])
        Fail(".reqntid " + std::to_string(k_.reqntid[d]) + " differs from the launch's block dimension " +
             std::to_string(L_.block[d]));
    W_ = static_cast<int>((T_ + 31) / 32);
    const size_t nparams = k_.params.size();
    if (L_.params.size() < nparams)
      Fail("the kernel has " + std::to_string(nparams) + " parameters, the launch gives " +
           std::to_string(L_.params.size()));
    params_.assign(static_cast<size_t>(k_.param_bytes) + 8, 0);
    for (size_t i = 0; i < nparams; ++i) {
      const Symbol& s = m_.symbols[static_cast<size_t>(k_.params[i])];
      if (s.bytes > 8) {
        auto b = L_.blobs.find(i);
        if (b == L_.blobs.end() || static_cast<int64_t>(b->second.size()) != s.bytes)
          Fail("parameter '" + s.name + "' is " + std::to_string(s.bytes) + " bytes; the launch gives no such value");
        std::memcpy(&params_[static_cast<size_t>(s.offset)], b->second.data(), b->second.size());
        continue;
      }
      std::memcpy(&params_[static_cast<size_t>(s.offset)], &L_.params[i], static_cast<size_t>(s.bytes));
    }
    extern_off_ = (m_.static_shared + m_.extern_shared_align - 1) / m_.extern_shared_align * m_.extern_shared_align;
    smem_bytes_ = extern_off_ + L_.dynamic_smem;
    smem_.assign(static_cast<size_t>(smem_bytes_), 0);
    shadow_.assign(static_cast<size_t>(smem_bytes_), ShadowByte());
    bool async_readers = false;
    for (const Instr& in : k_.code)
      async_readers |= in.op == Op::kTmaStore || in.op == Op::kTmaReduce || in.op == Op::kWgmma ||
                       in.op == Op::kTcMma || in.op == Op::kTcCp;
    if (async_readers) proxy_.assign(static_cast<size_t>(smem_bytes_), ProxyByte());
    regions_ = L_.regions;
    if (m_.global_bytes) {
      if (!grid_) {
        globals_.assign(static_cast<size_t>((m_.global_bytes + 7) / 8), 0);
        std::memcpy(globals_.data(), m_.global_init.data(), m_.global_init.size());
      }
      regions_.push_back({reinterpret_cast<uint64_t>(Globals().data()),
                          static_cast<uint64_t>(m_.global_bytes), "the module's .global variables"});
    }
    if (grid_)
      regions_.push_back({reinterpret_cast<uint64_t>(grid_->workspace.data()), grid_->workspace.size() * 8,
                          "the cooperative launch's grid workspace"});
    std::sort(regions_.begin(), regions_.end(), [](const Region& a, const Region& b) { return a.base < b.base; });
    for (int64_t z = 0; z < L_.grid[2]; ++z)
      for (int64_t y = 0; y < L_.grid[1]; ++y)
        for (int64_t x = 0; x < L_.grid[0]; ++x)
          if (only_block_ < 0 || only_block_ == (z * L_.grid[1] + y) * L_.grid[0] + x) RunBlock({x, y, z});
  }

 private:
  [[noreturn]] void Fail(const std::string& why) {
    throw UserError(ErrorKind::kUnsupported, "PTX emulator: kernel '" + k_.name + "': " + why);
  }
  [[noreturn]] void FailAt(const Instr& in, const std::string& why) {
    throw UserError(ErrorKind::kUnsupported,
                    "PTX emulator: line " + std::to_string(in.line) + ": " + why + "\n  " + in.text);
  }

  template <typename F>
  void Report(const char* kind, int tid, F&& what) {
    if (++res_->total_reports > opt_.max_reports) return;
    std::ostringstream os;
    os << kind << ": block (" << block_[0] << ", " << block_[1] << ", " << block_[2] << ") thread " << tid << ": "
       << what();
    if (cur_) {
      os << "\n  at PTX line " << cur_->line << ": " << cur_->text;
      if (cur_->loc_file >= 0) {
        auto f = m_.files.find(cur_->loc_file);
        os << "\n  from " << (f == m_.files.end() ? "?" : f->second) << ":" << cur_->loc_line;
      }
    }
    res_->reports.push_back({kind, os.str()});
  }

  // A read of tensor memory nothing has written, kept unless emulator.check_uninit is off (such cells hold
  // all-ones bits either way: NaN as f32 / f16, so a value that reaches an output shows).
  template <typename F>
  void ReportUninit(int tid, F&& what) {
    if (opt_.check_uninit) Report("uninitialized", tid, std::forward<F>(what));
  }

  // ------------------------------------------------------------------------------ blocks and warps

  void RunBlock(const std::array<int64_t, 3>& b) {
    block_ = b;
    ++block_stamp_;
    std::fill(smem_.begin(), smem_.end(), 0);
    local_.assign(static_cast<size_t>(T_ * std::max<int64_t>(k_.local_bytes, 1)), 0);
    open_.assign(static_cast<size_t>(T_), {});
    cl_pending_.assign(static_cast<size_t>(T_), -1);
    started_ = true;
    proxy_fences_.assign(static_cast<size_t>(T_), 0);
    if (uses_tmem_) {
      tmem_ = Tmem();
      tmem_.cells.assign(Tmem::kLanes * Tmem::kCols, 0xFFFFFFFFu);  // never written: all ones
      tmem_.written.assign(tmem_.cells.size(), 0);
      tmem_.in_flight.assign(tmem_.cells.size(), 0);
      tmem_.ready_issuer.assign(tmem_.cells.size(), -1);
      tmem_.ready_commit.assign(tmem_.cells.size(), 0);
      tmem_.commits.assign(static_cast<size_t>(T_), 0);
      tmem_.pending.assign(static_cast<size_t>(T_), {});
    }
    fence_epoch_.assign(static_cast<size_t>(T_), 0);
    groups_.assign(static_cast<size_t>(T_), {});
    warps_.assign(static_cast<size_t>(W_), Warp());
    exited_ = 0;
    for (int w = 0; w < W_; ++w) {
      Warp& wp = warps_[static_cast<size_t>(w)];
      wp.regs.assign(k_.reg_types.size() * 32, 0);
      for (int l = 0; l < 32; ++l)
        if (w * 32 + l < T_) wp.live |= 1u << l;
    }
    ++epoch_;
    mbars_.clear();
    inited_.clear();
    known_.clear();
    commit_log_.clear();
    carried_.clear();
    tma_.clear();
    while (true) {
      bool any_live = false;
      for (int w = 0; w < W_; ++w) {
        Warp& wp = warps_[static_cast<size_t>(w)];
        if (wp.done() || wp.waiting) continue;
        if (wp.mbar_wait >= 0) {
          if (mbars_[wp.mbar_wait].phase == wp.mbar_phase) continue;
          wp.mbar_wait = -1;
        }
        if (wp.cl_wait >= 0) {
          if (cl_->cb_gen <= wp.cl_wait) continue;
          wp.cl_wait = -1;
        }
        RunWarp(w);
        any_live = true;
      }
      bool all_done = true;
      for (const Warp& wp : warps_) all_done &= wp.done();
      if (all_done) break;
      if (!ReleaseBarriers() && !any_live) {
        if (ClusterStall()) continue;  // a peer block of the cluster may arrive on what this block waits for
        bool reported = false;
        for (int w = 0; w < W_ && !reported; ++w) {
          const Warp& wp = warps_[static_cast<size_t>(w)];
          if (wp.done() || wp.cl_wait < 0) continue;
          cur_ = &k_.code[static_cast<size_t>(wp.pc[static_cast<size_t>(__builtin_ctz(wp.live))])];
          Report("deadlock", w * 32, [&] {
            return "warp " + std::to_string(w) +
                   " waits at the cluster barrier (barrier.cluster.wait), which " +
                   std::to_string(cl_->threads - cl_->cb_arrived) + " of the cluster's " +
                   std::to_string(cl_->threads) + " threads never reach (a block ended or waits elsewhere)";
          });
          reported = true;
        }
        if (reported) break;
        for (int w = 0; w < W_; ++w) {
          const Warp& wp = warps_[static_cast<size_t>(w)];
          if (wp.done()) continue;
          if (wp.mbar_wait >= 0) {
            const Mbarrier& b = mbars_[wp.mbar_wait];
            cur_ = &k_.code[static_cast<size_t>(wp.pc[static_cast<size_t>(__builtin_ctz(wp.live))])];
            Report("deadlock", w * 32, [&] {
              return "warp " + std::to_string(w) + " waits on the mbarrier at shared byte " +
                     std::to_string(wp.mbar_wait) + SharedName(wp.mbar_wait) + " for a phase that never completes (" +
                     std::to_string(b.pending) + " arrivals and " + std::to_string(b.tx) + " transaction bytes missing)";
            });
            break;
          }
          cur_ = &k_.code[static_cast<size_t>(wp.bar_pc)];
          Report("deadlock", w * 32, [&] {
            return "warp " + std::to_string(w) + " waits at barrier " + std::to_string(wp.bar_id) +
                   " which the other threads of the block never reach (" + std::to_string(arrived_[wp.bar_id]) +
                   " of " + std::to_string(Expected(wp.bar_id)) + " threads arrived)";
          });
          break;
        }
        break;
      }
    }
    if (uses_tmem_) TmemBlockEnd();
    for (const TmaCopy& c : tma_) {
      cur_ = nullptr;
      Report("tma_not_waited", c.tid, [&] {
        return "a TMA copy completing on the mbarrier at shared byte " + std::to_string(c.bar) +
               " is still in flight when the block ends (its phase never completed)";
      });
    }
    cur_ = nullptr;
    arrived_.clear();
    expected_.clear();
  }

  int64_t Expected(int64_t id) const {
    auto it = expected_.find(id);
    return it != expected_.end() && it->second > 0 ? it->second : T_ - exited_;
  }

  // Barriers whose count of arrived threads is complete release their warps; each release starts a new
  // race epoch. Returns whether any was released.
  bool ReleaseBarriers() {
    bool any = false;
    for (auto it = arrived_.begin(); it != arrived_.end();) {
      const int64_t id = it->first;
      if (it->second < Expected(id)) {
        ++it;
        continue;
      }
      // what the released threads know of completed tcgen05.mma, each of them knows now (the barrier orders a
      // waiter's observation before the others' later accesses)
      for (auto& [issuer, seen] : known_) {
        int64_t most = 0;
        for (int w = 0; w < W_; ++w) {
          const Warp& wp = warps_[static_cast<size_t>(w)];
          if (wp.waiting && wp.bar_id == id)
            ForLanes(wp.bar_lanes,
                     [&](int l) { most = std::max(most, seen[static_cast<size_t>(w * 32 + l)]); });
        }
        for (int w = 0; w < W_; ++w) {
          const Warp& wp = warps_[static_cast<size_t>(w)];
          if (wp.waiting && wp.bar_id == id)
            ForLanes(wp.bar_lanes, [&](int l) { seen[static_cast<size_t>(w * 32 + l)] = most; });
        }
      }
      for (Warp& wp : warps_)
        if (wp.waiting && wp.bar_id == id) {
          wp.waiting = false;
          for (int l = 0; l < 32; ++l)
            if (wp.bar_lanes >> l & 1) wp.pc[static_cast<size_t>(l)] = wp.bar_pc + 1;
        }
      expected_.erase(id);
      it = arrived_.erase(it);
      ++epoch_;
      any = true;
    }
    return any;
  }

  void RunWarp(int w) {
    Warp& wp = warps_[static_cast<size_t>(w)];
    const int ncode = static_cast<int>(k_.code.size());
    while (!wp.done() && !wp.waiting && wp.mbar_wait < 0 && wp.cl_wait < 0) {
      int pc = std::numeric_limits<int>::max();
      for (int l = 0; l < 32; ++l)
        if (wp.live >> l & 1) pc = std::min(pc, wp.pc[static_cast<size_t>(l)]);
      uint32_t act = 0;
      for (int l = 0; l < 32; ++l)
        if ((wp.live >> l & 1) && wp.pc[static_cast<size_t>(l)] == pc) act |= 1u << l;
      if (pc >= ncode) {  // fell off the end: as ret
        wp.live &= ~act;
        exited_ += __builtin_popcount(act);
        continue;
      }
      if (++wp.executed > kMaxInstructionsPerWarp) {
        Report("hang", w * 32, [&] { return std::string("the warp executed 2^31 instructions; stopped here"); });
        exited_ += __builtin_popcount(wp.live);
        wp.live = 0;
        return;
      }
      const Instr& in = k_.code[static_cast<size_t>(pc)];
      cur_ = &in;
      uint32_t exec = act;
      if (in.guard >= 0) {
        exec = 0;
        for (int l = 0; l < 32; ++l)
          if ((act >> l & 1) && ((wp.regs[static_cast<size_t>(in.guard) * 32 + l] != 0) != in.guard_neg))
            exec |= 1u << l;
      }
      res_->lane_ops += __builtin_popcount(act);
      ++seq_;
      Execute(w, wp, in, pc, act, exec);
      if (grid_ && in.spin) Yield(w * 32);
    }
  }

  // ------------------------------------------------------------------------------ operands

  uint64_t& R(Warp& wp, int reg, int l) { return wp.regs[static_cast<size_t>(reg) * 32 + static_cast<size_t>(l)]; }

  uint64_t SregValue(Sreg s, int w, int l) const {
    const int64_t tid = w * 32 + l;
    const int64_t tx = tid % L_.block[0], ty = tid / L_.block[0] % L_.block[1], tz = tid / (L_.block[0] * L_.block[1]);
    switch (s) {
      case Sreg::kTidX: return static_cast<uint64_t>(tx);
      case Sreg::kTidY: return static_cast<uint64_t>(ty);
      case Sreg::kTidZ: return static_cast<uint64_t>(tz);
      case Sreg::kNtidX: return static_cast<uint64_t>(L_.block[0]);
      case Sreg::kNtidY: return static_cast<uint64_t>(L_.block[1]);
      case Sreg::kNtidZ: return static_cast<uint64_t>(L_.block[2]);
      case Sreg::kCtaidX: return static_cast<uint64_t>(block_[0]);
      case Sreg::kCtaidY: return static_cast<uint64_t>(block_[1]);
      case Sreg::kCtaidZ: return static_cast<uint64_t>(block_[2]);
      case Sreg::kNctaidX: return static_cast<uint64_t>(L_.grid[0]);
      case Sreg::kNctaidY: return static_cast<uint64_t>(L_.grid[1]);
      case Sreg::kNctaidZ: return static_cast<uint64_t>(L_.grid[2]);
      case Sreg::kLaneid: return static_cast<uint64_t>(l);
      case Sreg::kWarpid: return static_cast<uint64_t>(w);
      case Sreg::kNwarpid: return static_cast<uint64_t>(W_);
      case Sreg::kSmid: return 0;
      case Sreg::kClock: case Sreg::kClock64: case Sreg::kGlobalTimer: return static_cast<uint64_t>(res_->lane_ops);
      case Sreg::kLanemaskEq: return uint64_t{1} << l;
      case Sreg::kLanemaskLt: return (uint64_t{1} << l) - 1;
      case Sreg::kLanemaskLe: return (uint64_t{2} << l) - 1;
      case Sreg::kLanemaskGt: return ~((uint64_t{2} << l) - 1) & 0xFFFFFFFFu;
      case Sreg::kLanemaskGe: return ~((uint64_t{1} << l) - 1) & 0xFFFFFFFFu;
      case Sreg::kDynSmem: return static_cast<uint64_t>(L_.dynamic_smem);
      case Sreg::kTotalSmem: return static_cast<uint64_t>(smem_bytes_);
      // the grid workspace of a cooperative launch (none otherwise: cooperative groups' grid sync then traps,
      // as on a GPU launched without cuLaunchCooperativeKernel)
      case Sreg::kEnvreg1: return grid_ ? reinterpret_cast<uint64_t>(grid_->workspace.data()) >> 32 : 0;
      case Sreg::kEnvreg2:
        return grid_ ? reinterpret_cast<uint64_t>(grid_->workspace.data()) & 0xFFFFFFFFu : 0;
      // clusters (PTX ISA "Special Registers"): without .reqnctapercluster every block is a cluster of one
      case Sreg::kClusterCtarank:
        return static_cast<uint64_t>(block_[0] % k_.cluster[0] +
                                     (block_[1] % k_.cluster[1] + block_[2] % k_.cluster[2] * k_.cluster[1]) *
                                         k_.cluster[0]);
      case Sreg::kClusterNctarank:
        return static_cast<uint64_t>(k_.cluster[0] * k_.cluster[1] * k_.cluster[2]);
      case Sreg::kClusterCtaidX: return static_cast<uint64_t>(block_[0] % k_.cluster[0]);
      case Sreg::kClusterCtaidY: return static_cast<uint64_t>(block_[1] % k_.cluster[1]);
      case Sreg::kClusterCtaidZ: return static_cast<uint64_t>(block_[2] % k_.cluster[2]);
      case Sreg::kClusterNctaidX: return static_cast<uint64_t>(k_.cluster[0]);
      case Sreg::kClusterNctaidY: return static_cast<uint64_t>(k_.cluster[1]);
      case Sreg::kClusterNctaidZ: return static_cast<uint64_t>(k_.cluster[2]);
      case Sreg::kClusteridX: return static_cast<uint64_t>(block_[0] / k_.cluster[0]);
      case Sreg::kClusteridY: return static_cast<uint64_t>(block_[1] / k_.cluster[1]);
      case Sreg::kClusteridZ: return static_cast<uint64_t>(block_[2] / k_.cluster[2]);
      case Sreg::kNclusteridX: return static_cast<uint64_t>(L_.grid[0] / k_.cluster[0]);
      case Sreg::kNclusteridY: return static_cast<uint64_t>(L_.grid[1] / k_.cluster[1]);
      case Sreg::kNclusteridZ: return static_cast<uint64_t>(L_.grid[2] / k_.cluster[2]);
      case Sreg::kIsExplicitCluster: return k_.explicit_cluster ? 1 : 0;
    }
    return 0;
  }

  uint64_t SymbolAddress(int sym) const {
    const Symbol& s = m_.symbols[static_cast<size_t>(sym)];
    if (s.space == Space::kShared) return static_cast<uint64_t>(s.external ? extern_off_ : s.offset);
    if (s.space == Space::kGlobal)
      return reinterpret_cast<uint64_t>(Globals().data()) + static_cast<uint64_t>(s.offset);
    return static_cast<uint64_t>(s.offset);
  }

  // The bits of a source operand, as type t.
  uint64_t Get(Warp& wp, const Operand& o, int w, int l, Ty t) {
    uint64_t v = 0;
    switch (o.kind) {
      case Operand::kReg: v = R(wp, o.reg, l); break;
      case Operand::kImmInt:
        v = TyFloat(t) ? FloatBits(static_cast<double>(o.imm), t) : static_cast<uint64_t>(o.imm);
        break;
      case Operand::kImmF32Bits:
        v = t == Ty::kF32 || !TyFloat(t) ? static_cast<uint64_t>(o.imm) : FloatBits(AsF32(static_cast<uint64_t>(o.imm)), t);
        break;
      case Operand::kImmF64Bits:
        v = t == Ty::kF64 || !TyFloat(t) ? static_cast<uint64_t>(o.imm) : FloatBits(AsF64(static_cast<uint64_t>(o.imm)), t);
        break;
      case Operand::kImmDouble: v = TyFloat(t) ? FloatBits(o.dbl, t) : static_cast<uint64_t>(static_cast<int64_t>(o.dbl)); break;
      case Operand::kSreg: v = SregValue(o.sreg, w, l); break;
      case Operand::kSym: v = SymbolAddress(o.sym); break;
      case Operand::kSink: break;
      default: FailAt(*cur_, "an operand of this kind cannot be read as a value");
    }
    if (o.neg) v = v ? 0 : 1;
    return t == Ty::kNone ? v : v & WidthMask(TyBits(t) == 1 ? 64 : TyBits(t));
  }

  void Set(Warp& wp, const Operand& o, int l, uint64_t v, Ty t) {
    if (o.kind == Operand::kSink) return;
    if (o.kind != Operand::kReg) FailAt(*cur_, "the destination must be a register");
    const int bits = TyBits(t);
    R(wp, o.reg, l) = t == Ty::kPred ? (v != 0) : (bits == 0 || bits >= 64 ? v : v & WidthMask(bits));
  }

  // ------------------------------------------------------------------------------ memory

  struct Where {
    Space space = Space::kGlobal;
    uint64_t addr = 0;  // host address (global), byte offset (shared, param, local)
  };

  Where Resolve(Warp& wp, const Instr& in, const Operand& o, int l, Space space) {
    if (o.kind != Operand::kAddr) FailAt(in, "expected a memory operand [address]");
    uint64_t a = static_cast<uint64_t>(o.imm);
    if (o.reg >= 0) a += R(wp, o.reg, l);
    if (o.sym >= 0) a += SymbolAddress(o.sym);
    Where w;
    w.space = space;
    w.addr = a;
    if (space == Space::kConst) w = ConstWhere(a);
    if (space == Space::kGeneric) w = Generic(a);
    if (o.sym >= 0 && space == Space::kGeneric) {  // a symbol's own state space (its address has no window tag)
      const Space ss = m_.symbols[static_cast<size_t>(o.sym)].space;
      if (ss == Space::kParam || ss == Space::kShared || ss == Space::kLocal) {
        w.space = ss;
        w.addr = a;
      }
    }
    return w;
  }

  // A pointer to n bytes at w for thread tid, or nullptr (reported) when they are not all inside memory the
  // thread may touch, or the access is misaligned. The race / initialisation checks of shared bytes run here.
  uint8_t* Access(const Where& w, int tid, int n, bool write, bool atomic = false) {
    if (w.addr % static_cast<uint64_t>(n) != 0 && n <= 16) {
      Report("misaligned", tid, [&] {
        std::ostringstream os;
        os << SpaceName(w.space) << " address 0x" << std::hex << w.addr << std::dec << " of a " << n
           << "-byte access is not " << n << "-byte aligned; the access was not performed";
        return os.str();
      });
      return nullptr;
    }
    switch (w.space) {
      case Space::kGlobal: {
        auto it = std::upper_bound(regions_.begin(), regions_.end(), w.addr,
                                   [](uint64_t a, const Region& r) { return a < r.base; });
        if (it != regions_.begin()) {
          const Region& r = *std::prev(it);
          if (w.addr + static_cast<uint64_t>(n) <= r.base + r.bytes) {
            if (grid_ && write) ++grid_->progress;
            return reinterpret_cast<uint8_t*>(w.addr);
          }
        }
        if (opt_.check_bounds) Report("out_of_bounds", tid, [&] { return GlobalMiss(w.addr, n); });
        return nullptr;
      }
      case Space::kShared: {
        if (w.addr + static_cast<uint64_t>(n) > static_cast<uint64_t>(smem_bytes_)) {
          if (opt_.check_bounds)
            Report("out_of_bounds", tid, [&] {
              return "shared byte offset " + std::to_string(w.addr) + " (+" + std::to_string(n) +
                     ") is past the block's " + std::to_string(smem_bytes_) + " bytes of shared memory";
            });
          return nullptr;
        }
        NoteShared(static_cast<int64_t>(w.addr), n, tid, write, atomic);
        return &smem_[static_cast<size_t>(w.addr)];
      }
      case Space::kParam:
        if (write || w.addr + static_cast<uint64_t>(n) > params_.size()) {
          Report("out_of_bounds", tid, [&] { return "kernel parameter access at byte " + std::to_string(w.addr); });
          return nullptr;
        }
        return &params_[static_cast<size_t>(w.addr)];
      case Space::kLocal: {
        const uint64_t per = static_cast<uint64_t>(std::max<int64_t>(k_.local_bytes, 1));
        if (w.addr + static_cast<uint64_t>(n) > per) {
          Report("out_of_bounds", tid, [&] { return "local byte offset " + std::to_string(w.addr) + " past the thread's " +
                                                    std::to_string(per) + " bytes"; });
          return nullptr;
        }
        return &local_[static_cast<size_t>(static_cast<uint64_t>(tid) * per + w.addr)];
      }
      default: FailAt(*cur_, std::string("state space .") + SpaceName(w.space) + " is not supported by the PTX emulator");
    }
  }

  static const char* SpaceName(Space s) {
    switch (s) {
      case Space::kGlobal: return "global";
      case Space::kShared: return "shared";
      case Space::kParam: return "param";
      case Space::kLocal: return "local";
      case Space::kConst: return "const";
      default: return "generic";
    }
  }

  std::string GlobalMiss(uint64_t a, int n) const {
    std::ostringstream os;
    os << "global address 0x" << std::hex << a << std::dec << " (" << n << " bytes) is outside every buffer argument";
    if (const uint64_t tag = a & kTagMask; tag == kSharedTag || tag == kLocalTag || tag == kParamTag)
      os << " (it is the generic address of "
         << (tag == kSharedTag  ? "shared"
             : tag == kLocalTag ? "local"
                                : "param")
         << " memory: a .global access to it is not an access of that state space)";
    const Region* best = nullptr;
    uint64_t dist = ~uint64_t{0};
    for (const Region& r : regions_) {
      uint64_t d = a < r.base ? r.base - a : (a >= r.base + r.bytes ? a - (r.base + r.bytes) + 1 : 0);
      if (d < dist) {
        dist = d;
        best = &r;
      }
    }
    if (best) {
      os << "; nearest: '" << best->name << "' (" << best->bytes << " bytes), at byte offset "
         << static_cast<int64_t>(a - best->base);
    }
    os << "; the access was not performed";
    return os.str();
  }

  // The race and initialisation bookkeeping of an access to shared bytes [off, off + n) by thread tid: one
  // report per access and kind (the first byte that shows it), each byte reported at most once a barrier epoch.
  // `init` false: a race check only (a cp.async issued, its bytes not landed yet).
  void NoteShared(int64_t off, int n, int tid, bool write, bool atomic, bool init = true) {
    int64_t uninit = -1, race = -1;
    int other = -1;
    const char* what = nullptr;
    for (int64_t b = off; b < off + n; ++b) {
      ShadowByte& s = shadow_[static_cast<size_t>(b)];
      if (!write) {
        if (s.written != block_stamp_ && s.written != -block_stamp_) {
          s.written = -block_stamp_;  // reported once a byte a block
          if (uninit < 0) uninit = b;
        }
      } else if (init) {
        s.written = block_stamp_;
        if (!proxy_.empty())
          proxy_[static_cast<size_t>(b)] = {tid + 1, proxy_fences_[static_cast<size_t>(tid)], epoch_};
      }
      if (!opt_.check_races) continue;
      const char* w = nullptr;
      int o = -1;
      // lanes of one warp writing a location in the same instruction collide in one store (one of them wins),
      // which is not a race between threads
      if (s.w_epoch == epoch_ && s.w_tid != tid && !(atomic && s.w_atomic) &&
          !(write && s.w_seq == static_cast<uint32_t>(seq_))) {
        w = "written";
        o = s.w_tid;
      } else if (write && s.r_epoch == epoch_ && s.r_tid != tid) {
        w = "read";
        o = s.r_tid;
      }
      if (w && s.reported != epoch_) {
        s.reported = epoch_;
        if (race < 0) {
          race = b;
          what = w;
          other = o;
        }
      }
      if (write) {
        s.w_tid =
            static_cast<int16_t>((s.w_epoch == epoch_ && atomic && s.w_atomic && s.w_tid != tid) ? -2 : tid);
        s.w_epoch = epoch_;
        s.w_seq = static_cast<uint32_t>(seq_);
        s.w_atomic = atomic;
      } else if (!atomic) {
        if (s.r_epoch != epoch_) {
          s.r_epoch = epoch_;
          s.r_tid = static_cast<int16_t>(tid);
        } else if (s.r_tid != tid) {
          s.r_tid = -2;
        }
      }
    }
    if (uninit >= 0 && opt_.check_uninit)
      Report("uninitialized_read", tid, [&] {
        return "shared byte offset " + std::to_string(uninit) + SharedName(uninit) + " (of a " + std::to_string(n) +
               "-byte read) was never written in this block";
      });
    if (race >= 0)
      Report("race", tid, [&] {
        return "shared byte offset " + std::to_string(race) + SharedName(race) + " is " + (write ? "written" : "read") +
               " by thread " + std::to_string(tid) + " and " + what + " by " + Who(other) + " with no barrier in between";
      });
  }

  // An async-proxy read (TMA store, wgmma) by thread `tid` of shared byte `off`: a fence.proxy.async must lie
  // on the causality path from the byte's last generic write to the read (PTX ISA, memory consistency model:
  // proxy-preserved base causality order), else the async proxy may see older bytes. Taken as: the writer
  // fenced after its write, or the reader fenced after a barrier that followed the write. Reported once an
  // instruction (`*reported`).
  void AsyncProxyRead(int64_t off, int tid, const char* who, bool* reported) {
    const ShadowByte& s = shadow_[static_cast<size_t>(off)];
    const ProxyByte& p = proxy_[static_cast<size_t>(off)];
    const int32_t wr = p.writer;
    if (*reported || !wr || s.written != block_stamp_ ||
        proxy_fences_[static_cast<size_t>(wr - 1)] != p.fences ||
        fence_epoch_[static_cast<size_t>(tid)] > p.epoch)
      return;
    *reported = true;
    Report("async_proxy", tid, [&] {
      return "shared byte offset " + std::to_string(off) + SharedName(off) + " was written by thread " +
             std::to_string(wr - 1) + " (generic proxy) and is read by " + who +
             " (async proxy) with no fence.proxy.async in between (by the writer after its write, or by the "
             "reader after a barrier)";
    });
  }

  static std::string Who(int tid) { return tid < 0 ? std::string("several threads") : "thread " + std::to_string(tid); }

  std::string SharedName(int64_t off) const {
    for (const Symbol& s : m_.symbols)
      if (s.space == Space::kShared) {
        const int64_t lo = s.external ? extern_off_ : s.offset;
        const int64_t hi = s.external ? smem_bytes_ : s.offset + s.bytes;
        if (off >= lo && off < hi) return " ('" + s.name + "' + " + std::to_string(off - lo) + ")";
      }
    return "";
  }

  // ------------------------------------------------------------------------------ execution

  template <typename F>
  static void ForLanes(uint32_t mask, F&& f) {
    while (mask) {
      const int l = __builtin_ctz(mask);
      mask &= mask - 1;
      f(l);
    }
  }

  void Execute(int w, Warp& wp, const Instr& in, int pc, uint32_t act, uint32_t exec) {
    // the default: every active lane moves on
    auto advance = [&] { ForLanes(act, [&](int l) { wp.pc[static_cast<size_t>(l)] = pc + 1; }); };
    const Ty t = in.t;
    const int bits = TyBits(t);
    switch (in.op) {
      case Op::kNop: case Op::kFence: break;
      case Op::kFenceProxyAsync:
        ForLanes(exec, [&](int l) {
          ++proxy_fences_[static_cast<size_t>(w * 32 + l)];
          fence_epoch_[static_cast<size_t>(w * 32 + l)] = epoch_;
        });
        break;
      case Op::kTrap:
        // trap (PTX ISA 9.7.19.3) aborts the launch: here the lanes stop and it is reported (T.device_assert
        // prints its message through vprintf first)
        ForLanes(exec, [&](int l) {
          Report("assert", w * 32 + l, [&] {
            return std::string(
                "the thread executed trap (a failed T.device_assert): on a GPU the launch fails here");
          });
        });
        wp.live &= ~exec;
        exited_ += __builtin_popcount(exec);
        ForLanes(act & ~exec, [&](int l) { wp.pc[static_cast<size_t>(l)] = pc + 1; });
        return;
      case Op::kCall: Call(w, wp, in, exec); break;
      case Op::kTcAlloc:
      case Op::kTcDealloc: TmemAlloc(w, wp, in, act, exec); break;
      case Op::kTcRelinquish: tmem_.relinquished = true; break;
      case Op::kTcMma: TcMma5(w, wp, in, exec); break;
      case Op::kTcCommit: TcCommit(w, wp, in, exec); break;
      case Op::kTcCp: TcCp(w, wp, in, exec); break;
      case Op::kTcLd:
      case Op::kTcSt: TmemLdSt(w, wp, in, act, exec); break;
      case Op::kBra:
        ForLanes(act, [&](int l) { wp.pc[static_cast<size_t>(l)] = (exec >> l & 1) ? in.target : pc + 1; });
        return;
      case Op::kRet: case Op::kExit:
        wp.live &= ~exec;
        exited_ += __builtin_popcount(exec);
        ForLanes(act & ~exec, [&](int l) { wp.pc[static_cast<size_t>(l)] = pc + 1; });
        return;
      case Op::kBar: {
        // bar.sync / barrier.sync a{, b} (PTX ISA 9.7.13.1): the executing threads wait until b threads (all
        // of the CTA without b) have arrived at barrier a. `.aligned`: the whole warp executes it together.
        if (exec != act) FailAt(in, "a predicated barrier is not supported by the PTX emulator");
        const int64_t id = in.ops.empty() ? 0 : static_cast<int64_t>(Get(wp, in.ops[0], w, __builtin_ctz(act), Ty::kU32));
        int64_t count = 0;
        if (in.ops.size() > 1) count = static_cast<int64_t>(Get(wp, in.ops[1], w, __builtin_ctz(act), Ty::kU32));
        if (act != wp.live)
          Report("barrier_divergence", w * 32 + __builtin_ctz(act), [&] {
            return "bar.sync " + std::to_string(id) + " is reached by " + std::to_string(__builtin_popcount(act)) + " of the " +
                   std::to_string(__builtin_popcount(wp.live)) + " live lanes of warp " + std::to_string(w) +
                   " (the others are elsewhere in the program)";
          });
        if (count) {
          auto [it, fresh] = expected_.emplace(id, count);
          if (!fresh && it->second != count)
            Report("barrier_divergence", w * 32 + __builtin_ctz(act), [&] {
              return "bar.sync " + std::to_string(id) + " with thread count " + std::to_string(count) + ", others used " +
                     std::to_string(it->second);
            });
        }
        arrived_[id] += __builtin_popcount(act);
        wp.waiting = true;
        wp.bar_id = id;
        wp.bar_lanes = act;
        wp.bar_pc = pc;
        ReleaseBarriers();
        return;
      }
      case Op::kBarWarp: {  // bar.warp.sync membermask: the lanes of the mask must all execute it
        const uint32_t mask = static_cast<uint32_t>(Get(wp, in.ops[0], w, __builtin_ctz(act), Ty::kU32));
        if ((mask & wp.live) & ~exec)
          Report("inactive_lanes", w * 32 + __builtin_ctz(act), [&] {
            return "bar.warp.sync names lanes that do not execute it with the others";
          });
        break;
      }
      case Op::kMov: Mov(w, wp, in, exec); break;
      case Op::kLd: case Op::kSt: LoadStore(w, wp, in, exec); break;
      case Op::kCvta:
        // cvta.space.size p, a (generic from the window) / cvta.to.space.size p, a (PTX ISA 9.7.9.17)
        ForLanes(exec, [&](int l) {
          uint64_t a = Get(wp, in.ops[1], w, l, Ty::kU64);
          uint64_t tag = in.space == Space::kShared  ? kSharedTag
                         : in.space == Space::kLocal ? kLocalTag
                         : in.space == Space::kParam ? kParamTag
                         : in.space == Space::kConst ? kConstTag
                                                     : 0;
          uint64_t r = a;
          if (tag && in.to) {
            if ((a & kTagMask) != tag)
              Report("out_of_bounds", w * 32 + l, [&] {
                std::ostringstream os;
                os << "cvta.to." << SpaceName(in.space) << " of generic address 0x" << std::hex << a
                   << ", which is not in the " << SpaceName(in.space) << " window";
                return os.str();
              });
            r = a & ~kTagMask;
          } else if (tag) {
            r = a | tag;
          }
          Set(wp, in.ops[0], l, r, t);
        });
        break;
      case Op::kCvt: Cvt(w, wp, in, exec); break;
      case Op::kAdd: case Op::kSub: case Op::kMul: case Op::kDiv: case Op::kRem: case Op::kMin: case Op::kMax:
      case Op::kMad: case Op::kFma: case Op::kCopysign:
        if (TyFloat(t) || t == Ty::kF16x2 || t == Ty::kBF16x2)
          FloatArith(w, wp, in, exec);
        else
          IntArith(w, wp, in, exec);
        break;
      case Op::kAbs: case Op::kNeg: case Op::kEx2: case Op::kLg2: case Op::kRcp: case Op::kSqrt: case Op::kRsqrt:
      case Op::kSin: case Op::kCos: case Op::kTanh:
        Unary(w, wp, in, exec);
        break;
      case Op::kAnd: case Op::kOr: case Op::kXor:
        ForLanes(exec, [&](int l) {
          uint64_t a = Get(wp, in.ops[1], w, l, t), b = Get(wp, in.ops[2], w, l, t);
          Set(wp, in.ops[0], l, in.op == Op::kAnd ? (a & b) : in.op == Op::kOr ? (a | b) : (a ^ b), t);
        });
        break;
      case Op::kNot:
        ForLanes(exec, [&](int l) {
          uint64_t a = Get(wp, in.ops[1], w, l, t);
          Set(wp, in.ops[0], l, t == Ty::kPred ? !a : ~a, t);
        });
        break;
      case Op::kCnot:
        ForLanes(exec, [&](int l) { Set(wp, in.ops[0], l, Get(wp, in.ops[1], w, l, t) == 0 ? 1 : 0, t); });
        break;
      case Op::kShl: case Op::kShr:
        // shl / shr (PTX ISA 9.7.8.x): counts past the width clamp: shl and shr.u give 0, shr.s the sign
        ForLanes(exec, [&](int l) {
          uint64_t a = Get(wp, in.ops[1], w, l, t);
          uint64_t c = Get(wp, in.ops[2], w, l, Ty::kU32);
          uint64_t r;
          if (in.op == Op::kShl)
            r = c >= static_cast<uint64_t>(bits) ? 0 : a << c;
          else if (TySigned(t))
            r = static_cast<uint64_t>(SignExtend(a, bits) >> std::min<uint64_t>(c, static_cast<uint64_t>(bits - 1)));
          else
            r = c >= static_cast<uint64_t>(bits) ? 0 : (a & WidthMask(bits)) >> c;
          Set(wp, in.ops[0], l, r, t);
        });
        break;
      case Op::kSetp: Setp(w, wp, in, exec); break;
      case Op::kSelp:
        ForLanes(exec, [&](int l) {
          bool c = Get(wp, in.ops[3], w, l, Ty::kPred) != 0;
          Set(wp, in.ops[0], l, Get(wp, in.ops[c ? 1 : 2], w, l, t), t);
        });
        break;
      case Op::kPopc: case Op::kClz: case Op::kBrev:
        ForLanes(exec, [&](int l) {
          uint64_t a = Get(wp, in.ops[1], w, l, t);
          uint64_t r;
          if (in.op == Op::kPopc) {
            r = static_cast<uint64_t>(__builtin_popcountll(a));
          } else if (in.op == Op::kClz) {
            r = a == 0 ? static_cast<uint64_t>(bits) : static_cast<uint64_t>(__builtin_clzll(a) - (64 - bits));
          } else {
            r = 0;
            for (int b = 0; b < bits; ++b)
              if (a >> b & 1) r |= uint64_t{1} << (bits - 1 - b);
          }
          Set(wp, in.ops[0], l, r, in.op == Op::kBrev ? t : Ty::kU32);
        });
        break;
      case Op::kBfe:
        // bfe.type d, a, b, c: c bits of a from bit b, sign-extended for .s types (PTX ISA 9.7.8.x)
        ForLanes(exec, [&](int l) {
          uint64_t a = Get(wp, in.ops[1], w, l, t);
          uint64_t pos = Get(wp, in.ops[2], w, l, Ty::kU32) & 0xFF, len = Get(wp, in.ops[3], w, l, Ty::kU32) & 0xFF;
          uint64_t r = 0;
          const bool s = TySigned(t);
          const bool sbit = s && (len == 0 ? false : ((a >> std::min<uint64_t>(pos + len - 1, static_cast<uint64_t>(bits - 1))) & 1));
          for (uint64_t i = 0; i < static_cast<uint64_t>(bits); ++i) {
            uint64_t bit = (i < len && pos + i < static_cast<uint64_t>(bits)) ? (a >> (pos + i) & 1) : (s ? sbit : 0);
            if (i < len && pos + i >= static_cast<uint64_t>(bits)) bit = s ? sbit : 0;
            r |= bit << i;
          }
          Set(wp, in.ops[0], l, r, t);
        });
        break;
      case Op::kBfi:
        // bfi.type f, a, b, c, d: b with c..c+d-1 replaced by a's low bits
        ForLanes(exec, [&](int l) {
          uint64_t a = Get(wp, in.ops[1], w, l, t), b = Get(wp, in.ops[2], w, l, t);
          uint64_t pos = Get(wp, in.ops[3], w, l, Ty::kU32) & 0xFF, len = Get(wp, in.ops[4], w, l, Ty::kU32) & 0xFF;
          uint64_t r = b;
          for (uint64_t i = 0; i < len && pos + i < static_cast<uint64_t>(bits); ++i)
            r = (r & ~(uint64_t{1} << (pos + i))) | ((a >> i & 1) << (pos + i));
          Set(wp, in.ops[0], l, r, t);
        });
        break;
      case Op::kPrmt:
        // prmt.b32 d, a, b, c (default mode): byte i of d is byte c[4i+2:4i] of {b, a}, msb-replicated if c[4i+3]
        ForLanes(exec, [&](int l) {
          uint64_t a = Get(wp, in.ops[1], w, l, Ty::kB32), b = Get(wp, in.ops[2], w, l, Ty::kB32);
          uint64_t c = Get(wp, in.ops[3], w, l, Ty::kB32);
          uint64_t src = (b << 32) | a, r = 0;
          for (int i = 0; i < 4; ++i) {
            uint64_t sel = c >> (4 * i) & 0xF;
            uint64_t byte = src >> (8 * (sel & 7)) & 0xFF;
            if (sel & 8) byte = (byte & 0x80) ? 0xFF : 0;
            r |= byte << (8 * i);
          }
          Set(wp, in.ops[0], l, r, Ty::kB32);
        });
        break;
      case Op::kShf:
        // shf.{l,r}.{wrap,clamp}.b32 d, a, b, c (PTX ISA, "shf"): the funnel {b, a} (b the upper 32 bits) shifted by
        // n = c & 31 (.wrap) or min(c, 32) (.clamp); .l takes the upper 32 bits of the left shift, .r the lower
        // 32 of the right shift
        ForLanes(exec, [&](int l) {
          const uint64_t a = Get(wp, in.ops[1], w, l, Ty::kB32) & 0xFFFFFFFFu;
          const uint64_t b = Get(wp, in.ops[2], w, l, Ty::kB32) & 0xFFFFFFFFu;
          const uint64_t c = Get(wp, in.ops[3], w, l, Ty::kU32) & 0xFFFFFFFFu;
          const uint64_t n = (in.mode & 2) ? std::min<uint64_t>(c, 32) : (c & 31);
          const uint64_t funnel = (b << 32) | a;
          const uint64_t r = (in.mode & 1) ? (funnel >> n) & 0xFFFFFFFFu : ((funnel << n) >> 32) & 0xFFFFFFFFu;
          Set(wp, in.ops[0], l, r, Ty::kB32);
        });
        break;
      case Op::kLop3:
        // lop3.b32 d, a, b, c, immLut: bit i of d = immLut[(a_i << 2) | (b_i << 1) | c_i]
        ForLanes(exec, [&](int l) {
          uint64_t a = Get(wp, in.ops[1], w, l, Ty::kB32), b = Get(wp, in.ops[2], w, l, Ty::kB32);
          uint64_t c = Get(wp, in.ops[3], w, l, Ty::kB32), lut = Get(wp, in.ops[4], w, l, Ty::kB32);
          uint64_t r = 0;
          for (int i = 0; i < 32; ++i) r |= ((lut >> (((a >> i & 1) << 2) | ((b >> i & 1) << 1) | (c >> i & 1))) & 1) << i;
          Set(wp, in.ops[0], l, r, Ty::kB32);
        });
        break;
      case Op::kTestp:
        ForLanes(exec, [&](int l) {
          double x = FloatOf(Get(wp, in.ops[1], w, l, t), t);
          bool r = false;
          switch (in.mode) {
            case 0: r = std::isfinite(x); break;
            case 1: r = std::isinf(x); break;
            case 2: r = !std::isnan(x); break;
            case 3: r = std::isnan(x); break;
            case 4: r = t == Ty::kF32 ? std::isnormal(static_cast<float>(x)) : std::isnormal(x); break;
            default:
              r = t == Ty::kF32 ? std::fpclassify(static_cast<float>(x)) == FP_SUBNORMAL : std::fpclassify(x) == FP_SUBNORMAL;
          }
          Set(wp, in.ops[0], l, r, Ty::kPred);
        });
        break;
      case Op::kDp4a:
        // dp4a.atype.btype d, a, b, c (PTX ISA 9.7.1.23): d = c + the sum of the products of the four byte pairs,
        // each byte signed or not by its type
        ForLanes(exec, [&](int l) {
          const uint64_t a = Get(wp, in.ops[1], w, l, Ty::kB32), b = Get(wp, in.ops[2], w, l, Ty::kB32);
          int64_t acc = SignExtend(Get(wp, in.ops[3], w, l, Ty::kB32), 32);
          for (int i = 0; i < 4; ++i) {
            const uint64_t x = a >> (8 * i) & 0xFF, y = b >> (8 * i) & 0xFF;
            acc += (TySigned(in.t) ? SignExtend(x, 8) : static_cast<int64_t>(x)) *
                   (TySigned(in.t2) ? SignExtend(y, 8) : static_cast<int64_t>(y));
          }
          Set(wp, in.ops[0], l, static_cast<uint64_t>(acc), Ty::kB32);
        });
        break;
      case Op::kActivemask:
        ForLanes(exec, [&](int l) { Set(wp, in.ops[0], l, act, Ty::kB32); });
        break;
      case Op::kShfl: Shfl(w, wp, in, act, exec); break;
      case Op::kVote: Vote(w, wp, in, act, exec); break;
      case Op::kAtom: case Op::kRed: Atomic(w, wp, in, exec); break;
      case Op::kCpAsync: CpAsync(w, wp, in, exec); break;
      case Op::kCpAsyncCommit:
        ForLanes(exec, [&](int l) {
          const size_t tid = static_cast<size_t>(w * 32 + l);
          groups_[tid].push_back(std::move(open_[tid]));
          open_[tid].clear();
        });
        break;
      case Op::kCpAsyncWait: case Op::kCpAsyncWaitAll: {
        const int64_t n = in.op == Op::kCpAsyncWaitAll ? 0 : static_cast<int64_t>(Get(wp, in.ops[0], w, 0, Ty::kU32));
        ForLanes(exec, [&](int l) { CpAsyncWait(w * 32 + l, n, in.op == Op::kCpAsyncWaitAll); });
        break;
      }
      case Op::kLdmatrix: Ldmatrix(w, wp, in, act, exec); break;
      case Op::kMma: Mma(w, wp, in, act, exec); break;
      case Op::kMbarInit: case Op::kMbarArrive: case Op::kMbarExpectTx: MbarrierOp(w, wp, in, exec); break;
      case Op::kMbarTryWait:
        if (!MbarrierTryWait(w, wp, in, exec)) return;  // blocked: the warp retries it when the phase moves on
        break;
      case Op::kClusterArrive: ClusterArrive(w, exec); break;
      case Op::kClcTryCancel: ClcTryCancel(w, wp, in, exec); break;
      case Op::kClcQuery:
        // the response: 16 bytes this emulator writes (ClcTryCancel): word 0 bit 0 cancelled, words 1..3 the
        // first block's ctaid.x / .y / .z
        ForLanes(exec, [&](int l) {
          const Operand& q = in.ops[1];
          if (q.kind != Operand::kReg) FailAt(in, "the response operand of query_cancel is a .b128 register");
          const uint64_t lo = R(wp, q.reg, l), hi = R(wp, q.reg + 1, l);
          const uint32_t words[4] = {static_cast<uint32_t>(lo), static_cast<uint32_t>(lo >> 32),
                                     static_cast<uint32_t>(hi), static_cast<uint32_t>(hi >> 32)};
          if (in.mode == 0) {
            Set(wp, in.ops[0], l, words[0] & 1, Ty::kPred);
          } else if (in.mode == 1) {
            const Operand& v = in.ops[0];
            for (size_t i = 0; i < v.vec.size() && i < 4; ++i)
              if (v.vec[i].kind == Operand::kReg) Set(wp, v.vec[i], l, i < 3 ? words[i + 1] : 0, Ty::kB32);
          } else {
            Set(wp, in.ops[0], l, words[in.mode - 1], Ty::kB32);
          }
        });
        break;
      case Op::kClusterWait:
        if (!ClusterWait(w, wp, exec)) return;  // blocked: retried when the cluster barrier passes
        break;
      case Op::kMapa:
        ForLanes(exec, [&](int l) {
          const uint64_t a = Get(wp, in.ops[1], w, l, in.t), r = Get(wp, in.ops[2], w, l, Ty::kU32);
          const int64_t n = cl_ ? cl_->n : 1;
          if (r >= static_cast<uint64_t>(n) || (a & kClusterTag) || a >= static_cast<uint64_t>(smem_bytes_)) {
            Report("cluster_rank", w * 32 + l, [&] {
              return "mapa of shared address " + std::to_string(a) + " into block " + std::to_string(r) +
                     " of a cluster of " + std::to_string(n) + " blocks (" + std::to_string(smem_bytes_) +
                     " bytes of shared memory each)";
            });
            Set(wp, in.ops[0], l, 0, in.t);
            return;
          }
          Set(wp, in.ops[0], l, kClusterTag | r << 24 | a, in.t);
        });
        break;
      case Op::kTmaLoad:
      case Op::kTmaStore:
      case Op::kTmaReduce: Tma(w, wp, in, exec); break;
      case Op::kCpAsyncMbarArrive:
        // cp.async.mbarrier.arrive{.noinc} [a] (PTX ISA 9.7.9.25.3.2): an arrive-on of the mbarrier when all
        // the thread's earlier cp.async copies complete. Here they complete now (landing them is what a wait
        // would do); without .noinc the pending count is incremented first, so only .noinc counts as an
        // arrival.
        ForLanes(exec, [&](int l) {
          const int tid = w * 32 + l;
          CpAsyncWait(tid, 0, true);
          const int64_t a = MbarAddress(wp, in, in.ops[0], w, l);
          if (a >= 0 && in.mode) ArriveOn(a, tid);
        });
        break;
      case Op::kBulkCommit: case Op::kBulkWait: case Op::kWgmmaFence: case Op::kWgmmaCommit: case Op::kWgmmaWait:
        break;  // TMA stores and wgmma complete at issue here: nothing is left in flight to wait for
      case Op::kWgmma: Wgmma(w, wp, in, act, exec); break;
      case Op::kStmatrix: Stmatrix(w, wp, in, act, exec); break;
      case Op::kElect: {
        // elect.sync d|p, membermask: the lowest lane of the mask that executes it is elected
        const uint32_t mask = static_cast<uint32_t>(Get(wp, in.ops[1], w, __builtin_ctz(exec | 1u), Ty::kB32)) & exec;
        const int leader = mask ? __builtin_ctz(mask) : -1;
        ForLanes(exec, [&](int l) {
          Set(wp, in.ops[0], l, static_cast<uint64_t>(leader), Ty::kB32);
          if (in.ops[0].pred_out >= 0) R(wp, in.ops[0].pred_out, l) = l == leader;
        });
        break;
      }
    }
    advance();
  }

  // A call that is left after inlining: an external function. vprintf(format, arguments) (the CUDA device
  // runtime's printf: the arguments packed in a buffer, each at its natural alignment, floats as doubles)
  // prints each lane's text to the standard output, lanes in order, as the thread-level emulator prints.
  void Call(int w, Warp& wp, const Instr& in, uint32_t exec) {
    if (in.callee != "vprintf")
      FailAt(in,
             "the external function '" + in.callee + "' cannot be run by the PTX emulator (it runs vprintf)");
    const std::vector<Operand>& args = in.ops[1].vec;
    const std::vector<Operand>& rets = in.ops[0].vec;
    if (args.size() != 2 || rets.size() > 1)
      FailAt(in, "vprintf takes (format, arguments) and returns one value");
    ForLanes(exec, [&](int l) {
      const int tid = w * 32 + l;
      auto param = [&](const Operand& o) {
        Where wh{Space::kLocal, SymbolAddress(o.sym)};
        uint64_t v = 0;
        if (uint8_t* p = Access(wh, tid, 8, false)) std::memcpy(&v, p, 8);
        return v;
      };
      const uint64_t fmt = param(args[0]), buf = param(args[1]);
      int64_t at = 0;
      auto next = [&](int bytes) {  // the next packed argument
        at = (at + bytes - 1) / bytes * bytes;
        uint64_t v = 0;
        if (uint8_t* p = Access(Generic(buf + static_cast<uint64_t>(at)), tid, bytes, false))
          std::memcpy(&v, p, static_cast<size_t>(bytes));
        at += bytes;
        return v;
      };
      const std::string f = CString(fmt, tid);
      std::string out;
      for (size_t i = 0; i < f.size(); ++i) {
        if (f[i] != '%') {
          out += f[i];
          continue;
        }
        size_t j = i + 1;
        while (j < f.size() && std::strchr("-+ #0123456789.", f[j])) ++j;
        std::string len;
        while (j < f.size() && std::strchr("hlLqjzt", f[j])) len += f[j++];
        if (j >= f.size()) FailAt(in, "printf format '" + f + "' ends inside a conversion");
        const char c = f[j];
        std::string spec = f.substr(i, j - i - len.size());
        char tmp[512];
        if (c == '%') {
          out += '%';
        } else if (std::strchr("diuxXoc", c)) {
          const bool wide =
              len.find('l') != std::string::npos || len == "j" || len == "z" || len == "t" || len == "q";
          uint64_t v = next(wide ? 8 : 4);
          if (std::strchr("di", c))
            std::snprintf(tmp, sizeof tmp, (spec + "lld").c_str(),
                          static_cast<long long>(wide ? v : static_cast<uint64_t>(SignExtend(v, 32))));
          else if (c == 'c')
            std::snprintf(tmp, sizeof tmp, (spec + "c").c_str(), static_cast<int>(v));
          else
            std::snprintf(tmp, sizeof tmp, (spec + "ll" + c).c_str(), static_cast<unsigned long long>(v));
          out += tmp;
        } else if (std::strchr("eEfFgGaA", c)) {
          std::snprintf(tmp, sizeof tmp, (spec + c).c_str(), AsF64(next(8)));
          out += tmp;
        } else if (c == 's') {
          std::snprintf(tmp, sizeof tmp, (spec + "s").c_str(), CString(next(8), tid).c_str());
          out += tmp;
        } else if (c == 'p') {
          std::snprintf(tmp, sizeof tmp, "0x%llx", static_cast<unsigned long long>(next(8)));
          out += tmp;
        } else {
          FailAt(in, std::string("printf conversion '%") + c + "' is not supported by the PTX emulator");
        }
        i = j;
      }
      std::fputs(out.c_str(), stdout);
      if (!rets.empty()) {
        Where wh{Space::kLocal, SymbolAddress(rets[0].sym)};
        const int32_t n = static_cast<int32_t>(out.size());
        if (uint8_t* p = Access(wh, tid, 4, true)) std::memcpy(p, &n, 4);
      }
    });
    std::fflush(stdout);
  }

  // The state space and offset of a generic address.
  Where Generic(uint64_t a) const {
    if ((a & kTagMask) == kSharedTag) return {Space::kShared, a & ~kTagMask};
    if ((a & kTagMask) == kLocalTag) return {Space::kLocal, a & ~kTagMask};
    if ((a & kTagMask) == kParamTag) return {Space::kParam, a & ~kTagMask};
    if ((a & kTagMask) == kConstTag) return ConstWhere(a & ~kTagMask);
    return {Space::kGlobal, a};
  }

  // .const addresses are offsets in the constant window (32-bit registers hold them, as for shared memory);
  // the bytes live with the module's .global variables.
  Where ConstWhere(uint64_t off) const {
    return {Space::kGlobal, reinterpret_cast<uint64_t>(Globals().data()) + off};
  }

  // The NUL-terminated string at a generic address (at most 4096 bytes).
  std::string CString(uint64_t a, int tid) {
    std::string s;
    for (int i = 0; i < 4096; ++i) {
      const uint8_t* p = Access(Generic(a + static_cast<uint64_t>(i)), tid, 1, false);
      if (!p || *p == 0) break;
      s += static_cast<char>(*p);
    }
    return s;
  }

  void Mov(int w, Warp& wp, const Instr& in, uint32_t exec) {
    const Ty t = in.t;
    const Operand& d = in.ops[0];
    const Operand& a = in.ops[1];
    if (t == Ty::kB128) {  // mov.b128 d, {lo, hi} / {lo, hi}, a / d, a: a register's two 64-bit slots
      ForLanes(exec, [&](int l) {
        uint64_t lo = 0, hi = 0;
        if (a.kind == Operand::kVec && a.vec.size() == 2) {
          lo = Get(wp, a.vec[0], w, l, Ty::kB64);
          hi = Get(wp, a.vec[1], w, l, Ty::kB64);
        } else if (a.kind == Operand::kReg) {
          lo = R(wp, a.reg, l);
          hi = R(wp, a.reg + 1, l);
        } else {
          FailAt(in, "mov.b128 takes a .b128 register or {lo, hi}");
        }
        if (d.kind == Operand::kVec && d.vec.size() == 2) {
          Set(wp, d.vec[0], l, lo, Ty::kB64);
          Set(wp, d.vec[1], l, hi, Ty::kB64);
        } else if (d.kind == Operand::kReg) {
          R(wp, d.reg, l) = lo;
          R(wp, d.reg + 1, l) = hi;
        } else {
          FailAt(in, "mov.b128 writes a .b128 register or {lo, hi}");
        }
      });
      return;
    }
    if (d.kind == Operand::kVec || a.kind == Operand::kVec) {
      // mov.b32 / .b64 packing and unpacking: element 0 is the least significant
      const Operand& v = d.kind == Operand::kVec ? d : a;
      const int part = TyBits(t) / static_cast<int>(v.vec.size());
      ForLanes(exec, [&](int l) {
        if (d.kind == Operand::kVec) {
          uint64_t x = Get(wp, a, w, l, t);
          for (size_t i = 0; i < v.vec.size(); ++i)
            if (v.vec[i].kind == Operand::kReg) R(wp, v.vec[i].reg, l) = x >> (part * static_cast<int>(i)) & WidthMask(part);
        } else {
          uint64_t x = 0;
          for (size_t i = 0; i < v.vec.size(); ++i)
            x |= (Get(wp, v.vec[i], w, l, Ty::kNone) & WidthMask(part)) << (part * static_cast<int>(i));
          Set(wp, d, l, x, t);
        }
      });
      return;
    }
    ForLanes(exec, [&](int l) { Set(wp, d, l, Get(wp, a, w, l, t), t); });
  }

  void LoadStore(int w, Warp& wp, const Instr& in, uint32_t exec) {
    // ld / st .space{.vN}.type (PTX ISA 9.7.9.8 / 9.7.9.10): N elements at consecutive addresses
    const bool load = in.op == Op::kLd;
    const Ty t = in.t;
    const int esize = std::max(1, TyBits(t) / 8);
    const int n = in.vec;
    const Operand& data0 = in.ops[load ? 0 : 1];
    const Operand& data = n == 1 && data0.kind == Operand::kVec && data0.vec.size() == 1 ? data0.vec[0] : data0;
    const Operand& addr = in.ops[load ? 1 : 0];
    if (n > 1 && (data.kind != Operand::kVec || static_cast<int>(data.vec.size()) != n))
      FailAt(in, "a vector access needs a vector of " + std::to_string(n) + " registers");
    ForLanes(exec, [&](int l) {
      const int tid = w * 32 + l;
      Where wh = Resolve(wp, in, addr, l, in.space);
      Machine* mem = this;  // ld / st .shared::cluster: the block the mapa address names
      if (in.cluster_addr && (wh.addr & kClusterTag)) {
        mem = ClusterPeer(static_cast<int64_t>(wh.addr >> 24 & 0x7F), tid);
        wh.addr &= 0xFFFFFF;
      }
      uint8_t* p = mem ? mem->Access(wh, tid, esize * n, !load) : nullptr;
      for (int i = 0; i < n; ++i) {
        const Operand& e = n > 1 ? data.vec[static_cast<size_t>(i)] : data;
        if (load) {
          uint64_t v = 0;
          if (p) std::memcpy(&v, p + i * esize, static_cast<size_t>(esize));
          if (TySigned(t)) v = static_cast<uint64_t>(SignExtend(v, TyBits(t)));
          if (e.kind == Operand::kReg) R(wp, e.reg, l) = v & WidthMask(std::max(TyBits(in.t), TyBits(k_.reg_types[static_cast<size_t>(e.reg)])));
        } else if (p) {
          uint64_t v = Get(wp, e, w, l, t);
          std::memcpy(p + i * esize, &v, static_cast<size_t>(esize));
        }
      }
    });
  }

  void Cvt(int w, Warp& wp, const Instr& in, uint32_t exec) {
    // cvt{.irnd/.frnd}{.ftz}{.sat}.dtype.atype d, a (PTX ISA 9.7.9.21)
    const Ty dt = in.t, st = in.t2;
    if (dt == Ty::kE4M3x2 || dt == Ty::kE5M2x2) {
      // cvt.rn.satfinite.e4m3x2.f32 d, a, b: a to the upper byte, b to the lower; .f16x2 source: its halves
      const Ty e = dt == Ty::kE4M3x2 ? Ty::kE4M3 : Ty::kE5M2;
      ForLanes(exec, [&](int l) {
        double hi, lo;
        if (st == Ty::kF16x2) {
          const uint64_t v = Get(wp, in.ops[1], w, l, Ty::kB32);
          hi = HalfValue(v >> 16, Ty::kF16);
          lo = HalfValue(v, Ty::kF16);
        } else {
          hi = FloatOf(Get(wp, in.ops[1], w, l, st), st);
          lo = FloatOf(Get(wp, in.ops[2], w, l, st), st);
        }
        Set(wp, in.ops[0], l, (FloatBits(SatFinite(hi, e), e) << 8) | FloatBits(SatFinite(lo, e), e), Ty::kB16);
      });
      return;
    }
    if ((dt == Ty::kF16x2 || dt == Ty::kBF16x2) && (st == Ty::kE4M3x2 || st == Ty::kE5M2x2)) {
      // cvt.rn.f16x2.e4m3x2 d, a: each byte of a to the matching half of d (exact)
      const Ty e = st == Ty::kE4M3x2 ? Ty::kE4M3 : Ty::kE5M2, h = dt == Ty::kF16x2 ? Ty::kF16 : Ty::kBF16;
      ForLanes(exec, [&](int l) {
        const uint64_t v = Get(wp, in.ops[1], w, l, Ty::kB16);
        Set(wp, in.ops[0], l, (FloatBits(HalfValue(v >> 8, e), h) << 16) | FloatBits(HalfValue(v, e), h), Ty::kB32);
      });
      return;
    }
    if (dt == Ty::kTf32) {  // cvt.rna.tf32.f32: 10 mantissa bits, to nearest, ties away from zero (in f32 bits)
      ForLanes(exec, [&](int l) {
        const uint64_t v = Get(wp, in.ops[1], w, l, Ty::kB32);
        Set(wp, in.ops[0], l, std::isfinite(AsF32(v)) ? (v + 0x1000) & ~uint64_t{0x1FFF} : v, Ty::kB32);
      });
      return;
    }
    if (dt == Ty::kF16x2 || dt == Ty::kBF16x2) {  // cvt.rn.f16x2.f32 d, a, b: a to the upper half, b to the lower
      const Ty h = dt == Ty::kF16x2 ? Ty::kF16 : Ty::kBF16;
      ForLanes(exec, [&](int l) {
        double a = FloatOf(Get(wp, in.ops[1], w, l, st), st), b = FloatOf(Get(wp, in.ops[2], w, l, st), st);
        if (in.sat) {  // .relu is not modelled; .satfinite clamps to the finite range
          a = SatFinite(a, h);
          b = SatFinite(b, h);
        }
        Set(wp, in.ops[0], l, (FloatBits(a, h) << 16) | FloatBits(b, h), Ty::kB32);
      });
      return;
    }
    ForLanes(exec, [&](int l) {
      const uint64_t a = Get(wp, in.ops[1], w, l, st);
      uint64_t r = 0;
      if (TyFloat(dt) && TyFloat(st)) {
        double x = FloatOf(a, st);
        if (in.ftz && st == Ty::kF32) x = Ftz(static_cast<float>(x));
        if (in.rnd == Rnd::kRni) x = std::nearbyint(x);
        if (in.rnd == Rnd::kRzi) x = std::trunc(x);
        if (in.rnd == Rnd::kRmi) x = std::floor(x);
        if (in.rnd == Rnd::kRpi) x = std::ceil(x);
        if (in.sat) x = std::isnan(x) ? 0.0 : std::min(1.0, std::max(0.0, x));
        if (dt == Ty::kF32 && (in.rnd == Rnd::kRz || in.rnd == Rnd::kRm || in.rnd == Rnd::kRp))
          r = F32Bits(Rounded(in.rnd, [&] { return static_cast<float>(x); }));
        else
          r = FloatBits(dt == Ty::kE4M3 || dt == Ty::kE5M2 ? SatFinite(x, dt) : x, dt);
        if (in.ftz && dt == Ty::kF32) r = F32Bits(Ftz(AsF32(r)));
      } else if (TyFloat(st)) {  // float to integer: rounded as asked, saturating, NaN gives 0
        double x = FloatOf(a, st);
        if (in.ftz && st == Ty::kF32) x = Ftz(static_cast<float>(x));
        x = in.rnd == Rnd::kRni ? std::nearbyint(x) : in.rnd == Rnd::kRmi ? std::floor(x)
          : in.rnd == Rnd::kRpi ? std::ceil(x) : std::trunc(x);
        const int b = TyBits(dt);
        const double lo = TySigned(dt) ? -std::ldexp(1.0, b - 1) : 0.0;
        const double hi = TySigned(dt) ? std::ldexp(1.0, b - 1) - 1 : std::ldexp(1.0, b) - 1;
        if (std::isnan(x)) x = 0;
        x = std::min(std::max(x, lo), hi);
        r = TySigned(dt) ? static_cast<uint64_t>(static_cast<int64_t>(x))
                         : (x >= 9223372036854775808.0 ? static_cast<uint64_t>(x - 9223372036854775808.0) + (uint64_t{1} << 63)
                                                       : static_cast<uint64_t>(x));
      } else if (TyFloat(dt)) {  // integer to float, in the rounding direction given
        const int b = TyBits(st);
        const bool s = TySigned(st);
        r = Rounded(in.rnd, [&] {
          if (dt == Ty::kF64) {
            double v = s ? static_cast<double>(SignExtend(a, b)) : static_cast<double>(a & WidthMask(b));
            return F64Bits(v);
          }
          float v = s ? static_cast<float>(SignExtend(a, b)) : static_cast<float>(a & WidthMask(b));
          return dt == Ty::kF32 ? F32Bits(v) : FloatBits(s ? static_cast<double>(SignExtend(a, b)) : static_cast<double>(a & WidthMask(b)), dt);
        });
      } else {  // integer to integer: sign- or zero-extend from the source width, then wrap (or saturate)
        const int sb = TyBits(st), db = TyBits(dt);
        int64_t v = TySigned(st) ? SignExtend(a, sb) : static_cast<int64_t>(a & WidthMask(sb));
        if (in.sat && db < 64) {
          const int64_t lo = TySigned(dt) ? -(int64_t{1} << (db - 1)) : 0;
          const int64_t hi = TySigned(dt) ? (int64_t{1} << (db - 1)) - 1 : static_cast<int64_t>(WidthMask(db));
          v = std::min(std::max(v, lo), hi);
        }
        r = static_cast<uint64_t>(v);
        if (TySigned(dt)) r = static_cast<uint64_t>(SignExtend(r, db));
      }
      Set(wp, in.ops[0], l, r, dt);
    });
  }

  static double SatFinite(double x, Ty t) {
    double m = t == Ty::kE4M3 ? 448.0 : t == Ty::kE5M2 ? 57344.0 : t == Ty::kF16 ? 65504.0 : 3.3895313892515355e38;
    if (std::isnan(x)) return x;
    return std::min(m, std::max(-m, x));
  }

  void IntArith(int w, Warp& wp, const Instr& in, uint32_t exec) {
    // add / sub / mul{.lo,.hi,.wide} / mad / div / rem / min / max on integers (PTX ISA 9.7.1)
    const Ty t = in.t;
    const int bits = TyBits(t);
    const bool s = TySigned(t);
    ForLanes(exec, [&](int l) {
      const uint64_t ua = Get(wp, in.ops[1], w, l, t), ub = Get(wp, in.ops[2], w, l, t);
      const int64_t sa = SignExtend(ua, bits), sb = SignExtend(ub, bits);
      uint64_t r = 0;
      Ty rt = t;
      auto product = [&](bool want_hi, bool wide) -> uint64_t {
        // the full 2*bits product of the operands (signed or not): its low half, its high half, or all of it
        if (s) {
          const __int128 p = static_cast<__int128>(sa) * sb;
          return static_cast<uint64_t>(want_hi && !wide ? p >> bits : p);
        }
        const unsigned __int128 p =
            static_cast<unsigned __int128>(ua & WidthMask(bits)) * static_cast<unsigned __int128>(ub & WidthMask(bits));
        return static_cast<uint64_t>(want_hi && !wide ? p >> bits : p);
      };
      if (in.cc_in || in.cc_out) {
        // extended-precision arithmetic (PTX ISA 9.7.2): add.cc / addc{.cc}, sub.cc / subc{.cc} (the flag is
        // the borrow), mad{.lo,.hi}.cc / madc{.lo,.hi}{.cc}, on 32- and 64-bit integers, through the lane's
        // CC.CF
        if (bits != 32 && bits != 64) FailAt(in, "carry arithmetic takes 32- and 64-bit integers");
        const unsigned __int128 M = (static_cast<unsigned __int128>(1) << bits) - 1;
        const unsigned __int128 cin = in.cc_in ? (wp.carry >> l & 1) : 0;
        unsigned __int128 full = 0;
        bool cout = false;
        if (in.op == Op::kSub) {
          const unsigned __int128 x = ua & M, y = (ub & M) + cin;
          full = x - y;
          cout = y > x;
        } else {
          unsigned __int128 y = ub & M;
          if (in.op == Op::kMad) {
            const unsigned __int128 p =
                (ua & M) * (ub & M);  // unsigned: the low half is the same signed or not
            if (in.hi && s) {
              const __int128 sp = static_cast<__int128>(sa) * sb;
              y = static_cast<unsigned __int128>(sp >> bits) & M;
            } else {
              y = (in.hi ? p >> bits : p) & M;
            }
            y += Get(wp, in.ops[3], w, l, t) & M;
          }
          full = (ua & M) * (in.op == Op::kMad ? 0 : 1) + y + cin;
          cout = (full >> bits) != 0;
        }
        if (in.cc_out) wp.carry = (wp.carry & ~(1u << l)) | (static_cast<uint32_t>(cout) << l);
        Set(wp, in.ops[0], l, static_cast<uint64_t>(full & M), t);
        return;
      }
      switch (in.op) {
        case Op::kAdd: {
          r = ua + ub;
          if (in.sat && s && bits == 32) r = static_cast<uint64_t>(std::min<int64_t>(INT32_MAX, std::max<int64_t>(INT32_MIN, sa + sb)));
          break;
        }
        case Op::kSub: {
          r = ua - ub;
          if (in.sat && s && bits == 32) r = static_cast<uint64_t>(std::min<int64_t>(INT32_MAX, std::max<int64_t>(INT32_MIN, sa - sb)));
          break;
        }
        case Op::kMul:
          r = product(in.hi, in.wide);
          if (in.wide) rt = WideOf(t);
          break;
        case Op::kMad: {
          uint64_t c = Get(wp, in.ops[3], w, l, in.wide ? WideOf(t) : t);
          r = product(in.hi, in.wide) + c;
          if (in.wide) rt = WideOf(t);
          break;
        }
        case Op::kDiv:
          if ((ub & WidthMask(bits)) == 0) r = ~uint64_t{0};  // undefined in PTX: all ones, as the hardware gives
          else r = s ? (sb == -1 ? uint64_t{0} - static_cast<uint64_t>(sa) : static_cast<uint64_t>(sa / sb)) : (ua & WidthMask(bits)) / (ub & WidthMask(bits));
          break;
        case Op::kRem:
          if ((ub & WidthMask(bits)) == 0) r = ua;
          else r = s ? static_cast<uint64_t>(sb == -1 ? 0 : sa % sb) : (ua & WidthMask(bits)) % (ub & WidthMask(bits));
          break;
        case Op::kMin: r = s ? static_cast<uint64_t>(std::min(sa, sb)) : std::min(ua & WidthMask(bits), ub & WidthMask(bits)); break;
        case Op::kMax: r = s ? static_cast<uint64_t>(std::max(sa, sb)) : std::max(ua & WidthMask(bits), ub & WidthMask(bits)); break;
        default: FailAt(in, "not an integer operation");
      }
      Set(wp, in.ops[0], l, r, rt);
    });
  }

  static Ty WideOf(Ty t) {
    switch (t) {
      case Ty::kS16: return Ty::kS32;
      case Ty::kU16: return Ty::kU32;
      case Ty::kS32: return Ty::kS64;
      case Ty::kU32: return Ty::kU64;
      default: return Ty::kB64;
    }
  }

  void FloatArith(int w, Warp& wp, const Instr& in, uint32_t exec) {
    // add / sub / mul / fma / mad / div / min / max / copysign on f32 / f64 / f16 / bf16 / f16x2 (PTX ISA 9.7.3,
    // 9.7.4): results rounded once in the direction of the rounding modifier (.rn by default); .ftz flushes
    // f32 subnormal inputs and results to signed zero; .sat clamps to [0, 1] (NaN to 0).
    const Ty t = in.t;
    const bool pair = t == Ty::kF16x2 || t == Ty::kBF16x2;
    const Ty et = t == Ty::kF16x2 ? Ty::kF16 : t == Ty::kBF16x2 ? Ty::kBF16 : t;
    const int nops = in.op == Op::kFma || in.op == Op::kMad ? 3 : 2;
    ForLanes(exec, [&](int l) {
      uint64_t raw[3] = {0, 0, 0};
      for (int i = 0; i < nops; ++i) raw[i] = Get(wp, in.ops[static_cast<size_t>(i + 1)], w, l, pair ? Ty::kB32 : t);
      uint64_t out = 0;
      for (int half = 0; half < (pair ? 2 : 1); ++half) {
        double x[3];
        for (int i = 0; i < nops; ++i) {
          uint64_t b = pair ? (raw[i] >> (16 * half)) & 0xFFFF : raw[i];
          x[i] = FloatOf(b, et);
          if (in.ftz && et == Ty::kF32) x[i] = Ftz(static_cast<float>(x[i]));
        }
        double r = 0;
        auto round = [&](auto f) -> double {
          if (et == Ty::kF32) return Rounded(in.rnd, [&] { return static_cast<double>(static_cast<float>(f())); });
          return Rounded(in.rnd, [&] { return static_cast<double>(f()); });
        };
        switch (in.op) {
          case Op::kAdd: r = round([&] { return x[0] + x[1]; }); break;
          case Op::kSub: r = round([&] { return x[0] - x[1]; }); break;
          case Op::kMul: r = round([&] { return x[0] * x[1]; }); break;
          case Op::kDiv:
            if (et == Ty::kF32)
              r = Rounded(in.rnd, [&] { return static_cast<double>(static_cast<float>(x[0]) / static_cast<float>(x[1])); });
            else
              r = Rounded(in.rnd, [&] { return x[0] / x[1]; });
            break;
          case Op::kFma: case Op::kMad:  // one rounding of a * b + c
            if (et == Ty::kF32)
              r = Rounded(in.rnd, [&] {
                return static_cast<double>(std::fma(static_cast<float>(x[0]), static_cast<float>(x[1]), static_cast<float>(x[2])));
              });
            else
              r = Rounded(in.rnd, [&] { return std::fma(x[0], x[1], x[2]); });
            break;
          case Op::kMin: r = std::fmin(x[0], x[1]); break;
          case Op::kMax: r = std::fmax(x[0], x[1]); break;
          case Op::kCopysign: r = std::copysign(x[1], x[0]); break;
          default: FailAt(in, "not a float operation");
        }
        if (in.sat) r = std::isnan(r) ? 0.0 : std::min(1.0, std::max(0.0, r));
        if (in.ftz && et == Ty::kF32) r = Ftz(static_cast<float>(r));
        uint64_t b = FloatBits(r, et);
        out |= pair ? (b & 0xFFFF) << (16 * half) : b;
      }
      Set(wp, in.ops[0], l, out, pair ? Ty::kB32 : t);
    });
  }

  void Unary(int w, Warp& wp, const Instr& in, uint32_t exec) {
    // abs / neg and the approximate transcendentals (PTX ISA 9.7.3.x / 9.7.4.x). .approx results are the
    // correctly rounded value of the function; the hardware is within its documented error of it.
    const Ty t = in.t;
    const int bits = TyBits(t);
    ForLanes(exec, [&](int l) {
      const uint64_t a = Get(wp, in.ops[1], w, l, t);
      if (!TyFloat(t)) {  // integer abs / neg
        int64_t v = SignExtend(a, bits);
        Set(wp, in.ops[0], l, static_cast<uint64_t>(in.op == Op::kAbs ? (v < 0 ? -v : v) : -v), t);
        return;
      }
      if (in.op == Op::kAbs || in.op == Op::kNeg) {  // sign-bit operations, NaN included
        uint64_t sign = uint64_t{1} << (bits - 1);
        uint64_t r = in.op == Op::kAbs ? a & ~sign : a ^ sign;
        if (in.ftz && t == Ty::kF32) r = F32Bits(Ftz(AsF32(r)));
        Set(wp, in.ops[0], l, r, t);
        return;
      }
      double x = FloatOf(a, t);
      if (in.ftz && t == Ty::kF32) x = Ftz(static_cast<float>(x));
      double r = 0;
      switch (in.op) {
        case Op::kEx2: r = t == Ty::kF32 ? std::exp2(static_cast<float>(x)) : std::exp2(x); break;
        case Op::kLg2: r = t == Ty::kF32 ? std::log2(static_cast<float>(x)) : std::log2(x); break;
        case Op::kRcp: r = t == Ty::kF32 ? Rounded(in.rnd, [&] { return static_cast<double>(1.0f / static_cast<float>(x)); })
                                         : Rounded(in.rnd, [&] { return 1.0 / x; });
          break;
        case Op::kSqrt: r = t == Ty::kF32 ? Rounded(in.rnd, [&] { return static_cast<double>(std::sqrt(static_cast<float>(x))); })
                                          : Rounded(in.rnd, [&] { return std::sqrt(x); });
          break;
        case Op::kRsqrt: r = 1.0 / std::sqrt(x); break;
        case Op::kSin: r = std::sin(x); break;
        case Op::kCos: r = std::cos(x); break;
        case Op::kTanh: r = std::tanh(x); break;
        default: FailAt(in, "not a unary operation");
      }
      if (in.ftz && t == Ty::kF32) r = Ftz(static_cast<float>(r));
      Set(wp, in.ops[0], l, FloatBits(r, t), t);
    });
  }

  void Setp(int w, Warp& wp, const Instr& in, uint32_t exec) {
    // setp.CmpOp{.BoolOp}.type p{|q}, a, b{, {!}c} (PTX ISA 9.7.3.x / 9.7.8.x): p = (a cmp b) BoolOp c,
    // q = !(a cmp b) BoolOp c. Ordered float comparisons are false on NaN, the u-forms true.
    const Ty t = in.t;
    const int bits = TyBits(t);
    ForLanes(exec, [&](int l) {
      const uint64_t ua = Get(wp, in.ops[1], w, l, t), ub = Get(wp, in.ops[2], w, l, t);
      bool r = false;
      if (TyFloat(t)) {
        double a = FloatOf(ua, t), b = FloatOf(ub, t);
        if (in.ftz && t == Ty::kF32) {
          a = Ftz(static_cast<float>(a));
          b = Ftz(static_cast<float>(b));
        }
        const bool nan = std::isnan(a) || std::isnan(b);
        switch (in.cmp) {
          case Cmp::kEq: r = !nan && a == b; break;
          case Cmp::kNe: r = !nan && a != b; break;
          case Cmp::kLt: r = !nan && a < b; break;
          case Cmp::kLe: r = !nan && a <= b; break;
          case Cmp::kGt: r = !nan && a > b; break;
          case Cmp::kGe: r = !nan && a >= b; break;
          case Cmp::kEqu: r = nan || a == b; break;
          case Cmp::kNeu: r = nan || a != b; break;
          case Cmp::kLtu: r = nan || a < b; break;
          case Cmp::kLeu: r = nan || a <= b; break;
          case Cmp::kGtu: r = nan || a > b; break;
          case Cmp::kGeu: r = nan || a >= b; break;
          case Cmp::kNum: r = !nan; break;
          case Cmp::kNan: r = nan; break;
          default: FailAt(in, "an integer comparison on a float type");
        }
      } else {
        const bool s = TySigned(t) && in.cmp != Cmp::kLo && in.cmp != Cmp::kLs && in.cmp != Cmp::kHi && in.cmp != Cmp::kHs;
        const int64_t sa = SignExtend(ua, bits), sb = SignExtend(ub, bits);
        const uint64_t xa = ua & WidthMask(bits), xb = ub & WidthMask(bits);
        switch (in.cmp) {
          case Cmp::kEq: r = xa == xb; break;
          case Cmp::kNe: r = xa != xb; break;
          case Cmp::kLt: case Cmp::kLo: r = s ? sa < sb : xa < xb; break;
          case Cmp::kLe: case Cmp::kLs: r = s ? sa <= sb : xa <= xb; break;
          case Cmp::kGt: case Cmp::kHi: r = s ? sa > sb : xa > xb; break;
          case Cmp::kGe: case Cmp::kHs: r = s ? sa >= sb : xa >= xb; break;
          default: FailAt(in, "a float comparison on an integer type");
        }
      }
      bool p = r, q = !r;
      if (in.boolop) {
        bool c = Get(wp, in.ops[3], w, l, Ty::kPred) != 0;
        auto comb = [&](bool x) { return in.boolop == 1 ? (x && c) : in.boolop == 2 ? (x || c) : (x != c); };
        p = comb(r);
        q = comb(!r);
      }
      Set(wp, in.ops[0], l, p, Ty::kPred);
      if (in.ops[0].pred_out >= 0) R(wp, in.ops[0].pred_out, l) = q;
    });
  }

  void Shfl(int w, Warp& wp, const Instr& in, uint32_t act, uint32_t exec) {
    // shfl.sync.mode.b32 d{|p}, a, b, c, membermask (PTX ISA 9.7.9.6): lane j = f(mode, lane, b) within the
    // segment c[12:8] / clamp c[4:0]; out-of-range j reads the lane's own a; every lane of membermask must
    // execute it, and reading an inactive lane is undefined (reported).
    std::array<uint64_t, 32> a{};
    ForLanes(exec, [&](int l) { a[static_cast<size_t>(l)] = Get(wp, in.ops[1], w, l, Ty::kB32); });
    std::array<uint64_t, 32> d{};
    std::array<bool, 32> pv{};
    ForLanes(exec, [&](int l) {
      const uint32_t mask = static_cast<uint32_t>(Get(wp, in.ops[4], w, l, Ty::kB32));
      if ((mask >> l & 1) == 0 || (mask & ~exec & wp.live))
        Report("inactive_lanes", w * 32 + l, [&] {
          return "shfl.sync with member mask 0x" + Hex(mask) + " executed by lanes 0x" + Hex(exec) +
                 " (every lane of the mask must execute it, the executing lane included)";
        });
      const uint32_t b = static_cast<uint32_t>(Get(wp, in.ops[2], w, l, Ty::kB32));
      const uint32_t c = static_cast<uint32_t>(Get(wp, in.ops[3], w, l, Ty::kB32));
      const int bval = static_cast<int>(b & 0x1F), cval = static_cast<int>(c & 0x1F), seg = static_cast<int>((c >> 8) & 0x1F);
      const int max_lane = (l & seg) | (cval & ~seg), min_lane = l & seg;
      int j = l;
      bool p = false;
      switch (in.mode) {
        case 0: j = l - bval; p = j >= max_lane; break;
        case 1: j = l + bval; p = j <= max_lane; break;
        case 2: j = l ^ bval; p = j <= max_lane; break;
        default: j = min_lane | (bval & ~seg); p = j <= max_lane; break;
      }
      if (!p) j = l;
      if ((exec >> j & 1) == 0)
        Report("inactive_lanes", w * 32 + l, [&] {
          return "shfl.sync reads lane " + std::to_string(j) + ", which does not execute it (undefined value)";
        });
      d[static_cast<size_t>(l)] = a[static_cast<size_t>(j)];
      pv[static_cast<size_t>(l)] = p;
    });
    (void)act;
    ForLanes(exec, [&](int l) {
      Set(wp, in.ops[0], l, d[static_cast<size_t>(l)], Ty::kB32);
      if (in.ops[0].pred_out >= 0) R(wp, in.ops[0].pred_out, l) = pv[static_cast<size_t>(l)];
    });
  }

  static std::string Hex(uint64_t v) {
    std::ostringstream os;
    os << std::hex << v;
    return os.str();
  }

  void Vote(int w, Warp& wp, const Instr& in, uint32_t act, uint32_t exec) {
    // vote.sync.{any,all,uni}.pred d, {!}a, membermask; vote.sync.ballot.b32 d, {!}a, membermask
    (void)act;
    uint32_t ballot = 0;
    ForLanes(exec, [&](int l) {
      if (Get(wp, in.ops[1], w, l, Ty::kPred)) ballot |= 1u << l;
    });
    ForLanes(exec, [&](int l) {
      const uint32_t mask = static_cast<uint32_t>(Get(wp, in.ops[2], w, l, Ty::kB32));
      if (mask & ~exec & wp.live)
        Report("inactive_lanes", w * 32 + l, [&] { return "vote.sync with member mask 0x" + Hex(mask) + " executed by lanes 0x" + Hex(exec); });
      const uint32_t m = mask & exec, b = ballot & m;
      uint64_t r = in.mode == 0 ? b != 0 : in.mode == 1 ? b == m : in.mode == 2 ? (b == 0 || b == m) : b;
      Set(wp, in.ops[0], l, r, in.mode == 3 ? Ty::kB32 : Ty::kPred);
    });
  }

  void Atomic(int w, Warp& wp, const Instr& in, uint32_t exec) {
    // atom / red .space.op.type (PTX ISA 9.7.13.5 / 9.7.13.6): lanes one after another, each a
    // read-modify-write of its address (the order of lanes is unspecified on the GPU)
    const bool red = in.op == Op::kRed;
    const Ty t = in.t;
    const int esize = std::max(1, TyBits(t) / 8);
    const Operand& addr = in.ops[red ? 0 : 1];
    const Operand& val = in.ops[red ? 1 : 2];
    if (in.vec > 1) {  // red.global.add.v2.f32 [a], {x, y}: element i at a + i * size, each one atomic
      if (!red || val.kind != Operand::kVec || static_cast<int>(val.vec.size()) != in.vec)
        FailAt(in, "a vector atomic is supported as red with a vector of registers");
      ForLanes(exec, [&](int l) {
        Where wh = Resolve(wp, in, addr, l, in.space);
        for (int i = 0; i < in.vec; ++i) {
          Where e = wh;
          e.addr += static_cast<uint64_t>(i * esize);
          uint8_t* p = Access(e, w * 32 + l, esize, true, true);
          if (!p) continue;
          uint64_t old = 0;
          std::memcpy(&old, p, static_cast<size_t>(esize));
          const double r = FloatOf(old, t) + FloatOf(Get(wp, val.vec[static_cast<size_t>(i)], w, l, t), t);
          if (in.mode != 0 || !TyFloat(t)) FailAt(in, "only vector float adds are supported");
          const uint64_t nv = FloatBits(t == Ty::kF32 ? static_cast<double>(static_cast<float>(r)) : r, t);
          std::memcpy(p, &nv, static_cast<size_t>(esize));
        }
      });
      return;
    }
    ForLanes(exec, [&](int l) {
      const int tid = w * 32 + l;
      Where wh = Resolve(wp, in, addr, l, in.space);
      uint8_t* p = Access(wh, tid, esize, true, true);
      const uint64_t b = Get(wp, val, w, l, t);
      uint64_t old = 0;
      if (p) std::memcpy(&old, p, static_cast<size_t>(esize));
      uint64_t nv = old;
      const int bits = TyBits(t);
      if (TyFloat(t)) {
        double o = FloatOf(old, t), x = FloatOf(b, t);
        double r = in.mode == 0 ? o + x : in.mode == 1 ? std::fmin(o, x) : in.mode == 2 ? std::fmax(o, x) : x;
        nv = in.mode == 3 ? b : FloatBits(t == Ty::kF32 ? static_cast<double>(static_cast<float>(r)) : r, t);
      } else {
        const bool s = TySigned(t);
        const int64_t so = SignExtend(old, bits), sx = SignExtend(b, bits);
        switch (in.mode) {
          case 0: nv = old + b; break;
          case 1: nv = s ? static_cast<uint64_t>(std::min(so, sx)) : std::min(old, b & WidthMask(bits)); break;
          case 2: nv = s ? static_cast<uint64_t>(std::max(so, sx)) : std::max(old, b & WidthMask(bits)); break;
          case 3: nv = b; break;
          case 4: nv = old == (b & WidthMask(bits)) ? Get(wp, in.ops[3], w, l, t) : old; break;  // cas d, [a], b, c
          case 5: nv = old & b; break;
          case 6: nv = old | b; break;
          case 7: nv = old ^ b; break;
          case 8: nv = (old & WidthMask(bits)) >= (b & WidthMask(bits)) ? 0 : old + 1; break;
          case 9: nv = (old == 0 || (old & WidthMask(bits)) > (b & WidthMask(bits))) ? b : old - 1; break;
        }
      }
      if (p) std::memcpy(p, &nv, static_cast<size_t>(esize));
      if (!red) Set(wp, in.ops[0], l, TySigned(t) ? static_cast<uint64_t>(SignExtend(old, bits)) : old, t);
    });
  }

  void CpAsync(int w, Warp& wp, const Instr& in, uint32_t exec) {
    // cp.async.{ca,cg}.shared.global [dst], [src], cp-size{, src-size | ignore-src} (PTX ISA 9.7.9.25.3): the
    // source bytes are read at issue; they reach shared memory when a cp.async.wait_group / wait_all covers
    // their group (cp.async.commit_group). src-size < cp-size zero-fills the rest; ignore-src: all zero.
    ForLanes(exec, [&](int l) {
      const int tid = w * 32 + l;
      CpAsyncCopy c;
      c.bytes = static_cast<int>(Get(wp, in.ops[2], w, l, Ty::kU32));
      if (c.bytes != 4 && c.bytes != 8 && c.bytes != 16) FailAt(in, "cp-size must be 4, 8 or 16");
      int src_size = c.bytes;
      if (in.ops.size() > 3) {
        const Operand& o = in.ops[3];
        const bool pred = o.kind == Operand::kReg && k_.reg_types[static_cast<size_t>(o.reg)] == Ty::kPred;
        if (pred)
          src_size = Get(wp, o, w, l, Ty::kPred) ? 0 : c.bytes;
        else
          src_size = static_cast<int>(Get(wp, o, w, l, Ty::kU32));
      }
      if (src_size < 0 || src_size > c.bytes) FailAt(in, "src-size must be at most cp-size");
      Where dst = Resolve(wp, in, in.ops[0], l, Space::kShared);
      c.dst = static_cast<uint32_t>(dst.addr);
      c.pc = static_cast<int>(cur_ - k_.code.data());
      if (dst.addr % static_cast<uint64_t>(c.bytes) || dst.addr + static_cast<uint64_t>(c.bytes) > static_cast<uint64_t>(smem_bytes_)) {
        Access(dst, tid, c.bytes, true);  // reports the bad destination
        return;
      }
      NoteShared(static_cast<int64_t>(dst.addr), c.bytes, tid, true, false, false);
      if (src_size > 0) {
        Where src = Resolve(wp, in, in.ops[1], l, Space::kGlobal);
        uint8_t* p = Access(src, tid, src_size, false);
        if (!p) return;
        std::memcpy(c.data, p, static_cast<size_t>(src_size));
      }
      open_[static_cast<size_t>(tid)].push_back(c);
    });
  }

  void CpAsyncWait(int tid, int64_t keep, bool all) {
    auto& g = groups_[static_cast<size_t>(tid)];
    if (all) {  // wait_all also completes the copies not yet committed
      g.push_back(std::move(open_[static_cast<size_t>(tid)]));
      open_[static_cast<size_t>(tid)].clear();
      keep = 0;
    }
    while (static_cast<int64_t>(g.size()) > keep) {
      for (const CpAsyncCopy& c : g.front()) {
        NoteShared(static_cast<int64_t>(c.dst), c.bytes, tid, true, false);
        std::memcpy(&smem_[c.dst], c.data, static_cast<size_t>(c.bytes));
      }
      g.pop_front();
    }
  }

  // The lanes of a warp-collective .aligned instruction: all live lanes must execute it (else reported and
  // skipped).
  bool FullWarp(int w, const Warp& wp, uint32_t act, uint32_t exec, const char* what) {
    (void)wp;
    if (exec == 0xFFFFFFFFu && act == exec) return true;
    Report("inactive_lanes", w * 32 + __builtin_ctz(act | 1u), [&] {
      return std::string(what) + " is warp-collective but lanes 0x" + Hex(exec) + " of warp " + std::to_string(w) +
             " execute it (all 32 must); the warp's operation was skipped";
    });
    return false;
  }

  void Ldmatrix(int w, Warp& wp, const Instr& in, uint32_t act, uint32_t exec) {
    // ldmatrix.sync.aligned.m8n8.x{1,2,4}{.trans}.shared.b16 d, [a] (PTX ISA 9.7.9.26): lanes 8q..8q+7 give
    // the addresses of the 8 rows (16 bytes each) of matrix q; lane l then holds in register q the row l/4,
    // columns 2(l%4) and 2(l%4)+1 of matrix q (low half first); with .trans the elements at rows 2(l%4),
    // 2(l%4)+1 of column l/4.
    if (!FullWarp(w, wp, act, exec, "ldmatrix")) return;
    const int num = in.mode ? in.mode : 1;
    const Operand& d = in.ops[0];
    if (d.kind != Operand::kVec || static_cast<int>(d.vec.size()) != num) FailAt(in, "ldmatrix needs one register a matrix");
    uint16_t mat[4][8][8] = {};
    for (int q = 0; q < num; ++q)
      for (int r = 0; r < 8; ++r) {
        const int l = 8 * q + r;
        Where wh = Resolve(wp, in, in.ops[1], l, in.space == Space::kGeneric ? Space::kGeneric : Space::kShared);
        if (wh.space != Space::kShared) FailAt(in, "ldmatrix reads shared memory");
        uint8_t* p = Access(wh, w * 32 + l, 16, false);
        if (p) std::memcpy(mat[q][r], p, 16);
      }
    for (int l = 0; l < 32; ++l)
      for (int q = 0; q < num; ++q) {
        const int a = l / 4, b = 2 * (l % 4);
        uint16_t lo = in.trans ? mat[q][b][a] : mat[q][a][b];
        uint16_t hi = in.trans ? mat[q][b + 1][a] : mat[q][a][b + 1];
        Set(wp, d.vec[static_cast<size_t>(q)], l, (static_cast<uint64_t>(hi) << 16) | lo, Ty::kB32);
      }
  }

  // Block-scaled mma.sync (PTX ISA 9.7.14.3 "Block Scaling" and the m16n8k64 .e2m1 / m16n8k32 8-bit
  // fragments), operands d, a, b, c, scale-a-data, {byte-id-a, thread-id-a}, scale-b-data, {byte-id-b,
  // thread-id-b}:
  //   mode 1: m16n8k64.row.col.kind::mxf4nvf4.block_scale.scale_vec::4X.f32.e2m1.e2m1.f32.ue4m3
  //   mode 3: m16n8k64.row.col.kind::mxf4{nvf4}.block_scale.scale_vec::2X.f32.e2m1.e2m1.f32.ue8m0
  //   mode 2: m16n8k32.row.col.kind::mxf8f6f4.block_scale.scale_vec::1X.f32.<a>.<b>.f32.ue8m0, a and b any of
  //           e4m3, e5m2, e3m2, e2m3, e2m1
  // g = lane / 4, t = lane % 4; a .b32 register holds P values (8 e2m1 / 4 one a byte, the first in the low
  // bits); KS = 64 / 32:  A (reg r, value e): row g + 8 (r % 2), col P t + e + (KS / 2) (r / 2);  B (reg r,
  // value e): row P t + e + (KS / 2) r, col g;  C, D c_i: row g + 8 (i / 2), col 2 t + i % 2. In
  // kind::mxf8f6f4's byte containers an fp6 value is bits 0-5 and an fp4 value bits 2-5 (CUTLASS's SM120 MMA
  // traits: e2m1 shifted up by two from ldmatrix's low nibble, fp6 as ldmatrix leaves it); other bits set are
  // reported, their effect on the hardware being undocumented. Row m of scale_A is scale-a-data in lane
  // 4 (m % 8) + 2 thread-id-a + m / 8, column n of scale_B scale-b-data in lane 4 n + thread-id-b. 4X: the
  // four bytes (byte j: k in [16 j, 16 j + 16)), UE4M3, byte-id 0; 2X: bytes byte-id (0 or 2) and byte-id + 1
  // for k in [0, 32) and [32, 64), E8M0; 1X: byte byte-id, E8M0 (2^(e - 127), 255 NaN), for all 32 k. D = C +
  // sum_k (A sa)(B sb): each product exact in double, the sum rounded once to f32.
  void MmaBlockScaled(int w, Warp& wp, const Instr& in, uint32_t act, uint32_t exec) {
    const bool x4 = in.mode == 1, x2 = in.mode == 3, k64 = x4 || x2;
    auto f8f6f4 = [](Ty t) {
      return t == Ty::kE4M3 || t == Ty::kE5M2 || t == Ty::kE3M2 || t == Ty::kE2M3 || t == Ty::kE2M1;
    };
    if (in.m != 16 || in.n != 8 || in.t != Ty::kF32 || in.tc != Ty::kF32 ||
        (k64 ? in.k != 64 || in.ta != Ty::kE2M1 || in.tb != Ty::kE2M1 ||
                   in.t2 != (x4 ? Ty::kUE4M3 : Ty::kUE8M0)
             : in.k != 32 || !f8f6f4(in.ta) || !f8f6f4(in.tb) || in.t2 != Ty::kUE8M0))
      FailAt(in,
             "the block-scaled mma.sync forms are m16n8k64 .f32.e2m1.e2m1.f32 with .ue4m3 (scale_vec::4X) or "
             ".ue8m0 (2X), and m16n8k32 kind::mxf8f6f4 .f32.<e4m3|e5m2|e3m2|e2m3|e2m1>x2.f32.ue8m0");
    if (!FullWarp(w, wp, act, exec, "mma.sync")) return;
    if (in.ops.size() != 8) FailAt(in, "a block-scaled mma.sync has 8 operands");
    const Operand &D = in.ops[0], &A = in.ops[1], &B = in.ops[2], &C = in.ops[3];
    auto vec = [&](const Operand& o, size_t n) { return o.kind == Operand::kVec && o.vec.size() == n; };
    if (!vec(A, 4) || !vec(B, 2) || !vec(C, 4) || !vec(D, 4) || !vec(in.ops[4], 1) || !vec(in.ops[5], 2) ||
        !vec(in.ops[6], 1) || !vec(in.ops[7], 2))
      FailAt(in, "block-scaled mma operand vectors must be A: 4, B: 2, C/D: 4, scale data: 1, selectors: 2");
    // the selectors, the same in every lane
    int64_t sel[4];
    for (int q = 0; q < 4; ++q) {
      const Operand& o = in.ops[q < 2 ? 5 : 7].vec[static_cast<size_t>(q % 2)];
      sel[q] = static_cast<int64_t>(Get(wp, o, w, 0, Ty::kU16) & 0xFFFF);
      for (int l = 1; l < 32; ++l)
        if (static_cast<int64_t>(Get(wp, o, w, l, Ty::kU16) & 0xFFFF) != sel[q]) {
          Report("mma_nonuniform", w * 32 + l,
                 [&] { return std::string("the lanes of a warp pass different block-scale selectors"); });
          break;
        }
    }
    auto byte_ok = [&](int64_t b) { return x4 ? b == 0 : x2 ? b == 0 || b == 2 : b >= 0 && b <= 3; };
    if (!byte_ok(sel[0]) || !byte_ok(sel[2]) || sel[1] > 1 || sel[3] > 3)
      FailAt(in,
             "byte-id must be 0 with .scale_vec::4X, 0 or 2 with 2X, 0 to 3 with 1X; thread-id-a 0 or 1, "
             "thread-id-b 0 to 3 (PTX ISA Table 37)");
    const int KS = k64 ? 64 : 32, P = k64 ? 8 : 4, bits = k64 ? 4 : 8, group = x4 ? 16 : 32;
    double a[16][64] = {}, b[64][8] = {}, c[16][8] = {}, sa[16][4] = {}, sb[8][4] = {};
    // value e of a register of type t, from its container (reporting bits set outside the value)
    auto value = [&](uint64_t reg, int e, Ty t, int lane) {
      const uint32_t v = static_cast<uint32_t>((reg >> (bits * e)) & ((1u << bits) - 1));
      if (k64) return DecodeE2M1(v);
      if (t == Ty::kE4M3 || t == Ty::kE5M2) return HalfValue(v, t);
      const uint32_t field = t == Ty::kE2M1 ? 0x3Cu : 0x3Fu;
      if (v & ~field)
        Report("mma_container", w * 32 + lane, [&] {
          return std::string("a kind::mxf8f6f4 ") +
                 (t == Ty::kE2M1 ? "e2m1 value (bits 2-5" : "fp6 value (bits 0-5") +
                 " of its byte) has other bits of its byte set: byte 0x" + Hex(v);
        });
      if (t == Ty::kE2M1) return DecodeE2M1((v >> 2) & 0xF);
      return t == Ty::kE2M3 ? DecodeMx(v & 0x3F, 2, 3) : DecodeMx(v & 0x3F, 3, 2);
    };
    auto scale = [&](uint64_t word, int j, int64_t byte_id) {
      if (x4) return DecodeMinifloat(static_cast<uint32_t>((word >> (8 * j)) & 0x7F), 4, 3, true);
      const uint64_t e = (word >> (8 * (byte_id + j))) & 0xFF;
      return e == 255 ? std::nan("") : std::ldexp(1.0, static_cast<int>(e) - 127);
    };
    for (int l = 0; l < 32; ++l) {
      const int g = l / 4, t = l % 4;
      for (int r = 0; r < 4; ++r) {
        const uint64_t reg = Get(wp, A.vec[static_cast<size_t>(r)], w, l, Ty::kB32);
        for (int e = 0; e < P; ++e)
          a[g + 8 * (r % 2)][P * t + e + (KS / 2) * (r / 2)] = value(reg, e, in.ta, l);
      }
      for (int r = 0; r < 2; ++r) {
        const uint64_t reg = Get(wp, B.vec[static_cast<size_t>(r)], w, l, Ty::kB32);
        for (int e = 0; e < P; ++e) b[P * t + e + (KS / 2) * r][g] = value(reg, e, in.tb, l);
      }
      for (int i = 0; i < 4; ++i)
        c[g + 8 * (i / 2)][2 * t + i % 2] = AsF32(Get(wp, C.vec[static_cast<size_t>(i)], w, l, Ty::kB32));
    }
    for (int m = 0; m < 16; ++m) {
      const uint64_t word =
          Get(wp, in.ops[4].vec[0], w, 4 * (m % 8) + 2 * static_cast<int>(sel[1]) + m / 8, Ty::kB32);
      for (int j = 0; j < KS / group; ++j) sa[m][j] = scale(word, j, sel[0]);
    }
    for (int n = 0; n < 8; ++n) {
      const uint64_t word = Get(wp, in.ops[6].vec[0], w, 4 * n + static_cast<int>(sel[3]), Ty::kB32);
      for (int j = 0; j < KS / group; ++j) sb[n][j] = scale(word, j, sel[2]);
    }
    for (int k = 0; k < KS; ++k)
      for (int m = 0; m < 16; ++m)
        for (int n = 0; n < 8; ++n) c[m][n] += (a[m][k] * sa[m][k / group]) * (b[k][n] * sb[n][k / group]);
    for (int l = 0; l < 32; ++l) {
      const int g = l / 4, t = l % 4;
      for (int i = 0; i < 4; ++i)
        Set(wp, D.vec[static_cast<size_t>(i)], l,
            F32Bits(static_cast<float>(c[g + 8 * (i / 2)][2 * t + i % 2])), Ty::kB32);
    }
  }

  void Mma(int w, Warp& wp, const Instr& in, uint32_t act, uint32_t exec) {
    if (in.mode == 1 || in.mode == 2 || in.mode == 3) return MmaBlockScaled(w, wp, in, act, exec);
    // mma.sync.aligned.m16n8kK.row.col.dtype.atype.btype.ctype (PTX ISA 9.7.14.5.x, the "Matrix Fragments for
    // mma.m16n8kK" figures), group g = lane / 4, t = lane % 4, elements packed low first in .b32 registers:
    //   k16, f16 / bf16:  A a_i (8): row g + 8 (i/2 % 2), col 2t + i%2 + 8 (i/4);  B b_i (4): row 2t + i%2 + 8 (i/2)
    //   k32, s8 / u8 / e4m3 / e5m2:  A a_i (16): row g + 8 (i/4 % 2), col 4t + i%4 + 16 (i/8);
    //                                B b_i (8): row 4t + i%4 + 16 (i/4)
    //   k8, tf32 (one element a register):  A a_i (4): row g + 8 (i%2), col t + 4 (i/2);  B b_i (2): row t + 4i
    //   B's column is g; C, D c_i (4 x f32 / s32, or 2 x f16x2): row g + 8 (i/2), col 2t + i%2.
    // Products are exact in double (integers: in 64 bits); they and C are summed and rounded once (s32 wraps).
    const bool k16 = in.k == 16 && ((in.ta == Ty::kF16 && in.tb == Ty::kF16) || (in.ta == Ty::kBF16 && in.tb == Ty::kBF16));
    const bool i8 = in.k == 32 && (in.ta == Ty::kS8 || in.ta == Ty::kU8) && (in.tb == Ty::kS8 || in.tb == Ty::kU8) &&
                    in.t == Ty::kS32;
    const bool f8 = in.k == 32 && (in.ta == Ty::kE4M3 || in.ta == Ty::kE5M2) && (in.tb == Ty::kE4M3 || in.tb == Ty::kE5M2) &&
                    in.t == Ty::kF32;
    const bool tf = in.k == 8 && in.ta == Ty::kTf32 && in.tb == Ty::kTf32 && in.t == Ty::kF32;
    if (in.m != 16 || in.n != 8 || !(k16 || i8 || f8 || tf))
      FailAt(in, "mma.sync is supported by the PTX emulator for m16n8k16 f16/bf16, m16n8k32 s8/u8/e4m3/e5m2 and "
                 "m16n8k8 tf32");
    if (!FullWarp(w, wp, act, exec, "mma.sync")) return;
    const int K = in.k, na = k16 ? 4 : i8 || f8 ? 4 : 4, nb = 2;
    const Operand &D = in.ops[0], &A = in.ops[1], &B = in.ops[2], &C = in.ops[3];
    const bool c32 = in.tc == Ty::kF32 || in.tc == Ty::kS32, d32 = in.t == Ty::kF32 || in.t == Ty::kS32;
    if (A.kind != Operand::kVec || static_cast<int>(A.vec.size()) != na || B.kind != Operand::kVec ||
        static_cast<int>(B.vec.size()) != nb || C.kind != Operand::kVec || C.vec.size() != (c32 ? 4u : 2u) ||
        D.kind != Operand::kVec || D.vec.size() != (d32 ? 4u : 2u))
      FailAt(in, "mma operand vectors must be A: 4, B: 2, C/D: 4 (32-bit) or 2 (f16x2) registers");
    double a[16][32] = {}, b[32][8] = {}, c[16][8] = {};
    int64_t ia[16][32] = {}, ib[32][8] = {}, ic[16][8] = {};
    auto elem8 = [&](uint64_t reg, int i, Ty t, double* f, int64_t* n) {
      const uint64_t byte = reg >> (8 * (i % 4)) & 0xFF;
      if (t == Ty::kS8) *n = SignExtend(byte, 8);
      else if (t == Ty::kU8) *n = static_cast<int64_t>(byte);
      else *f = HalfValue(byte, t);
    };
    bool unrounded = false;
    auto tf32 = [&](uint64_t reg) {
      if (std::isfinite(AsF32(reg)) && (reg & 0x1FFF)) unrounded = true;
      return static_cast<double>(AsF32(reg & ~uint64_t{0x1FFF}));  // the low 13 bits are not part of a tf32
    };
    for (int l = 0; l < 32; ++l) {
      const int g = l / 4, t = l % 4;
      if (k16) {
        for (int i = 0; i < 8; ++i)
          a[g + 8 * (i / 2 % 2)][2 * t + i % 2 + 8 * (i / 4)] =
              HalfValue(Get(wp, A.vec[static_cast<size_t>(i / 2)], w, l, Ty::kB32) >> (16 * (i % 2)), in.ta);
        for (int i = 0; i < 4; ++i)
          b[2 * t + i % 2 + 8 * (i / 2)][g] =
              HalfValue(Get(wp, B.vec[static_cast<size_t>(i / 2)], w, l, Ty::kB32) >> (16 * (i % 2)), in.tb);
      } else if (tf) {
        for (int i = 0; i < 4; ++i) a[g + 8 * (i % 2)][t + 4 * (i / 2)] = tf32(Get(wp, A.vec[static_cast<size_t>(i)], w, l, Ty::kB32));
        for (int i = 0; i < 2; ++i) b[t + 4 * i][g] = tf32(Get(wp, B.vec[static_cast<size_t>(i)], w, l, Ty::kB32));
      } else {
        for (int i = 0; i < 16; ++i) {
          const int row = g + 8 * (i / 4 % 2), col = 4 * t + i % 4 + 16 * (i / 8);
          elem8(Get(wp, A.vec[static_cast<size_t>(i / 4)], w, l, Ty::kB32), i, in.ta, &a[row][col], &ia[row][col]);
        }
        for (int i = 0; i < 8; ++i) {
          const int row = 4 * t + i % 4 + 16 * (i / 4);
          elem8(Get(wp, B.vec[static_cast<size_t>(i / 4)], w, l, Ty::kB32), i, in.tb, &b[row][g], &ib[row][g]);
        }
      }
      for (int i = 0; i < 4; ++i) {
        const int row = g + 8 * (i / 2), col = 2 * t + i % 2;
        if (i8) {
          ic[row][col] = SignExtend(Get(wp, C.vec[static_cast<size_t>(i)], w, l, Ty::kB32), 32);
        } else {
          c[row][col] = c32 ? AsF32(Get(wp, C.vec[static_cast<size_t>(i)], w, l, Ty::kB32))
                            : HalfValue(Get(wp, C.vec[static_cast<size_t>(i / 2)], w, l, Ty::kB32) >> (16 * (i % 2)), Ty::kF16);
        }
      }
    }
    if (unrounded)
      Report("tf32_unrounded", w * 32, [&] {
        return std::string("a tf32 mma operand has non-zero low 13 bits (not converted with cvt.rna.tf32.f32); they "
                           "were ignored");
      });
    for (int k = 0; k < K; ++k)
      for (int r = 0; r < 16; ++r)
        for (int col = 0; col < 8; ++col) {
          if (i8) ic[r][col] += ia[r][k] * ib[k][col];
          else c[r][col] += a[r][k] * b[k][col];
        }
    for (int l = 0; l < 32; ++l) {
      const int g = l / 4, t = l % 4;
      if (i8) {
        for (int i = 0; i < 4; ++i)
          Set(wp, D.vec[static_cast<size_t>(i)], l, static_cast<uint64_t>(ic[g + 8 * (i / 2)][2 * t + i % 2]), Ty::kB32);
      } else if (d32) {
        for (int i = 0; i < 4; ++i) Set(wp, D.vec[static_cast<size_t>(i)], l, F32Bits(static_cast<float>(c[g + 8 * (i / 2)][2 * t + i % 2])), Ty::kB32);
      } else {
        for (int j = 0; j < 2; ++j) {
          uint64_t lo = FloatBits(c[g + 8 * j][2 * t], Ty::kF16), hi = FloatBits(c[g + 8 * j][2 * t + 1], Ty::kF16);
          Set(wp, D.vec[static_cast<size_t>(j)], l, (hi << 16) | lo, Ty::kB32);
        }
      }
    }
  }

  // ------------------------------------------------------------------------------ sm_90

  // The shared offset of an mbarrier operand [addr] (checked: 8-byte aligned, inside shared memory).
  int64_t MbarAddress(Warp& wp, const Instr& in, const Operand& o, int w, int l) {
    Where wh = Resolve(wp, in, o, l, Space::kShared);
    if (wh.space != Space::kShared || wh.addr % 8 || wh.addr + 8 > static_cast<uint64_t>(smem_bytes_)) {
      Report("out_of_bounds", w * 32 + l, [&] {
        return "an mbarrier at address " + std::to_string(wh.addr) + " is not an 8-byte aligned object in shared memory";
      });
      return -1;
    }
    return static_cast<int64_t>(wh.addr);
  }

  // One arrival on the mbarrier at shared byte a by thread tid (mbarrier.arrive,
  // cp.async.mbarrier.arrive.noinc, tcgen05.commit): reported when it was never initialised or has no arrival
  // pending. Returns the phase arrived on, or -1.
  // An arrival (release) carries what the thread knows of tcgen05.mma completions to the phase's waiters
  // (acquire): logged like a commit of the issuer, where the number grew for this barrier.
  void Carry(int64_t a, int tid, int64_t phase) {
    for (auto& [issuer, k] : known_) {
      const int64_t v = k[static_cast<size_t>(tid)];
      int64_t& last = carried_[{a, issuer}];
      if (v <= last) continue;
      last = v;
      commit_log_[a].push_back({issuer, v, phase});
    }
  }

  int64_t ArriveOn(int64_t a, int tid) {
    if (!inited_.count(a)) {
      Report("uninitialized_read", tid, [&] {
        return "the mbarrier at shared byte " + std::to_string(a) + SharedName(a) +
               " is used before mbarrier.init";
      });
      return -1;
    }
    Mbarrier& b = mbars_[a];
    const int64_t phase = b.phase;
    if (b.pending == 0) {
      Report("mbarrier_overflow", tid, [&] {
        return "an arrival on the mbarrier at shared byte " + std::to_string(a) + SharedName(a) +
               " beyond its expected count " + std::to_string(b.expected);
      });
      return -1;
    }
    --b.pending;
    MaybeCompletePhase(a);
    return phase;
  }

  // A phase completes when no arrival and no transaction byte is pending: the TMA copies that completed on it
  // land, the phase number moves on, the arrivals reset.
  void MaybeCompletePhase(int64_t addr) {
    Mbarrier& b = mbars_[addr];
    if (b.pending != 0 || b.tx != 0) return;
    std::vector<TmaCopy> keep;
    for (TmaCopy& c : tma_) {
      if (c.bar != addr) {
        keep.push_back(std::move(c));
        continue;
      }
      for (const auto& [off, v] : c.bytes) {  // written by the async proxy, ordered by the mbarrier wait
        smem_[static_cast<size_t>(off)] = v;
        ShadowByte& sh = shadow_[static_cast<size_t>(off)];
        sh.written = block_stamp_;
        sh.w_epoch = 0;
        if (!proxy_.empty()) proxy_[static_cast<size_t>(off)].writer = 0;
      }
    }
    tma_ = std::move(keep);
    ++b.phase;
    b.pending = b.expected;
    // The race checks take a completed phase as a barrier between everything before and after it: the
    // threads that arrived are ordered before those that wait (mbarrier pipelines are race-free), at the price
    // of also ordering threads that did not take part.
    ++epoch_;
  }

  void MbarrierOp(int w, Warp& wp, const Instr& in, uint32_t exec) {
    // mbarrier.init [a], count; mbarrier.arrive{.expect_tx} state, [a]{, tx}; mbarrier.expect_tx [a], tx
    // (PTX ISA 9.7.13.15.x)
    if (in.cluster_addr) {  // mbarrier.arrive.shared::cluster _, [a]: a may be a peer block's barrier (mapa)
      ForLanes(exec, [&](int l) {
        const uint64_t a = Resolve(wp, in, in.ops[1], l, Space::kShared).addr;
        const int64_t rank = (a & kClusterTag) ? static_cast<int64_t>(a >> 24 & 0x7F) : rank_;
        Machine* peer = ClusterPeer(rank, w * 32 + l);
        if (!peer) return;
        const int64_t off = static_cast<int64_t>(a & 0xFFFFFF);
        if (off % 8 || off + 8 > peer->smem_bytes_) {
          Report("out_of_bounds", w * 32 + l, [&] {
            return "an mbarrier at shared byte " + std::to_string(off) + " of block " + std::to_string(rank) +
                   " of the cluster is not an 8-byte aligned object in its shared memory";
          });
          return;
        }
        if (!peer->inited_.count(off)) {
          Report("uninitialized_read", w * 32 + l, [&] {
            return "the mbarrier at shared byte " + std::to_string(off) + " of block " +
                   std::to_string(rank) + " of the cluster is arrived on before its mbarrier.init";
          });
          return;
        }
        Mbarrier& b = peer->mbars_[off];
        if (b.pending == 0) {
          Report("mbarrier_overflow", w * 32 + l, [&] {
            return "an arrival on the mbarrier at shared byte " + std::to_string(off) + " of block " +
                   std::to_string(rank) + " of the cluster beyond its expected count " +
                   std::to_string(b.expected);
          });
          return;
        }
        --b.pending;
        peer->MaybeCompletePhase(off);
      });
      if (cl_) ++cl_->progress;
      return;
    }
    ForLanes(exec, [&](int l) {
      const bool has_state = in.op == Op::kMbarArrive;
      const Operand& addr = in.ops[has_state ? 1 : 0];
      const int64_t a = MbarAddress(wp, in, addr, w, l);
      if (a < 0) return;
      if (in.op == Op::kMbarInit) {
        const int64_t count = static_cast<int64_t>(Get(wp, in.ops[1], w, l, Ty::kU32));
        mbars_[a] = Mbarrier{count, count, 0, 0};
        inited_.insert(a);
        return;
      }
      if (!inited_.count(a)) {
        Report("uninitialized_read", w * 32 + l, [&] {
          return "the mbarrier at shared byte " + std::to_string(a) + SharedName(a) + " is used before mbarrier.init";
        });
        return;
      }
      Mbarrier& b = mbars_[a];
      if (in.op == Op::kMbarExpectTx || in.expect_tx)
        b.tx += static_cast<int64_t>(Get(wp, in.ops[has_state ? 2 : 1], w, l, Ty::kU32));
      if (in.op == Op::kMbarArrive) {
        Set(wp, in.ops[0], l, static_cast<uint64_t>(b.phase), Ty::kB64);  // the state: the phase arrived on
        Carry(a, w * 32 + l, b.phase);
        ArriveOn(a, w * 32 + l);
        return;
      }
      MaybeCompletePhase(a);
    });
  }

  // mbarrier.try_wait.parity done, [a], parity: done when the phase of that parity has completed (the current
  // phase's parity differs). A lane whose phase has not completed blocks the warp until it does (the
  // `@!done bra` retry loop of every waiter); false: the warp is blocked.
  bool MbarrierTryWait(int w, Warp& wp, const Instr& in, uint32_t exec) {
    bool all = true;
    int64_t blocked_on = -1;
    ForLanes(exec, [&](int l) {
      const int64_t a = MbarAddress(wp, in, in.ops[1], w, l);
      if (a < 0) return;
      if (!inited_.count(a)) {
        Report("uninitialized_read", w * 32 + l, [&] {
          return "the mbarrier at shared byte " + std::to_string(a) + SharedName(a) + " is waited on before mbarrier.init";
        });
        return;
      }
      const uint64_t parity = Get(wp, in.ops[2], w, l, Ty::kU32) & 1;
      if ((static_cast<uint64_t>(mbars_[a].phase) & 1) == parity) {
        all = false;
        blocked_on = a;
      }
    });
    if (!all) {
      wp.mbar_wait = blocked_on;
      wp.mbar_phase = mbars_[blocked_on].phase;
      return false;
    }
    ForLanes(exec, [&](int l) {
      Set(wp, in.ops[0], l, 1, Ty::kPred);
      const int64_t a = MbarAddress(wp, in, in.ops[1], w, l);
      if (a < 0) return;
      // a tcgen05.commit that arrived in a phase now complete: its thread's earlier tcgen05.mma are complete
      // for this thread
      auto log = commit_log_.find(a);
      if (log == commit_log_.end()) return;
      for (const CommitRecord& c : log->second)
        if (c.phase < mbars_[a].phase) {
          std::vector<int64_t>& k = known_[c.issuer];
          if (k.empty()) k.assign(static_cast<size_t>(T_), 0);
          k[static_cast<size_t>(w * 32 + l)] = std::max(k[static_cast<size_t>(w * 32 + l)], c.index);
        }
    });
    return true;
  }

  // ------------------------------------------------------------------------------ clusters

  // The Machine running block `rank` of this block's cluster, or null (reported: outside the cluster, ended).
  Machine* ClusterPeer(int64_t rank, int tid) {
    const int64_t n = cl_ ? cl_->n : 1;
    if (rank < 0 || rank >= n) {
      Report("cluster_rank", tid, [&] {
        return "an access to block " + std::to_string(rank) + " of a cluster of " + std::to_string(n) +
               " blocks";
      });
      return nullptr;
    }
    if (rank == rank_) return this;
    if (cl_->done[static_cast<size_t>(rank)]) {
      Report("cluster_exited", tid, [&] {
        return "an access to the shared memory of block " + std::to_string(rank) +
               " of the cluster after it ended (keep every block of a cluster alive, e.g. with "
               "barrier.cluster at "
               "the end, while its peers may still access it)";
      });
      return nullptr;
    }
    Machine* peer = cl_->blocks[static_cast<size_t>(rank)];
    if (!peer->started_) {
      Report("cluster_not_started", tid, [&] {
        return "an access to the shared memory of block " + std::to_string(rank) +
               " of the cluster before it started running: meet the cluster at barrier.cluster first";
      });
      return nullptr;
    }
    return peer;
  }

  // barrier.cluster.arrive: each executing thread arrives once (a second arrival before its wait is
  // reported).
  void ClusterArrive(int w, uint32_t exec) {
    if (!cl_) FailAt(*cur_, "barrier.cluster outside a cluster run");
    ForLanes(exec, [&](int l) {
      int64_t& p = cl_pending_[static_cast<size_t>(w * 32 + l)];
      if (p >= 0) {
        Report("cluster_barrier", w * 32 + l, [&] {
          return std::string("barrier.cluster.arrive again before the thread's barrier.cluster.wait");
        });
        return;
      }
      p = cl_->cb_gen;
      if (++cl_->cb_arrived == cl_->threads) {
        cl_->cb_arrived = 0;
        ++cl_->cb_gen;
      }
    });
    ++cl_->progress;
  }

  // barrier.cluster.wait: done for the executing threads once the generation they arrived in has passed;
  // false: the warp is blocked.
  bool ClusterWait(int w, Warp& wp, uint32_t exec) {
    if (!cl_) FailAt(*cur_, "barrier.cluster outside a cluster run");
    int64_t need = -1;
    ForLanes(exec, [&](int l) {
      const int64_t p = cl_pending_[static_cast<size_t>(w * 32 + l)];
      if (p < 0)
        Report("cluster_barrier", w * 32 + l, [&] {
          return std::string("barrier.cluster.wait without a barrier.cluster.arrive before it");
        });
      else if (p >= cl_->cb_gen)
        need = std::max(need, p);
    });
    if (need >= 0) {
      wp.cl_wait = need;
      return false;
    }
    ForLanes(exec, [&](int l) { cl_pending_[static_cast<size_t>(w * 32 + l)] = -1; });
    ++epoch_;
    return true;
  }

  // clusterlaunchcontrol.try_cancel [result], [mbar] (.multicast::cluster::all: in every block of the
  // cluster): cancels the first cluster of the launch that has not started (clusters run in order here, so
  // all after the running one are pending), writes the response and completes 16 transaction bytes on the
  // mbarrier, now.
  void ClcTryCancel(int w, Warp& wp, const Instr& in, uint32_t exec) {
    if (!cl_) FailAt(in, "cluster launch control outside a cluster run");
    ClcState& Q = *cl_->clc;
    ForLanes(exec, [&](int l) {
      const int tid = w * 32 + l;
      const int64_t off = static_cast<int64_t>(Resolve(wp, in, in.ops[0], l, Space::kShared).addr);
      const int64_t bar = MbarAddress(wp, in, in.ops[1], w, l);
      if (bar < 0) return;
      if (off % 16 || off + 16 > smem_bytes_) {
        Report("misaligned", tid, [&] {
          return "the clusterlaunchcontrol response at shared byte " + std::to_string(off) +
                 " is not 16 aligned bytes of shared memory";
        });
        return;
      }
      if (clc_failed_)
        Report("clc_after_failure", tid, [&] {
          return std::string(
              "clusterlaunchcontrol.try_cancel after this block saw one fail: undefined behaviour");
        });
      uint32_t words[4] = {0, 0, 0, 0};
      for (size_t q = 0; q < Q.taken.size(); ++q) {
        if (Q.taken[q]) continue;
        Q.taken[q] = true;
        const int64_t nx = L_.grid[0] / k_.cluster[0], ny = L_.grid[1] / k_.cluster[1],
                      i = static_cast<int64_t>(q);
        words[0] = 1;
        words[1] = static_cast<uint32_t>(i % nx * k_.cluster[0]);
        words[2] = static_cast<uint32_t>(i / nx % ny * k_.cluster[1]);
        words[3] = static_cast<uint32_t>(i / (nx * ny) * k_.cluster[2]);
        break;
      }
      for (int64_t r = 0; r < (in.mode ? cl_->n : 1); ++r) {
        Machine* m = in.mode ? ClusterPeer(r, tid) : this;
        if (!m) continue;
        if (!words[0]) m->clc_failed_ = true;
        std::memcpy(&m->smem_[static_cast<size_t>(off)], words, 16);
        for (int64_t b = off; b < off + 16; ++b) {
          ShadowByte& sh = m->shadow_[static_cast<size_t>(b)];
          sh.written = m->block_stamp_;
          sh.w_epoch = 0;
        }
        if (!m->inited_.count(bar)) {
          Report("uninitialized_read", tid, [&] {
            return "clusterlaunchcontrol.try_cancel completes on the mbarrier at shared byte " +
                   std::to_string(bar) + " before its mbarrier.init";
          });
          continue;
        }
        m->mbars_[bar].tx -= 16;
        m->MaybeCompletePhase(bar);
      }
    });
    ++cl_->progress;
  }

  // No warp of this block can go on: the cluster's other blocks run. False when none of them can either.
  bool ClusterStall() { return cl_ && cl_->Stall(rank_); }

  DecodedTensorMap TensorMapAt(Warp& wp, const Instr& in, const Operand& o, int l) {
    Operand base;
    base.kind = Operand::kAddr;
    base.reg = o.reg;
    Where wh = Resolve(wp, in, base, l, Space::kGeneric);
    if (wh.space != Space::kParam || wh.addr + 128 > params_.size())
      FailAt(in, "the tensor map operand must be the address of a 128-byte tensor-map kernel parameter");
    MapImage img;
    std::memcpy(img.b, &params_[static_cast<size_t>(wh.addr)], 128);
    DecodedTensorMap d;
    if (!DecodeTensorMap(img, &d)) FailAt(in, "the tensor-map parameter is not an image this emulator encoded");
    if (d.sw && d.bx[0] * d.eb != d.sw) FailAt(in, "TMA boxes whose rows are not exactly the swizzle width are not emulated");
    return d;
  }

  void Tma(int w, Warp& wp, const Instr& in, uint32_t exec) {
    // cp.async.bulk.tensor.Nd.shared::cluster.global.mbarrier::complete_tx::bytes [dst], [map, {c0..}], [bar]
    // cp.async.bulk.tensor.Nd.global.shared::cta.bulk_group [map, {c0..}], [src]            (PTX
    // ISA 9.7.9.25.5) The box at coordinates c (innermost first) is moved element by element; elements
    // outside the tensor read as zero (loads) or are not written (stores). Shared memory holds the box
    // densely from the shared address, each byte address swizzled as the map says (16-byte chunk bits [4,
    // 4+b) xor bits [7, 7+b)). cp.reduce.async.bulk.tensor....add.tile.bulk_group [map, {c0..}], [src]: as a
    // store, each element added to the global one in the map's element type (PTX ISA 9.7.9.25.5.2)
    const bool load = in.op == Op::kTmaLoad, reduce = in.op == Op::kTmaReduce;
    const Operand& mapop = in.ops[load ? 1 : 0];
    const Operand& smop = in.ops[load ? 0 : 1];
    ForLanes(exec, [&](int l) {
      const int tid = w * 32 + l;
      const DecodedTensorMap D = TensorMapAt(wp, in, mapop, l);
      if (reduce && (D.dtype.code() == DataType::Code::kVoid || D.dtype.bytes() != D.eb))
        FailAt(in, "a TMA reduction needs the tensor map's element type (the image gives none)");
      // .tile::gather4 / .tile::scatter4 (mode 2): a 2-d map whose box is one row of K; the coordinates are a
      // column and four rows, the shared side 4 rows of K
      const bool four = in.mode == 2;
      if (four && (D.r != 2 || D.bx[1] != 1 || mapop.vec.size() != 5))
        FailAt(in,
               "tile::gather4 / tile::scatter4 take a 2-d map whose box is one row, a column and four rows");
      if (!four && (static_cast<int>(mapop.vec.size()) != D.r || (in.dims && in.dims != D.r)))
        FailAt(in, "the coordinate count is not the tensor map's rank");
      const int64_t count = four ? 4 * D.bx[0] : D.count;
      int64_t c0[5];
      for (size_t i = 0; i < mapop.vec.size(); ++i)
        c0[i] = SignExtend(Get(wp, mapop.vec[i], w, l, Ty::kS32), 32);
      Where sm = Resolve(wp, in, smop, l, Space::kShared);
      if (sm.space != Space::kShared || sm.addr % 128 ||
          sm.addr + static_cast<uint64_t>(count * D.eb) > static_cast<uint64_t>(smem_bytes_)) {
        Report("misaligned", tid, [&] {
          return "the shared side of a TMA copy (byte " + std::to_string(sm.addr) +
                 ") must be 128-byte aligned and inside shared memory";
        });
        return;
      }
      auto swz = [&](int64_t a) { return D.sw ? SwizzleAddress(a, D.sw) : a; };
      bool proxy_reported = false;
      TmaCopy cp;
      cp.tid = tid;
      if (D.format && !load)
        FailAt(in, "a TMA store with a packed format (16U4 / 16U6_ALIGN16B) is not emulated");
      // 16U4_ALIGN16B / 16U6_ALIGN16B: the transaction is the packed bytes read (each 16-value group's 8 /
      // 12)
      const int64_t tx = D.format == 1 ? D.count / 2 : D.format == 2 ? D.count * 3 / 4 : count * D.eb;
      for (int64_t e = 0; e < count; ++e) {
        int64_t rest = e, goff = 0;
        bool inside = true, gap = false;
        for (int i = 0; i < D.r; ++i) {
          const int64_t x =
              four ? (i == 0 ? c0[0] + e % D.bx[0] : c0[1 + e / D.bx[0]]) : c0[i] + rest % D.bx[i];
          rest /= D.bx[i];
          if (i == 0 && D.format) {  // a slot of a 16-value group: its packed byte, or the unwritten gap
            const int64_t b = PackedSlotByte(D.format, x);
            gap = b < 0;
            inside = x >= 0 && 16 * (x / 16) < D.dims[0];
            goff += b;
            continue;
          }
          inside &= x >= 0 && x < D.dims[i];
          goff += x * D.strides[i];
        }
        if (gap) continue;
        const int64_t soff = static_cast<int64_t>(sm.addr) + e * D.eb;
        if (load) {
          uint8_t v[16] = {};
          if (inside) std::memcpy(v, D.base + goff, static_cast<size_t>(D.eb));
          for (int b = 0; b < D.eb; ++b) cp.bytes.emplace_back(swz(soff + b), v[b]);
        } else if (inside) {
          uint8_t v[16] = {};
          for (int b = 0; b < D.eb; ++b) {
            const int64_t a = swz(soff + b);
            NoteShared(a, 1, tid, false, false);
            AsyncProxyRead(a, tid,
                           reduce ? "a TMA reduction (cp.reduce.async.bulk.tensor)"
                                  : "a TMA store (cp.async.bulk.tensor)",
                           &proxy_reported);
            v[b] = smem_[static_cast<size_t>(a)];
          }
          if (reduce)
            AddInto(D.base + goff, v, D.dtype);
          else
            std::memcpy(D.base + goff, v, static_cast<size_t>(D.eb));
        }
      }
      if (!load) return;
      if (in.pair) {  // .cta_group::2: the mbarrier may be the pair's other block's (a mapa address)
        const uint64_t ba = Resolve(wp, in, in.ops[2], l, Space::kShared).addr;
        const int64_t rank = (ba & kClusterTag) ? static_cast<int64_t>(ba >> 24 & 0x7F) : rank_;
        const int64_t off = static_cast<int64_t>(ba & 0xFFFFFF);
        if (rank / 2 != rank_ / 2)
          Report("tcgen05_pair", tid, [&] {
            return "a cp.async.bulk.tensor.cta_group::2 completes on an mbarrier of block " +
                   std::to_string(rank) + ", outside its CTA pair";
          });
        Machine* m = ClusterPeer(rank, tid);
        if (!m) return;
        if (off % 8 || off + 8 > m->smem_bytes_ || !m->inited_.count(off)) {
          Report("uninitialized_read", tid, [&] {
            return "a TMA copy completes on the mbarrier at shared byte " + std::to_string(off) +
                   " of block " + std::to_string(rank) + ", which is not an initialised mbarrier";
          });
          return;
        }
        // The box lands now (an asynchronous copy may complete at once; a wait on the other block's barrier
        // cannot order it for this block's threads otherwise), then its bytes complete that barrier.
        for (const auto& [o, v] : cp.bytes) {
          NoteShared(o, 1, tid, true, false, false);
          smem_[static_cast<size_t>(o)] = v;
          ShadowByte& sh = shadow_[static_cast<size_t>(o)];
          sh.written = block_stamp_;
          sh.w_epoch = 0;
          if (!proxy_.empty()) proxy_[static_cast<size_t>(o)].writer = 0;
        }
        m->mbars_[off].tx -= tx;
        m->MaybeCompletePhase(off);
        if (cl_) ++cl_->progress;
        return;
      }
      const int64_t bar = MbarAddress(wp, in, in.ops[2], w, l);
      if (bar < 0) return;
      if (!inited_.count(bar)) {
        Report("uninitialized_read", tid, [&] { return "a TMA copy completes on an mbarrier that was never initialised"; });
        return;
      }
      for (const auto& [off, v] : cp.bytes) NoteShared(off, 1, tid, true, false, false);  // a write race at issue
      cp.bar = bar;
      if (in.mode ==
          1) {  // .multicast::cluster, ctaMask: the same box and barrier offsets in every block of the mask
        const uint64_t mask = Get(wp, in.ops[3], w, l, Ty::kU16);
        for (int64_t r = 0; r < 16; ++r) {
          if (!(mask >> r & 1)) continue;
          Machine* m = ClusterPeer(r, tid);
          if (!m) continue;
          if (!m->inited_.count(bar)) {
            Report("uninitialized_read", tid, [&] {
              return "a TMA multicast completes on the mbarrier at shared byte " + std::to_string(bar) +
                     " of block " + std::to_string(r) + " of the cluster before its mbarrier.init";
            });
            continue;
          }
          m->tma_.push_back(cp);
          m->mbars_[bar].tx -= tx;
          m->MaybeCompletePhase(bar);
        }
        if (cl_) ++cl_->progress;
        return;
      }
      tma_.push_back(std::move(cp));
      mbars_[bar].tx -= tx;  // complete_tx
      MaybeCompletePhase(bar);
    });
  }

  void Wgmma(int w, Warp& wp, const Instr& in, uint32_t act, uint32_t exec) {
    // wgmma.mma_async.sync.aligned.m64nNk16.f32.{f16,bf16}.{f16,bf16} d, a-desc | {a regs}, b-desc, scale-d,
    // imm-scale-a, imm-scale-b{, imm-trans-a}, imm-trans-b (PTX ISA 9.7.15): each warp of the warp group
    // computes its 16 rows (16 * (warp % 4) ...). Operands in shared memory through matrix descriptors in the
    // ISA's canonical layouts (emulator/smem_matrix.h); A in registers: lane l, element i of its 4 registers at
    // row l/4 + 8((i/2)%2), column 2(l%4) + i%2 + 8(i/4); D register i at row l/4 + 8((i/2)%2), column
    // 8(i/4) + 2(l%4) + i%2. Products exact in double, summed with D (scale-d) and rounded once to f32.
    if (!FullWarp(w, wp, act, exec, "wgmma")) return;
    const bool h16 = in.k == 16 && in.t == Ty::kF32 &&
                     ((in.ta == Ty::kF16 && in.tb == Ty::kF16) || (in.ta == Ty::kBF16 && in.tb == Ty::kBF16));
    const bool f8 = in.k == 32 && in.t == Ty::kF32 && (in.ta == Ty::kE4M3 || in.ta == Ty::kE5M2) &&
                    (in.tb == Ty::kE4M3 || in.tb == Ty::kE5M2);
    const bool i8 = in.k == 32 && in.t == Ty::kS32 && (in.ta == Ty::kS8 || in.ta == Ty::kU8) &&
                    (in.tb == Ty::kS8 || in.tb == Ty::kU8);
    if (in.m != 64 || in.n % 8 || in.n < 8 || in.n > 256 || !(h16 || f8 || i8))
      FailAt(in, "wgmma is supported by the PTX emulator for m64nNk16 f16/bf16 -> f32 and m64nNk32 e4m3/e5m2 -> f32, "
                 "s8/u8 -> s32");
    const int N = in.n, K = in.k, eb = in.k == 32 ? 1 : 2, wq = w % 4;
    const Operand &Dop = in.ops[0], &Aop = in.ops[1];
    const bool a_regs = Aop.kind == Operand::kVec;
    const size_t imm = 4;  // first immediate operand
    if (Dop.kind != Operand::kVec || static_cast<int>(Dop.vec.size()) != N / 2 ||
        in.ops.size() < (i8 ? 4 : f8 ? imm + 2 : imm + (a_regs ? 3 : 4)))  // 8-bit: K-major only, no transposes
      FailAt(in, "wgmma operands: {" + std::to_string(N / 2) + " accumulators}, a, b-desc, scale-d, scale-a, scale-b, "
                 "(trans-a,) trans-b");
    auto uniform = [&](const Operand& o) {
      const uint64_t v = Get(wp, o, w, 0, Ty::kB64);
      for (int l = 1; l < 32; ++l)
        if (Get(wp, o, w, l, Ty::kB64) != v)
          Report("wgmma_nonuniform", w * 32 + l, [&] { return std::string("the lanes of a warp pass different wgmma descriptors"); });
      return v;
    };
    auto decode = [&](uint64_t d) {
      const SmemMatrixDesc r = DecodeMatrixDescriptor(d);
      if (r.swizzle_bytes == 0 || r.base_offset != 0)
        FailAt(in, "wgmma descriptors without a swizzle mode or with a base offset are not supported by the PTX emulator");
      return r;
    };
    // an element's value: a float (exact in double) or an integer (exact in int64, held in a double: |x| < 2^53)
    auto value = [&](uint64_t bits, Ty t) {
      if (t == Ty::kS8) return static_cast<double>(SignExtend(bits, 8));
      if (t == Ty::kU8) return static_cast<double>(bits & 0xFF);
      return HalfValue(bits, t);
    };
    bool proxy_reported = false;
    auto smem_elem = [&](const SmemMatrixDesc& d, bool mn_major, int64_t mn, int64_t k, Ty t) {
      const int64_t a = SwizzleAddress(CanonicalAddress(d, mn_major, mn, k, eb), d.swizzle_bytes);
      if (a < 0 || a + eb > smem_bytes_) {
        Report("out_of_bounds", w * 32, [&] { return "a wgmma operand element at shared byte " + std::to_string(a) + " is outside shared memory"; });
        return 0.0;
      }
      NoteShared(a, eb, w * 32, false, false);
      AsyncProxyRead(a, w * 32, "a wgmma (its shared-memory operand)", &proxy_reported);
      uint16_t h = 0;
      std::memcpy(&h, &smem_[static_cast<size_t>(a)], static_cast<size_t>(eb));
      return value(h, t);
    };
    const bool scale_d = Get(wp, in.ops[3], w, 0, Ty::kPred) != 0;
    // .s8 / .u8 wgmma has no scale-a / scale-b / transpose immediates
    const double sa = !i8 && static_cast<int64_t>(SignExtend(Get(wp, in.ops[imm], w, 0, Ty::kS32), 32)) == -1 ? -1.0 : 1.0;
    const double sb = !i8 && static_cast<int64_t>(SignExtend(Get(wp, in.ops[imm + 1], w, 0, Ty::kS32), 32)) == -1 ? -1.0 : 1.0;
    const bool ta = !i8 && !a_regs && in.ops.size() > imm + 2 && Get(wp, in.ops[imm + 2], w, 0, Ty::kU32) != 0;
    const size_t tbi = imm + (a_regs ? 2 : 3);
    const bool tb = !i8 && in.ops.size() > tbi && Get(wp, in.ops[tbi], w, 0, Ty::kU32) != 0;
    static thread_local double A[16][32], B[32][256];
    if (a_regs) {
      if (Aop.vec.size() != 4) FailAt(in, "wgmma A in registers needs 4 registers");
      for (int l = 0; l < 32; ++l)
        for (int i = 0; i < 16 / eb; ++i) {
          const uint64_t reg = Get(wp, Aop.vec[static_cast<size_t>(eb == 2 ? i / 2 : i / 4)], w, l, Ty::kB32);
          const int row = eb == 2 ? l / 4 + 8 * ((i / 2) % 2) : l / 4 + 8 * ((i / 4) % 2);
          const int col = eb == 2 ? 2 * (l % 4) + i % 2 + 8 * (i / 4) : 4 * (l % 4) + i % 4 + 16 * (i / 8);
          A[row][col] = value(eb == 2 ? reg >> (16 * (i % 2)) : reg >> (8 * (i % 4)), in.ta);
        }
    } else {
      const SmemMatrixDesc da = decode(uniform(Aop));
      for (int m = 0; m < 16; ++m)
        for (int k = 0; k < K; ++k) A[m][k] = smem_elem(da, ta, 16 * wq + m, k, in.ta);
    }
    const SmemMatrixDesc db = decode(uniform(in.ops[2]));
    for (int k = 0; k < K; ++k)
      for (int n = 0; n < N; ++n) B[k][n] = smem_elem(db, tb, n, k, in.tb);
    for (int l = 0; l < 32; ++l)
      for (int i = 0; i < N / 2; ++i) {
        const int row = l / 4 + 8 * ((i / 2) % 2), col = 8 * (i / 4) + 2 * (l % 4) + i % 2;
        const uint64_t prev = Get(wp, Dop.vec[static_cast<size_t>(i)], w, l, Ty::kB32);
        if (i8) {  // exact, wrapping at 32 bits
          int64_t acc = scale_d ? SignExtend(prev, 32) : 0;
          for (int k = 0; k < K; ++k) acc += static_cast<int64_t>(A[row][k]) * static_cast<int64_t>(B[k][col]);
          Set(wp, Dop.vec[static_cast<size_t>(i)], l, static_cast<uint64_t>(acc), Ty::kB32);
          continue;
        }
        double acc = scale_d ? AsF32(prev) : 0.0;
        for (int k = 0; k < K; ++k) acc += sa * A[row][k] * sb * B[k][col];
        Set(wp, Dop.vec[static_cast<size_t>(i)], l, F32Bits(static_cast<float>(acc)), Ty::kB32);
      }
  }

  // ------------------------------------------------------------------------------ tensor memory (sm_100a)

  // tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [dst], ncols / tcgen05.dealloc... taddr, ncols: a
  // warp allocates a power of 2 in [32, 512] columns of all 128 lanes and the address (lane 0 << 16 | column)
  // is written to shared dst; the same warp frees them.
  void TmemAlloc(int w, Warp& wp, const Instr& in, uint32_t act, uint32_t exec) {
    if (!FullWarp(w, wp, act, exec, "tcgen05.alloc / dealloc")) return;
    const int tid = w * 32;
    if (in.pair) {  // one warp of each block of the pair, each in its own tensor memory
      if ((cl_ ? cl_->n : 1) % 2) {
        Report("tcgen05_pair", tid, [&] {
          return std::string(
              "tcgen05.alloc / dealloc .cta_group::2 in a block with no CTA pair (a cluster of an "
              "even number of blocks)");
        });
        return;
      }
      tmem_.cg2 = true;
    }
    const bool alloc = in.op == Op::kTcAlloc;
    const int64_t n = static_cast<int64_t>(Get(wp, in.ops[1], w, 0, Ty::kU32));
    if (n < 32 || n > Tmem::kCols || (n & (n - 1))) {
      Report("tmem_columns", tid, [&] {
        return std::string("tcgen05.") + (alloc ? "alloc" : "dealloc") + " of " + std::to_string(n) +
               " columns: the count must be a power of 2 in [32, 512]";
      });
      return;
    }
    if (!alloc) {
      const uint64_t taddr = Get(wp, in.ops[0], w, 0, Ty::kU32);
      const int64_t col = static_cast<int64_t>(taddr & 0xFFFF);
      auto it = tmem_.allocs.find(col);
      if (it == tmem_.allocs.end() || it->second.first != n || (taddr >> 16) != 0) {
        Report("tmem_bad_free", tid, [&] {
          return "tcgen05.dealloc of " + std::to_string(n) + " columns at column " + std::to_string(col) +
                 " frees no allocation of that size there (a double free, or a wrong address or size)";
        });
        return;
      }
      if (it->second.second != w)
        Report("tmem_bad_free", tid, [&] {
          return "tcgen05.dealloc by warp " + std::to_string(w) + " of columns warp " +
                 std::to_string(it->second.second) + " allocated (the allocating warp must free them)";
        });
      for (int64_t l = 0; l < Tmem::kLanes; ++l)
        for (int64_t q = col; q < col + n; ++q)
          if (tmem_.in_flight[Tmem::Cell(l, q)]) {
            Report("tcgen05_not_committed", tid, [&] {
              return std::string("tcgen05.dealloc of columns an uncommitted tcgen05.mma writes");
            });
            l = Tmem::kLanes;
            break;
          }
      tmem_.allocs.erase(it);
      return;
    }
    if (tmem_.relinquished) {
      Report("tmem_alloc_after_relinquish", tid,
             [&] { return std::string("tcgen05.alloc after the block relinquished its allocation permit"); });
      return;
    }
    int64_t found = -1;
    for (int64_t col = 0; col + n <= Tmem::kCols && found < 0; col += n) {
      bool free = true;
      for (auto& [c0, a] : tmem_.allocs) free &= col + n <= c0 || c0 + a.first <= col;
      if (free) found = col;
    }
    if (found < 0) {
      Report("tmem_exhausted", tid, [&] {
        return "tcgen05.alloc of " + std::to_string(n) +
               " columns cannot succeed: the block's 512 columns are taken";
      });
      return;
    }
    tmem_.allocs[found] = {n, w};
    Where dst = Resolve(wp, in, in.ops[0], 0, Space::kShared);
    if (uint8_t* p = Access(dst, tid, 4, true)) {
      const uint32_t v = static_cast<uint32_t>(found);
      std::memcpy(p, &v, 4);
    }
  }

  // tcgen05.mma.cta_group::1.kind::{f16,f8f6f4,i8} [d], a-desc, b-desc, idesc, enable-input-d (PTX ISA
  // 9.7.16.10.9): the issuing thread's D (tensor memory lanes [0, 128), M = 128 rows, N columns from d)
  // becomes A (M x K, shared) * B (N x K, shared) + (enable ? D : 0), K = 16 (f16) or 32 bytes (8-bit kinds).
  // Operands are read at issue; D is written when the thread commits (tcgen05.commit).
  // The blocks a tcgen05 instruction acts on: this one, or with cta_group::2 the CTA pair (cluster ranks 2i,
  // 2i + 1; false, reported, without one).
  bool PairBlocks(const Instr& in, int tid, const char* what, std::vector<Machine*>* blocks) {
    *blocks = {this};
    if (!in.pair) return true;
    if ((cl_ ? cl_->n : 1) % 2) {
      Report("tcgen05_pair", tid, [&] {
        return std::string(what) +
               ".cta_group::2 in a block with no CTA pair (a cluster of an even number of blocks)";
      });
      return false;
    }
    Machine* e0 = ClusterPeer(rank_ & ~1, tid);
    Machine* e1 = ClusterPeer(rank_ | 1, tid);
    if (!e0 || !e1) return false;
    *blocks = {e0, e1};
    return true;
  }

  // tcgen05.cp.cta_group::N.32x128b.warpx4 [taddr], s-desc (PTX ISA 9.7.16.10.4): 32 rows of 128 bits from
  // shared memory (no swizzle: row r at start + (r / 8) SBO + (r % 8) 16 bytes) into columns [taddr.column,
  // +4), row r in lanes r, r + 32, r + 64, r + 96; cta_group::2 (by the pair's even block): each block of the
  // pair from its own shared memory into its own tensor memory. Done at issue (the issuing thread's later
  // tcgen05.mma are ordered after it and run at issue too).
  void TcCp(int w, Warp& wp, const Instr& in, uint32_t exec) {
    ForLanes(exec, [&](int l) {
      const int tid = w * 32 + l;
      const Operand& dop = in.ops[0];
      const uint64_t taddr = (R(wp, dop.reg, l) & 0xFFFFFFFFu) + static_cast<uint64_t>(dop.imm);
      const uint64_t desc = Get(wp, in.ops[1], w, l, Ty::kU64);
      if ((desc >> 61) & 7) FailAt(in, "tcgen05.cp with a swizzled shared descriptor is not emulated");
      const int64_t start = static_cast<int64_t>(desc & 0x3FFF) << 4;
      const int64_t sbo = static_cast<int64_t>((desc >> 32) & 0x3FFF) << 4;
      std::vector<Machine*> blocks;
      if (!PairBlocks(in, tid, "tcgen05.cp", &blocks)) return;
      const int64_t lane0 = static_cast<int64_t>(taddr >> 16), col0 = static_cast<int64_t>(taddr & 0xFFFF);
      bool proxy_reported = false;
      for (Machine* m : blocks) {
        if (lane0 != 0 || !m->tmem_.Allocated(col0, 4)) {
          Report("tmem_unallocated", tid, [&] {
            return "tcgen05.cp into lanes [" + std::to_string(lane0) + ", +128), columns [" +
                   std::to_string(col0) + ", " + std::to_string(col0 + 4) + ") outside every allocation";
          });
          return;
        }
        for (int64_t r = 0; r < 32; ++r)
          for (int64_t q = 0; q < 4; ++q) {
            const int64_t a = start + (r / 8) * sbo + (r % 8) * 16 + 4 * q;
            if (a < 0 || a + 4 > m->smem_bytes_) {
              Report("out_of_bounds", tid,
                     [&] { return std::string("tcgen05.cp reads outside shared memory"); });
              return;
            }
            if (m == this) AsyncProxyRead(a, tid, "a tcgen05.cp (its shared-memory source)", &proxy_reported);
            uint32_t v = 0;
            std::memcpy(&v, &m->smem_[static_cast<size_t>(a)], 4);
            for (int64_t g = 0; g < 4; ++g) {
              const size_t x = Tmem::Cell(32 * g + r, col0 + q);
              m->tmem_.cells[x] = v;
              m->tmem_.written[x] = 1;
            }
          }
      }
    });
  }

  void TcMma5(int w, Warp& wp, const Instr& in, uint32_t exec) {
    const int kind = in.mode;
    // kind::mxf8f6f4.block_scale (3) and kind::mxf4nvf4.block_scale.block16 (4, NVFP4: fp4 A and B two values
    // a byte, the first in the low nibble, k64; a row's four UE4M3 scales the bytes of its word, byte j for k
    // in [16 j, 16 j + 16)): operands 4 and 5 the scales' tensor memory
    // kind::mxf4.block_scale.scale_vec::2X (5, MXFP4): as NVFP4, two E8M0 scales a row, bytes id and id + 1
    // (id 0 or 2: a half-word) of its word, byte id + j for k in [32 j, 32 j + 32)
    const bool x4 = kind == 4, mxf4 = kind == 5, nvf4 = x4 || mxf4, bs = kind == 3 || nvf4;  // nvf4: k64
    // kind::tf32 (6): float32 A and B, k8; the lower 13 bits of each dropped (the PTX ISA says so of wgmma's
    // tf32; of tcgen05's it says nothing: an assumption)
    const bool tf32 = kind == 6, i8 = kind == 2, f8 = kind != 0 && !tf32;
    const int eb = tf32 ? 4 : f8 ? 1 : 2;
    const int64_t KS = nvf4 ? 64 : tf32 ? 8 : f8 ? 32 : 16;
    const int64_t NBLK = x4 ? 4 : mxf4 ? 2 : 1;  // scales a row a step
    ForLanes(exec, [&](int l) {
      const int tid = w * 32 + l;
      Operand dop = in.ops[0];
      const uint64_t d = (R(wp, dop.reg, l) & 0xFFFFFFFFu) + static_cast<uint64_t>(dop.imm);
      // [a]: A in tensor memory (kind::f16: row m at lane m, value k at column + k / 2, bits 16 (k % 2) ..)
      const bool ts = in.ops[1].kind == Operand::kAddr;
      if (ts && kind != 0) FailAt(in, "tcgen05.mma with A in tensor memory: kind::f16 only");
      const uint64_t da = ts ? (R(wp, in.ops[1].reg, l) & 0xFFFFFFFFu) + static_cast<uint64_t>(in.ops[1].imm)
                             : Get(wp, in.ops[1], w, l, Ty::kU64);
      const uint64_t db = Get(wp, in.ops[2], w, l, Ty::kU64);
      const uint32_t idesc = static_cast<uint32_t>(Get(wp, in.ops[3], w, l, Ty::kU32));
      const bool enable = Get(wp, in.ops[bs ? 6 : 4], w, l, Ty::kPred) != 0;
      auto taddr_of = [&](const Operand& o) {
        return (R(wp, o.reg, l) & 0xFFFFFFFFu) + static_cast<uint64_t>(o.imm);
      };
      const uint64_t sfa = bs ? taddr_of(in.ops[4]) : 0, sfb = bs ? taddr_of(in.ops[5]) : 0;
      Tcgen05Instr I;
      SmemMatrixDesc A, B;
      std::string why;
      if (DecodeTcgen05Instr(idesc, kind, &I, &why, in.pair ? 2 : 1)) {
        if (ts && I.mn_a)
          why = "A in tensor memory must be K-major";
        else if (!ts && !DecodeTcgen05Descriptor(da, &A, &why))
          why = "A descriptor: " + why;
        else if (!DecodeTcgen05Descriptor(db, &B, &why))
          why = "B descriptor: " + why;
      }
      if (!why.empty()) FailAt(in, "tcgen05.mma: " + why);
      // The blocks D spans: this one, or with cta_group::2 the pair (ranks 2i, 2i + 1): A's and D's rows
      // [0, 128) in the even block, [128, 256) in the odd one; B's columns [0, N / 2) from the even block's
      // shared memory, [N / 2, N) from the odd one's, at the descriptors' offsets (PTX ISA, tcgen05 CTA
      // pair).
      std::vector<Machine*> blocks;
      if (!PairBlocks(in, tid, "tcgen05.mma", &blocks)) return;
      const int64_t lane0 = static_cast<int64_t>(d >> 16), col0 = static_cast<int64_t>(d & 0xFFFF);
      bool placed = lane0 == 0;
      for (Machine* m : blocks) {
        placed = placed && m->tmem_.Allocated(col0, I.N);
        if (in.pair && !m->tmem_.cg2)
          Report("tcgen05_pair", tid, [&] {
            return "tcgen05.mma.cta_group::2 into tensor memory that block " + std::to_string(m->rank_) +
                   " of the pair did not allocate with tcgen05.alloc.cta_group::2";
          });
      }
      if (!placed) {
        Report("tmem_unallocated", tid, [&] {
          return "tcgen05.mma into lanes [" + std::to_string(lane0) + ", +128), columns [" +
                 std::to_string(col0) + ", " + std::to_string(col0 + I.N) + ") outside every allocation";
        });
        return;
      }
      const int64_t H = static_cast<int64_t>(blocks.size()), M = I.M / H, NB = I.N / H;
      bool ok = true, proxy_reported = false;
      std::vector<std::pair<int64_t, uint16_t>> b_read;
      std::vector<Machine*> b_from;
      // element (mn, k) of an operand in block m's shared memory (this block's reads are race- and
      // proxy-checked; a peer's are read as they stand)
      auto element = [&](Machine* m, const SmemMatrixDesc& desc, bool mn_major, int64_t mn, int64_t k,
                         int type, std::vector<std::pair<int64_t, uint16_t>>* read,
                         std::vector<Machine*>* from) {
        // (E2M1, type 5 of the 8-bit float kinds: value k's byte in the padded layout, then its nibble; E2M3
        // / E3M2, 3 / 4: its 6 bits at PaddedFp6Column / Shift, reaching into the next byte when the shift is
        // over 2)
        if (tf32) {  // 4 bytes, read as two 16-bit halves (so the overwrite check compares them)
          const int64_t a = SwizzleAddress(CanonicalAddress(desc, mn_major, mn, k, 4), desc.swizzle_bytes);
          if (a < 0 || a + 4 > m->smem_bytes_) {
            ok = false;
            return 0.0;
          }
          if (m == this) {
            NoteShared(a, 4, tid, false, false);
            AsyncProxyRead(a, tid, "a tcgen05.mma (its shared-memory operand)", &proxy_reported);
          }
          uint32_t w = 0;
          std::memcpy(&w, &m->smem_[static_cast<size_t>(a)], 4);
          for (int j = 0; j < 2; ++j) {
            read->emplace_back(a + 2 * j, static_cast<uint16_t>(w >> (16 * j)));
            from->push_back(m);
          }
          w &= 0xFFFFE000u;
          return static_cast<double>(AsF32(w));
        }
        const bool fp4 = nvf4 || (f8 && !i8 && type == 5);
        const bool six = f8 && !i8 && !nvf4 && (type == 3 || type == 4);
        const int64_t col = nvf4 ? k / 2 : fp4 ? PaddedFp4Column(k) : six ? PaddedFp6Column(k) : k;
        const int shift = six ? PaddedFp6Shift(k) : 0;
        uint16_t h = 0;
        for (int j = 0; j < (six && shift > 2 ? 2 : 1); ++j) {
          const int64_t a =
              SwizzleAddress(CanonicalAddress(desc, mn_major, mn, col + j, eb), desc.swizzle_bytes);
          if (a < 0 || a + eb > m->smem_bytes_) {
            ok = false;
            return 0.0;
          }
          if (m == this) {
            NoteShared(a, eb, tid, false, false);
            AsyncProxyRead(a, tid, "a tcgen05.mma (its shared-memory operand)", &proxy_reported);
          }
          uint16_t part = 0;
          std::memcpy(&part, &m->smem_[static_cast<size_t>(a)], static_cast<size_t>(eb));
          read->emplace_back(a, part);
          from->push_back(m);
          h = static_cast<uint16_t>(h | (part << (8 * j)));
        }
        if (i8)
          return type == 1 ? static_cast<double>(static_cast<int8_t>(h & 0xFF))
                           : static_cast<double>(h & 0xFF);
        if (fp4) return DecodeE2M1((h >> (4 * (k % 2))) & 0xF);
        if (six) return DecodeMx((h >> shift) & 0x3F, type == 3 ? 2 : 3, type == 3 ? 3 : 2);
        if (f8) return HalfValue(h, type == 0 ? Ty::kE4M3 : Ty::kE5M2);
        return HalfValue(h, type == 0 ? Ty::kF16 : Ty::kBF16);
      };
      std::vector<double> b(static_cast<size_t>(I.N * KS));
      for (int64_t h = 0; h < H && ok; ++h)
        for (int64_t n = 0; n < NB && ok; ++n)
          for (int64_t k = 0; k < KS; ++k)
            b[static_cast<size_t>((h * NB + n) * KS + k)] =
                element(blocks[static_cast<size_t>(h)], B, I.mn_b, n, k, I.b_type, &b_read, &b_from);
      std::vector<TcMma> parts;
      for (int64_t h = 0; h < H && ok; ++h) {
        TcMma mma;
        mma.target = blocks[static_cast<size_t>(h)];
        mma.lane0 = lane0;
        mma.col0 = col0;
        mma.M = M;
        mma.N = I.N;
        mma.eb = tf32 ? 2 : eb;  // the bytes of each entry of `read` (tf32: 16-bit halves)
        mma.integer = i8;
        mma.accumulate = enable;
        mma.d_f16 = I.d_f16;
        if (ts && M != 128) FailAt(in, "tcgen05.mma with A in tensor memory and M = 64 is not emulated");
        std::vector<double> a(static_cast<size_t>(M * KS));
        if (ts) {  // A in the tensor memory of the block whose rows these are (a pair: each its own)
          Tmem& at = mma.target->tmem_;
          const int64_t alane = static_cast<int64_t>(da >> 16), acol = static_cast<int64_t>(da & 0xFFFF);
          if (alane != 0 || !at.Allocated(acol, KS / 2)) {
            Report("tmem_unallocated", tid, [&] {
              return "tcgen05.mma reads A from columns [" + std::to_string(acol) + ", " +
                     std::to_string(acol + KS / 2) + ") of lane " + std::to_string(alane) +
                     ", outside every allocation";
            });
            return;
          }
          for (int64_t m = 0; m < M; ++m)
            for (int64_t k = 0; k < KS; ++k) {
              const size_t x = Tmem::Cell(m, acol + k / 2);
              if (!at.written[x] || at.in_flight[x])
                Report(at.in_flight[x] ? "tcgen05_not_committed" : "uninitialized", tid, [&] {
                  return "tcgen05.mma reads A at lane " + std::to_string(m) + ", column " +
                         std::to_string(acol + k / 2) +
                         (at.in_flight[x] ? ", which an uncommitted tcgen05.mma writes"
                                          : ", which nothing has written");
                });
              const uint16_t h = static_cast<uint16_t>(at.cells[x] >> (16 * (k % 2)));
              a[static_cast<size_t>(m * KS + k)] = HalfValue(h, I.a_type == 0 ? Ty::kF16 : Ty::kBF16);
            }
        } else {
          for (int64_t m = 0; m < M && ok; ++m)
            for (int64_t k = 0; k < KS; ++k)
              a[static_cast<size_t>(m * KS + k)] =
                  element(mma.target, A, I.mn_a, m, k, I.a_type, &mma.read, &mma.read_from);
        }
        if (!ok) break;
        if (h == 0) {  // B's reads are checked with the first block's part
          mma.read.insert(mma.read.end(), b_read.begin(), b_read.end());
          mma.read_from.insert(mma.read_from.end(), b_from.begin(), b_from.end());
        }
        // block-scaled: the E8M0 scales (2^(e - 127), 255 NaN) in the D block's tensor memory,
        // T.tcgen05_cp_warpx4's layout (row m of A at lane m, column m / 32; column n of B at lane n % 128,
        // column n / 32), the byte the instruction descriptor's scale ids name
        std::vector<double> sa(static_cast<size_t>(M * NBLK), 1.0), sb(static_cast<size_t>(I.N * NBLK), 1.0);
        if (bs) {
          const Tmem& tm = mma.target->tmem_;
          auto scale = [&](uint64_t addr, int64_t lane, int64_t col, int id, const char* which) {
            const int64_t l0 = static_cast<int64_t>(addr >> 16), c0 = static_cast<int64_t>(addr & 0xFFFF);
            if (l0 != 0 || !tm.Allocated(c0 + col, 1)) {
              Report("tmem_unallocated", tid, [&] {
                return std::string("tcgen05.mma reads the scale factors of ") + which +
                       " outside every allocation";
              });
              return 1.0;
            }
            const size_t x = Tmem::Cell(lane, c0 + col);
            if (!tm.written[x])
              ReportUninit(tid, [&] {
                return std::string("tcgen05.mma reads a scale factor of ") + which + " at lane " +
                       std::to_string(lane) + ", column " + std::to_string(c0 + col) +
                       ", which nothing has written";
              });
            const uint32_t byte = (tm.cells[x] >> (8 * id)) & 0xFF;
            if (x4) return DecodeMinifloat(byte & 0x7F, 4, 3, true);  // UE4M3 (0x7F NaN)
            return byte == 255 ? std::nan("") : std::ldexp(1.0, static_cast<int>(byte) - 127);
          };
          // the byte of scale j: 4X byte j, 2X byte id + j, 1X byte id
          auto byte_of = [&](int id, int64_t j) {
            return x4 ? static_cast<int>(j) : id + static_cast<int>(j);
          };
          for (int64_t m = 0; m < M; ++m)
            for (int64_t j = 0; j < NBLK; ++j)
              sa[static_cast<size_t>(m * NBLK + j)] = scale(sfa, m, m / 32, byte_of(I.a_sf_id, j), "A");
          for (int64_t n = 0; n < I.N; ++n)
            for (int64_t j = 0; j < NBLK; ++j)
              sb[static_cast<size_t>(n * NBLK + j)] = scale(sfb, n % 128, n / 32, byte_of(I.b_sf_id, j), "B");
        }
        mma.prod.assign(static_cast<size_t>(M * I.N), 0.0);
        for (int64_t m = 0; m < M; ++m)
          for (int64_t n = 0; n < I.N; ++n) {
            double sum = 0;
            for (int64_t j = 0; j < NBLK; ++j) {  // each scale block's products, times its two scales
              double part = 0;
              for (int64_t k = j * (KS / NBLK); k < (j + 1) * (KS / NBLK); ++k)
                part += a[static_cast<size_t>(m * KS + k)] * b[static_cast<size_t>(n * KS + k)];
              sum += part * sa[static_cast<size_t>(m * NBLK + j)] * sb[static_cast<size_t>(n * NBLK + j)];
            }
            mma.prod[static_cast<size_t>(m * I.N + n)] = I.neg_a != I.neg_b ? -sum : sum;
          }
        parts.push_back(std::move(mma));
      }
      if (!ok) {
        Report("out_of_bounds", tid,
               [&] { return std::string("tcgen05.mma reads an operand outside shared memory"); });
        return;
      }
      for (TcMma& mma : parts) {
        for (int64_t m = 0; m < mma.M; ++m)
          for (int64_t n = 0; n < mma.N; ++n) ++mma.target->tmem_.in_flight[Tmem::Cell(mma.Lane(m), col0 + n)];
        tmem_.pending[static_cast<size_t>(tid)].push_back(std::move(mma));
      }
    });
  }

  // tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [mbar]: the thread's earlier
  // tcgen05.mma complete (D is written: the products added in double to D, rounded once to f32; i8: exact,
  // wrapping at 32 bits), then one arrival on the mbarrier.
  void TcCommit(int w, Warp& wp, const Instr& in, uint32_t exec) {
    ForLanes(exec, [&](int l) {
      const int tid = w * 32 + l;
      const int64_t a = MbarAddress(wp, in, in.ops[0], w, l);
      // tcgen05.commit tracks all the thread's earlier tcgen05.mma: a reader that sees the phase its arrival
      // is in complete knows them complete, whichever commit they were issued before
      const int64_t index = ++tmem_.commits[static_cast<size_t>(tid)];
      if (a >= 0 && in.mode == 0 && inited_.count(a)) commit_log_[a].push_back({tid, index, mbars_[a].phase});
      for (TcMma& mma : tmem_.pending[static_cast<size_t>(tid)]) {
        Tmem& tm = mma.target->tmem_;  // the block whose tensor memory D is
        bool changed = false;
        for (size_t i = 0; i < mma.read.size(); ++i) {
          const auto& [off, v] = mma.read[i];
          uint16_t now = 0;
          std::memcpy(&now, &mma.read_from[i]->smem_[static_cast<size_t>(off)], static_cast<size_t>(mma.eb));
          changed |= now != v;
        }
        if (changed)
          Report("tcgen05_operand_overwritten", tid, [&] {
            return std::string("shared memory a tcgen05.mma reads changed between its issue and its commit");
          });
        for (int64_t m = 0; m < mma.M; ++m)
          for (int64_t n = 0; n < mma.N; ++n) {
            const size_t x = Tmem::Cell(mma.Lane(m), mma.col0 + n);
            --tm.in_flight[x];
            if (mma.accumulate && !tm.written[x])
              ReportUninit(tid, [&] {
                return "tcgen05.mma accumulates into lane " + std::to_string(mma.Lane(m)) + ", column " +
                       std::to_string(mma.col0 + n) + ", which nothing has written";
              });
            const double p = mma.prod[static_cast<size_t>(m * mma.N + n)];
            uint32_t& cell = tm.cells[x];
            if (mma.integer) {
              const int64_t sum = (mma.accumulate ? static_cast<int64_t>(static_cast<int32_t>(cell)) : 0) +
                                  static_cast<int64_t>(p);
              cell = static_cast<uint32_t>(static_cast<uint64_t>(sum));
            } else if (mma.d_f16) {  // the exact sum added to D, rounded once to float16 (bits 0-15)
              const double dv = mma.accumulate ? HalfValue(static_cast<uint16_t>(cell & 0xFFFF), Ty::kF16) : 0.0;
              cell = EncodeMinifloat(dv + p, 5, 10, false);
            } else {
              cell = static_cast<uint32_t>(
                  F32Bits(static_cast<float>((mma.accumulate ? static_cast<double>(AsF32(cell)) : 0.0) + p)));
            }
            tm.written[x] = 1;
            tm.ready_issuer[x] = tid;
            tm.ready_commit[x] = index;
          }
      }
      tmem_.pending[static_cast<size_t>(tid)].clear();
      if (a < 0) return;
      if (in.mode == 0) {
        ArriveOn(a, tid);
        return;
      }
      // .multicast::cluster, ctaMask: one arrival on the mbarrier at the same offset in each block of the
      // mask
      const uint64_t mask = Get(wp, in.ops[1], w, l, Ty::kU16);
      for (int64_t r = 0; r < 16; ++r) {
        if (!(mask >> r & 1)) continue;
        Machine* m = ClusterPeer(r, tid);
        if (!m) continue;
        if (m->inited_.count(a)) m->commit_log_[a].push_back({tid, index, m->mbars_[a].phase});
        m->ArriveOn(a, tid);
      }
      if (cl_) ++cl_->progress;
    });
  }

  // tcgen05.ld.sync.aligned.32x32b.xN.b32 {r0..}, [taddr] / tcgen05.st... [taddr], {r0..} (PTX
  // ISA 9.7.16.8.3, data-path layout .32x32b): warp w reaches lanes [32 (w % 4), +32); its lane t moves N
  // 32-bit columns of lane taddr.lane + t starting at taddr.column.
  // tcgen05.ld.16x32bx2.xN {r0..}, [taddr], immHalfSplitoff / tcgen05.st.16x32bx2.xN [taddr],
  // immHalfSplitoff, {r0..} (mode 1): lanes t < 16 move N columns of lane taddr.lane + t from taddr.column,
  // lanes t >= 16 those of lane taddr.lane + t - 16 from taddr.column + immHalfSplitoff; taddr.lane is 32 (w
  // % 4) or 32 (w % 4) + 16.
  void TmemLdSt(int w, Warp& wp, const Instr& in, uint32_t act, uint32_t exec) {
    if (!FullWarp(w, wp, act, exec, in.op == Op::kTcLd ? "tcgen05.ld" : "tcgen05.st")) return;
    const bool ld = in.op == Op::kTcLd;
    const bool x2 = in.mode == 1;
    // ld: {r..}, [taddr](, imm); st: [taddr](, imm), {r..}
    const Operand& regs = in.ops[ld ? 0 : x2 ? 2 : 1];
    const Operand& addr = in.ops[ld ? 1 : 0];
    if (regs.kind != Operand::kVec || static_cast<int>(regs.vec.size()) != in.n)
      FailAt(in, "expects " + std::to_string(in.n) + " registers");
    const uint64_t taddr = (R(wp, addr.reg, 0) & 0xFFFFFFFFu) + static_cast<uint64_t>(addr.imm);
    const int64_t lane0 = static_cast<int64_t>(taddr >> 16), quarter = w % 4;
    const char* what = ld ? "tcgen05.ld" : "tcgen05.st";
    int64_t split = 0;
    if (x2) {
      const Operand& imm = in.ops.size() == 3 ? in.ops[ld ? 2 : 1] : in.ops[0];
      if (in.ops.size() != 3 || imm.kind != Operand::kImmInt)
        FailAt(in, "expects an immHalfSplitoff immediate");
      split = imm.imm;
    }
    if (x2 ? lane0 != 32 * quarter && lane0 != 32 * quarter + 16 : lane0 != 32 * quarter) {
      Report("tmem_lane_access", w * 32, [&] {
        return std::string(what) + " at lane " + std::to_string(lane0) + " by warp " + std::to_string(w) +
               ", which reaches lanes [" + std::to_string(32 * quarter) + ", " +
               std::to_string(32 * quarter + 32) + ") only";
      });
      return;
    }
    const int64_t col_base = static_cast<int64_t>(taddr & 0xFFFF);
    if (!tmem_.Allocated(col_base, in.n) || !tmem_.Allocated(col_base + split, in.n)) {
      Report("tmem_unallocated", w * 32, [&] {
        return std::string(what) + " of columns [" + std::to_string(col_base) + ", " +
               std::to_string(col_base + split + in.n) + ") outside every allocation";
      });
      return;
    }
    bool not_waited = false;  // reported once an instruction
    ForLanes(exec, [&](int l) {
      const int64_t lane = lane0 + (x2 ? l % 16 : l), col0 = col_base + (x2 && l >= 16 ? split : 0);
      for (int i = 0; i < in.n; ++i) {
        const size_t x = Tmem::Cell(lane, col0 + i);
        if (tmem_.in_flight[x])
          Report("tcgen05_not_committed", w * 32 + l, [&] {
            return std::string(what) + " of lane " + std::to_string(lane) + ", column " +
                   std::to_string(col0 + i) + " while an uncommitted tcgen05.mma writes it";
          });
        if (!ld) {
          tmem_.cells[x] = static_cast<uint32_t>(Get(wp, regs.vec[static_cast<size_t>(i)], w, l, Ty::kB32));
          tmem_.written[x] = 1;
          continue;
        }
        if (const int32_t issuer = tmem_.ready_issuer[x]; issuer >= 0 && !not_waited) {
          auto k = known_.find(issuer);
          if (k == known_.end() || k->second[static_cast<size_t>(w * 32 + l)] < tmem_.ready_commit[x]) {
            not_waited = true;
            Report("tcgen05_not_waited", w * 32 + l, [&] {
              return "tcgen05.ld of lane " + std::to_string(lane) + ", column " + std::to_string(col0 + i) +
                     ", which a tcgen05.mma of thread " + std::to_string(issuer) +
                     " writes, before this thread "
                     "waited for the mbarrier phase its tcgen05.commit arrives in (the mma may not have "
                     "completed)";
            });
          }
        }
        if (!tmem_.written[x])
          ReportUninit(w * 32 + l, [&] {
            return "tcgen05.ld of lane " + std::to_string(lane) + ", column " + std::to_string(col0 + i) +
                   ", which nothing has written";
          });
        Set(wp, regs.vec[static_cast<size_t>(i)], l, tmem_.cells[x], Ty::kB32);
      }
    });
  }

  // At the end of a block: tcgen05.mma never committed, columns never freed.
  void TmemBlockEnd() {
    cur_ = nullptr;
    for (int t = 0; t < T_; ++t)
      if (!tmem_.pending[static_cast<size_t>(t)].empty())
        Report("tcgen05_not_committed", t, [&] {
          return std::to_string(tmem_.pending[static_cast<size_t>(t)].size()) +
                 " tcgen05.mma issued by this thread are never committed (tcgen05.commit)";
        });
    for (auto& [col, a] : tmem_.allocs)
      Report("tmem_leak", a.second * 32, [&] {
        return "tensor memory columns [" + std::to_string(col) + ", " + std::to_string(col + a.first) +
               ") allocated by warp " + std::to_string(a.second) + " are never freed (tcgen05.dealloc)";
      });
  }

  void Stmatrix(int w, Warp& wp, const Instr& in, uint32_t act, uint32_t exec) {
    // stmatrix.sync.aligned.m8n8.x{1,2,4}{.trans}.shared.b16 [a], r (PTX ISA 9.7.9.27): ldmatrix's inverse;
    // lanes 8q..8q+7 give the row addresses of matrix q, lane l's register q holds row l/4, columns 2(l%4)
    // and 2(l%4)+1 (transposed: rows 2(l%4), 2(l%4)+1 of column l/4).
    if (!FullWarp(w, wp, act, exec, "stmatrix")) return;
    const int num = in.mode ? in.mode : 1;
    const Operand& r = in.ops[1];
    if (r.kind != Operand::kVec || static_cast<int>(r.vec.size()) != num) FailAt(in, "stmatrix needs one register a matrix");
    uint16_t mat[4][8][8] = {};
    for (int l = 0; l < 32; ++l)
      for (int q = 0; q < num; ++q) {
        const uint64_t v = Get(wp, r.vec[static_cast<size_t>(q)], w, l, Ty::kB32);
        const int a = l / 4, b = 2 * (l % 4);
        (in.trans ? mat[q][b][a] : mat[q][a][b]) = static_cast<uint16_t>(v);
        (in.trans ? mat[q][b + 1][a] : mat[q][a][b + 1]) = static_cast<uint16_t>(v >> 16);
      }
    for (int q = 0; q < num; ++q)
      for (int row = 0; row < 8; ++row) {
        const int l = 8 * q + row;
        Where wh = Resolve(wp, in, in.ops[0], l, Space::kShared);
        uint8_t* p = Access(wh, w * 32 + l, 16, true);
        if (p) std::memcpy(p, mat[q][row], 16);
      }
  }

  const Module& m_;
  const Kernel& k_;
  const Launch& L_;
  const Options& opt_;
  Result* res_;
  int64_t T_ = 0;
  int W_ = 0;
  std::array<int64_t, 3> block_{0, 0, 0};
  std::vector<uint8_t> params_, smem_, local_;
  std::vector<ShadowByte> shadow_;
  std::vector<uint64_t> globals_;  // module-scope .global / .const variables (cooperative: grid_->globals)
  std::vector<uint64_t>& Globals() { return grid_ ? grid_->globals : globals_; }
  const std::vector<uint64_t>& Globals() const { return grid_ ? grid_->globals : globals_; }
  PtxGrid* grid_ = nullptr;  // a cooperative launch: this machine runs block only_block_
  int64_t only_block_ = -1;
  PtxCluster* cl_ = nullptr;  // a cluster launch: this machine runs block only_block_, of rank rank_
  int rank_ = 0;
  bool clc_failed_ = false;          // saw a try_cancel fail (a later one is undefined behaviour)
  bool started_ = false;  // the block has started (its shared memory exists for the cluster's peers)
  std::vector<int64_t> cl_pending_;  // per thread: the cluster barrier generation it arrived in, or -1

 public:
  // Hands the turn to the next live block of a cooperative grid and waits for it to come back (after a spin
  // load); a grid where every live block keeps spinning with nothing written is a deadlock.
  void Yield(int tid) {
    PtxGrid& G = *grid_;
    std::unique_lock<std::mutex> lk(G.m);
    const int64_t me = only_block_;
    if (G.progress != G.last_progress) {
      G.last_progress = G.progress;
      std::fill(G.stalls.begin(), G.stalls.end(), 0);
    }
    ++G.stalls[static_cast<size_t>(me)];
    bool stuck = true;
    for (int64_t b = 0; b < G.n; ++b)
      stuck &= G.done[static_cast<size_t>(b)] || G.stalls[static_cast<size_t>(b)] >= 64;
    if (stuck) {
      Report("deadlock", tid, [&] {
        return std::string(
            "every block still running spins on memory no block writes any more (a grid barrier, "
            "T.sync_grid, that a block left or never reaches)");
      });
      G.abort = true;
      G.cv.notify_all();
      throw GridAbort{};
    }
    G.HandOff(lk, me, [] { return true; });
  }

 private:
  std::vector<int32_t> proxy_fences_;  // per thread of the block: fence.proxy.async executed so far
  std::vector<int32_t> fence_epoch_;   // per thread: the barrier epoch of its last fence.proxy.async
  std::vector<ProxyByte> proxy_;       // per shared byte, where the kernel has async-proxy readers
  bool uses_tmem_ = false;
  // tcgen05.commit arrivals: mbarrier -> (issuing thread, its commit number, the phase the arrival is in)
  struct CommitRecord {
    int issuer;
    int64_t index, phase;
  };
  std::map<int64_t, std::vector<CommitRecord>> commit_log_;
  std::map<int, std::vector<int64_t>> known_;  // issuing thread -> per thread: its last commit known complete
  std::map<std::pair<int64_t, int>, int64_t> carried_;  // (mbarrier, issuer) -> the largest number carried
  Tmem tmem_;
  std::vector<Region> regions_;
  int64_t extern_off_ = 0, smem_bytes_ = 0;
  int32_t epoch_ = 0, block_stamp_ = 0;
  int64_t seq_ = 0;  // warp-instructions executed
  std::vector<Warp> warps_;
  int64_t exited_ = 0;
  std::map<int64_t, int64_t> arrived_, expected_;
  std::vector<std::vector<CpAsyncCopy>> open_;
  std::map<int64_t, Mbarrier> mbars_;  // by shared offset
  std::set<int64_t> inited_;
  std::vector<TmaCopy> tma_;
  std::vector<std::deque<std::vector<CpAsyncCopy>>> groups_;
  const Instr* cur_ = nullptr;
};

}  // namespace

Result Run(const Module& m, const Launch& launch, const Options& opt) {
  const Kernel* k = m.Find(launch.entry);
  if (!k) throw UserError(ErrorKind::kUnsupported, "PTX emulator: the PTX has no kernel '" + launch.entry + "'");
  Result r;
  bool cooperative = false;  // reads the grid workspace: cooperative groups' grid sync
  for (const Instr& in : k->code)
    for (const Operand& o : in.ops)
      cooperative |= o.kind == Operand::kSreg && (o.sreg == Sreg::kEnvreg1 || o.sreg == Sreg::kEnvreg2);
  bool clustered = k->cluster != std::array<int64_t, 3>{1, 1, 1};
  for (const Instr& in : k->code)
    clustered |= in.op == Op::kClusterArrive || in.op == Op::kClusterWait || in.op == Op::kMapa ||
                 in.cluster_addr || in.op == Op::kClcTryCancel ||
                 (in.op == Op::kTmaLoad && (in.mode == 1 || in.pair)) ||
                 in.pair;  // (ld / st .shared::cluster too)
  if (clustered && cooperative)
    throw UserError(ErrorKind::kUnsupported, "PTX emulator: a cooperative launch of thread-block clusters");
  if (clustered) {  // cluster after cluster; the blocks of one take turns (PtxCluster)
    const std::array<int64_t, 3>& c = k->cluster;
    for (int d = 0; d < 3; ++d)
      if (launch.grid[d] % c[d])
        throw UserError(ErrorKind::kArgument, "PTX emulator: the grid's " + std::string(1, "xyz"[d]) +
                                                  " extent " + std::to_string(launch.grid[d]) +
                                                  " is not a multiple of the cluster's " +
                                                  std::to_string(c[d]));
    const int64_t n = c[0] * c[1] * c[2];
    ClcState Q;
    Q.taken.assign(
        static_cast<size_t>(launch.grid[0] / c[0] * (launch.grid[1] / c[1]) * (launch.grid[2] / c[2])),
        false);
    size_t index = 0;
    for (int64_t cz = 0; cz < launch.grid[2] / c[2]; ++cz)
      for (int64_t cy = 0; cy < launch.grid[1] / c[1]; ++cy)
        for (int64_t cx = 0; cx < launch.grid[0] / c[0]; ++cx) {
          if (Q.taken[index++]) continue;  // cancelled by a clusterlaunchcontrol.try_cancel
          Q.taken[index - 1] = true;
          PtxCluster G;
          G.clc = &Q;
          G.threads = n * launch.block[0] * launch.block[1] * launch.block[2];
          G.failed.assign(static_cast<size_t>(n), -1);
          std::vector<std::unique_ptr<Machine>> ms;
          for (int64_t q = 0; q < n; ++q) {
            const int64_t x = cx * c[0] + q % c[0], y = cy * c[1] + q / c[0] % c[1],
                          z = cz * c[2] + q / (c[0] * c[1]);
            ms.push_back(std::make_unique<Machine>(m, *k, launch, opt, &r, nullptr,
                                                   (z * launch.grid[1] + y) * launch.grid[0] + x, &G,
                                                   static_cast<int>(q)));
            G.blocks.push_back(ms.back().get());
          }
          G.Run(
              n, [&](int64_t q) { ms[static_cast<size_t>(q)]->Run(); }, [](int64_t) {});
        }
    return r;
  }
  if (!cooperative) {
    Machine(m, *k, launch, opt, &r).Run();
    return r;
  }
  const int64_t blocks = launch.grid[0] * launch.grid[1] * launch.grid[2];
  constexpr int64_t kMaxBlocks = 4096;
  if (blocks > kMaxBlocks)
    throw UserError(ErrorKind::kUnsupported, "PTX emulator: a cooperative grid of " + std::to_string(blocks) +
                                                 " blocks; it runs at most " + std::to_string(kMaxBlocks) +
                                                 " (a GPU holds far fewer at once: launch one block per SM)");
  PtxGrid G;
  G.stalls.assign(static_cast<size_t>(blocks), 0);
  G.workspace.assign(8, 0);
  if (m.global_bytes) {
    G.globals.assign(static_cast<size_t>((m.global_bytes + 7) / 8), 0);
    std::memcpy(G.globals.data(), m.global_init.data(), m.global_init.size());
  }
  G.Run(
      blocks, [&](int64_t b) { Machine(m, *k, launch, opt, &r, &G, b).Run(); }, [](int64_t) {});
  return r;
}

}  // namespace tl::emu::ptx
