"""int8 T.gemm on CUDA (issue 12): A [M, K] and B [N, K] int8 in shared memory, int32 accumulators, on
mma.sync m16n8k32 s8 (ldmatrix moves the 8-bit tiles as their bytes). Checked against NumPy in int64 on
seeded random inputs with ragged sizes, in the emulator (whose m16n8k32 fragments are written from the
PTX ISA) and on the CPU target; NVRTC compiles the CUDA source."""
import re

import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import TileLangPerformanceWarning

SEED = 21


def int8_gemm(M, N, K, bM=64, bN=64, bK=64, stages=2, trans_B=True):
    @T.prim_func
    def gemm_s8(A: T.Tensor((M, K), "int8"), B: T.Tensor((N, K) if trans_B else (K, N), "int8"),
                C: T.Tensor((M, N), "int32")):
        with T.Kernel(T.ceildiv(N, bN), T.ceildiv(M, bM), threads=128) as (bx, by):
            A_s = T.alloc_shared((bM, bK), "int8")
            B_s = T.alloc_shared((bN, bK) if trans_B else (bK, bN), "int8")
            C_l = T.alloc_fragment((bM, bN), "int32")
            T.clear(C_l)
            for k in T.Pipelined(T.ceildiv(K, bK), num_stages=stages):
                T.copy(A[by * bM, k * bK], A_s)
                if trans_B:
                    T.copy(B[bx * bN, k * bK], B_s)
                else:
                    T.copy(B[k * bK, bx * bN], B_s)
                T.gemm(A_s, B_s, C_l, transpose_B=trans_B)
            T.copy(C_l, C[by * bM, bx * bN])

    return gemm_s8


def _inputs(M, N, K):
    print(f"seed {SEED}")
    rng = np.random.default_rng(SEED)
    a = rng.integers(-128, 128, (M, K)).astype(np.int8)
    b = rng.integers(-128, 128, (N, K)).astype(np.int8)
    return a, b, a.astype(np.int64) @ b.astype(np.int64).T


@pytest.mark.parametrize("M,N,K,stages", [(128, 128, 128, 2), (100, 72, 160, 3), (64, 64, 64, 1)])
def test_int8_gemm_in_the_emulator(M, N, K, stages):
    a, b, want = _inputs(M, N, K)
    k = tilelang.compile(int8_gemm(M, N, K, stages=stages), target="cuda -arch=sm_80", execution_backend="emulator")
    assert any("mma.sync m16n8k32 s8" in c for c in k.choices), k.choices
    c = np.zeros((M, N), np.int32)
    k(a, b, c)
    np.testing.assert_array_equal(c.astype(np.int64), want)


def test_int8_gemm_compiles_to_s8_mma_and_runs_on_the_cpu():
    M, N, K = 96, 80, 128
    k = tilelang.compile(int8_gemm(M, N, K), target="cuda -arch=sm_80")
    ptx = k.get_ptx()
    assert re.search(r"mma\.sync\.aligned\.m16n8k32\.row\.col\.s32\.s8\.s8\.s32", ptx)
    assert "ldmatrix.sync.aligned.m8n8.x4.shared.b16" in ptx and "ld.local" not in ptx
    a, b, want = _inputs(M, N, K)
    c = np.zeros((M, N), np.int32)
    tilelang.compile(int8_gemm(M, N, K), target="cpu")(a, b, c)
    np.testing.assert_array_equal(c.astype(np.int64), want)


def test_int8_gemm_with_b_as_k_by_n_is_transposed_through_shared_memory():
    """ldmatrix cannot transpose 8-bit elements: B stored [K, N] is copied into an [N, K] shared tile first
    (with a performance warning at the gemm's line), then the same mma.sync m16n8k32 s8."""
    M, N, K = 100, 80, 160  # ragged; B's [K, N] rows are whole 16-byte chunks (cp.async)
    a, b, want = _inputs(M, N, K)
    with pytest.warns(TileLangPerformanceWarning, match=r"test_int8_gemm.py:\d+: 8-bit T.gemm operand B \[K, N\]"):
        k = tilelang.compile(int8_gemm(M, N, K, trans_B=False), target="cuda -arch=sm_80", execution_backend="emulator")
    c = np.zeros((M, N), np.int32)
    k(a, np.ascontiguousarray(b.T), c)
    np.testing.assert_array_equal(c.astype(np.int64), want)
