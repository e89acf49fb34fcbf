// Hopper builtins of the emulator, written from NVIDIA's PTX ISA (sections "Asynchronous
// Warpgroup Level Matrix Multiply-Accumulate" and "Matrix Descriptor Format"), independently of
// the compiler's layout code:
//   tl.wgmma_desc(&smem, lbo, sbo, mode)   the 64-bit matrix descriptor, encoded from the operand's
//                                          byte address in the block's shared memory
//   tl.wgmma_desc_add(desc, units, flag)   the descriptor with its start address (bits 0-13, in
//                                          16-byte units) moved on by `units` (the flag only
//                                          chooses the CUDA spelling)
//   tl.wgmma(shape, ab, descA, descB, &C, scale_d, trans_a, trans_b)
//                                          wgmma.mma_async m64nNk16 .f32.{f16,bf16} or m64nNk32
//                                          .f32.{e4m3,e5m2}.{e4m3,e5m2} or .s32.{s8,u8}.{s8,u8} (ab
//                                          "<a>_<b>", K-major only; the integer sum wraps at 32 bits),
//                                          issued by a whole warp group (128 threads), executed
//                                          asynchronously
//   tl.wgmma_fence / tl.wgmma_commit / tl.wgmma_wait(n)
// Asynchrony: an issued wgmma joins the warp group's open group; commit closes it; wait(n) completes
// the oldest committed groups until n remain, in order. The operands are read from shared memory
// when the wgmma is issued and read again when it completes: a difference means shared memory was
// overwritten while the wgmma could still read it (reported). Its accumulator registers are written
// at completion; a thread that reads or writes them in between is reported. Shared memory is
// addressed through the descriptor alone: the canonical layouts (K-major / MN-major, 32B/64B/128B
// swizzle) and the swizzle of address bits [4, 4+b) by bits [7, 7+b).
#include <cstring>
#include <map>
#include <sstream>

#include "emulator/executor.h"
#include "emulator/intrinsic_args.h"
#include "emulator/smem_matrix.h"

namespace tl::emu {
namespace {

// The descriptor's fields (PTX ISA, "Matrix Descriptor Format").
using Desc = SmemMatrixDesc;
Desc Decode(uint64_t d) { return DecodeMatrixDescriptor(d); }

struct Wgmma {
  const StmtNode* stmt;
  int group;  // warp group
  int64_t n;  // N
  int64_t k;  // K: 16 (16-bit inputs) or 32 (8-bit)
  int eb;     // bytes per A / B element
  DataType at, bt;
  bool scale_d;
  Mem* acc;
  std::vector<int64_t> acc_flat;         // per thread of the warp group: first accumulator element
  std::vector<int64_t> a_addr, b_addr;   // byte addresses, A: [64][k] (m, k), B: [k][n] (k, n)
  std::vector<uint16_t> a_bits, b_bits;  // values at issue (an 8-bit element in the low byte)
  Mem* a_reg = nullptr;                  // wgmma_rs: A's register buffer and each thread's first element
  std::vector<int64_t> a_reg_flat;
};

// wgmma_rs: the element of the 64 x K A tile that register element i of lane l of warp wp holds (PTX ISA,
// "Register Fragments" of wgmma for matrix A): 16-bit types (k16) hold 8 elements, a0..a7 at row
// 16*wp + l/4 + 8*((i/2)%2), column 2*(l%4) + i%2 + 8*(i/4); 8-bit types (k32) hold 16, four bytes to a
// .b32 register, a0..a15 at row 16*wp + l/4 + 8*((i/4)%2), column 4*(l%4) + i%4 + 16*(i/8).
void RegisterAElement(int eb, int wp, int l, int i, int64_t* row, int64_t* col) {
  if (eb == 1) {
    *row = 16 * wp + l / 4 + 8 * ((i / 4) % 2);
    *col = 4 * (l % 4) + i % 4 + 16 * (i / 8);
  } else {
    *row = 16 * wp + l / 4 + 8 * ((i / 2) % 2);
    *col = 2 * (l % 4) + i % 2 + 8 * (i / 4);
  }
}

}  // namespace

struct Executor::HopperState {
  struct Group {
    std::vector<Wgmma> open;
    std::deque<std::vector<Wgmma>> committed;
  };
  std::vector<Group> groups;  // per warp group
  // mbarriers (PTX ISA, "Parallel Synchronization and Communication Instructions: mbarrier"): the
  // current phase completes when its pending arrival count and its transaction count are both zero;
  // then the phase number advances and the arrival count resets to the expected count.
  struct Barrier {
    int64_t expected = 0, pending = 0, tx = 0, phase = 0;
    // cp.async.mbarrier.arrive.noinc: the copies whose completion triggers those arrivals (thread, copy),
    // and the arrivals not yet counted. Both happen at the next wait on the barrier (the latest the
    // hardware may complete them), so a thread that reads the bytes without waiting is reported.
    std::vector<std::pair<int, AsyncCopy>> cp_async;
    int64_t deferred = 0;
  };
  std::map<int64_t, Barrier> bars;  // by shared byte address
  std::vector<int32_t> fences;      // per thread: fence.proxy.async executed so far
  // setmaxnreg run a fiber per warp: per warp group, the instruction (call) of each round, and per warp the
  // rounds it has run (every warp of a group must run the same instruction in its k-th round)
  std::map<int, std::vector<const CallNode*>> nreg_calls;
  std::map<int, size_t> nreg_rounds;
};

void Executor::HopperBlockStart() {
  TmaBlockStart();
  if (!hopper_) hopper_ = std::make_shared<HopperState>();
  hopper_->groups.assign(static_cast<size_t>((T_ + 127) / 128), HopperState::Group());
  hopper_->bars.clear();
  hopper_->fences.assign(static_cast<size_t>(T_), 0);
  for (auto& kv : mems_) {
    Mem& m = *kv.second;
    std::fill(m.pending.begin(), m.pending.end(), 0);
    if (m.shared() && kv.first->data) {
      m.proxy_writer.assign(static_cast<size_t>(m.n), 0);
      m.proxy_fences.assign(static_cast<size_t>(m.n), 0);
    }
  }
}

void Executor::HopperBlockEnd() {
  TmaBlockEnd();
  if (!hopper_) return;
  for (size_t g = 0; g < hopper_->groups.size(); ++g) {
    auto& gr = hopper_->groups[g];
    size_t n = gr.open.size();
    for (auto& c : gr.committed) n += c.size();
    if (n)
      Report("wgmma_not_waited", static_cast<int>(g * 128), [&] {
        return "warp group " + std::to_string(g) + " ends the kernel with " + std::to_string(n) +
               " wgmma operation(s) never completed by wgmma.wait_group";
      });
  }
}

void Executor::CheckPending(Mem& m, int tid, int64_t flat, bool write) {
  if (m.shared() || m.global()) return;
  size_t wi = static_cast<size_t>(tid * m.n + flat);
  if (wi >= m.pending.size() || m.pending[wi] == 0) return;
  Report("wgmma_pending", tid, [&] {
    return std::string("register buffer '") + m.buf->name + "' index [" + std::to_string(flat) + "] is " +
           (write ? "written" : "read") +
           " while a wgmma that writes it has not completed; complete it with wgmma.wait_group "
           "(T.wait_wgmma) "
           "first";
  });
}

void Executor::CheckWgmmaReaders(int64_t lo, int64_t hi, int tid) {
  if (!hopper_) return;
  for (auto& gr : hopper_->groups) {
    auto check = [&](const std::vector<Wgmma>& ws) {
      for (const Wgmma& w : ws) {
        bool hit = false;
        for (int64_t a : w.a_addr) hit = hit || (a >= lo && a < hi);
        for (int64_t a : w.b_addr) hit = hit || (a >= lo && a < hi);
        if (!hit) continue;
        Report("wgmma_operand_overwritten", tid, [&] {
          std::string at =
              w.stmt && w.stmt->span.defined() ? " (issued at " + FormatSpan(w.stmt->span) + ")" : "";
          return "a TMA copy into shared bytes [" + std::to_string(lo) + ", " + std::to_string(hi) +
                 ") is issued while warp group " + std::to_string(w.group) + "'s wgmma" + at +
                 " still reads them: the copy may overwrite its operands before the wgmma.wait_group that "
                 "completes it";
        });
        return true;
      }
      return false;
    };
    if (check(gr.open)) return;
    for (auto& c : gr.committed)
      if (check(c)) return;
  }
}

int Executor::UnfencedGenericWriter(Mem& m, int64_t flat) {
  if (!hopper_ || m.proxy_writer.empty()) return 0;
  const size_t fi = static_cast<size_t>(flat);
  const int32_t wr = m.proxy_writer[fi];
  return wr && hopper_->fences[static_cast<size_t>(wr - 1)] == m.proxy_fences[fi] ? wr : 0;
}

void Executor::NoteGenericWrite(Mem& m, int tid, int64_t flat) {
  m.proxy_writer[static_cast<size_t>(flat)] = tid + 1;
  m.proxy_fences[static_cast<size_t>(flat)] = hopper_->fences[static_cast<size_t>(tid)];
}

bool Executor::EvalHopper(const CallNode* c, const Lanes& act, Slot* out) {
  if (c->op == "tl.wgmma_desc_add") {  // (descriptor, units of 16 bytes): the start address moves on
    if (c->args.size() != 3) Bad(c, "expects (descriptor, offset in 16-byte units, per-warp-group flag)");
    TmpScope ts(this);
    Slot* d = Tmp();
    Slot* u = Tmp();
    Eval(c->args[0], act, d);
    Eval(c->args[1], act, u);
    for (int t : act) {
      const uint64_t desc = static_cast<uint64_t>(d[t].i), units = static_cast<uint32_t>(u[t].i);
      const uint64_t start = (desc & 0x3FFF) + units;
      if (start >= 0x4000)
        Report("out_of_bounds", t, [&] {
          return "wgmma descriptor start address " + std::to_string(start * 16) +
                 " does not fit the descriptor's 14-bit field (shared addresses are below 2^18)";
        });
      out[t].i = static_cast<int64_t>((desc & ~uint64_t{0x3FFF}) | (start & 0x3FFF));
    }
    return true;
  }
  if (c->op != "tl.wgmma_desc") return false;
  if (c->args.size() != 4) Bad(c, "expects (shared operand, lbo, sbo, mode)");
  const BufferLoadNode* op = Operand(c, 0);
  Mem& m = MemOf(op->buffer.get());
  if (!m.shared()) Bad(c, "the operand must be in shared memory");
  TmpScope ts(this);
  Slot* flat = Tmp();
  Locate(op->buffer, op->indices, act, flat);
  const int64_t lbo = ConstArg(c, 1), sbo = ConstArg(c, 2), mode = ConstArg(c, 3);
  for (int t : act) {
    int64_t a = (op->buffer->data ? op->buffer->byte_offset : 0) + std::max<int64_t>(flat[t].i, 0) * m.esize;
    if (a % 16)
      Report("misaligned", t, [&] {
        return "wgmma descriptor start address " + std::to_string(a) + " is not 16-byte aligned";
      });
    uint64_t d =
        (static_cast<uint64_t>(a & 0x3FFFF) >> 4) | ((static_cast<uint64_t>(lbo & 0x3FFFF) >> 4) << 16) |
        ((static_cast<uint64_t>(sbo & 0x3FFFF) >> 4) << 32) | (static_cast<uint64_t>(mode & 3) << 62);
    out[t].i = static_cast<int64_t>(d);
  }
  return true;
}

int64_t Executor::MbarrierArrive(int64_t addr, int tid, const std::string& name, bool remote) {
  if (!hopper_) HopperBlockStart();
  auto it = hopper_->bars.find(addr);
  if (it == hopper_->bars.end()) {
    Report("mbarrier_uninitialized", tid, [&] { return name + " is used before mbarrier.init"; });
    return -1;
  }
  HopperState::Barrier& b = it->second;
  if (b.pending == 0) {
    Report("mbarrier_over_arrival", tid, [&] {
      return name + " receives more than its " + std::to_string(b.expected) + " arrivals in one phase";
    });
    return -1;
  }
  const int64_t phase = b.phase;
  if (tc_ && !remote) Tcgen05Carry(addr, tid, phase);  // what the thread knows of tcgen05.mma completions
  if (--b.pending == 0 && b.tx == 0) {
    ++b.phase;
    b.pending = b.expected;
    if (b.expected > 1 || remote) ++epoch_;
  }
  FiberProgress();
  return phase;
}

void Executor::MbarrierCompleteTx(int64_t addr, int64_t bytes, int tid, const std::string& name,
                                  bool remote) {
  if (!hopper_) HopperBlockStart();
  auto it = hopper_->bars.find(addr);
  if (it == hopper_->bars.end()) {
    Report("mbarrier_uninitialized", tid, [&] { return name + " is used before mbarrier.init"; });
    return;
  }
  HopperState::Barrier& b = it->second;
  b.tx -= bytes;
  if (b.pending == 0 && b.tx == 0) {
    ++b.phase;
    b.pending = b.expected;
    if (b.expected > 1 || remote) ++epoch_;
  }
  FiberProgress();
}

bool Executor::ExecHopper(const CallNode* c, const Lanes& act) {
  const std::string& op = c->op;
  if (ExecTma(c, act)) return true;    // intrinsics_tma.cc
  if (op == "tl.fence_proxy_async") {  // orders each executing thread's earlier generic writes
    if (!hopper_) HopperBlockStart();
    for (int t : act) ++hopper_->fences[static_cast<size_t>(t)];
    return true;
  }
  if (op.rfind("tl.mbarrier_", 0) == 0) {
    if (!hopper_) HopperBlockStart();
    const BufferLoadNode* bop = Operand(c, 0);
    Mem& m = MemOf(bop->buffer.get());
    if (!m.shared() || m.esize != 8) Bad(c, "the barrier must be a 64-bit shared-memory element");
    TmpScope ts(this);
    Slot* flat = Tmp();
    Slot* arg = Tmp();
    Locate(bop->buffer, bop->indices, act, flat);
    if (c->args.size() > 1) Eval(c->args[1], act, arg);
    auto name = [&](int64_t f) { return "mbarrier '" + m.buf->name + "'[" + std::to_string(f) + "]"; };
    // At a wait: the cp.async copies tied to the barrier land and their arrivals count.
    auto land = [&](HopperState::Barrier& b) {
      b.pending -= b.deferred;
      b.deferred = 0;
      for (auto& [t, cp] : b.cp_async) LandAsyncCopy(t, cp);
      b.cp_async.clear();
    };
    auto addr_of = [&](int64_t f) { return (bop->buffer->data ? bop->buffer->byte_offset : 0) + f * 8; };
    if (op ==
        "tl.mbarrier_arrive_cluster") {  // on the barrier at the same offset in block cta of the cluster
      for (int t : act) {
        if (flat[t].i < 0) continue;
        Executor* peer = InCluster() ? ClusterPeer(arg[t].i, t, "T.mbarrier_arrive(bar, cta_id)")
                                     : (arg[t].i == 0 ? this : nullptr);
        if (!peer) {
          if (!InCluster())
            Report("cluster_rank", t, [&] {
              return "T.mbarrier_arrive(bar, cta_id) names block " + std::to_string(arg[t].i) +
                     " of the cluster, but the kernel is not launched in clusters (its only block is rank 0)";
            });
          continue;
        }
        peer->MbarrierArrive(addr_of(flat[t].i), t,
                             name(flat[t].i) + " of block " + std::to_string(arg[t].i) + " of the cluster",
                             peer != this);
      }
      ClusterProgress();
      FiberProgress();
      return true;
    }
    if (op != "tl.mbarrier_wait_parity") {
      FiberProgress();
    } else if (InFibers() || InCluster()) {  // warp-specialised or a cluster's block: wait (let the other
                                             // warp groups, then the cluster's other blocks, run) until the
                                             // phase completes
      for (;;) {
        bool ready = true;
        for (int t : act) {
          auto it = flat[t].i < 0 ? hopper_->bars.end() : hopper_->bars.find(addr_of(flat[t].i));
          if (it == hopper_->bars.end()) continue;
          HopperState::Barrier& b = it->second;
          if ((b.phase & 1) != (arg[t].i & 1)) continue;
          b.tx -= TmaLand(it->first);
          land(b);
          if (b.pending == 0 && b.tx == 0) {
            ++b.phase;
            b.pending = b.expected;
            if (b.expected > 1)
              ++epoch_;  // the arrivals of many threads order their accesses before the waiters'
          } else {
            ready = false;
          }
        }
        if (ready) break;
        if (InFibers() && !FiberYield()) continue;
        if (!ClusterStall()) break;
      }
    }
    for (int t : act) {
      const int64_t f = flat[t].i;
      if (f < 0) continue;
      const int64_t addr = addr_of(f);
      auto it = hopper_->bars.find(addr);
      if (op == "tl.mbarrier_init") {
        HopperState::Barrier b;
        b.expected = b.pending = arg[t].i;
        hopper_->bars[addr] = b;
        NoteWrite(m, t, f);
        continue;
      }
      if (it == hopper_->bars.end()) {
        Report("mbarrier_uninitialized", t, [&] { return name(f) + " is used before mbarrier.init"; });
        continue;
      }
      HopperState::Barrier& b = it->second;
      auto complete = [&] {
        if (b.pending == 0 && b.tx == 0) {
          ++b.phase;
          b.pending = b.expected;
          // The arrivals (release) order the arriving threads' accesses before the waiters' (acquire), in
          // lockstep as between warp-group fibers: a hand-specialised producer's shared writes are then no
          // race with the consumers that waited, whether many threads arrive or one (TileLang's CLC kernels
          // publish a tile index through a one-arrival barrier). The epoch orders every thread's accesses, an
          // over-approximation: it may hide a missing wait, never invent a race.
          ++epoch_;
        }
      };
      if (op == "tl.mbarrier_arrive" || op == "tl.mbarrier_arrive_expect_tx") {
        if (b.pending == 0) {
          Report("mbarrier_over_arrival", t, [&] {
            return name(f) + " receives more than its " + std::to_string(b.expected) +
                   " arrivals in one phase (its transactions are still pending)";
          });
          continue;
        }
        if (op == "tl.mbarrier_arrive_expect_tx") b.tx += arg[t].i;
        if (tc_) Tcgen05Carry(addr, t, b.phase);  // what the thread knows of tcgen05.mma completions
        --b.pending;
        complete();
      } else if (op == "tl.mbarrier_expect_tx") {
        b.tx += arg[t].i;
      } else if (op == "tl.mbarrier_cp_async_arrive_noinc") {
        // cp.async.mbarrier.arrive.noinc: the arrive-on happens when all of this thread's earlier cp.async
        // copies complete, and counts as one of the phase's expected arrivals. The copies now belong to
        // the phase (they land at the next wait on it; a cp.async.wait_group no longer waits for them).
        if (b.pending - b.deferred <= 0) {
          Report("mbarrier_over_arrival", t, [&] {
            return name(f) + " receives more than its " + std::to_string(b.expected) +
                   " arrivals in one phase";
          });
          continue;
        }
        AsyncState& as = async_[static_cast<size_t>(t)];
        for (auto& g : as.committed)
          for (auto& cp : g) b.cp_async.emplace_back(t, cp);
        for (auto& cp : as.open) b.cp_async.emplace_back(t, cp);
        for (auto& g : as.committed) g.clear();
        as.open.clear();
        ++b.deferred;
      } else if (op == "tl.mbarrier_wait_parity") {
        // The phase of parity p is complete unless the current (incomplete) phase has parity p. In
        // lockstep every thread that could still arrive has run up to here: an incomplete phase never
        // completes.
        if ((b.phase & 1) == (arg[t].i & 1)) {  // TMA copies on the barrier land now (intrinsics_tma.cc)
          b.tx -= TmaLand(addr);
          land(b);  // and the cp.async copies whose noinc arrivals it awaits
          complete();
        }
        if ((b.phase & 1) == (arg[t].i & 1)) {
          Report("deadlock", t, [&] {
            return "the wait on " + name(f) + " for phase parity " + std::to_string(arg[t].i & 1) +
                   " can never complete: " + std::to_string(b.pending) + " of " + std::to_string(b.expected) +
                   " arrivals and " + std::to_string(b.tx) + " transaction bytes are missing";
          });
          break;  // one report per wait
        }
        if (tc_) Tcgen05Observe(addr, t, b.phase);
      } else {
        Bad(c, "unknown mbarrier operation");
      }
    }
    return true;
  }
  if (op != "tl.wgmma" && op != "tl.wgmma_rs" && op != "tl.wgmma_fence" && op != "tl.wgmma_commit" &&
      op != "tl.wgmma_wait" && op != "tl.set_max_nreg")
    return false;
  if (!hopper_) HopperBlockStart();
  // Warp groups of `act` that are complete (the instructions are .sync.aligned over the warp group).
  Lanes full = FullWarps(act, op.c_str());
  if (op == "tl.set_max_nreg" && InFibers() && fiber_width_ < 128) {
    // A fiber per warp: the warps of a group reach it one at a time. setmaxnreg is .aligned over the warp group
    // (PTX ISA: every thread of the warp group executes the same setmaxnreg instruction): each warp's k-th
    // setmaxnreg must be the instruction its group's other warps run k-th.
    const int64_t n = ConstArg(c, 0);
    if (n < 24 || n > 256 || n % 8) Bad(c, "setmaxnreg takes 24..256, a multiple of 8");
    for (size_t i = 0; i < full.size(); i += 32) {
      const int w = full[i] / 32, g = w / 4;
      auto& calls = hopper_->nreg_calls[g];
      size_t& round = hopper_->nreg_rounds[w];
      if (round == calls.size())
        calls.push_back(c);
      else if (calls[round] != c)
        Report("inactive_lanes", full[i], [&] {
          return "tl.set_max_nreg: warp " + std::to_string(w) + " of warp group " + std::to_string(g) +
                 " runs a different setmaxnreg instruction than the group's other warps (it is warp-group-"
                 "collective and .aligned: every warp of the group must run the same one)";
        });
      ++round;
    }
    return true;
  }
  std::vector<int> per((T_ + 127) / 128, 0);
  for (int t : full) ++per[t / 128];
  std::vector<int> groups;
  for (size_t g = 0; g < per.size(); ++g) {
    if (per[g] == 128)
      groups.push_back(static_cast<int>(g));
    else if (per[g] > 0)
      Report("inactive_lanes", static_cast<int>(g * 128), [&] {
        return op + " is warp-group-collective but only " + std::to_string(per[g]) +
               " of the 128 threads of warp group " + std::to_string(g) + " execute it; skipped";
      });
  }
  auto& st = *hopper_;
  if (op == "tl.wgmma_fence") return true;
  if (op == "tl.set_max_nreg") {  // a register budget: nothing to execute; must be warp-group collective
    const int64_t n = ConstArg(c, 0);
    if (n < 24 || n > 256 || n % 8) Bad(c, "setmaxnreg takes 24..256, a multiple of 8");
    return true;
  }
  if (op == "tl.wgmma_commit") {
    for (int g : groups) {
      st.groups[g].committed.push_back(std::move(st.groups[g].open));
      st.groups[g].open.clear();
    }
    return true;
  }
  // Shared memory of the block: the byte buffer every view lives in.
  auto smem_bytes = [&](Mem** views_out) -> uint8_t* {
    (void)views_out;
    for (auto& kv : mems_)
      if (kv.second->shared() && !kv.first->data) return kv.second->data;
    return nullptr;
  };
  auto smem_size = [&]() -> int64_t {
    for (auto& kv : mems_)
      if (kv.second->shared() && !kv.first->data) return kv.second->n * kv.second->esize;
    return 0;
  };
  // The view holding the eb-byte element at byte address a (written ones first: reused bytes).
  auto view_at = [&](int64_t a, int64_t eb, int64_t* flat) -> Mem* {
    Mem* best = nullptr;
    for (auto& kv : mems_) {
      Mem& m = *kv.second;
      if (!m.shared() || !kv.first->data || m.esize != eb) continue;
      int64_t off = kv.first->byte_offset;
      if (a < off || a + eb > off + m.n * eb) continue;
      int64_t f = (a - off) / eb;
      if (!best || m.written[static_cast<size_t>(f)]) {
        best = &m;
        *flat = f;
        if (m.written[static_cast<size_t>(f)]) break;
      }
    }
    return best;
  };
  if (op == "tl.wgmma_wait") {
    const int64_t keep = ConstArg(c, 0);
    uint8_t* base = smem_bytes(nullptr);
    for (int g : groups) {
      auto& q = st.groups[g].committed;
      while (static_cast<int64_t>(q.size()) > keep) {
        for (Wgmma& w : q.front()) {
          // Operands read again at completion: they must not have changed since the issue.
          bool changed = false;
          for (size_t i = 0; i < w.a_addr.size() && !changed; ++i)
            changed = std::memcmp(base + w.a_addr[i], &w.a_bits[i], w.eb) != 0;
          for (size_t i = 0; i < w.b_addr.size() && !changed; ++i)
            changed = std::memcmp(base + w.b_addr[i], &w.b_bits[i], w.eb) != 0;
          for (int t = 0; t < 128 && w.a_reg && !changed; ++t) {
            const int tid = g * 128 + t, wp = t / 32, l = t % 32;
            for (int i = 0; i < 16 / w.eb && !changed; ++i) {
              int64_t row, col;
              RegisterAElement(w.eb, wp, l, i, &row, &col);
              changed = std::memcmp(w.a_reg->Addr(tid, w.a_reg_flat[static_cast<size_t>(t)] + i),
                                    &w.a_bits[static_cast<size_t>(row * w.k + col)], w.eb) != 0;
            }
          }
          if (changed)
            Report("wgmma_operand_overwritten", g * 128, [&] {
              std::string at =
                  w.stmt && w.stmt->span.defined() ? " (issued at " + FormatSpan(w.stmt->span) + ")" : "";
              return "an operand (shared memory or A's registers) read by a wgmma" + at +
                     " was overwritten before the wgmma.wait_group that completes it";
            });
          const bool integer = w.at.is_integer();
          std::vector<double> D(static_cast<size_t>(64 * w.n), 0.0);
          std::vector<int64_t> Di(integer ? D.size() : 0, 0);
          for (int64_t m = 0; m < 64; ++m)
            for (int64_t n = 0; n < w.n; ++n) {
              double acc = 0;
              int64_t iacc = 0;
              // Products of 16-bit or 8-bit floats are exact in double; one rounding to float32 below.
              // 8-bit integers (.s8 / .u8) sum exactly in 64 bits.
              for (int64_t k = 0; k < w.k; ++k) {
                Slot a = LoadScalar(&w.a_bits[static_cast<size_t>(m * w.k + k)], w.at);
                Slot b = LoadScalar(&w.b_bits[static_cast<size_t>(k * w.n + n)], w.bt);
                if (integer)
                  iacc += a.i * b.i;
                else
                  acc += a.f * b.f;
              }
              D[static_cast<size_t>(m * w.n + n)] = acc;
              if (integer) Di[static_cast<size_t>(m * w.n + n)] = iacc;
            }
          // Accumulator fragment (PTX ISA, wgmma D for m64nNk16, .f32): thread t of the warp group,
          // warp wp = t / 32, lane l: register i holds row 16*wp + l/4 + 8*((i/2)%2),
          // column 8*(i/4) + 2*(l%4) + i%2.
          for (int t = 0; t < 128; ++t) {
            const int tid = g * 128 + t, wp = t / 32, l = t % 32;
            for (int64_t i = 0; i < w.n / 2; ++i) {
              const int64_t row = 16 * wp + l / 4 + 8 * ((i / 2) % 2),
                            col = 8 * (i / 4) + 2 * (l % 4) + i % 2;
              const int64_t e = w.acc_flat[static_cast<size_t>(t)] + i;
              const size_t wi = static_cast<size_t>(tid * w.acc->n + e);
              w.acc->pending[wi] -= 1;
              double prev = 0;
              int64_t iprev = 0;
              if (w.scale_d) {
                if (!w.acc->written[wi] && opt_.check_uninit) {
                  w.acc->written[wi] = 2;
                  Report("uninitialized_read", tid, [&] {
                    return "register buffer '" + w.acc->buf->name + "' index [" + std::to_string(e) +
                           "] is accumulated into by a wgmma but was never written by this thread";
                  });
                }
                if (integer)
                  iprev = LoadScalar(w.acc->Addr(tid, e), DataType::Int(32)).i;
                else
                  prev = LoadScalar(w.acc->Addr(tid, e), DataType::Float(32)).f;
              }
              Slot v;
              if (integer) {  // .s32 without .satfinite: the sum wraps around at 32 bits
                const uint32_t sum = static_cast<uint32_t>(iprev) +
                                     static_cast<uint32_t>(Di[static_cast<size_t>(row * w.n + col)]);
                v.i = static_cast<int32_t>(sum);
                StoreScalar(w.acc->Addr(tid, e), DataType::Int(32), v);
              } else {
                v.f = RoundFloat(prev + D[static_cast<size_t>(row * w.n + col)], DataType::Float(32));
                StoreScalar(w.acc->Addr(tid, e), DataType::Float(32), v);
              }
              w.acc->written[wi] = 1;
            }
          }
        }
        q.pop_front();
      }
    }
    return true;
  }
  // tl.wgmma(shape, ab, descA, descB, &C, scale_d, trans_a, trans_b)
  // tl.wgmma_rs(shape, ab, &A registers, descB, &C, scale_d, trans_b): A from registers, 8 16-bit elements
  // per thread per instruction in the order of the ISA's A-fragment figure for m64nNk16 (as mma.sync's
  // m16n8k16 A per warp): a_i of warp w, lane l at row 16w + l/4 + 8*((i/2)%2), col 2*(l%4) + i%2 + 8*(i/4).
  const bool rs = op == "tl.wgmma_rs";
  if (c->args.size() != (rs ? 7u : 8u))
    Bad(c, rs ? "expects (shape, ab, A, descB, C, scale_d, trans_b)"
              : "expects (shape, ab, descA, descB, C, scale_d, trans_a, trans_b)");
  auto* shape = As<StringImmNode>(c->args[0]);
  auto* ab = As<StringImmNode>(c->args[1]);
  long n = 0, kdim = 0;
  if (!shape || std::sscanf(shape->value.c_str(), "m64n%ldk%ld", &n, &kdim) != 2 || n < 8 || n > 256 || n % 8)
    Bad(c, "shape must be m64nNk16 or m64nNk32 with N a multiple of 8 up to 256");
  DataType at, bt;
  auto f8 = [](const std::string& t, DataType* out) {
    return (t == "e4m3" || t == "e5m2") &&
           DataType::Parse(t == "e4m3" ? "float8_e4m3fn" : "float8_e5m2", out);
  };
  auto i8 = [](const std::string& t, DataType* out) {
    if (t != "s8" && t != "u8") return false;
    *out = t == "s8" ? DataType::Int(8) : DataType::UInt(8);
    return true;
  };
  const size_t us = ab ? ab->value.find('_') : std::string::npos;
  if (ab && (ab->value == "f16" || ab->value == "bf16")) {
    at = bt = ab->value == "f16" ? DataType::Float(16) : DataType::BFloat16();
    if (kdim != 16) Bad(c, "f16 / bf16 wgmma has shape m64nNk16");
  } else if (ab && us != std::string::npos && f8(ab->value.substr(0, us), &at) &&
             f8(ab->value.substr(us + 1), &bt)) {
    if (kdim != 32) Bad(c, "fp8 wgmma has shape m64nNk32");
  } else if (ab && us != std::string::npos && i8(ab->value.substr(0, us), &at) &&
             i8(ab->value.substr(us + 1), &bt)) {
    if (kdim != 32) Bad(c, "int8 wgmma has shape m64nNk32");
  } else {
    Bad(c, "ab type must be f16, bf16, <e4m3|e5m2>_<e4m3|e5m2> or <s8|u8>_<s8|u8>");
  }
  const int eb = at.bytes();
  const BufferLoadNode* accop = Operand(c, 4);
  Mem& acc = MemOf(accop->buffer.get());
  const DataType acc_t = at.is_integer() ? DataType::Int(32) : DataType::Float(32);
  if (acc.shared() || acc.global() || acc.t != acc_t)
    Bad(c, at.is_integer() ? "C must be an int32 register buffer" : "C must be a float32 register buffer");
  if (acc.pending.empty()) acc.pending.assign(static_cast<size_t>(T_ * acc.n), 0);
  const bool ta = rs ? false : ConstArg(c, 6) != 0, tb = ConstArg(c, rs ? 6 : 7) != 0;
  if (eb == 1 && (ta || tb)) Bad(c, "8-bit wgmma operands are K-major (no transpose)");
  TmpScope ts(this);
  Slot* da = Tmp();
  Slot* db = Tmp();
  Slot* sc = Tmp();
  Slot* cf = Tmp();
  Mem* areg = nullptr;
  if (rs) {
    const BufferLoadNode* aop = Operand(c, 2);
    areg = &MemOf(aop->buffer.get());
    if (areg->shared() || areg->global() || areg->esize != eb)
      Bad(c, "A must be a register buffer of the operands' element size");
    Locate(aop->buffer, aop->indices, full, da, 16 / eb);
  } else {
    Eval(c->args[2], full, da);
  }
  Eval(c->args[3], full, db);
  Eval(c->args[5], full, sc);
  Locate(accop->buffer, accop->indices, full, cf, n / 2);
  uint8_t* base = smem_bytes(nullptr);
  const int64_t total = smem_size();
  for (int g : groups) {
    const int t0 = g * 128;
    Wgmma w;
    w.stmt = stmt_;
    w.group = g;
    w.n = n;
    w.k = kdim;
    w.eb = eb;
    w.at = at;
    w.bt = bt;
    w.scale_d = sc[t0].i != 0;
    w.acc = &acc;
    bool ok = true;
    for (int t = t0; t < t0 + 128; ++t) {
      if ((!rs && da[t].i != da[t0].i) || db[t].i != db[t0].i || sc[t].i != sc[t0].i) {
        Report("wgmma_nonuniform", t,
               [&] { return "the threads of a warp group pass different wgmma descriptors or scale-d"; });
        ok = false;
        break;
      }
      if (cf[t].i < 0) ok = false;
      w.acc_flat.push_back(cf[t].i);
    }
    if (rs)
      for (int t = t0; t < t0 + 128; ++t) ok &= da[t].i >= 0;
    if (!ok || !base) continue;
    const Desc A = Decode(rs ? 0 : static_cast<uint64_t>(da[t0].i)),
               B = Decode(static_cast<uint64_t>(db[t0].i));
    for (const Desc* d : {&A, &B}) {
      if (rs && d == &A) continue;
      if (d->swizzle_bytes == 0 || d->base_offset != 0)
        TL_USER_ERROR(
            kUnsupported, stmt_ ? stmt_->span : Span{},
            "emulator: wgmma descriptors without a swizzle mode or with a base offset are not emulated");
    }
    bool proxy_reported = false;
    auto fetch = [&](const Desc& d, bool mn_major, int64_t mn, int64_t k, std::vector<int64_t>* addr,
                     std::vector<uint16_t>* bits) {
      int64_t a = SwizzleAddress(CanonicalAddress(d, mn_major, mn, k, eb), d.swizzle_bytes);
      uint16_t v = 0;
      if (a < 0 || a + eb > total) {
        Report("out_of_bounds", t0, [&] {
          return "a wgmma operand element at shared byte " + std::to_string(a) + " lies outside the " +
                 std::to_string(total) + "-byte shared memory of the block; the wgmma read 0";
        });
        a = 0;
      } else {
        std::memcpy(&v, base + a, static_cast<size_t>(eb));
        int64_t f = 0;
        if (Mem* m = view_at(a, eb, &f)) {
          NoteRead(*m, t0, f);
          // The generic-to-async proxy rule: a thread's shared-memory write is seen by wgmma (the async
          // proxy) only after that thread's fence.proxy.async.
          const size_t fi = static_cast<size_t>(f);
          const int32_t wr = m->proxy_writer.empty() ? 0 : m->proxy_writer[fi];
          if (wr && hopper_->fences[static_cast<size_t>(wr - 1)] == m->proxy_fences[fi] && !proxy_reported) {
            proxy_reported = true;
            Report("async_proxy", t0, [&] {
              return "shared buffer '" + m->buf->name + "' index [" + std::to_string(f) +
                     "] was written by thread " + std::to_string(wr - 1) +
                     " (generic proxy) and is read by a wgmma (async proxy) with no fence.proxy.async by "
                     "that thread "
                     "in between";
            });
          }
        }
      }
      addr->push_back(a);
      bits->push_back(v);
    };
    // A: 64 x K (K-major unless trans_a), B: K x N (K-major, i.e. stored N x K, unless trans_b).
    if (rs) {
      w.a_reg = areg;
      w.a_bits.assign(static_cast<size_t>(64 * kdim), 0);
      for (int t = 0; t < 128; ++t) {
        const int tid = t0 + t, wp = t / 32, l = t % 32;
        w.a_reg_flat.push_back(da[tid].i);
        for (int i = 0; i < 16 / eb; ++i) {
          int64_t row, col;
          RegisterAElement(eb, wp, l, i, &row, &col);
          NoteRead(*areg, tid, da[tid].i + i);
          std::memcpy(&w.a_bits[static_cast<size_t>(row * kdim + col)], areg->Addr(tid, da[tid].i + i),
                      static_cast<size_t>(eb));
        }
      }
    } else {
      for (int64_t m = 0; m < 64; ++m)
        for (int64_t k = 0; k < kdim; ++k) fetch(A, ta, m, k, &w.a_addr, &w.a_bits);
    }
    for (int64_t k = 0; k < kdim; ++k)
      for (int64_t j = 0; j < n; ++j) fetch(B, tb, j, k, &w.b_addr, &w.b_bits);
    for (int t = 0; t < 128; ++t)
      for (int64_t i = 0; i < n / 2; ++i)
        acc.pending[static_cast<size_t>((t0 + t) * acc.n + w.acc_flat[t] + i)] += 1;
    st.groups[g].open.push_back(std::move(w));
  }
  return true;
}

}  // namespace tl::emu
