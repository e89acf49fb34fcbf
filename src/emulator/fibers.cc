// Warp-specialised blocks in the emulator: one fiber (an OS thread, only one running at a time) per
// warp group (per warp where branches give single warps their own work and no warp-group collective is used),
// so that a warp group waiting on an mbarrier or a barrier lets the others run until they arrive. Within a
// fiber the warp group's threads still run in lockstep. A fiber blocks in FiberYield; when every live fiber
// has had a turn without any arrival, transaction or barrier progress, the wait can never complete and the
// caller reports a deadlock (or a divergent barrier). Each fiber has its own variable bindings and scratch
// stack; memory, reports and the race epoch are the block's.
#include <condition_variable>
#include <mutex>
#include <thread>

#include "emulator/executor.h"

namespace tl::emu {

namespace {
struct FiberAbort {};  // unwinds the other fibers after one failed
}  // namespace

struct Executor::FiberSched {
  struct Fiber {
    Lanes act;
    std::unordered_map<const VarNode*, Binding> vars;
    std::vector<std::unique_ptr<Slot[]>> tmp;
    size_t tmp_top = 0;
    const StmtNode* stmt = nullptr;
    bool done = false;
  };
  std::mutex m;
  std::condition_variable cv;
  std::vector<Fiber> f;
  int running = -1;  // the fiber allowed to run; -1: the launching thread
  int cur = -1;
  int64_t progress = 0, seen = -1;
  int stalls = 0;
  bool abort = false;
  std::exception_ptr err;
  std::map<int64_t, std::pair<int64_t, int64_t>> bars;  // barrier id -> (generation, threads arrived)
};

void Executor::FiberSwapState(int i) {
  auto& F = fib_->f[static_cast<size_t>(i)];
  std::swap(vars_, F.vars);
  std::swap(tmp_, F.tmp);
  std::swap(tmp_top_, F.tmp_top);
  std::swap(stmt_, F.stmt);
}

int Executor::FiberNext(int from) const {
  const int n = static_cast<int>(fib_->f.size());
  for (int d = 1; d <= n; ++d) {
    int j = (from + d) % n;
    if (!fib_->f[static_cast<size_t>(j)].done) return j;
  }
  return -1;
}

void Executor::FiberHandOff(int to, bool wait) {
  FiberSched& S = *fib_;
  const int me = S.cur;
  FiberSwapState(me);
  std::unique_lock<std::mutex> lk(S.m);
  S.running = to;
  S.cv.notify_all();
  if (!wait) return;
  S.cv.wait(lk, [&] { return S.running == me; });
  lk.unlock();
  S.cur = me;
  FiberSwapState(me);
  if (S.abort) throw FiberAbort();
}

void Executor::FiberProgress() {
  if (fib_) ++fib_->progress;
}

bool Executor::FiberYield() {
  FiberSched& S = *fib_;
  if (S.progress != S.seen) {
    S.seen = S.progress;
    S.stalls = 0;
  }
  int live = 0;
  for (auto& f : S.f) live += !f.done;
  if (++S.stalls > live) return true;  // every live fiber had a turn without progress
  const int to = FiberNext(S.cur);
  if (to == S.cur || to < 0) return true;  // alone and blocked
  FiberHandOff(to, true);
  return false;
}

void Executor::FiberBarrier(const Lanes& act, int64_t id, int64_t count, const char* what) {
  FiberSched& S = *fib_;
  auto& b = S.bars[id];
  const int64_t gen = b.first;
  b.second += static_cast<int64_t>(act.size());
  ++S.progress;
  while (b.first == gen && b.second < count) {
    // every fiber of the block is blocked: in a cluster, the other blocks run (a fiber may wait for a peer's
    // arrival on an mbarrier) before the missing threads count as never arriving
    if (FiberYield() && !ClusterStall()) {
      const int64_t arrived = b.second;
      Report("barrier_divergence", act.empty() ? 0 : act[0], [&] {
        return std::string(what) + " is reached by " + std::to_string(arrived) + " of " +
               std::to_string(count) +
               " threads; the others never arrive (a warp group finished or waits elsewhere)";
      });
      break;
    }
  }
  if (b.first == gen) {  // the last arrival (or a reported divergence) releases the barrier
    ++b.first;
    b.second = 0;
    ++epoch_;
  }
}

void Executor::RunFibers(const Stmt& body, const Lanes& all) {
  fib_ = std::make_shared<FiberSched>();
  FiberSched& S = *fib_;
  const int groups = (T_ + fiber_width_ - 1) / fiber_width_;
  S.f.resize(static_cast<size_t>(groups));
  for (int t : all) S.f[static_cast<size_t>(t / fiber_width_)].act.push_back(t);
  for (auto& f : S.f) f.vars = vars_;  // the block's bindings (block indices)
  // The launching thread's own state waits aside while the fibers run.
  auto saved_vars = std::move(vars_);
  auto saved_tmp = std::move(tmp_);
  size_t saved_top = tmp_top_;
  const StmtNode* saved_stmt = stmt_;
  vars_.clear();
  tmp_.clear();
  tmp_top_ = 0;
  std::vector<std::thread> threads;
  for (int i = 0; i < groups; ++i) {
    threads.emplace_back([this, i, &S, &body] {
      {
        std::unique_lock<std::mutex> lk(S.m);
        S.cv.wait(lk, [&] { return S.running == i; });
      }
      S.cur = i;
      FiberSwapState(i);
      if (!S.abort) {
        try {
          Exec(body, S.f[static_cast<size_t>(i)].act);
        } catch (const FiberAbort&) {
        } catch (...) {
          if (!S.err) S.err = std::current_exception();
          S.abort = true;
        }
      }
      S.f[static_cast<size_t>(i)].done = true;
      S.stalls = 0;
      FiberHandOff(FiberNext(i), false);  // -1 when every fiber is done: back to the launching thread
    });
  }
  {
    std::unique_lock<std::mutex> lk(S.m);
    S.running = 0;
    S.cv.notify_all();
    S.cv.wait(lk, [&] {
      if (S.running != -1) return false;
      for (auto& f : S.f)
        if (!f.done) return false;
      return true;
    });
  }
  for (auto& th : threads) th.join();
  std::exception_ptr err = S.err;
  fib_.reset();
  vars_ = std::move(saved_vars);
  tmp_ = std::move(saved_tmp);
  tmp_top_ = saved_top;
  stmt_ = saved_stmt;
  if (err) std::rethrow_exception(err);
}

}  // namespace tl::emu
