// The tile caches of CacheGemmTilesCPU (src/target/cpu/cache_gemm_tiles_cpu.h): per kernel call, the
// tiles of a read-only input tensor, each filled once by the first worker that needs it; and the
// pool that keeps their memory between calls.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace tl_cpu {

namespace detail {
/// Large blocks kept between kernel calls: a tile cache of tens of MiB freed and allocated again on
/// every call would come back as fresh pages, and faulting them in costs about a tenth of a
/// 2048^3 GEMM. At most kPoolBytes stay parked; a block is reused for requests of at least half its
/// size.
struct BlockPool {
  static constexpr size_t kPoolBytes = size_t(512) << 20;
  std::mutex m;
  std::vector<std::pair<size_t, void*>> parked;
  size_t bytes = 0;
  ~BlockPool() {
    for (auto& b : parked) std::free(b.second);
  }
};
inline BlockPool& block_pool() {
  static BlockPool pool;
  return pool;
}
inline void* pool_alloc(size_t n) {
  BlockPool& p = block_pool();
  {
    std::lock_guard<std::mutex> lock(p.m);
    for (size_t i = 0; i < p.parked.size(); ++i)
      if (p.parked[i].first >= n && p.parked[i].first / 2 <= n) {
        void* b = p.parked[i].second;
        p.bytes -= p.parked[i].first;
        p.parked.erase(p.parked.begin() + long(i));
        return b;
      }
  }
  return std::aligned_alloc(64, (n + 63) / 64 * 64);
}
inline void pool_free(void* b, size_t n) {
  if (!b) return;
  n = (n + 63) / 64 * 64;
  BlockPool& p = block_pool();
  std::lock_guard<std::mutex> lock(p.m);
  if (p.bytes + n > BlockPool::kPoolBytes) {
    std::free(b);
    return;
  }
  p.parked.push_back({n, b});
  p.bytes += n;
}
}  // namespace detail

/// The tiles of one read-only input tensor for one kernel call (CacheGemmTilesCPU): `slots` tiles of
/// `elems` elements each. The first worker that needs a tile claims its slot and fills it; a worker
/// that needs it while it is being filled waits for publish(); later ones read it in place. A
/// filler never waits for anything, so the waits always end. `data` is null when the allocation
/// failed (the kernel then reports it instead of running).
template <typename T>
struct TileCache {
  T* data = nullptr;
  unsigned char* state = nullptr;  // 0 empty, 1 being filled, 2 ready (accessed atomically)
  size_t elems;
  TileCache(int64_t slots, int64_t n)
      : elems(static_cast<size_t>(((n * sizeof(T) + 63) / 64) * 64 / sizeof(T))) {
    const size_t s = slots > 0 ? static_cast<size_t>(slots) : 1;
    bytes = s * elems * sizeof(T);
    data = static_cast<T*>(detail::pool_alloc(bytes));
    state = static_cast<unsigned char*>(std::calloc(s, 1));
  }
  ~TileCache() {
    detail::pool_free(data, bytes);
    std::free(state);
  }
  size_t bytes;
  TileCache(const TileCache&) = delete;
  TileCache& operator=(const TileCache&) = delete;
  bool ok() const { return data && state; }
  T* tile(int64_t slot) const { return data + static_cast<size_t>(slot) * elems; }
  /// True when the caller must fill the slot and then publish() it; false once it is ready.
  bool claim(int64_t slot) {
    unsigned char* st = state + slot;
    unsigned char v = __atomic_load_n(st, __ATOMIC_ACQUIRE);
    if (v == 2) return false;
    unsigned char empty = 0;
    if (v == 0 && __atomic_compare_exchange_n(st, &empty, 1, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
      return true;
    // Spin briefly, then yield: with more workers than free cores the filler may be descheduled.
    for (int spins = 0; __atomic_load_n(st, __ATOMIC_ACQUIRE) != 2; ++spins) {
      if (spins < 4096) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
      } else {
        std::this_thread::yield();
      }
    }
    return false;
  }
  void publish(int64_t slot) {
    __atomic_store_n(state + slot, static_cast<unsigned char>(2), __ATOMIC_RELEASE);
  }
};

}  // namespace tl_cpu
