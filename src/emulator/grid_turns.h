// Internal to the emulators: the blocks of a cooperative grid (T.sync_grid) as OS threads that take turns. A
// grid barrier needs every block live at once; here each block runs on a thread of its own and exactly one
// runs at a time (the turn), so a run stays deterministic and what the blocks share (the result, global
// memory) needs no lock of its own. The thread-level emulator (emulator.cc) and the PTX emulator
// (ptx/ptx_exec.cc) say when a block hands the turn on.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace tl::emu {

/// Unwinds a block's thread after another block failed or the grid deadlocked.
struct GridAbort {};

struct GridTurns {
  std::mutex m;
  std::condition_variable cv;
  int64_t n = 0;     // blocks
  int64_t turn = 0;  // the block allowed to run
  std::vector<bool> done;
  bool abort = false;
  std::exception_ptr err;

  /// The next block after b that has not ended (b itself when none other has).
  int64_t Next(int64_t b) const {
    for (int64_t d = 1; d <= n; ++d)
      if (!done[static_cast<size_t>((b + d) % n)]) return (b + d) % n;
    return b;
  }

  /// Gives the turn to the next live block and waits (lock held) until it comes back to `me` and `ready()`
  /// holds; throws GridAbort when the grid stopped meanwhile.
  template <typename Ready>
  void HandOff(std::unique_lock<std::mutex>& lk, int64_t me, Ready&& ready) {
    turn = Next(me);
    cv.notify_all();
    cv.wait(lk, [&] { return abort || (turn == me && ready()); });
    if (abort) throw GridAbort{};
  }

  /// Runs body(b) for each of `blocks` blocks on its own thread, block 0 first, each until it ends or hands
  /// the turn on; ended(b) runs under the lock when block b ends (it may set `abort`). The first error a
  /// block throws stops the grid and is rethrown here.
  template <typename Body, typename Ended>
  void Run(int64_t blocks, Body&& body, Ended&& ended) {
    n = blocks;
    done.assign(static_cast<size_t>(blocks), false);
    std::vector<std::thread> threads;
    for (int64_t b = 0; b < blocks; ++b)
      threads.emplace_back([&, b] {
        {
          std::unique_lock<std::mutex> lk(m);
          cv.wait(lk, [&] { return abort || turn == b; });
        }
        try {
          if (!abort) body(b);
        } catch (const GridAbort&) {
        } catch (...) {
          std::lock_guard<std::mutex> lk(m);
          if (!err) err = std::current_exception();
          abort = true;
        }
        std::lock_guard<std::mutex> lk(m);
        done[static_cast<size_t>(b)] = true;
        ended(b);
        turn = Next(b);
        cv.notify_all();
      });
    for (std::thread& t : threads) t.join();
    if (err) std::rethrow_exception(err);
  }
};

/// The blocks of one thread-block cluster taking turns (both emulators' cluster runs): whatever a block does
/// that another block's wait may see (a remote arrival, a cluster-barrier arrival, a multicast copy) moves
/// `progress`; a block that cannot go on records the `progress` it failed at and hands the turn on.
struct ClusterTurns : GridTurns {
  std::vector<int64_t> failed;  // per block: `progress` when it last stalled (-1: never)
  int64_t progress = 0;

  /// Block `me` cannot go on: the others run and the turn comes back to it (true), or every live block has
  /// stalled at the same `progress`, so none ever can: a deadlock (false, and nothing ran).
  bool Stall(int64_t me) {
    std::unique_lock<std::mutex> lk(m);
    failed[static_cast<size_t>(me)] = progress;
    bool stuck = true;
    for (int64_t b = 0; b < n; ++b)
      stuck &= done[static_cast<size_t>(b)] || failed[static_cast<size_t>(b)] == progress;
    if (stuck) return false;
    HandOff(lk, me, [] { return true; });
    return true;
  }
};

}  // namespace tl::emu
