// Device-side helpers for the tcgen05 family (sm_100a / sm_103a / sm_110a) included by generated CUDA code
// after common.h and hopper.h: tensor memory allocation, the tcgen05 shared memory descriptor, tcgen05.mma
// (kind::f16, cta_group::1), its commit to an mbarrier, and tcgen05.ld / st of shape .32x32b, as inline PTX
// (PTX ISA, "TensorCore 5th Generation Family Instructions"). The emulator implements the same calls from the
// ISA (src/emulator/intrinsics_tcgen05.cc).
#pragma once

namespace tl {

/// A warp allocates `ncols` columns (a power of 2 in [32, 512]) of tensor memory, all 128 lanes; the address
/// (lane << 16 | column) is written to the 32-bit shared-memory word at `dst`.
__device__ __forceinline__ void tcgen05_alloc(uint32_t dst, uint32_t ncols) {
  asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], %1;\n" ::"r"(dst), "r"(ncols)
               : "memory");
}
__device__ __forceinline__ void tcgen05_alloc(const void* dst, uint32_t ncols) { tcgen05_alloc(smem_addr(dst), ncols); }

/// The allocating warp frees them.
__device__ __forceinline__ void tcgen05_dealloc(uint32_t taddr, uint32_t ncols) {
  asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, %1;\n" ::"r"(taddr), "r"(ncols) : "memory");
}

/// The block will allocate no more tensor memory.
__device__ __forceinline__ void tcgen05_relinquish_alloc_permit() {
  asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;\n" ::: "memory");
}

/// The 2-CTA forms (cta_group::2; every tcgen05 instruction of a kernel names one CTA group): one warp of
/// each block of a CTA pair (cluster ranks 2i, 2i + 1) allocates, relinquishes and frees, each in its own
/// tensor memory.
__device__ __forceinline__ void tcgen05_alloc_cg2(uint32_t dst, uint32_t ncols) {
  asm volatile("tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32 [%0], %1;\n" ::"r"(dst), "r"(ncols)
               : "memory");
}
__device__ __forceinline__ void tcgen05_dealloc_cg2(uint32_t taddr, uint32_t ncols) {
  asm volatile("tcgen05.dealloc.cta_group::2.sync.aligned.b32 %0, %1;\n" ::"r"(taddr), "r"(ncols) : "memory");
}
__device__ __forceinline__ void tcgen05_relinquish_alloc_permit_cg2() {
  asm volatile("tcgen05.relinquish_alloc_permit.cta_group::2.sync.aligned;\n" ::: "memory");
}

/// The 64-bit shared memory descriptor of tcgen05 (PTX ISA, tcgen05 "Shared Memory Descriptor"): bits 0-13
/// start address >> 4, 16-29 leading-dimension byte offset >> 4, 32-45 stride-dimension byte offset >> 4,
/// 46-48 the fixed value 0b001, 49-51 base offset (0: tiles on swizzle-pattern boundaries), 61-63 swizzle
/// (0 none, 2 128B, 4 64B, 6 32B).
__device__ __forceinline__ uint64_t tcgen05_desc(uint32_t a, uint32_t lbo, uint32_t sbo, uint32_t mode) {
  return static_cast<uint64_t>((a & 0x3FFFF) >> 4) | (static_cast<uint64_t>((lbo & 0x3FFFF) >> 4) << 16) |
         (static_cast<uint64_t>((sbo & 0x3FFFF) >> 4) << 32) | (uint64_t{1} << 46) |
         (static_cast<uint64_t>(mode & 7) << 61);
}
__device__ __forceinline__ uint64_t tcgen05_desc(const void* smem, uint32_t lbo, uint32_t sbo, uint32_t mode) {
  return tcgen05_desc(smem_addr(smem), lbo, sbo, mode);
}

/// D (tensor memory at `taddr_d`) = A * B + (enable_input_d ? D : 0), A and B in shared memory (descriptors), the
/// shapes and types in the instruction descriptor `idesc`; issued by one thread. One function per kind:
/// tcgen05_mma_f16 (f16 / bf16, k16), tcgen05_mma_f8f6f4 (e4m3 / e5m2, k32), tcgen05_mma_i8 (s8 / u8 into s32, k32).
#define TL_TCGEN05_MMA(KIND)                                                                                   \
  __device__ __forceinline__ void tcgen05_mma_##KIND(uint32_t taddr_d, uint64_t adesc, uint64_t bdesc,         \
                                                     uint32_t idesc, int enable_input_d) {                    \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\n"                                                   \
                 "tcgen05.mma.cta_group::1.kind::" #KIND " [%0], %1, %2, %3, p;\n}\n" ::"r"(taddr_d),          \
                 "l"(adesc), "l"(bdesc), "r"(idesc), "r"(enable_input_d)                                        \
                 : "memory");                                                                                  \
  }
TL_TCGEN05_MMA(f16)
TL_TCGEN05_MMA(f8f6f4)
TL_TCGEN05_MMA(i8)
TL_TCGEN05_MMA(tf32)
#undef TL_TCGEN05_MMA

/// The 2-CTA MMA (cta_group::2), issued by one thread of the pair's even block: M = 256 rows, rows [0, 128)
/// from A and into tensor memory of the even block, rows [128, 256) of the odd block; B's first N / 2 columns
/// from the even block's shared memory, the rest from the odd block's (both at the descriptors' offsets).
#define TL_TCGEN05_MMA_CG2(KIND)                                                                             \
  __device__ __forceinline__ void tcgen05_mma_##KIND##_cg2(uint32_t taddr_d, uint64_t adesc, uint64_t bdesc, \
                                                           uint32_t idesc, int enable_input_d) {             \
    asm volatile(                                                                                            \
        "{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\n"                                                          \
        "tcgen05.mma.cta_group::2.kind::" #KIND " [%0], %1, %2, %3, p;\n}\n" ::"r"(taddr_d),                 \
        "l"(adesc), "l"(bdesc), "r"(idesc), "r"(enable_input_d)                                              \
        : "memory");                                                                                         \
  }
/// tcgen05.mma with A in tensor memory (kind::f16): D = A (tensor memory at `taddr_a`: row m at lane m,
/// 16-bit values two a 32-bit column, the lower K first) * B (shared, descriptor) + (enable ? D : 0). _cg2:
/// issued for the CTA pair (cta_group::2), each block's 128 rows of A from its own tensor memory at the same
/// address.
#define TL_TCGEN05_MMA_TS(SUFFIX, GROUP)                                                          \
  __device__ __forceinline__ void tcgen05_mma_ts_f16##SUFFIX(                                     \
      uint32_t taddr_d, uint32_t taddr_a, uint64_t bdesc, uint32_t idesc, int enable_input_d) {   \
    asm volatile(                                                                                 \
        "{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\n"                                               \
        "tcgen05.mma.cta_group::" #GROUP ".kind::f16 [%0], [%1], %2, %3, p;\n}\n" ::"r"(taddr_d), \
        "r"(taddr_a), "l"(bdesc), "r"(idesc), "r"(enable_input_d)                                 \
        : "memory");                                                                              \
  }
TL_TCGEN05_MMA_TS(, 1)
TL_TCGEN05_MMA_TS(_cg2, 2)
#undef TL_TCGEN05_MMA_TS
TL_TCGEN05_MMA_CG2(f16)
TL_TCGEN05_MMA_CG2(f8f6f4)
TL_TCGEN05_MMA_CG2(i8)
TL_TCGEN05_MMA_CG2(tf32)
#undef TL_TCGEN05_MMA_CG2

/// Block-scaled MXFP8 (kind::mxf8f6f4.block_scale, scale_vec::1X): as tcgen05_mma_f8f6f4, each k32 step's
/// products of row m and column n scaled by 2^(sa - 127) 2^(sb - 127), sa the E8M0 byte (instruction
/// descriptor bits 29-30) of the word at tensor memory `taddr_sfa` + column m / 32, lane m, sb likewise from
/// `taddr_sfb` with n (bits 4-5).
/// NVFP4 (kind::mxf4nvf4.block_scale.block16): fp4 A and B two values a byte, k64 a step, each row's and
/// column's four UE4M3 scales (one a 16 values) the bytes of the word at `taddr_sfa` + column m / 32, lane m
/// (B likewise with n); scale ids 0.
/// MXFP4 (kind::mxf4.block_scale.scale_vec::2X): fp4 A and B two values a byte, k64 a step, each row's and
/// column's two E8M0 scales (one a 32 values) the half-word the scale ids (0 or 2) name of the same words.
#define TL_TCGEN05_MMA_BS(SUFFIX, GROUP, KIND, NAME)                                            \
  __device__ __forceinline__ void tcgen05_mma_##NAME##SUFFIX(                                   \
      uint32_t taddr_d, uint64_t adesc, uint64_t bdesc, uint32_t idesc, int enable_input_d,     \
      uint32_t taddr_sfa, uint32_t taddr_sfb) {                                                 \
    asm volatile(                                                                               \
        "{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\n"                                             \
        "tcgen05.mma.cta_group::" #GROUP ".kind::" KIND                                         \
        " [%0], %1, %2, %3, [%5], [%6], p;\n}\n" ::"r"(taddr_d),                                \
        "l"(adesc), "l"(bdesc), "r"(idesc), "r"(enable_input_d), "r"(taddr_sfa), "r"(taddr_sfb) \
        : "memory");                                                                            \
  }
TL_TCGEN05_MMA_BS(, 1, "mxf8f6f4.block_scale.scale_vec::1X", mxf8f6f4)
TL_TCGEN05_MMA_BS(_cg2, 2, "mxf8f6f4.block_scale.scale_vec::1X", mxf8f6f4)
TL_TCGEN05_MMA_BS(, 1, "mxf4nvf4.block_scale.block16", mxf4nvf4)
TL_TCGEN05_MMA_BS(_cg2, 2, "mxf4nvf4.block_scale.block16", mxf4nvf4)
TL_TCGEN05_MMA_BS(, 1, "mxf4.block_scale.scale_vec::2X", mxf4)
TL_TCGEN05_MMA_BS(_cg2, 2, "mxf4.block_scale.scale_vec::2X", mxf4)
#undef TL_TCGEN05_MMA_BS

/// tcgen05.cp.32x128b.warpx4: 32 rows of 128 bits from shared memory (descriptor `sdesc`, no swizzle: row r
/// at start + (r / 8) * SBO + (r % 8) * 16 bytes) into 4 columns of tensor memory from `taddr`, row r in
/// lanes r, r + 32, r + 64 and r + 96; issued by one thread, ordered before its later tcgen05.mma, tracked by
/// its tcgen05.commit. _cg2: by the pair's even block, each block copying its own shared memory into its own
/// tensor memory.
__device__ __forceinline__ void tcgen05_cp_warpx4(uint32_t taddr, uint64_t sdesc) {
  asm volatile("tcgen05.cp.cta_group::1.32x128b.warpx4 [%0], %1;\n" ::"r"(taddr), "l"(sdesc) : "memory");
}
__device__ __forceinline__ void tcgen05_cp_warpx4_cg2(uint32_t taddr, uint64_t sdesc) {
  asm volatile("tcgen05.cp.cta_group::2.32x128b.warpx4 [%0], %1;\n" ::"r"(taddr), "l"(sdesc) : "memory");
}

/// One warp moves word 32 c + r of the 128 words at `p` (shared memory) to word 4 r + c, in place. Lane r
/// reads words r, 32 + r, 64 + r, 96 + r and writes the same four: word 32 c + r takes the old word 32 (r %
/// 4) + 8 c + r / 4, which lane 8 c + r / 4 read into its register r % 4 (shuffled over), so no lane
/// overwrites a word another reads and the warp needs no barrier.
__device__ __forceinline__ void tcgen05_sf_warp_transpose(uint32_t* p) {
  const uint32_t r = threadIdx.x % 32;
  uint32_t v[4], out[4];
#pragma unroll
  for (uint32_t c = 0; c < 4; ++c) v[c] = p[32 * c + r];
#pragma unroll
  for (uint32_t c = 0; c < 4; ++c)
#pragma unroll
    for (uint32_t j = 0; j < 4; ++j) {
      const uint32_t t = __shfl_sync(0xFFFFFFFFu, v[j], 8 * c + r / 4);
      if (r % 4 == j) out[c] = t;
    }
#pragma unroll
  for (uint32_t c = 0; c < 4; ++c) p[32 * c + r] = out[c];
}

/// The executing thread's earlier tcgen05.mma complete, then one arrival on the mbarrier at `bar`.
__device__ __forceinline__ void tcgen05_commit(uint32_t bar) {
  asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];\n" ::"r"(bar)
               : "memory");
}
__device__ __forceinline__ void tcgen05_commit(uint64_t* bar) { tcgen05_commit(smem_addr(bar)); }

/// The executing thread's earlier 2-CTA tcgen05.mma complete, then one arrival on the mbarrier at the offset
/// of `bar` in every block of the cluster whose rank bit is set in `mask` (.multicast::cluster).
__device__ __forceinline__ void tcgen05_commit_cg2(uint32_t bar, uint16_t mask) {
  asm volatile(
      "tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [%0], "
      "%1;\n" ::"r"(bar),
      "h"(mask)
      : "memory");
}

/// TileLang's 2-CTA TMA load: the box lands in this block's shared memory at `dst` and completes the mbarrier
/// at the offset of `bar` in the CTA pair's even block (cp.async.bulk.tensor .cta_group::2, whose mbarrier
/// may be the peer's; mapa gives its shared::cluster address).
__device__ __forceinline__ uint32_t pair_leader_barrier(uint32_t bar) {
  uint32_t rank, remote;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(bar), "r"(rank & ~1u));
  return remote;
}
#define TL_TMA_LOAD_2SM(D, COORDS, ...)                                                         \
  asm volatile("cp.async.bulk.tensor." #D                                                       \
               "d.cta_group::2.shared::cluster.global.mbarrier::complete_tx::bytes "            \
               "[%0], [%1, {" COORDS "}], [%2];\n" ::"r"(dst),                                  \
               "l"(reinterpret_cast<uint64_t>(map)), "r"(pair_leader_barrier(bar)), __VA_ARGS__ \
               : "memory")
__device__ __forceinline__ void tma_load_2sm(const TensorMap* map, uint32_t dst, uint32_t bar, int c0) {
  TL_TMA_LOAD_2SM(1, "%3", "r"(c0));
}
__device__ __forceinline__ void tma_load_2sm(const TensorMap* map, uint32_t dst, uint32_t bar, int c0,
                                             int c1) {
  TL_TMA_LOAD_2SM(2, "%3, %4", "r"(c0), "r"(c1));
}
__device__ __forceinline__ void tma_load_2sm(const TensorMap* map, uint32_t dst, uint32_t bar, int c0, int c1,
                                             int c2) {
  TL_TMA_LOAD_2SM(3, "%3, %4, %5", "r"(c0), "r"(c1), "r"(c2));
}
__device__ __forceinline__ void tma_load_2sm(const TensorMap* map, uint32_t dst, uint32_t bar, int c0, int c1,
                                             int c2, int c3) {
  TL_TMA_LOAD_2SM(4, "%3, %4, %5, %6", "r"(c0), "r"(c1), "r"(c2), "r"(c3));
}
__device__ __forceinline__ void tma_load_2sm(const TensorMap* map, uint32_t dst, uint32_t bar, int c0, int c1,
                                             int c2, int c3, int c4) {
  TL_TMA_LOAD_2SM(5, "%3, %4, %5, %6, %7", "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4));
}
#undef TL_TMA_LOAD_2SM

/// N columns moved eight an instruction (`x8(i)` for columns i .. i + 7) where N is a multiple of 8, else one
/// an instruction (`x1(i)`): the shape of every tcgen05.ld / st helper below.
template <int N, typename X8, typename X1>
__device__ __forceinline__ void tcgen05_columns(X8 x8, X1 x1) {
  if constexpr (N % 8 == 0) {
#pragma unroll
    for (int i = 0; i < N; i += 8) x8(i);
  } else {
#pragma unroll
    for (int i = 0; i < N; ++i) x1(i);
  }
}

/// tcgen05.ld / st .32x32b: lane t of the warp moves N 32-bit columns of tensor-memory lane taddr.lane + t,
/// from column taddr.column on, to / from regs[0..N).
template <int N, typename T>
__device__ __forceinline__ void tcgen05_ld(T* regs, uint32_t taddr) {
  static_assert(sizeof(T) == 4, "tcgen05.ld moves 32-bit registers");
  uint32_t* r = reinterpret_cast<uint32_t*>(regs);
  tcgen05_columns<N>(
      [&](int i) {
        asm volatile("tcgen05.ld.sync.aligned.32x32b.x8.b32 {%0, %1, %2, %3, %4, %5, %6, %7}, [%8];\n"
                     : "=r"(r[i]), "=r"(r[i + 1]), "=r"(r[i + 2]), "=r"(r[i + 3]), "=r"(r[i + 4]), "=r"(r[i + 5]),
                       "=r"(r[i + 6]), "=r"(r[i + 7])
                     : "r"(taddr + i));
      },
      [&](int i) { asm volatile("tcgen05.ld.sync.aligned.32x32b.x1.b32 {%0}, [%1];\n" : "=r"(r[i]) : "r"(taddr + i)); });
}
template <int N, typename T>
__device__ __forceinline__ void tcgen05_st(uint32_t taddr, const T* regs) {
  static_assert(sizeof(T) == 4, "tcgen05.st moves 32-bit registers");
  const uint32_t* r = reinterpret_cast<const uint32_t*>(regs);
  tcgen05_columns<N>(
      [&](int i) {
        asm volatile("tcgen05.st.sync.aligned.32x32b.x8.b32 [%0], {%1, %2, %3, %4, %5, %6, %7, %8};\n" ::"r"(taddr + i),
                     "r"(r[i]), "r"(r[i + 1]), "r"(r[i + 2]), "r"(r[i + 3]), "r"(r[i + 4]), "r"(r[i + 5]),
                     "r"(r[i + 6]), "r"(r[i + 7])
                     : "memory");
      },
      [&](int i) {
        asm volatile("tcgen05.st.sync.aligned.32x32b.x1.b32 [%0], {%1};\n" ::"r"(taddr + i), "r"(r[i]) : "memory");
      });
}

/// tcgen05.ld .16x32bx2 (an M = 64 accumulator, layout F: each warp's 16 rows in the first 16 lanes of its
/// quarter): lane t < 16 of the warp moves N columns of tensor-memory lane taddr.lane + t from taddr.column on,
/// lane t >= 16 those of lane taddr.lane + t - 16 from taddr.column + SPLIT.
template <int N, int SPLIT, typename T>
__device__ __forceinline__ void tcgen05_ld_16x32bx2(T* regs, uint32_t taddr) {
  static_assert(sizeof(T) == 4, "tcgen05.ld moves 32-bit registers");
  uint32_t* r = reinterpret_cast<uint32_t*>(regs);
  tcgen05_columns<N>(
      [&](int i) {
        asm volatile("tcgen05.ld.sync.aligned.16x32bx2.x8.b32 {%0, %1, %2, %3, %4, %5, %6, %7}, [%8], %9;\n"
                     : "=r"(r[i]), "=r"(r[i + 1]), "=r"(r[i + 2]), "=r"(r[i + 3]), "=r"(r[i + 4]), "=r"(r[i + 5]),
                       "=r"(r[i + 6]), "=r"(r[i + 7])
                     : "r"(taddr + i), "n"(SPLIT));
      },
      [&](int i) {
        asm volatile("tcgen05.ld.sync.aligned.16x32bx2.x1.b32 {%0}, [%1], %2;\n"
                     : "=r"(r[i])
                     : "r"(taddr + i), "n"(SPLIT));
      });
}

/// tcgen05.st .16x32bx2: the store of tcgen05_ld_16x32bx2's layout (lanes t >= 16 at taddr.column + SPLIT).
template <int N, int SPLIT, typename T>
__device__ __forceinline__ void tcgen05_st_16x32bx2(uint32_t taddr, const T* regs) {
  static_assert(sizeof(T) == 4, "tcgen05.st moves 32-bit registers");
  const uint32_t* r = reinterpret_cast<const uint32_t*>(regs);
  tcgen05_columns<N>(
      [&](int i) {
        asm volatile("tcgen05.st.sync.aligned.16x32bx2.x8.b32 [%0], %1, {%2, %3, %4, %5, %6, %7, %8, %9};\n" ::"r"(
                         taddr + i),
                     "n"(SPLIT), "r"(r[i]), "r"(r[i + 1]), "r"(r[i + 2]), "r"(r[i + 3]), "r"(r[i + 4]),
                     "r"(r[i + 5]), "r"(r[i + 6]), "r"(r[i + 7])
                     : "memory");
      },
      [&](int i) {
        asm volatile("tcgen05.st.sync.aligned.16x32bx2.x1.b32 [%0], %1, {%2};\n" ::"r"(taddr + i), "n"(SPLIT),
                     "r"(r[i])
                     : "memory");
      });
}

/// The lower halves of N 32-bit columns into 16-bit registers, and 16-bit values into the lower halves of N
/// columns (the upper half 0): a float16 accumulator holds one value a column, bits 0-15.
template <int N, typename T>
__device__ __forceinline__ void tcgen05_lo16_of(T* regs, const uint32_t* w) {
  static_assert(sizeof(T) == 2, "the lower halves fill 16-bit registers");
#pragma unroll
  for (int i = 0; i < N; ++i) {
    const uint16_t lo = static_cast<uint16_t>(w[i]);
    memcpy(&regs[i], &lo, 2);
  }
}
template <int N, typename T>
__device__ __forceinline__ void tcgen05_lo16_to(uint32_t* w, const T* regs) {
  static_assert(sizeof(T) == 2, "the lower halves take 16-bit values");
#pragma unroll
  for (int i = 0; i < N; ++i) {
    uint16_t v;
    memcpy(&v, &regs[i], 2);
    w[i] = v;
  }
}

/// A float16 accumulator into 16-bit registers: the columns are loaded, waited for (tcgen05.wait::ld: the
/// registers are not valid before) and their lower halves kept; and the stores back.
template <int N, typename T>
__device__ __forceinline__ void tcgen05_ld_lo16(T* regs, uint32_t taddr) {
  uint32_t w[N];
  tcgen05_ld<N>(w, taddr);
  asm volatile("tcgen05.wait::ld.sync.aligned;\n" ::: "memory");
  tcgen05_lo16_of<N>(regs, w);
}
template <int N, int SPLIT, typename T>
__device__ __forceinline__ void tcgen05_ld_16x32bx2_lo16(T* regs, uint32_t taddr) {
  uint32_t w[N];
  tcgen05_ld_16x32bx2<N, SPLIT>(w, taddr);
  asm volatile("tcgen05.wait::ld.sync.aligned;\n" ::: "memory");
  tcgen05_lo16_of<N>(regs, w);
}
template <int N, typename T>
__device__ __forceinline__ void tcgen05_st_lo16(uint32_t taddr, const T* regs) {
  uint32_t w[N];
  tcgen05_lo16_to<N>(w, regs);
  tcgen05_st<N>(taddr, w);
}
template <int N, int SPLIT, typename T>
__device__ __forceinline__ void tcgen05_st_16x32bx2_lo16(uint32_t taddr, const T* regs) {
  uint32_t w[N];
  tcgen05_lo16_to<N>(w, regs);
  tcgen05_st_16x32bx2<N, SPLIT>(taddr, w);
}

/// tcgen05.st of N 32-bit columns, each packing two consecutive 16-bit values of `regs` (the lower in bits
/// 0-15).
template <int N, typename T>
__device__ __forceinline__ void tcgen05_st_packed16(uint32_t taddr, const T* regs) {
  static_assert(sizeof(T) == 2, "tcgen05_st_packed16 packs 16-bit values");
  uint32_t w[N];
#pragma unroll
  for (int i = 0; i < N; ++i) {
    uint16_t lo, hi;
    memcpy(&lo, &regs[2 * i], 2);
    memcpy(&hi, &regs[2 * i + 1], 2);
    w[i] = static_cast<uint32_t>(lo) | (static_cast<uint32_t>(hi) << 16);
  }
  tcgen05_st<N>(taddr, w);
}

__device__ __forceinline__ void tcgen05_wait_ld() { asm volatile("tcgen05.wait::ld.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void tcgen05_wait_st() { asm volatile("tcgen05.wait::st.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void tcgen05_fence_before_thread_sync() {
  asm volatile("tcgen05.fence::before_thread_sync;\n" ::: "memory");
}
__device__ __forceinline__ void tcgen05_fence_after_thread_sync() {
  asm volatile("tcgen05.fence::after_thread_sync;\n" ::: "memory");
}

/// TMA tile::gather4 (T.tma_gather4): rows r0..r3 of the 2-d tensor of `map` (whose box is one row of K
/// values), columns [col, col + K), into the [4, K] tile at `dst`, completing `bar`'s transaction count by
/// their bytes.
__device__ __forceinline__ void tma_load_gather4(const TensorMap* map, uint32_t dst, uint32_t bar, int col,
                                                 int r0, int r1, int r2, int r3) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile::gather4.mbarrier::complete_tx::bytes [%0], [%1, "
      "{%3, "
      "%4, %5, %6, %7}], [%2];\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(bar), "r"(col), "r"(r0), "r"(r1), "r"(r2), "r"(r3)
      : "memory");
}
/// TMA tile::scatter4 (T.tma_scatter4): the [4, K] tile at `src` into rows r0..r3, columns [col, col + K), of
/// the 2-d tensor of `map`; part of the thread's bulk async-group (tma_store_commit / tma_store_wait).
__device__ __forceinline__ void tma_store_scatter4(const TensorMap* map, uint32_t src, int col, int r0,
                                                   int r1, int r2, int r3) {
  asm volatile(
      "cp.async.bulk.tensor.2d.global.shared::cta.tile::scatter4.bulk_group [%0, {%2, %3, %4, %5, %6}], "
      "[%1];\n" ::"l"(reinterpret_cast<uint64_t>(map)),
      "r"(src), "r"(col), "r"(r0), "r"(r1), "r"(r2), "r"(r3)
      : "memory");
}

}  // namespace tl
