// Device-side helpers for Hopper (sm_90a) included by generated CUDA code after common.h: wgmma
// matrix descriptors and the wgmma fence / commit / wait protocol, as inline PTX. The wgmma
// instruction itself is printed by the code generator (its register list depends on N).
#pragma once

namespace tl {

/// The 64-bit shared-memory matrix descriptor of wgmma (PTX ISA, "Matrix Descriptor Format"):
/// bits 0-13 start address >> 4, 16-29 leading-dimension byte offset >> 4, 32-45 stride-dimension
/// byte offset >> 4, 49-51 base offset (0: the tiles are placed on swizzle-pattern boundaries),
/// 62-63 swizzle mode (1 = 128B, 2 = 64B, 3 = 32B).
__device__ __forceinline__ uint64_t wgmma_desc(uint32_t a, uint32_t lbo, uint32_t sbo, uint32_t mode) {
  return static_cast<uint64_t>((a & 0x3FFFF) >> 4) | (static_cast<uint64_t>((lbo & 0x3FFFF) >> 4) << 16) |
         (static_cast<uint64_t>((sbo & 0x3FFFF) >> 4) << 32) | (static_cast<uint64_t>(mode & 3) << 62);
}

/// The same from a generic pointer into shared memory.
__device__ __forceinline__ uint64_t wgmma_desc(const void* smem, uint32_t lbo, uint32_t sbo, uint32_t mode) {
  return wgmma_desc(smem_addr(smem), lbo, sbo, mode);
}

/// The descriptor of the operand `units` * 16 bytes further on: the start-address field (bits 0-13)
/// takes the sum, which stays below 2^14 (shared addresses are below 2^18), so no other field changes.
/// Two spellings of one value, for ptxas: a 64-bit add where the descriptor is the same for the whole
/// block (it stays in the uniform datapath, one UIADD3.64), an add on the low word where it depends on
/// the warp group (it lives in vector registers, where a 64-bit add takes two instructions).
__device__ __forceinline__ uint64_t wgmma_desc_add(uint64_t desc, uint32_t units) {
  return desc + static_cast<uint64_t>(units);
}
__device__ __forceinline__ uint64_t wgmma_desc_add_lo(uint64_t desc, uint32_t units) {
  const uint32_t lo = static_cast<uint32_t>(desc) + units;
  return (desc & 0xFFFFFFFF00000000ull) | lo;
}

/// Orders this warp group's earlier register and shared-memory accesses before its next wgmma.
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
/// Closes the warp group's current group of wgmma operations.
__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
/// Waits until at most N of the warp group's committed wgmma groups are pending.
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

}  // namespace tl

namespace tl {

// ---- mbarriers (sm_90): 64-bit barrier objects in shared memory --------------------------------------
// Each takes the barrier as its 32-bit shared-window address (what the code generator passes: integer
// arithmetic on smem_s) or as a generic pointer (converted with cvta).
/// Initialises the barrier for `count` arrivals per phase (one thread, before any use).
__device__ __forceinline__ void mbarrier_init(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void mbarrier_init(uint64_t* bar, uint32_t count) {
  mbarrier_init(smem_addr(bar), count);
}
/// One arrival of the calling thread.
__device__ __forceinline__ void mbarrier_arrive(uint32_t bar) {
  asm volatile("{\n.reg .b64 state;\nmbarrier.arrive.shared::cta.b64 state, [%0];\n}\n" ::"r"(bar)
               : "memory");
}
__device__ __forceinline__ void mbarrier_arrive(uint64_t* bar) { mbarrier_arrive(smem_addr(bar)); }
/// Adds `bytes` to the transaction count the current phase waits for (TMA completes them).
__device__ __forceinline__ void mbarrier_expect_tx(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void mbarrier_expect_tx(uint64_t* bar, uint32_t bytes) {
  mbarrier_expect_tx(smem_addr(bar), bytes);
}
/// Waits until the phase of parity `parity` has completed.
__device__ __forceinline__ void mbarrier_wait_parity(uint32_t bar, uint32_t parity) {
  asm volatile(
      "{\n.reg .pred done;\nTL_MBAR_WAIT:\nmbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra TL_MBAR_WAIT;\n}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
}
__device__ __forceinline__ void mbarrier_wait_parity(uint64_t* bar, uint32_t parity) {
  mbarrier_wait_parity(smem_addr(bar), parity);
}
/// One arrival of the calling thread once all of its earlier cp.async copies have completed, counted as
/// one of the phase's expected arrivals (cp.async.mbarrier.arrive.noinc).
__device__ __forceinline__ void cp_async_mbarrier_arrive_noinc(uint32_t bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(bar) : "memory");
}
/// Orders the thread's generic-proxy shared-memory accesses before later async-proxy ones (TMA, wgmma).
__device__ __forceinline__ void fence_proxy_async() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

}  // namespace tl

namespace tl {

// ---- TMA (sm_90): bulk tensor copies global -> shared that complete on an mbarrier ----------------------
/// The driver's CUtensorMap: 128 opaque bytes, 64-byte aligned, encoded on the host
/// (cuTensorMapEncodeTiled) and passed as a `const __grid_constant__` kernel parameter.
struct alignas(64) TensorMap {
  unsigned long long opaque[16];
};

/// Makes this thread's mbarrier inits visible to the async proxy (the TMA unit's complete_tx).
__device__ __forceinline__ void fence_barrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

// ---- thread-block clusters (sm_90+; T.ClusterKernel) ------------------------------------------------------
/// The block's rank in its cluster (0 when launched without clusters).
__device__ __forceinline__ int cluster_ctarank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return static_cast<int>(r);
}
/// Every thread of the cluster arrives (release: its earlier writes are seen by the threads that wait).
__device__ __forceinline__ void cluster_arrive() {
  asm volatile("barrier.cluster.arrive.release.aligned;\n" ::: "memory");
}
/// An arrival that orders no memory.
__device__ __forceinline__ void cluster_arrive_relaxed() {
  asm volatile("barrier.cluster.arrive.relaxed.aligned;\n" ::: "memory");
}
/// Waits until every thread of the cluster arrived (acquire).
__device__ __forceinline__ void cluster_wait() {
  asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void cluster_sync() {
  cluster_arrive();
  cluster_wait();
}
/// One arrival of the calling thread on the mbarrier at the same shared offset as `bar` in block `cta` of the
/// cluster (mapa gives its shared::cluster address), releasing the thread's earlier writes at cluster scope.
__device__ __forceinline__ void mbarrier_arrive_cluster(uint32_t bar, int cta) {
  uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(bar), "r"(cta));
  asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];\n" ::"r"(remote) : "memory");
}
// ---- cluster launch control (sm_100+; T.clc_*)
// ---------------------------------------------------------------
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 1000
/// Asks to cancel a cluster not yet launched; the 16-byte response at shared address `result` and 16
/// transaction bytes on the mbarrier `bar` complete asynchronously.
__device__ __forceinline__ void clc_try_cancel(uint32_t result, uint32_t bar) {
  asm volatile(
      "clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes.b128 [%0], [%1];\n" ::
          "r"(result),
      "r"(bar)
      : "memory");
}
/// The same, the response and the transaction bytes landing in every block of the cluster.
__device__ __forceinline__ void clc_try_cancel_multicast(uint32_t result, uint32_t bar) {
  asm volatile(
      "clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes.multicast::cluster::"
      "all.b128 "
      "[%0], [%1];\n" ::"r"(result),
      "r"(bar)
      : "memory");
}
/// 1 when the response at shared address `result` says a cluster was cancelled.
__device__ __forceinline__ int clc_is_canceled(uint32_t result) {
  uint32_t r;
  asm volatile(
      "{\n.reg .b64 lo, hi;\n.reg .b128 resp;\n.reg .pred p;\nld.shared.v2.b64 {lo, hi}, [%1];\n"
      "mov.b128 resp, {lo, hi};\nclusterlaunchcontrol.query_cancel.is_canceled.pred.b128 p, resp;\n"
      "selp.u32 %0, 1, 0, p;\n}\n"
      : "=r"(r)
      : "r"(result)
      : "memory");
  return static_cast<int>(r);
}
/// The block index of the first block of the cancelled cluster (x, y, z: d = 0, 1, 2).
template <int D>
__device__ __forceinline__ uint32_t clc_first_ctaid(uint32_t result) {
  uint32_t x, y, z, w;
  asm volatile(
      "{\n.reg .b64 lo, hi;\n.reg .b128 resp;\nld.shared.v2.b64 {lo, hi}, [%4];\nmov.b128 resp, {lo, hi};\n"
      "clusterlaunchcontrol.query_cancel.get_first_ctaid.v4.b32.b128 {%0, %1, %2, %3}, resp;\n}\n"
      : "=r"(x), "=r"(y), "=r"(z), "=r"(w)
      : "r"(result)
      : "memory");
  (void)w;
  return D == 0 ? x : D == 1 ? y : z;
}
__device__ __forceinline__ uint32_t clc_get_first_ctaid_x(uint32_t result) {
  return clc_first_ctaid<0>(result);
}
__device__ __forceinline__ uint32_t clc_get_first_ctaid_y(uint32_t result) {
  return clc_first_ctaid<1>(result);
}
__device__ __forceinline__ uint32_t clc_get_first_ctaid_z(uint32_t result) {
  return clc_first_ctaid<2>(result);
}
#endif

/// Stores `v` at the shared offset of `addr` in block `cta` of the cluster (distributed shared memory).
template <typename T>
__device__ __forceinline__ void st_cluster(uint32_t addr, T v, int cta) {
  static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8,
                "st_cluster: 1, 2, 4 or 8 bytes");
  uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(addr), "r"(cta));
  if constexpr (sizeof(T) == 8) {
    uint64_t b;
    memcpy(&b, &v, 8);
    asm volatile("st.shared::cluster.b64 [%0], %1;\n" ::"r"(remote), "l"(b) : "memory");
  } else if constexpr (sizeof(T) == 4) {
    uint32_t b;
    memcpy(&b, &v, 4);
    asm volatile("st.shared::cluster.b32 [%0], %1;\n" ::"r"(remote), "r"(b) : "memory");
  } else if constexpr (sizeof(T) == 2) {
    uint16_t b;
    memcpy(&b, &v, 2);
    asm volatile("st.shared::cluster.b16 [%0], %1;\n" ::"r"(remote), "h"(b) : "memory");
  } else {
    uint8_t b;
    memcpy(&b, &v, 1);
    asm volatile("st.shared::cluster.b8 [%0], %1;\n" ::"r"(remote), "r"(static_cast<uint32_t>(b)) : "memory");
  }
}

/// mbarrier_wait_parity acquiring at cluster scope (the barrier's arrivals may come from peer blocks).
__device__ __forceinline__ void mbarrier_wait_parity_cluster(uint32_t bar, uint32_t parity) {
  asm volatile(
      "{\n.reg .pred done;\nTL_MBAR_WAIT_CL:\nmbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 done, "
      "[%0], "
      "%1;\n@!done bra TL_MBAR_WAIT_CL;\n}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
}

/// tma_load with .multicast::cluster: the box lands at `dst` and completes `bar` (the same shared offsets) in
/// every block of the cluster whose rank bit is set in `mask`.
__device__ __forceinline__ void tma_load_multicast(const TensorMap* map, uint32_t dst, uint32_t bar,
                                                   uint16_t mask, int c0) {
  asm volatile(
      "cp.async.bulk.tensor.1d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], "
      "[%1, {%4}], [%2], %3;\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(bar), "h"(mask), "r"(c0)
      : "memory");
}
__device__ __forceinline__ void tma_load_multicast(const TensorMap* map, uint32_t dst, uint32_t bar,
                                                   uint16_t mask, int c0, int c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], "
      "[%1, {%4, %5}], [%2], %3;\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(bar), "h"(mask), "r"(c0), "r"(c1)
      : "memory");
}
__device__ __forceinline__ void tma_load_multicast(const TensorMap* map, uint32_t dst, uint32_t bar,
                                                   uint16_t mask, int c0, int c1, int c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], "
      "[%1, {%4, %5, %6}], [%2], %3;\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(bar), "h"(mask), "r"(c0), "r"(c1), "r"(c2)
      : "memory");
}
__device__ __forceinline__ void tma_load_multicast(const TensorMap* map, uint32_t dst, uint32_t bar,
                                                   uint16_t mask, int c0, int c1, int c2, int c3) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], "
      "[%1, {%4, %5, %6, %7}], [%2], %3;\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(bar), "h"(mask), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
      : "memory");
}
__device__ __forceinline__ void tma_load_multicast(const TensorMap* map, uint32_t dst, uint32_t bar,
                                                   uint16_t mask, int c0, int c1, int c2, int c3, int c4) {
  asm volatile(
      "cp.async.bulk.tensor.5d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], "
      "[%1, {%4, %5, %6, %7, %8}], [%2], %3;\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(bar), "h"(mask), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4)
      : "memory");
}

/// One arrival of the calling thread that also adds `bytes` to the phase's transaction count.
__device__ __forceinline__ void mbarrier_arrive_expect_tx(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbarrier_arrive_expect_tx(uint64_t* bar, uint32_t bytes) {
  mbarrier_arrive_expect_tx(smem_addr(bar), bytes);
}

/// cp.async.bulk.tensor: the box of `map` at coordinates (c0 innermost, ...) into shared memory at
/// `dst` (in the map's swizzle), completing `bar`'s transaction count by the box's bytes.
__device__ __forceinline__ void tma_load(const TensorMap* map, uint32_t dst, uint32_t bar, int c0) {
  asm volatile(
      "cp.async.bulk.tensor.1d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3}], "
      "[%2];\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(bar), "r"(c0)
      : "memory");
}
__device__ __forceinline__ void tma_load(const TensorMap* map, uint32_t dst, uint32_t bar, int c0, int c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], "
      "[%2];\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(bar), "r"(c0), "r"(c1)
      : "memory");
}
__device__ __forceinline__ void tma_load(const TensorMap* map, uint32_t dst, uint32_t bar, int c0, int c1,
                                         int c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5}], "
      "[%2];\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(bar), "r"(c0), "r"(c1), "r"(c2)
      : "memory");
}
__device__ __forceinline__ void tma_load(const TensorMap* map, uint32_t dst, uint32_t bar, int c0, int c1,
                                         int c2, int c3) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5, "
      "%6}], [%2];\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(bar), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
      : "memory");
}
__device__ __forceinline__ void tma_load(const TensorMap* map, uint32_t dst, uint32_t bar, int c0, int c1,
                                         int c2, int c3, int c4) {
  asm volatile(
      "cp.async.bulk.tensor.5d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5, "
      "%6, %7}], [%2];\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(bar), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4)
      : "memory");
}

/// cp.async.bulk.tensor store: the shared tile at `src` (in the map's swizzle) to the box of `map` at
/// coordinates (c0 innermost, ...); out-of-bounds elements are not written. Joins the bulk async-group.
__device__ __forceinline__ void tma_store(const TensorMap* map, uint32_t src, int c0) {
  asm volatile("cp.async.bulk.tensor.1d.global.shared::cta.bulk_group [%0, {%2}], [%1];\n" ::"l"(
                   reinterpret_cast<uint64_t>(map)),
               "r"(src), "r"(c0)
               : "memory");
}
__device__ __forceinline__ void tma_store(const TensorMap* map, uint32_t src, int c0, int c1) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];\n" ::"l"(
                   reinterpret_cast<uint64_t>(map)),
               "r"(src), "r"(c0), "r"(c1)
               : "memory");
}
__device__ __forceinline__ void tma_store(const TensorMap* map, uint32_t src, int c0, int c1, int c2) {
  asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%2, %3, %4}], [%1];\n" ::"l"(
                   reinterpret_cast<uint64_t>(map)),
               "r"(src), "r"(c0), "r"(c1), "r"(c2)
               : "memory");
}
__device__ __forceinline__ void tma_store(const TensorMap* map, uint32_t src, int c0, int c1, int c2,
                                          int c3) {
  asm volatile("cp.async.bulk.tensor.4d.global.shared::cta.bulk_group [%0, {%2, %3, %4, %5}], [%1];\n" ::"l"(
                   reinterpret_cast<uint64_t>(map)),
               "r"(src), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
               : "memory");
}
__device__ __forceinline__ void tma_store(const TensorMap* map, uint32_t src, int c0, int c1, int c2, int c3,
                                          int c4) {
  asm volatile(
      "cp.async.bulk.tensor.5d.global.shared::cta.bulk_group [%0, {%2, %3, %4, %5, %6}], [%1];\n" ::"l"(
          reinterpret_cast<uint64_t>(map)),
      "r"(src), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4)
      : "memory");
}
/// cp.reduce.async.bulk.tensor .add: the shared tile at `src` added element-wise into the box of `map` at
/// coordinates (c0 innermost, ...) in global memory (each element's add is atomic; out-of-bounds elements are
/// skipped). Joins the bulk async-group, like tma_store.
__device__ __forceinline__ void tma_reduce_add(const TensorMap* map, uint32_t src, int c0) {
  asm volatile("cp.reduce.async.bulk.tensor.1d.global.shared::cta.add.tile.bulk_group [%0, {%2}], [%1];\n" ::"l"(
                   reinterpret_cast<uint64_t>(map)),
               "r"(src), "r"(c0)
               : "memory");
}
__device__ __forceinline__ void tma_reduce_add(const TensorMap* map, uint32_t src, int c0, int c1) {
  asm volatile("cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group [%0, {%2, %3}], [%1];\n" ::"l"(
                   reinterpret_cast<uint64_t>(map)),
               "r"(src), "r"(c0), "r"(c1)
               : "memory");
}
__device__ __forceinline__ void tma_reduce_add(const TensorMap* map, uint32_t src, int c0, int c1, int c2) {
  asm volatile("cp.reduce.async.bulk.tensor.3d.global.shared::cta.add.tile.bulk_group [%0, {%2, %3, %4}], [%1];\n" ::"l"(
                   reinterpret_cast<uint64_t>(map)),
               "r"(src), "r"(c0), "r"(c1), "r"(c2)
               : "memory");
}
__device__ __forceinline__ void tma_reduce_add(const TensorMap* map, uint32_t src, int c0, int c1, int c2, int c3) {
  asm volatile("cp.reduce.async.bulk.tensor.4d.global.shared::cta.add.tile.bulk_group [%0, {%2, %3, %4, %5}], [%1];\n" ::"l"(
                   reinterpret_cast<uint64_t>(map)),
               "r"(src), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
               : "memory");
}
__device__ __forceinline__ void tma_reduce_add(const TensorMap* map, uint32_t src, int c0, int c1, int c2, int c3, int c4) {
  asm volatile("cp.reduce.async.bulk.tensor.5d.global.shared::cta.add.tile.bulk_group [%0, {%2, %3, %4, %5, %6}], [%1];\n" ::"l"(
                   reinterpret_cast<uint64_t>(map)),
               "r"(src), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4)
               : "memory");
}
/// Closes the thread's current bulk async-group (TMA stores).
__device__ __forceinline__ void tma_store_commit() {
  asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}
/// Waits until all of the thread's bulk async-groups have completed (writes done, sources read).
__device__ __forceinline__ void tma_store_wait() {
  asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
}

}  // namespace tl
