"""T.gemm with an operand in registers when the warp grid splits the other axis (TileLang's decode attention
with varlen logits, block-sparse GQA decode and the gated-delta-net backward kernels): A in registers with
warps along N (a 16-row decode tile over 4 warps; policy FullCol), B in registers with warps along M. Before:
"T.gemm with A in registers needs every warp to own whole rows of A". Now the warps that split the other
axis hold copies of the operand's registers (replicas), as TileLang lays it out. Layout tables hand-checked
against the mma.sync m16n8k16 fragment figure; numerics in the emulator against NumPy (float64)."""
import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang import _ffi

SEED = 1618


def test_operand_a_layout_table():
    # 32 x 32 A over warps 2 x 2: warp w holds rows of warp row w % 2; warps 2 and 3 are the replicas.
    shape, table, desc = _ffi.fragment_table("mma_A", [32, 32, 2, 2])
    assert shape == [32, 32] and desc == "mma_A(32x32, warps 2x2, 2 replicas)"
    for i in range(32):
        for k in range(32):
            thread, local = table[i * 32 + k]
            ii = i % 16
            # PTX ISA, m16n8k16 A fragment: a0,a1 (row g, cols 2t..2t+1), a2,a3 (row g+8), a4..a7 (k + 8)
            assert thread == (i // 16) * 32 + (ii % 8) * 4 + (k % 8) // 2, (i, k)
            assert local == ((k // 8) * 4 + (ii // 8) * 2 + k % 2), (i, k)
    # with one warp column it is the accumulator layout of the rows
    assert _ffi.fragment_table("mma_A", [32, 32, 2, 1])[1] == _ffi.fragment_table("mma_C", [32, 32, 2, 1])[1]


def test_operand_b_layout_table():
    shape, table, desc = _ffi.fragment_table("mma_B", [32, 16, 2, 2, 0])  # K, N, wm, wn, trans
    assert shape == [32, 16] and "2 replicas" in desc
    for k in range(32):
        for n in range(16):
            thread, local = table[k * 16 + n]
            nn = n % 8
            assert thread == (n // 8) * 2 * 32 + nn * 4 + (k % 8) // 2, (k, n)
            assert local == (k // 16) * 4 + ((k % 16) // 8) * 2 + k % 2, (k, n)


def _decode_kernel(M, N, K, threads, policy):
    @T.prim_func
    def decode(Q: T.Tensor((M, K), "float16"), Kt: T.Tensor((N, K), "float16"), S: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=threads) as bx:
            q = T.alloc_fragment((M, K), "float16")
            k_s = T.alloc_shared((N, K), "float16")
            s = T.alloc_fragment((M, N), "float32")
            T.copy(Q, q)
            for i, j in T.Parallel(M, K):  # the register operand is also computed on in place
                q[i, j] = q[i, j] * 0.5
            T.copy(Kt, k_s)
            T.gemm(q, k_s, s, transpose_B=True, clear_accum=True, policy=policy)
            T.copy(s, S)

    return decode


@pytest.mark.parametrize("M,N,K,threads,policy", [
    (16, 64, 64, 128, T.GemmWarpPolicy.Square),   # one 16-row tile: the default policy puts all 4 warps on N
    (64, 64, 32, 128, T.GemmWarpPolicy.FullCol),  # warps 1 x 4
    (32, 64, 32, 128, T.GemmWarpPolicy.Square),   # warps 2 x 2
])
@pytest.mark.parametrize("target", ["cuda -arch=sm_80", "cuda -arch=sm_90a", "opencl"])
def test_a_in_registers_split_over_n(M, N, K, threads, policy, target):
    f = _decode_kernel(M, N, K, threads, policy)
    opts = {"execution_backend": "emulator"} if target.startswith("cuda") else {}  # OpenCL runs on PoCL
    kernel = tilelang.compile(f, target=target, **opts)
    print(f"seed {SEED}")
    rng = np.random.default_rng(SEED)
    q = rng.standard_normal((M, K)).astype(np.float16)
    k = rng.standard_normal((N, K)).astype(np.float16)
    s = np.zeros((M, N), np.float32)
    kernel(q, k, s)
    ref = (q.astype(np.float64) * 0.5) @ k.astype(np.float64).T
    np.testing.assert_allclose(s, ref, rtol=1e-3, atol=1e-3)
    if target.startswith("cuda -arch=sm_80"):
        assert "replicas" in kernel.layouts["q"] or kernel.layouts["q"].startswith("mma_C")


def test_b_in_registers_split_over_m():
    M, N, K = 64, 16, 32

    @T.prim_func
    def k(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=128) as bx:
            a_s = T.alloc_shared((M, K), "float16")
            b = T.alloc_fragment((K, N), "float16")
            c = T.alloc_fragment((M, N), "float32")
            T.copy(A, a_s)
            T.copy(B, b)
            T.gemm(a_s, b, c, clear_accum=True, policy=T.GemmWarpPolicy.FullRow)
            T.copy(c, C)

    kernel = tilelang.compile(k, target="cuda", execution_backend="emulator")
    assert kernel.layouts["b"] == "mma_B(KxN 32x16, warps 4x1, 4 replicas)"
    print(f"seed {SEED}")
    rng = np.random.default_rng(SEED)
    a = rng.standard_normal((M, K)).astype(np.float16)
    bb = rng.standard_normal((K, N)).astype(np.float16)
    c = np.zeros((M, N), np.float32)
    kernel(a, bb, c)
    np.testing.assert_allclose(c, a.astype(np.float64) @ bb.astype(np.float64), rtol=1e-3, atol=1e-3)


def test_one_accumulator_from_a_shared_and_a_register_gemm():
    """TileLang's mamba chunk scan: one accumulator fed by a gemm with A in shared memory and then a gemm with
    A in registers. The warp split depends on the policy and the tile only, so both agree (2 x 2 at 128
    threads) and the register A is held by both warps of its row. Before: "layout conflict for fragment acc"
    (warps 2x2 from the first gemm, 4x1 from the second, whose default policy followed its register A)."""
    M = N = K = 64

    @T.prim_func
    def two_gemms(A: T.Tensor((M, K), "float16"), B: T.Tensor((N, K), "float16"), A2: T.Tensor((M, K), "float16"),
                  X: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=128) as bx:
            a_s = T.alloc_shared((M, K), "float16")
            b_s = T.alloc_shared((N, K), "float16")
            x_s = T.alloc_shared((K, N), "float16")
            a2 = T.alloc_fragment((M, K), "float16")
            acc = T.alloc_fragment((M, N), "float32")
            T.clear(acc)
            T.copy(A, a_s)
            T.copy(B, b_s)
            T.gemm(a_s, b_s, acc, transpose_B=True)
            T.copy(A2, a2)
            T.copy(X, x_s)
            T.gemm(a2, x_s, acc)
            T.copy(acc, C)

    kernel = tilelang.compile(two_gemms, target="cuda", execution_backend="emulator")
    assert kernel.layouts["acc"] == "mma_C(64x64, warps 2x2)"
    assert kernel.layouts["a2"] == "mma_A(64x64, warps 2x2, 2 replicas)"
    print(f"seed {SEED}")
    rng = np.random.default_rng(SEED)
    a, b, a2, x = (rng.standard_normal(s).astype(np.float16) for s in [(M, K), (N, K), (M, K), (K, N)])
    c = np.zeros((M, N), np.float32)
    kernel(a, b, a2, x, c)
    f = lambda v: v.astype(np.float64)  # noqa: E731
    np.testing.assert_allclose(c, f(a) @ f(b).T + f(a2) @ f(x), rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("target", ["cuda -arch=sm_80", "cuda -arch=sm_90a"])
def test_a_in_registers_transposed(target):
    """`T.gemm(a, b, c, transpose_A=True)` with a [K, M] fragment (TileLang's sparse indexer backward): the
    fragment holds A's registers indexed the other way round. Before: "T.gemm with A in registers cannot
    transpose A"."""
    @T.prim_func
    def k(A: T.Tensor((32, 16), "float16"), B: T.Tensor((32, 64), "float16"), C: T.Tensor((16, 64), "float32")):
        with T.Kernel(1, threads=128) as bx:
            b = T.alloc_shared((32, 64), "float16")
            a = T.alloc_fragment((32, 16), "float16")
            c = T.alloc_fragment((16, 64), "float32")
            T.copy(A, a)
            T.copy(B, b)
            for i, j in T.Parallel(32, 16):
                a[i, j] = a[i, j] + 1.0
            T.clear(c)
            T.gemm(a, b, c, transpose_A=True)
            T.copy(c, C)

    print(f"seed {SEED}")
    rng = np.random.default_rng(SEED)
    a = rng.standard_normal((32, 16)).astype(np.float16)
    b = rng.standard_normal((32, 64)).astype(np.float16)
    c = np.zeros((16, 64), np.float32)
    tilelang.compile(k, target=target, execution_backend="emulator")(a, b, c)
    a1 = (a.astype(np.float32) + 1).astype(np.float16).astype(np.float64)  # the kernel's fp16 sum
    np.testing.assert_allclose(c, a1.T @ b.astype(np.float64), rtol=1e-3, atol=1e-3)
