// Device-side helpers for Hopper (sm_90a) included by generated CUDA code after common.h: wgmma
// matrix descriptors and the wgmma fence / commit / wait protocol, as inline PTX. The wgmma
// instruction itself is printed by the code generator (its register list depends on N).
#pragma once

namespace tl {

/// The 64-bit shared-memory matrix descriptor of wgmma (PTX ISA, "Matrix Descriptor Format"):
/// bits 0-13 start address >> 4, 16-29 leading-dimension byte offset >> 4, 32-45 stride-dimension
/// byte offset >> 4, 49-51 base offset (0: the tiles are placed on swizzle-pattern boundaries),
/// 62-63 swizzle mode (1 = 128B, 2 = 64B, 3 = 32B).
__device__ __forceinline__ uint64_t wgmma_desc(const void* smem, uint32_t lbo, uint32_t sbo, uint32_t mode) {
  uint32_t a = smem_addr(smem);
  return static_cast<uint64_t>((a & 0x3FFFF) >> 4) | (static_cast<uint64_t>((lbo & 0x3FFFF) >> 4) << 16) |
         (static_cast<uint64_t>((sbo & 0x3FFFF) >> 4) << 32) | (static_cast<uint64_t>(mode & 3) << 62);
}

/// Orders this warp group's earlier register and shared-memory accesses before its next wgmma.
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
/// Closes the warp group's current group of wgmma operations.
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
/// Waits until at most N of the warp group's committed wgmma groups are pending.
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

}  // namespace tl
