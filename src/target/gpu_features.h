// What a GPU offers the shared thread-level lowering (src/transform/gpu_options.h): its matrix unit,
// its copy engines, its cross-lane operations, its shared-memory tile layouts and its limits. Each GPU
// backend builds one from its Target (src/target/<kind>/target.cc); the shared passes read features,
// never which backend they serve, so a new GPU backend describes its hardware here and edits no pass.
#pragma once
#include <cstdint>
#include <string>

namespace tl {

/// The matrix unit T.gemm runs on, which also decides the fragment layouts of its operands.
enum class MatrixUnit {
  kNone,             // no matrix unit: per-thread multiply-adds over the striped accumulator layout
  kMmaSync,          // NVIDIA tensor cores through ldmatrix + mma.sync (warp-level, mma_C layouts)
  kMfma,             // AMD matrix cores (v_mfma, wave-level, mfma_C layouts; gemm lowering in src/target/hip/)
  kSimdgroupMatrix,  // Apple simdgroup_matrix 8x8 tiles (gemm lowering in src/target/metal/)
};

/// How the compiler lays out a shared tile it owns (a layout from T.annotate_layout replaces it).
enum class SharedSwizzle {
  kNone,  // plain rows (simdgroup_load reads rows as they are)
  kXor,   // 16-byte chunks XOR-swizzled per row (bank-conflict-free ldmatrix / wide reads)
  kTma,   // the TMA / wgmma swizzle modes (32/64/128-byte), tiles aligned to 1024-byte swizzle atoms
};

/// Global -> shared copies that the IR may mark asynchronous (tl.copy_async with commit / wait groups).
enum class AsyncCopy {
  kNone,         // copies are synchronous loads; T.Pipelined has no copy stages to rotate
  kCpAsync,      // 16-byte cp.async into a swizzled tile: multi-stage pipelines overlap copy and compute
  kSynchronous,  // the async-copy IR is kept (multi-stage buffers) but each copy is printed as a
                 // synchronous 16-byte load + store, so pipelined prefetches stage through registers
};

struct GpuFeatures {
  // How messages name the target: `name` the platform ("CUDA", "HIP", "Metal", "OpenCL"), `arch`
  // the device ("sm_80", "gfx942", "Apple GPU (Metal)", "OpenCL device ..."), `label` the one word a
  // "needs X; the target is <label>" message ends with (the arch on CUDA, the platform elsewhere).
  std::string name = "CUDA";
  std::string arch = "sm_80";
  std::string label = "sm_80";

  MatrixUnit matrix = MatrixUnit::kMmaSync;
  bool cooperative_tensors = false;  // Metal 4: T.gemm on matmul2d with cooperative tensors (-mattr=+metal4)
  bool fp8_mma = false;  // the matrix unit takes fp8 (e4m3 / e5m2) inputs (mma.sync m16n8k32: sm_89+)
  bool wgmma = false;    // warpgroup MMA (wgmma.mma_async) and setmaxnreg: warp specialisation (sm_90a)
  bool tma = false;      // TMA bulk tensor copies, mbarrier transaction counts, the async proxy (sm_90+)
  bool clusters =
      false;  // thread-block clusters: T.ClusterKernel, barrier.cluster, remote mbarrier arrives (sm_90+)
  bool clc = false;            // cluster launch control: clusterlaunchcontrol.try_cancel (sm_100+)
  bool clc_multicast = false;  // its .multicast::cluster::all form (sm_100a / sm_110a families)
  bool setmaxnreg = false;  // a warp group resizes its register file (setmaxnreg: sm_90a, the Blackwell 'a' targets)
  bool tcgen05 = false;     // tcgen05 tensor cores and tensor memory (sm_100a / sm_103a / sm_110a)
  bool tcgen05_i8 = false;  // tcgen05.mma kind::i8 (sm_100a, sm_110a; not sm_103a)
  // warp-level block-scaled MMA for T.mma_gemm_blockscaled: mma.sync kind::mxf4nvf4 block_scale (sm_120a /
  // sm_121a, src/target/cuda/lower_gemm_blockscaled.cc); CDNA4's scaled MFMAs are `mfma_fp8 == "ocp"`
  bool block_scale_mma_sync = false;
  // AMD matrix cores by generation. `mfma_k8`: the f16 / bf16 MFMAs take 8 k values a lane
  // (v_mfma_f32_16x16x32 / 32x32x16, CDNA4). `mfma_fp8`: the 8-bit float MFMAs and the format their
  // bytes are read in: "" none (gfx90a), "fnuz" (E4M3FNUZ / E5M2FNUZ, gfx940-942), "ocp" (E4M3FN /
  // E5M2, as the tensors hold them: gfx950, which also has the 32x32x16 fp8 shape).
  bool mfma_k8 = false;
  std::string mfma_fp8;
  AsyncCopy async_copy = AsyncCopy::kCpAsync;
  SharedSwizzle swizzle = SharedSwizzle::kXor;

  // Cross-lane operations. `shuffle`: lanes of a warp / wave exchange registers (shuffles, the
  // butterfly reductions over `wave` lanes). Without them reductions exchange partials through shared
  // memory; `subgroup_reduce` (cl_khr_subgroups) then combines within each sub-group first, with no
  // sub-group size assumed. `subgroup_feature` names the target feature that turns it on, for
  // messages ("subgroups" on OpenCL; empty where there is none).
  bool shuffle = true;
  int wave = 32;
  bool subgroup_reduce = false;
  std::string subgroup_feature;

  // Register <-> shared-memory traffic in whole chunks. `vector_shared_loads`: a thread reads a whole
  // 4/8/16-byte chunk of a shared tile into registers in one access. `vector_shared_stores`: it also
  // writes whole chunks from registers (and from a global vector load) in one access, and striped
  // T.Parallel layouts give each thread a whole 16-byte chunk (AMD's ds_read / ds_write_b128).
  bool vector_shared_loads = true;
  bool vector_shared_stores = false;
  // Only the first of those: a whole chunk of a shared tile written from registers in one store (a
  // fragment's pairs of adjacent elements, an epilogue's or a P / dS tile's fragment -> shared copy).
  bool vector_register_shared_stores = false;
  // stmatrix: a warp stores 8x8 tiles of 16-bit elements from its registers to shared memory (sm_90+).
  bool stmatrix = false;

  // A kernel may turn an integer into a global pointer (T.make_tensor at an address from a pointer table).
  bool int_to_global_pointer = true;

  int64_t smem_limit = 0;  // shared memory per block, bytes
  int64_t max_threads = 1024;
  std::string shared_memory_name = "shared";  // how messages name shared memory ("local" on OpenCL)

  // T.atomic_load / T.atomic_store: whether the atomics take acquire / release / seq_cst orderings (else
  // relaxed only: Metal, OpenCL 1.2) and 64-bit elements (not Metal).
  bool ordered_atomics = true;
  // A thread adds 2 or 4 consecutive float32 elements of a global tensor in one reduction
  // (red.global.add.v2/.v4.f32: sm_90+); each element is still its own atomic add.
  bool vector_atomic_add = false;
  bool atomics_64 = true;
  // T.atomic_add(..., return_prev=True): an atomic add that returns the element's previous value.
  bool fetch_atomics = true;
  // The device compiler takes CUDA C++: T.import_source'd code and T.call_extern calls of it (CUDA only).
  bool cuda_source = false;
  // Named barriers among part of the block (bar.sync id, count: T.sync_threads(id, count)).
  bool named_barriers = false;
  // A barrier of the whole grid (T.sync_grid: cooperative groups' grid sync, launched cooperatively so that
  // every block is resident).
  bool grid_sync = false;
};

}  // namespace tl
