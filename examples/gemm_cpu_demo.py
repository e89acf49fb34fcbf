"""The reference GEMM (../shared/examples/gemm_tilelang_demo.py), kernel unchanged: run with target
"cpu", then compiled for CUDA (sm_80, through NVRTC; no GPU needed) and run through the emulator,
which executes the CUDA thread-level program lane by lane. Both are checked against NumPy."""
import numpy as np

import tilelang
import tilelang.language as T

# Dimension definitions for the GEMM problem
M, N, K = 1024, 1024, 1024
BLOCK_M, BLOCK_N, BLOCK_K = 128, 128, 32


@T.prim_func
def matmul_kernel(
    A: T.Buffer((M, K), "float16"),
    B: T.Buffer((K, N), "float16"),
    C: T.Buffer((M, N), "float16"),
):
    with T.Kernel(T.ceildiv(N, BLOCK_N), T.ceildiv(M, BLOCK_M), threads=128) as (bx, by):
        A_shared = T.alloc_shared((BLOCK_M, BLOCK_K), "float16")
        B_shared = T.alloc_shared((BLOCK_K, BLOCK_N), "float16")
        C_local = T.alloc_fragment((BLOCK_M, BLOCK_N), "float32")
        T.clear(C_local)
        for k in T.Pipelined(T.ceildiv(K, BLOCK_K), num_stages=2):
            T.copy(A[by * BLOCK_M : (by + 1) * BLOCK_M, k * BLOCK_K : (k + 1) * BLOCK_K], A_shared)
            T.copy(B[k * BLOCK_K : (k + 1) * BLOCK_K, bx * BLOCK_N : (bx + 1) * BLOCK_N], B_shared)
            T.gemm(A_shared, B_shared, C_local)
        T.copy(C_local, C[by * BLOCK_M : (by + 1) * BLOCK_M, bx * BLOCK_N : (bx + 1) * BLOCK_N])


def main():
    rng = np.random.default_rng()
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c = np.empty((M, N), dtype=np.float16)
    ref = a.astype(np.float64) @ b.astype(np.float64)

    kernel = tilelang.compile(matmul_kernel, target="cpu")
    kernel(a, b, c)
    err = np.abs(c.astype(np.float64) - ref).max()
    print(f"[cpu]      Execution success. Max absolute difference vs NumPy (float64): {err:.4e}")
    # An fp16 output of magnitude ~32 carries an absolute rounding error up to ~1.6e-2.
    assert err < 0.1, "CPU result does not match NumPy"

    cuda = tilelang.compile(matmul_kernel, target="cuda -arch=sm_80")
    ptx = cuda.get_ptx()
    res = cuda.get_resource_usage()
    print(f"[cuda]     sm_80 cubin via {cuda.compiled.compiler}: {res['registers']} registers, "
          f"{res['shared_bytes']} B shared, {res['spill_stores']} B spilled; PTX has "
          + ", ".join(f"{i} x{ptx.count(i)}" for i in ("mma.sync", "ldmatrix", "cp.async.cg")))

    emu = tilelang.compile(matmul_kernel, target="cuda", execution_backend="emulator")
    c.fill(np.nan)
    emu(a, b, c)
    err = np.abs(c.astype(np.float64) - ref).max()
    print(f"[emulator] Execution success. Max absolute difference vs NumPy (float64): {err:.4e} "
          f"({emu.last_lane_ops:,} lane operations, no races or out-of-bounds accesses reported)")
    assert err < 0.1, "emulated CUDA result does not match NumPy"


if __name__ == "__main__":
    main()
