"""The Hopper (sm_90a) cases of the GPU gate (scripts/gpu_check.py runs them on a compute-capability 9.x
GPU): wgmma GEMMs over every swizzle mode, operand major-ness and warp-group split, their tiles loaded by
TMA on mbarrier pipelines (TMA_PTX: what their PTX must hold; docs/hopper.md), checked against
torch.matmul and bit for bit against the emulator on integer inputs, and timed against cuBLAS. The
case list and the kernels are plain data and functions (no torch), so the test suite compiles every
case for sm_90a offline (tests/python/test_hopper.py)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests", "python"))
import kernels  # noqa: E402
import tilelang.language as T  # noqa: E402

SM90A = "cuda -arch=sm_90a"
# every case's tile copies are TMA loads completing on mbarriers
TMA_PTX = ("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes", "mbarrier.try_wait.parity")

# name: (M, N, K, block_M, block_N, block_K, threads, trans_A, trans_B, policy, stages)
GEMMS = {
    "ref 128x128x32 ragged": (1000, 1000, 1000, 128, 128, 32, 128, False, False, T.GemmWarpPolicy.Square, 2),
    "64x64x16 (32B swizzle)": (520, 264, 272, 64, 64, 16, 128, False, False, T.GemmWarpPolicy.Square, 2),
    "64x128x64 (128B swizzle)": (512, 512, 512, 64, 128, 64, 128, False, False, T.GemmWarpPolicy.Square, 3),
    "tA tB 128x64x32": (384, 256, 320, 128, 64, 32, 128, True, True, T.GemmWarpPolicy.Square, 2),
    "tB 64x256x32": (256, 512, 256, 64, 256, 32, 128, False, True, T.GemmWarpPolicy.Square, 2),
    "2 warp groups along M": (512, 512, 512, 128, 128, 32, 256, False, False, T.GemmWarpPolicy.Square, 2),
    "2 warp groups along N": (512, 512, 512, 64, 128, 32, 256, False, False, T.GemmWarpPolicy.FullCol, 2),
    "128x256x64, 3 stages": (4096, 4096, 4096, 128, 256, 64, 256, False, False, T.GemmWarpPolicy.Square, 3),
}

# timed against torch.matmul: (name, size, dtype, block_M, block_N, block_K, threads, stages)
TIMED = [
    ("sm_90a wgmma GEMM 8192^3 fp16 (128x256x64, 256 threads, 3 stages)", 8192, "float16", 128, 256, 64, 256, 3),
    ("sm_90a wgmma GEMM 8192^3 bf16 (128x256x64, 256 threads, 3 stages)", 8192, "bfloat16", 128, 256, 64, 256, 3),
    ("sm_90a wgmma GEMM 4096^3 fp16 (128x256x64, 256 threads, 4 stages)", 4096, "float16", 128, 256, 64, 256, 4),
]


def small_size(name):
    """Ragged sizes of about two tiles per dimension (for the emulator)."""
    bm, bn, bk = GEMMS[name][3:6]
    return 2 * bm - 8, bn + 8, 3 * bk + 16


def gemm(name, dtype="float16", size=None):
    """The kernel of case `name` (C in float32), at the case's sizes or `size` = (M, N, K)."""
    M, N, K, bm, bn, bk, threads, ta, tb, policy, stages = GEMMS[name]
    M, N, K = size or (M, N, K)
    return kernels.matmul_transposed(M, N, K, bm, bn, bk, trans_A=ta, trans_B=tb, dtype=dtype, out_dtype="float32",
                                     num_stages=stages, threads=threads, policy=policy)


def operand_shapes(name, size=None):
    M, N, K, _, _, _, _, ta, tb, _, _ = GEMMS[name]
    M, N, K = size or (M, N, K)
    return ((K, M) if ta else (M, K)), ((N, K) if tb else (K, N)), (M, N)
