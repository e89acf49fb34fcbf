// Blackwell tcgen05 builtins of the emulator (sm_100a family), written from NVIDIA's PTX ISA, section
// "TensorCore 5th Generation Family Instructions" (Tensor Memory, its allocation, the shared memory and
// instruction descriptors, tcgen05.mma, tcgen05.commit, tcgen05.ld / st), independently of the compiler:
//   tl.tcgen05_alloc(&dst_u32_shared, ncols)   a warp allocates ncols columns (a power of 2 in [32, 512]) of
//                                              the block's tensor memory, 128 lanes each, and writes their
//                                              address (lane << 16 | column) to dst
//   tl.tcgen05_dealloc(taddr, ncols)           the same warp frees them
//   tl.tcgen05_relinquish_alloc_permit()       the block allocates no more
//   tl.tcgen05_desc(&smem, lbo, sbo, mode)     the 64-bit shared memory descriptor (mode: 0 none, 2 128B, 4
//   64B,
//                                              6 32B swizzle; bits 46-48 hold the fixed 0b001)
//   tl.tcgen05_mma_f16(taddr_d, descA, descB, idesc, enable_input_d)
//                                              one thread issues D (tensor memory, M x N fp32) = A (M x 16,
//                                              shared) * B (16 x N, shared) + (enable ? D : 0), kind::f16
//                                              (f16 / bf16 inputs), cta_group::1, M = 128; asynchronous
//   tl.tcgen05_mma_f8f6f4(...)                the same with 8-bit float A and B (e4m3 / e5m2, either mix),
//   k32 tl.tcgen05_mma_i8(...)                    8-bit integers (s8 / u8, either mix) into an s32
//   accumulator, k32 tl.tcgen05_commit(&mbar)                   the issuing thread's earlier tcgen05.mma
//   complete, then one
//                                              arrival on the mbarrier (mbarrier::arrive::one)
//   tl.tcgen05_ld(&regs, taddr, num) / tl.tcgen05_st(taddr, &regs, num)
//                                              shape .32x32b: warp w of a warp group reaches lanes
//                                              [32 (w % 4), +32); its lane t moves num 32-bit columns of lane
//                                              taddr.lane + t starting at taddr.column to / from regs[0..num)
//   tl.tcgen05_wait_ld / wait_st / fence_before_thread_sync / fence_after_thread_sync: ordering only here
// Checked: allocation after relinquishing, running out of columns, frees that do not match an allocation
// (double frees), columns never freed at the end of the block, accesses outside a warp's lanes or outside
// the allocated columns, reads of tensor memory never written, reads of columns a tcgen05.mma that has not
// been committed writes, shared operands changed between a tcgen05.mma's issue and its commit, and
// tcgen05.mma never committed, and reads of D by a thread that has not waited for the mbarrier phase a commit
// of the issuing thread arrived in (the arrival happens at the commit here; the hardware may signal later, so
// only the wait orders the read after the mma: a block barrier shares what its threads know).
#include <cmath>
#include <cstring>
#include <map>
#include <numeric>

#include "emulator/executor.h"
#include "emulator/intrinsic_args.h"
#include "emulator/smem_matrix.h"

namespace tl::emu {
namespace {

constexpr int64_t kLanes = 128, kCols = 512;

}  // namespace

struct Executor::Tcgen05State {
  std::vector<uint32_t> tmem;          // lane-major: tmem[lane * kCols + column]
  std::vector<uint8_t> written;        // per cell
  std::vector<int32_t> in_flight;      // per cell: uncommitted tcgen05.mma writing it
  std::map<int64_t, std::pair<int64_t, int>> allocs;  // first column -> (columns, allocating warp)
  bool relinquished = false;
  bool cg2 = false;  // the block allocated with cta_group::2 (its tensor memory serves 2-CTA MMAs)
  // Whether one allocation holds columns [col, col + n).
  bool Allocated(int64_t col, int64_t n) const {
    auto it = allocs.upper_bound(col);
    return it != allocs.begin() && col + n <= std::prev(it)->first + std::prev(it)->second.first;
  }
  struct Mma {
    Executor* target;  // the block whose tensor memory D is (a 2-CTA MMA: one entry per block of the pair)
    int64_t lane0, col0, M, N;
    int eb;        // bytes per A / B element
    bool integer;  // kind::i8: D holds int32, sums wrap at 32 bits
    bool accumulate;
    std::vector<double> prod;                 // M x N products of this instruction
    std::vector<const uint8_t*> at;           // shared bytes read (A then B; either block of a pair)
    std::vector<uint16_t> bits;               // their values at issue
    bool d_f16 = false;                       // D holds float16 values (bits 0-15 of a column)
    // the lane of D's row m (M = 64: layout F)
    int64_t Lane(int64_t m) const { return lane0 + Tcgen05RowLane(M, m); }
  };
  std::vector<std::vector<Mma>> pending;      // per issuing thread, in issue order
  // Reads of D must wait for the mma's completion, which a thread knows by waiting on the mbarrier phase a
  // tcgen05.commit of the issuing thread arrived in (a commit tracks all the thread's earlier mma): per cell
  // the issuing thread (-1: none) and its commit number; per thread its commits; per mbarrier the commits
  // that arrived on it (thread, number, phase); per issuing thread what each thread knows complete.
  std::vector<int32_t> ready_issuer;
  std::vector<int64_t> ready_commit;
  std::vector<int64_t> commits;
  struct Commit {
    int issuer;
    int64_t index, phase;
  };
  std::map<int64_t, std::vector<Commit>> commit_log;
  std::map<int, std::vector<int64_t>> known;
  // What ordinary arrivals carry: per mbarrier and issuing thread, (phase, commit number) in arrival order, an
  // entry where the number grew. A thread that waited for an MMA's commit and then arrives on another barrier
  // passes that knowledge to the barrier's waiters (release / acquire).
  std::map<int64_t, std::map<int, std::vector<std::pair<int64_t, int64_t>>>> carried;
};

void Executor::Tcgen05Carry(int64_t addr, int t, int64_t phase) {
  Tcgen05State& st = *tc_;
  for (auto& [issuer, k] : st.known) {
    const int64_t v = k[static_cast<size_t>(t)];
    if (v <= 0) continue;
    auto& log = st.carried[addr][issuer];
    if (log.empty() || log.back().second < v) log.emplace_back(phase, v);
  }
}

void Executor::Tcgen05Observe(int64_t addr, int t, int64_t phases) {
  Tcgen05State& st = *tc_;
  if (auto c = st.carried.find(addr); c != st.carried.end())
    for (auto& [issuer, log] : c->second)
      for (auto it = log.rbegin(); it != log.rend(); ++it) {
        if (it->first < phases) {  // the latest (largest) knowledge of a completed phase
          std::vector<int64_t>& k = st.known[issuer];
          if (k.empty()) k.assign(static_cast<size_t>(T_), 0);
          k[static_cast<size_t>(t)] = std::max(k[static_cast<size_t>(t)], it->second);
          break;
        }
      }
  auto log = st.commit_log.find(addr);
  if (log == st.commit_log.end()) return;
  for (const auto& c : log->second)
    if (c.phase < phases) {
      std::vector<int64_t>& k = st.known[c.issuer];
      if (k.empty()) k.assign(static_cast<size_t>(T_), 0);
      k[static_cast<size_t>(t)] = std::max(k[static_cast<size_t>(t)], c.index);
    }
}

void Executor::Tcgen05Share(const Lanes& act) {
  // lockstep: the threads of the barrier; among warp-group fibers each fiber sees only its own, so there the
  // whole block shares (an over-approximation: it may hide a missing wait, never invent one)
  Lanes all;
  if (InFibers()) {
    all.resize(static_cast<size_t>(T_));
    std::iota(all.begin(), all.end(), 0);
  }
  const Lanes& who = InFibers() ? all : act;
  for (auto& [issuer, k] : tc_->known) {
    int64_t most = 0;
    for (int t : who) most = std::max(most, k[static_cast<size_t>(t)]);
    for (int t : who) k[static_cast<size_t>(t)] = most;
  }
}

void Executor::Tcgen05BlockStart() {
  if (!tc_) tc_ = std::make_shared<Tcgen05State>();
  tc_->tmem.assign(kLanes * kCols, 0xFFFFFFFFu);  // never written: all ones (NaN)
  tc_->written.assign(kLanes * kCols, 0);
  tc_->in_flight.assign(kLanes * kCols, 0);
  tc_->allocs.clear();
  tc_->relinquished = false;
  tc_->pending.assign(static_cast<size_t>(T_), {});
  tc_->ready_issuer.assign(kLanes * kCols, -1);
  tc_->ready_commit.assign(kLanes * kCols, 0);
  tc_->commits.assign(static_cast<size_t>(T_), 0);
  tc_->commit_log.clear();
  tc_->known.clear();
  tc_->carried.clear();
}

void Executor::Tcgen05BlockEnd() {
  if (!tc_) return;
  for (int t = 0; t < T_; ++t)
    if (!tc_->pending[static_cast<size_t>(t)].empty())
      Report("tcgen05_not_committed", t, [&] {
        return std::to_string(tc_->pending[static_cast<size_t>(t)].size()) +
               " tcgen05.mma issued by this thread are never committed (tcgen05.commit)";
      });
  for (auto& [col, a] : tc_->allocs)
    Report("tmem_leak", a.second * 32, [&] {
      return "tensor memory columns [" + std::to_string(col) + ", " + std::to_string(col + a.first) +
             ") allocated by warp " + std::to_string(a.second) + " are never freed (tcgen05.dealloc)";
    });
  tc_.reset();
}

bool Executor::ExecTcgen05(const CallNode* c, const Lanes& act) {
  if (c->op.rfind("tl.tcgen05_", 0) != 0) return false;
  // the 2-CTA forms (cta_group::2) end in _cg2; `op` names the instruction
  const bool cg2 = c->op.size() > 4 && c->op.compare(c->op.size() - 4, 4, "_cg2") == 0;
  const std::string op = cg2 ? c->op.substr(0, c->op.size() - 4) : c->op;
  if (!tc_) Tcgen05BlockStart();
  Tcgen05State& st = *tc_;
  if (op == "tl.tcgen05_wait_ld" || op == "tl.tcgen05_wait_st" || op == "tl.tcgen05_fence_before_thread_sync" ||
      op == "tl.tcgen05_fence_after_thread_sync")
    return true;  // the emulator completes ld / st in program order
  TmpScope ts(this);
  auto arg = [&](size_t i) {
    Slot* s = Tmp();
    Eval(c->args.at(i), act, s);
    return s;
  };
  auto cell = [](int64_t lane, int64_t col) { return static_cast<size_t>(lane * kCols + col); };
  if (op == "tl.tcgen05_relinquish_alloc_permit") {
    st.relinquished = true;
    return true;
  }
  if (cg2 && (op == "tl.tcgen05_alloc" || op == "tl.tcgen05_dealloc")) {
    // one warp of each block of the pair allocates in its own tensor memory (the peer is checked by the MMA)
    if (ClusterSize() % 2) {
      Report("tcgen05_pair", act.empty() ? 0 : act[0], [&] {
        return "tcgen05." + std::string(op == "tl.tcgen05_alloc" ? "alloc" : "dealloc") +
               ".cta_group::2 in a block with no CTA pair (a cluster of an even number of blocks)";
      });
      return true;
    }
    st.cg2 = true;
  }
  if (op == "tl.tcgen05_alloc" || op == "tl.tcgen05_dealloc") {
    if (c->args.size() != 2) Bad(c, "expects (destination or address, columns)");
    const Lanes full = FullWarps(act, op.c_str());
    const bool alloc = op == "tl.tcgen05_alloc";
    Slot* flat = Tmp();
    Mem* dst = nullptr;
    if (alloc) {
      const BufferLoadNode* d = Operand(c, 0);
      dst = &MemOf(d->buffer.get());
      if (!dst->shared() || dst->esize != 4) Bad(c, "the destination must be a 32-bit shared-memory element");
      Locate(d->buffer, d->indices, full, flat);
    }
    Slot* addr = alloc ? nullptr : arg(0);
    Slot* cols = arg(1);
    for (size_t w0 = 0; w0 < full.size(); w0 += 32) {
      const int t = full[w0], warp = t / 32;
      const int64_t n = cols[t].i;
      if (n < 32 || n > kCols || (n & (n - 1))) {
        Report("tmem_columns", t, [&] {
          return "tcgen05." + std::string(alloc ? "alloc" : "dealloc") + " of " + std::to_string(n) +
                 " columns: the count must be a power of 2 in [32, 512]";
        });
        continue;
      }
      if (!alloc) {
        const int64_t col = addr[t].i & 0xFFFF;
        auto it = st.allocs.find(col);
        if (it == st.allocs.end() || it->second.first != n || (addr[t].i >> 16) != 0) {
          Report("tmem_bad_free", t, [&] {
            return "tcgen05.dealloc of " + std::to_string(n) + " columns at column " + std::to_string(col) +
                   " frees no allocation of that size there (a double free, or a wrong address or size)";
          });
          continue;
        }
        if (it->second.second != warp)
          Report("tmem_bad_free", t, [&] {
            return "tcgen05.dealloc by warp " + std::to_string(warp) + " of columns warp " +
                   std::to_string(it->second.second) + " allocated (the allocating warp must free them)";
          });
        for (int64_t l = 0; l < kLanes; ++l)
          for (int64_t q = col; q < col + n; ++q)
            if (st.in_flight[cell(l, q)]) {
              Report("tcgen05_not_committed", t, [&] {
                return "tcgen05.dealloc of columns an uncommitted tcgen05.mma still writes";
              });
              l = kLanes;
              break;
            }
        st.allocs.erase(it);
        continue;
      }
      if (st.relinquished) {
        Report("tmem_alloc_after_relinquish", t,
               [&] { return "tcgen05.alloc after the block relinquished its allocation permit"; });
        continue;
      }
      int64_t found = -1;
      for (int64_t col = 0; col + n <= kCols && found < 0; col += n) {
        bool free = true;
        for (auto& [c0, a] : st.allocs) free &= col + n <= c0 || c0 + a.first <= col;
        if (free) found = col;
      }
      if (found < 0) {
        Report("tmem_exhausted", t, [&] {
          return "tcgen05.alloc of " + std::to_string(n) +
                 " columns cannot succeed: the block's 512 columns are taken (the warp would wait forever)";
        });
        continue;
      }
      st.allocs[found] = {n, warp};
      const int64_t f = flat[t].i;
      if (f >= 0) {
        uint32_t v = static_cast<uint32_t>(found);  // lane 0, column `found`
        std::memcpy(dst->Addr(t, f), &v, 4);
        NoteWrite(*dst, t, f);
      }
    }
    return true;
  }
  if (op == "tl.tcgen05_ld" || op == "tl.tcgen05_st" || op == "tl.tcgen05_st_packed16" ||
      op == "tl.tcgen05_ld_lo16" || op == "tl.tcgen05_st_lo16" || op == "tl.tcgen05_ld_16x32bx2" ||
      op == "tl.tcgen05_st_16x32bx2" || op == "tl.tcgen05_ld_16x32bx2_lo16" ||
      op == "tl.tcgen05_st_16x32bx2_lo16") {
    // (st_packed16: column i holds values 2i (bits 0-15) and 2i + 1 (bits 16-31) of 16-bit registers;
    // ld_lo16 / st_lo16: register i is bits 0-15 of column i, a float16 accumulator's value, the upper half
    // 0)
    const bool ld = op.rfind("tl.tcgen05_ld", 0) == 0, packed = op == "tl.tcgen05_st_packed16";
    const bool lo16 = op.size() > 5 && op.compare(op.size() - 5, 5, "_lo16") == 0;
    // shape .16x32bx2 (args: ..., count, immHalfSplitoff): lanes t < 16 of the warp move num columns of
    // tensor-memory lane taddr.lane + t from taddr.column, lanes t >= 16 those of lane taddr.lane + t - 16
    // from taddr.column + immHalfSplitoff
    const bool x2 = op.find("16x32bx2") != std::string::npos;
    const int64_t vals = packed ? 2 : 1;  // register values a column
    if (c->args.size() != (x2 ? 4u : 3u))
      Bad(c, std::string(ld ? "expects (registers, address, count" : "expects (address, registers, count") +
                 (x2 ? ", half split offset)" : ")"));
    const BufferLoadNode* r = Operand(c, ld ? 0 : 1);
    Mem& regs = MemOf(r->buffer.get());
    if (regs.shared() || regs.global() || regs.esize != (packed || lo16 ? 2 : 4))
      Bad(c, packed || lo16 ? "the registers must be a 16-bit local buffer"
                            : "the registers must be a 32-bit local buffer");
    int64_t split = 0;
    if (x2 && (!AsConstInt(c->args[3], &split) || split < 0 || split > 0xFFFF))
      Bad(c, "the half split offset must be a literal column count");
    int64_t num = 0;
    if (!AsConstInt(c->args[2], &num) || num < 1 || num > 128 || (num & (num - 1)))
      Bad(c, "the count must be a literal power of 2 in [1, 128] (.x1 .. .x128)");
    const Lanes full = FullWarps(act, op.c_str());
    Slot* flat = Tmp();
    Locate(r->buffer, r->indices, full, flat, num * vals);
    Slot* addr = arg(ld ? 1 : 0);
    std::vector<bool> not_waited(static_cast<size_t>((T_ + 31) / 32), false);
    for (int t : full) {
      const int64_t lane0 = (addr[t].i >> 16) & 0xFFFF, quarter = (t / 32) % 4;
      const int64_t col0 = (addr[t].i & 0xFFFF) + (x2 && t % 32 >= 16 ? split : 0);
      if (x2 ? lane0 != 32 * quarter && lane0 != 32 * quarter + 16 : lane0 != 32 * quarter) {
        Report("tmem_lane_access", t, [&] {
          return "tcgen05." + std::string(ld ? "ld" : "st") + " at lane " + std::to_string(lane0) + " by warp " +
                 std::to_string(t / 32) + ", which reaches lanes [" + std::to_string(32 * quarter) + ", " +
                 std::to_string(32 * quarter + 32) + ") only" +
                 (x2 ? " (a .16x32bx2 access starts at lane 32 q or 32 q + 16 of them)" : "");
        });
        continue;
      }
      if (!st.Allocated(col0, num)) {
        Report("tmem_unallocated", t, [&] {
          return "tcgen05." + std::string(ld ? "ld" : "st") + " of columns [" + std::to_string(col0) + ", " +
                 std::to_string(col0 + num) + ") outside every allocation";
        });
        continue;
      }
      if (flat[t].i < 0) continue;
      const int64_t lane = lane0 + (x2 ? t % 16 : t % 32);
      for (int64_t i = 0; i < num; ++i) {
        const size_t x = cell(lane, col0 + i);
        if (!ld) {
          if (st.in_flight[x])
            Report("tcgen05_not_committed", t, [&] {
              return "tcgen05.st to lane " + std::to_string(lane) + ", column " + std::to_string(col0 + i) +
                     ", which an uncommitted tcgen05.mma writes";
            });
          uint32_t word = 0;
          for (int64_t v = 0; v < vals; ++v) {
            NoteRead(regs, t, flat[t].i + i * vals + v);
            uint32_t part = 0;
            std::memcpy(&part, regs.Addr(t, flat[t].i + i * vals + v), static_cast<size_t>(regs.esize));
            word |= part << (16 * v);
          }
          st.tmem[x] = word;
          st.written[x] = 1;
          continue;
        }
        if (st.in_flight[x])
          Report("tcgen05_not_committed", t, [&] {
            return "tcgen05.ld of lane " + std::to_string(lane) + ", column " + std::to_string(col0 + i) +
                   " before the tcgen05.mma writing it was committed";
          });
        else if (!st.written[x])
          ReportUninit(t, [&] {
            return "tcgen05.ld of lane " + std::to_string(lane) + ", column " + std::to_string(col0 + i) +
                   ", which nothing has written";
          });
        else if (const int32_t issuer = st.ready_issuer[x]; issuer >= 0 && !not_waited[t / 32]) {
          auto k = st.known.find(issuer);
          if (k == st.known.end() || k->second[static_cast<size_t>(t)] < st.ready_commit[x]) {
            not_waited[t / 32] = true;  // once a warp and instruction
            Report("tcgen05_not_waited", t, [&] {
              return "tcgen05.ld of lane " + std::to_string(lane) + ", column " + std::to_string(col0 + i) +
                     ", which a tcgen05.mma of thread " + std::to_string(issuer) +
                     " writes, before this thread waited for the mbarrier phase its tcgen05.commit arrives "
                     "in "
                     "(the mma may not have completed)";
            });
          }
        }
        // (a load: one register a column; lo16 its lower half)
        std::memcpy(regs.Addr(t, flat[t].i + i), &st.tmem[x], static_cast<size_t>(regs.esize));
        NoteWrite(regs, t, flat[t].i + i);
      }
    }
    return true;
  }
  // The block's shared memory as bytes: the buffer every view lives in (or the one shared buffer).
  auto smem_of = [&](Executor* e) -> Mem* {
    for (auto& kv : e->mems_)
      if (kv.second->shared() && !kv.first->data) return kv.second.get();
    return nullptr;
  };
  // The blocks a cta_group::2 instruction acts on (the pair: ranks 2i, 2i + 1), or this one.
  auto pair_blocks = [&](int t, const char* what, std::vector<Executor*>* blocks) {
    *blocks = {this};
    if (!cg2) return true;
    if (ClusterSize() % 2) {
      Report("tcgen05_pair", t, [&] {
        return std::string(what) +
               ".cta_group::2 in a block with no CTA pair (a cluster of an even number of blocks)";
      });
      return false;
    }
    Executor* e0 = ClusterPeer(rank_ & ~1, t, what);
    Executor* e1 = ClusterPeer(rank_ | 1, t, what);
    if (!e0 || !e1) return false;
    *blocks = {e0, e1};
    return true;
  };
  if (op == "tl.tcgen05_cp_warpx4") {
    // tcgen05.cp.32x128b.warpx4 [taddr], sdesc (PTX ISA, tcgen05.cp; the shared descriptor without swizzle:
    // row r, 16 bytes, at start + (r / 8) SBO + (r % 8) 16): row r lands in lanes r, r + 32, r + 64, r + 96
    // of columns taddr.column .. + 4. Done at issue: the issuing thread's later tcgen05.mma are ordered after
    // it, and the emulator runs each at issue too. cta_group::2: each block of the pair from its own shared
    // memory into its own tensor memory.
    if (c->args.size() != 2) Bad(c, "expects (tensor memory address, shared descriptor)");
    Slot *ta = arg(0), *sd = arg(1);
    for (int t : act) {
      const uint64_t desc = static_cast<uint64_t>(sd[t].i);
      const int64_t start = static_cast<int64_t>(desc & 0x3FFF) << 4;
      const int64_t sbo = static_cast<int64_t>((desc >> 32) & 0x3FFF) << 4;
      if ((desc >> 61) & 7) {
        Report("tcgen05_unsupported", t, [&] {
          return std::string("tcgen05.cp.32x128b.warpx4 with a swizzled shared descriptor is not emulated");
        });
        continue;
      }
      std::vector<Executor*> blocks;
      if (!pair_blocks(t, "tcgen05.cp", &blocks)) continue;
      const int64_t lane0 = (ta[t].i >> 16) & 0xFFFF, col0 = ta[t].i & 0xFFFF;
      for (Executor* e : blocks) {
        if (!e->tc_) e->Tcgen05BlockStart();
        Tcgen05State& es = *e->tc_;
        if (lane0 != 0 || !es.Allocated(col0, 4)) {
          Report("tmem_unallocated", t, [&] {
            return "tcgen05.cp into lanes [" + std::to_string(lane0) + ", +128), columns [" +
                   std::to_string(col0) + ", " + std::to_string(col0 + 4) + ") outside every allocation";
          });
          break;
        }
        Mem* sm = smem_of(e);
        for (int64_t r = 0; r < 32; ++r)
          for (int64_t q = 0; q < 4; ++q) {
            const int64_t a = start + (r / 8) * sbo + (r % 8) * 16 + 4 * q;
            uint32_t v = 0;
            if (!sm || a < 0 || a + 4 > sm->n * sm->esize) {
              Report("out_of_bounds", t,
                     [&] { return std::string("tcgen05.cp reads outside shared memory"); });
              r = 32;
              break;
            }
            std::memcpy(&v, sm->data + a, 4);
            for (int64_t w = 0; w < 4; ++w) {
              const size_t x = cell(32 * w + r, col0 + q);
              if (es.in_flight[x])
                Report("tcgen05_not_committed", t, [&] {
                  return "tcgen05.cp overwrites tensor memory an uncommitted tcgen05.mma writes";
                });
              es.tmem[x] = v;
              es.written[x] = 1;
            }
          }
      }
    }
    return true;
  }
  if (op == "tl.tcgen05_sf_warp_transpose") {
    // One warp: word 32 c + r of the 128 words at the operand moves to word 4 r + c, a whole warp at once
    // here. Lane r reads and writes words r, 32 + r, 64 + r and 96 + r (the values move between lanes in
    // registers).
    const BufferLoadNode* p = Operand(c, 0);
    Mem& m = MemOf(p->buffer.get());
    if (!m.shared() || m.esize != 4) Bad(c, "the operand must be a 32-bit shared-memory element");
    const Lanes full = FullWarps(act, "tcgen05_sf_warp_transpose");
    Slot* flat = Tmp();
    Locate(p->buffer, p->indices, full, flat);
    for (size_t w0 = 0; w0 < full.size(); w0 += 32) {
      const int64_t base = flat[full[w0]].i;
      if (base < 0 || base + 128 > m.n) {
        Report("out_of_bounds", full[w0],
               [&] { return std::string("tcgen05_sf_warp_transpose of 128 words outside its buffer"); });
        continue;
      }
      uint32_t v[128];
      for (int64_t i = 0; i < 128; ++i) {
        const int t = full[w0 + static_cast<size_t>(i % 32)];
        NoteRead(m, t, base + i);
        std::memcpy(&v[i], m.Addr(t, base + i), 4);
      }
      for (int64_t r = 0; r < 32; ++r)
        for (int64_t q = 0; q < 4; ++q) {
          const int64_t i = 4 * r + q;  // takes old word 32 q + r
          const int t = full[w0 + static_cast<size_t>(i % 32)];
          std::memcpy(m.Addr(t, base + i), &v[32 * q + r], 4);
          NoteWrite(m, t, base + i);
        }
    }
    return true;
  }
  if (op == "tl.tcgen05_mma_f16" || op == "tl.tcgen05_mma_f8f6f4" || op == "tl.tcgen05_mma_i8" ||
      op == "tl.tcgen05_mma_ts_f16" || op == "tl.tcgen05_mma_mxf8f6f4" || op == "tl.tcgen05_mma_mxf4nvf4" ||
      op == "tl.tcgen05_mma_mxf4" || op == "tl.tcgen05_mma_tf32") {
    // _ts_: A in this block's tensor memory at the address operand (kind::f16: row m at lane m of the
    // address's lane, K value k at column + k / 2, bits 16 (k % 2) .. + 16: two 16-bit values a 32-bit
    // column)
    const bool ts = op == "tl.tcgen05_mma_ts_f16";
    // kind::f16: 16-bit A and B, k16 per instruction; kind::f8f6f4 (8-bit floats here) and kind::i8 (s8 / u8,
    // an s32 accumulator whose sums wrap at 32 bits): k32 (32 bytes of K)
    const bool i8 = op == "tl.tcgen05_mma_i8";
    // kind::mxf8f6f4.block_scale.scale_vec::1X: e4m3 / e5m2 with one E8M0 scale a row of A and a column of B
    // per k32 step, from tensor memory (args 5, 6: T.tcgen05_cp_warpx4's layout, row m at lane m, column m /
    // 32 of A's scales, column n at lane n % 128, column n / 32 of B's, in the D block's own tensor memory),
    // the byte the instruction descriptor's scale ids name
    // kind::mxf4nvf4.block_scale.block16 (NVFP4): fp4 A and B two values a byte (the first in the low
    // nibble), k64; each row's and column's four UE4M3 scales the bytes of its word (byte j: k in [16 j, 16 j
    // + 16)), at the same lanes and columns as the E8M0 ones
    // kind::mxf4.block_scale.scale_vec::2X (MXFP4): as NVFP4, with two E8M0 scales a row and column, the
    // bytes a_sf_id, a_sf_id + 1 (0 or 2: a half-word) of the word (byte a_sf_id + j: k in [32 j, 32 j + 32))
    const bool mxf4 = op == "tl.tcgen05_mma_mxf4";
    const bool x4 = op == "tl.tcgen05_mma_mxf4nvf4", nvf4 = x4 || mxf4;  // nvf4: fp4 two a byte, k64
    const bool bs = op == "tl.tcgen05_mma_mxf8f6f4" || nvf4;
    const bool f8 = op == "tl.tcgen05_mma_f8f6f4" || i8 || bs;
    // kind::tf32: float32 A and B read as tf32, k8 (32 bytes). The ISA's tcgen05 text does not say how the
    // 32-bit values become tf32; its wgmma text does ("will truncate lower 13 bits of the 32-bit input
    // data"), and the emulator does the same (an assumption for tcgen05).
    const bool tf32 = op == "tl.tcgen05_mma_tf32";
    const int eb = tf32 ? 4 : f8 ? 1 : 2;
    const int64_t KS = nvf4 ? 64 : tf32 ? 8 : f8 ? 32 : 16;
    const int64_t NBLK = x4 ? 4 : mxf4 ? 2 : 1;  // scales a row a step
    if (c->args.size() != (bs ? 7u : 5u))
      Bad(c,
          bs ? "expects (D address, A descriptor, B descriptor, instruction descriptor, enable, scales of A, "
               "scales of B)"
             : "expects (D address, A descriptor, B descriptor, instruction descriptor, enable)");
    Slot *d = arg(0), *da = arg(1), *db = arg(2), *id = arg(3), *en = arg(4);
    Slot *sfa = bs ? arg(5) : nullptr, *sfb = bs ? arg(6) : nullptr;
    for (int t : act) {
      const uint32_t idesc = static_cast<uint32_t>(id[t].i);
      Tcgen05Instr I;
      std::string why;
      DecodeTcgen05Instr(idesc,
                         tf32   ? 6
                         : mxf4 ? 5
                         : x4   ? 4
                         : bs   ? 3
                         : i8   ? 2
                         : f8   ? 1
                                : 0,
                         &I, &why, cg2 ? 2 : 1);
      const int64_t N = I.N;
      const int at = I.a_type, bt = I.b_type;
      SmemMatrixDesc A, B;
      if (why.empty() && !ts && !DecodeTcgen05Descriptor(static_cast<uint64_t>(da[t].i), &A, &why))
        why = "A descriptor: " + why;
      if (why.empty() && ts && I.mn_a) why = "A in tensor memory must be K-major";
      if (why.empty() && !DecodeTcgen05Descriptor(static_cast<uint64_t>(db[t].i), &B, &why))
        why = "B descriptor: " + why;
      if (!why.empty()) {
        Report("tcgen05_unsupported", t, [&] { return "tcgen05.mma: " + why; });
        continue;
      }
      // The blocks whose tensor memory D spans: this one, or with cta_group::2 the pair (ranks 2i, 2i + 1)
      // with A's and D's rows [0, 128) in the even block, [128, 256) in the odd one, and B's columns [0, N /
      // 2) in the even block's shared memory, [N / 2, N) in the odd one's (PTX ISA, tcgen05 "CTA pair").
      std::vector<Executor*> blocks;
      if (!pair_blocks(t, "tcgen05.mma", &blocks)) continue;
      const int64_t lane0 = (d[t].i >> 16) & 0xFFFF, col0 = d[t].i & 0xFFFF;
      bool placed = lane0 == 0;
      for (Executor* e : blocks) {
        if (!e->tc_) e->Tcgen05BlockStart();
        const Tcgen05State& es = *e->tc_;
        placed = placed && es.Allocated(col0, N);
        if (cg2 && !es.cg2)
          Report("tcgen05_pair", t, [&] {
            return "tcgen05.mma.cta_group::2 into tensor memory that block " + std::to_string(e->rank_) +
                   " of the pair did not allocate with tcgen05.alloc.cta_group::2";
          });
      }
      if (!placed) {
        Report("tmem_unallocated", t, [&] {
          return "tcgen05.mma into lanes [" + std::to_string(lane0) + ", +128), columns [" +
                 std::to_string(col0) + ", " + std::to_string(col0 + N) + ") outside every allocation" +
                 (cg2 ? " of the CTA pair" : "");
        });
        continue;
      }
      const bool neg_a = I.neg_a, neg_b = I.neg_b, mn_a = I.mn_a, mn_b = I.mn_b;
      const int64_t H = static_cast<int64_t>(blocks.size()), M = I.M / H, NB = N / H;  // per block
      // e4m3 (finite only: the all-ones pattern is NaN) and e5m2 as the OCP formats define them
      auto decode = [&](int type, uint16_t h) {
        if (i8) return type == 1 ? static_cast<double>(static_cast<int8_t>(h & 0xFF)) : static_cast<double>(h & 0xFF);
        if (type == 5 || nvf4) return DecodeE2M1(h & 0xF);  // E2M1 (the nibble value() picked)
        if (type == 3 || type == 4) return DecodeMx(h & 0x3F, type == 3 ? 2 : 3, type == 3 ? 3 : 2);  // fp6
        if (f8) return type == 0 ? DecodeMinifloat(h, 4, 3, true) : DecodeMinifloat(h, 5, 2, false);
        return type == 0 ? DecodeMinifloat(h, 5, 10, false) : DecodeMinifloat(h, 8, 7, false);
      };
      std::vector<Tcgen05State::Mma> parts;
      bool ok = true;
      std::vector<double> b(static_cast<size_t>(N * KS));
      std::vector<const uint8_t*> b_at;
      std::vector<uint16_t> b_bits;
      // (an E2M1 operand, type 5: value k's byte in the padded layout, then its nibble)
      auto value = [&](Mem* sm, const SmemMatrixDesc& desc, bool mn_major, int64_t mn, int64_t k, int type,
                       std::vector<const uint8_t*>* where, std::vector<uint16_t>* bits) {
        const bool nib = nvf4 || (type == 5 && f8 && !i8);  // a nibble: two values a byte, or the padded form
        const bool six = (type == 3 || type == 4) && f8 && !i8 && !nvf4;  // fp6 in the padded form
        const int64_t kc = nvf4 ? k / 2 : nib ? PaddedFp4Column(k) : six ? PaddedFp6Column(k) : k;
        const int shift = six ? PaddedFp6Shift(k) : 0;
        const int nb = six && shift > 2 ? 2 : 1;  // bytes the value reaches into
        uint16_t h = 0;
        for (int j = 0; j < (six ? nb : 1); ++j) {
          const int64_t a =
              SwizzleAddress(CanonicalAddress(desc, mn_major, mn, kc + j, eb), desc.swizzle_bytes);
          if (!sm || a < 0 || a + eb > sm->n * sm->esize) {
            ok = false;
            return uint16_t{0};
          }
          uint16_t part = 0;
          std::memcpy(&part, sm->data + a, eb);
          where->push_back(sm->data + a);
          bits->push_back(part);
          h = static_cast<uint16_t>(h | (part << (8 * j)));
        }
        if (six) return static_cast<uint16_t>((h >> shift) & 0x3F);
        return nib ? static_cast<uint16_t>((h >> (4 * (k % 2))) & 0xF) : h;
      };
      // a kind::tf32 operand: its 32-bit value (recorded as two 16-bit halves for the overwrite check), the
      // lower 13 bits dropped
      auto value32 = [&](Mem* sm, const SmemMatrixDesc& desc, bool mn_major, int64_t mn, int64_t k,
                         std::vector<const uint8_t*>* where, std::vector<uint16_t>* bits) {
        const int64_t a = SwizzleAddress(CanonicalAddress(desc, mn_major, mn, k, 4), desc.swizzle_bytes);
        if (!sm || a < 0 || a + 4 > sm->n * sm->esize) {
          ok = false;
          return 0.0;
        }
        uint32_t w = 0;
        std::memcpy(&w, sm->data + a, 4);
        for (int j = 0; j < 2; ++j) {
          where->push_back(sm->data + a + 2 * j);
          bits->push_back(static_cast<uint16_t>(w >> (16 * j)));
        }
        w &= 0xFFFFE000u;
        float f = 0;
        std::memcpy(&f, &w, 4);
        return static_cast<double>(f);
      };
      for (int64_t h = 0; h < H && ok; ++h)
        for (int64_t n = 0; n < NB && ok; ++n)
          for (int64_t k = 0; k < KS; ++k)
            b[static_cast<size_t>((h * NB + n) * KS + k)] =
                tf32 ? value32(smem_of(blocks[static_cast<size_t>(h)]), B, mn_b, n, k, &b_at, &b_bits)
                     : decode(bt, value(smem_of(blocks[static_cast<size_t>(h)]), B, mn_b, n, k, bt, &b_at,
                                        &b_bits));
      for (int64_t h = 0; h < H && ok; ++h) {
        Executor* e = blocks[static_cast<size_t>(h)];
        // (the overwrite check compares what was read: 16-bit halves of tf32 values)
        Tcgen05State::Mma mma{e, lane0, col0, M, N, tf32 ? 2 : eb, i8, en[t].i != 0, {}, {}, {}};
        mma.d_f16 = I.d_f16;
        if (ts && M != 128) {
          Report("tcgen05_unsupported", t, [&] { return std::string("tcgen05.mma: A in tensor memory with M = 64 is not emulated"); });
          ok = false;
          break;
        }
        std::vector<double> a(static_cast<size_t>(M * KS));
        Mem* sm = smem_of(e);
        if (ts) {  // A from the tensor memory of the block whose rows these are (a pair: each its own)
          const Tcgen05State& ast = *e->tc_;
          const int64_t alane = (da[t].i >> 16) & 0xFFFF, acol = da[t].i & 0xFFFF;
          if (alane != 0 || !ast.Allocated(acol, KS / 2)) {
            Report("tmem_unallocated", t, [&] {
              return "tcgen05.mma reads A from lanes [" + std::to_string(alane) + ", +128), columns [" +
                     std::to_string(acol) + ", " + std::to_string(acol + KS / 2) +
                     ") outside every allocation";
            });
            ok = false;
            break;
          }
          for (int64_t m = 0; m < M; ++m)
            for (int64_t k = 0; k < KS; ++k) {
              const size_t x = cell(m, acol + k / 2);
              if (!ast.written[x] || ast.in_flight[x])
                Report(ast.in_flight[x] ? "tcgen05_not_committed" : "uninitialized", t, [&] {
                  return "tcgen05.mma reads A at lane " + std::to_string(m) + ", column " +
                         std::to_string(acol + k / 2) +
                         (ast.in_flight[x] ? ", which an uncommitted tcgen05.mma writes"
                                           : ", which nothing has written");
                });
              const uint8_t* p = reinterpret_cast<const uint8_t*>(&ast.tmem[x]) + 2 * (k % 2);
              uint16_t h = 0;
              std::memcpy(&h, p, 2);
              mma.at.push_back(p);
              mma.bits.push_back(h);
              a[static_cast<size_t>(m * KS + k)] = decode(at, h);
            }
        } else {
          for (int64_t m = 0; m < M && ok; ++m)
            for (int64_t k = 0; k < KS; ++k)
              a[static_cast<size_t>(m * KS + k)] =
                  tf32 ? value32(sm, A, mn_a, m, k, &mma.at, &mma.bits)
                       : decode(at, value(sm, A, mn_a, m, k, at, &mma.at, &mma.bits));
        }
        if (!ok) break;
        if (h == 0) {  // B's reads are checked with the first block's part
          mma.at.insert(mma.at.end(), b_at.begin(), b_at.end());
          mma.bits.insert(mma.bits.end(), b_bits.begin(), b_bits.end());
        }
        // the E8M0 scales (2^(e - 127); 255 is NaN) of block e's rows of A and of all N columns of B
        std::vector<double> sa(static_cast<size_t>(M * NBLK), 1.0), sb(static_cast<size_t>(N * NBLK), 1.0);
        if (bs) {
          const Tcgen05State& es = *e->tc_;
          auto scale = [&](int64_t addr, int64_t lane, int64_t col, int id, const char* which) {
            const int64_t l0 = (addr >> 16) & 0xFFFF, c0 = addr & 0xFFFF;
            if (l0 != 0 || !es.Allocated(c0 + col, 1)) {
              Report("tmem_unallocated", t, [&] {
                return std::string("tcgen05.mma reads the scale factors of ") + which +
                       " outside every allocation";
              });
              ok = false;
              return 1.0;
            }
            const size_t x = cell(lane, c0 + col);
            if (!es.written[x])
              ReportUninit(t, [&] {
                return std::string("tcgen05.mma reads a scale factor of ") + which + " at lane " +
                       std::to_string(lane) + ", column " + std::to_string(c0 + col) +
                       ", which nothing has written";
              });
            const uint32_t byte = (es.tmem[x] >> (8 * id)) & 0xFF;
            if (x4) return DecodeMinifloat(byte & 0x7F, 4, 3, true);  // UE4M3 (0x7F NaN)
            return byte == 255 ? std::nan("") : std::ldexp(1.0, static_cast<int>(byte) - 127);
          };
          // the byte of scale j: 4X byte j; 2X byte id + j; 1X byte id
          auto byte_of = [&](int id, int64_t j) {
            return x4 ? static_cast<int>(j) : id + static_cast<int>(j);
          };
          for (int64_t m = 0; m < M && ok; ++m)
            for (int64_t j = 0; j < NBLK; ++j)
              sa[static_cast<size_t>(m * NBLK + j)] = scale(sfa[t].i, m, m / 32, byte_of(I.a_sf_id, j), "A");
          for (int64_t n = 0; n < N && ok; ++n)
            for (int64_t j = 0; j < NBLK; ++j)
              sb[static_cast<size_t>(n * NBLK + j)] =
                  scale(sfb[t].i, n % 128, n / 32, byte_of(I.b_sf_id, j), "B");
          if (!ok) break;
        }
        mma.prod.assign(static_cast<size_t>(M * N), 0.0);
        for (int64_t m = 0; m < M; ++m)
          for (int64_t n = 0; n < N; ++n) {
            double sum = 0;
            for (int64_t j = 0; j < NBLK; ++j) {  // each scale block's products, times its two scales
              double part = 0;
              for (int64_t k = j * (KS / NBLK); k < (j + 1) * (KS / NBLK); ++k)
                part += a[static_cast<size_t>(m * KS + k)] * b[static_cast<size_t>(n * KS + k)];
              sum += part * sa[static_cast<size_t>(m * NBLK + j)] * sb[static_cast<size_t>(n * NBLK + j)];
            }
            mma.prod[static_cast<size_t>(m * N + n)] = (neg_a != neg_b) ? -sum : sum;
          }
        parts.push_back(std::move(mma));
      }
      if (!ok) {
        Report("out_of_bounds", t, [&] { return "tcgen05.mma reads an operand outside shared memory"; });
        continue;
      }
      for (auto& mma : parts) {
        Tcgen05State& ts = *mma.target->tc_;
        for (int64_t m = 0; m < mma.M; ++m)
          for (int64_t n = 0; n < mma.N; ++n) ++ts.in_flight[cell(mma.Lane(m), col0 + n)];
        st.pending[static_cast<size_t>(t)].push_back(std::move(mma));
      }
    }
    return true;
  }
  if (op == "tl.tcgen05_commit") {
    // cta_group::1: one arrival on the barrier; cta_group::2 (.multicast::cluster): one on the barrier at the
    // same offset in each block of the cluster whose rank bit is set in the mask (args[1])
    if (c->args.size() != (cg2 ? 2u : 1u))
      Bad(c, cg2 ? "expects (mbarrier, cta mask)" : "expects (mbarrier)");
    const BufferLoadNode* bop = Operand(c, 0);
    Mem& bm = MemOf(bop->buffer.get());
    if (!bm.shared() || bm.esize != 8) Bad(c, "the barrier must be a 64-bit shared-memory element");
    Slot* flat = Tmp();
    Locate(bop->buffer, bop->indices, act, flat);
    Slot* mask = cg2 ? arg(1) : nullptr;
    for (int t : act) {
      const int64_t index = ++st.commits[static_cast<size_t>(t)];
      for (auto& mma : st.pending[static_cast<size_t>(t)]) {
        if (!mma.target->tc_) {  // the pair's other block ended: its tensor memory is gone
          Report("cluster_exited", t, [&] {
            return std::string(
                "a 2-CTA tcgen05.mma completes into the tensor memory of a block of the pair that "
                "has ended (keep both blocks alive until the MMAs' commit, e.g. with "
                "T.cluster_sync())");
          });
          continue;
        }
        Tcgen05State& ts = *mma.target->tc_;  // the block whose tensor memory D is
        for (int64_t m = 0; m < mma.M; ++m)
          for (int64_t n = 0; n < mma.N; ++n) {
            ts.ready_issuer[cell(mma.Lane(m), mma.col0 + n)] = t;
            ts.ready_commit[cell(mma.Lane(m), mma.col0 + n)] = index;
          }
        bool changed = false;
        for (size_t i = 0; i < mma.at.size() && !changed; ++i)
          changed = std::memcmp(mma.at[i], &mma.bits[i], static_cast<size_t>(mma.eb)) != 0;
        if (changed)
          Report("tcgen05_operand_overwritten", t, [&] {
            return "shared memory a tcgen05.mma reads changed between its issue and its commit";
          });
        for (int64_t m = 0; m < mma.M; ++m)
          for (int64_t n = 0; n < mma.N; ++n) {
            const size_t x = cell(mma.Lane(m), mma.col0 + n);
            if (mma.integer) {  // exact integer products; the 32-bit sum wraps
              int32_t dv = 0;
              if (mma.accumulate && !ts.written[x])
                ReportUninit(t, [&] {
                  return "tcgen05.mma accumulates into lane " + std::to_string(mma.Lane(m)) + ", column " +
                         std::to_string(mma.col0 + n) + ", which nothing has written";
                });
              if (mma.accumulate) std::memcpy(&dv, &ts.tmem[x], 4);
              const int64_t sum = static_cast<int64_t>(dv) + static_cast<int64_t>(mma.prod[static_cast<size_t>(m * mma.N + n)]);
              const uint32_t r = static_cast<uint32_t>(static_cast<uint64_t>(sum));
              std::memcpy(&ts.tmem[x], &r, 4);
              ts.written[x] = 1;
              --ts.in_flight[x];
              continue;
            }
            double dv = 0;
            if (mma.accumulate) {
              if (!ts.written[x])
                ReportUninit(t, [&] {
                  return "tcgen05.mma accumulates into lane " + std::to_string(mma.Lane(m)) + ", column " +
                         std::to_string(mma.col0 + n) + ", which nothing has written (enable_input_d on the "
                         "first mma?)";
                });
              dv = mma.d_f16 ? DecodeMinifloat(ts.tmem[x] & 0xFFFF, 5, 10, false) : FloatOfBits(ts.tmem[x]);
            }
            // the instruction's exact sum added to D, rounded once to D's type (float16: bits 0-15 of the
            // column, the upper half zero)
            const double sum = dv + mma.prod[static_cast<size_t>(m * mma.N + n)];
            ts.tmem[x] = mma.d_f16 ? EncodeMinifloat(sum, 5, 10, false) : BitsOfFloat(static_cast<float>(sum));
            ts.written[x] = 1;
            --ts.in_flight[x];
          }
      }
      st.pending[static_cast<size_t>(t)].clear();
      if (flat[t].i < 0) continue;
      const int64_t addr = (bop->buffer->data ? bop->buffer->byte_offset : 0) + flat[t].i * 8;
      if (!cg2) {
        const int64_t phase = MbarrierArrive(addr, t, "mbarrier '" + bm.buf->name + "'");
        if (phase >= 0) st.commit_log[addr].push_back({t, index, phase});
        continue;
      }
      if (mask[t].i <= 0 || mask[t].i >> 16)
        Report("cluster_rank", t, [&] {
          return "tcgen05.commit .multicast::cluster with the cta mask " + std::to_string(mask[t].i) +
                 " (a nonzero 16-bit mask of cluster ranks)";
        });
      for (int64_t r = 0; r < 16; ++r) {
        if (!(mask[t].i >> r & 1)) continue;
        Executor* e =
            InCluster() ? ClusterPeer(r, t, "tcgen05.commit .multicast::cluster") : (r == 0 ? this : nullptr);
        if (!e) continue;
        if (!e->tc_) e->Tcgen05BlockStart();
        const int64_t phase = e->MbarrierArrive(
            addr, t, "mbarrier '" + bm.buf->name + "' of block " + std::to_string(r) + " of the cluster",
            e != this);
        if (phase >= 0) e->tc_->commit_log[addr].push_back({t, index, phase});
        e->FiberProgress();
      }
      ClusterProgress();
    }
    return true;
  }
  Bad(c, "unknown tcgen05 operation");
}

bool Executor::EvalTcgen05(const CallNode* c, const Lanes& act, Slot* out) {
  if (c->op != "tl.tcgen05_desc") return false;
  if (c->args.size() != 4) Bad(c, "expects (shared operand, lbo, sbo, swizzle mode)");
  const BufferLoadNode* op = Operand(c, 0);
  Mem& m = MemOf(op->buffer.get());
  if (!m.shared()) Bad(c, "the operand must be in shared memory");
  TmpScope ts(this);
  Slot* flat = Tmp();
  Slot* lbo = Tmp();
  Slot* sbo = Tmp();
  Slot* mode = Tmp();
  Locate(op->buffer, op->indices, act, flat);
  Eval(c->args[1], act, lbo);
  Eval(c->args[2], act, sbo);
  Eval(c->args[3], act, mode);
  for (int t : act) {
    const int64_t a = (op->buffer->data ? op->buffer->byte_offset : 0) + std::max<int64_t>(flat[t].i, 0) * m.esize;
    if (a % 16)
      Report("misaligned", t, [&] {
        return "tcgen05 descriptor start address " + std::to_string(a) + " is not 16-byte aligned";
      });
    const uint64_t d = (static_cast<uint64_t>(a & 0x3FFFF) >> 4) |
                       ((static_cast<uint64_t>(lbo[t].i & 0x3FFFF) >> 4) << 16) |
                       ((static_cast<uint64_t>(sbo[t].i & 0x3FFFF) >> 4) << 32) | (uint64_t{1} << 46) |
                       (static_cast<uint64_t>(mode[t].i & 7) << 61);
    out[t].i = static_cast<int64_t>(d);
  }
  return true;
}

}  // namespace tl::emu
