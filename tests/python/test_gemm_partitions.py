"""T.gemm warp partitions that TileLang kernels use and the CUDA lowering used to reject: a 16-row
accumulator on 4 warps (FullRow and the default policy split along N), and A held in registers with
the default policy (the split follows the operand). Run in the emulator against NumPy in float64,
with ragged M."""
import numpy as np
import pytest

import tilelang
import tilelang.language as T

SEED = 4242


def small_m_gemm(M, N, K, policy, block_M=16, block_N=64, block_K=32):
    @T.prim_func
    def k(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            As = T.alloc_shared((block_M, block_K), "float16")
            Bs = T.alloc_shared((block_K, block_N), "float16")
            Cl = T.alloc_fragment((block_M, block_N), "float32")
            T.clear(Cl)
            for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                T.copy(A[by * block_M, ko * block_K], As)
                T.copy(B[ko * block_K, bx * block_N], Bs)
                if policy is None:
                    T.gemm(As, Bs, Cl)
                else:
                    T.gemm(As, Bs, Cl, policy=policy)
            T.copy(Cl, C[by * block_M, bx * block_N])
    return k


def register_a_gemm(M, N, K):
    @T.prim_func
    def k(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, T.ceildiv(M, 64), threads=128) as (bx, by):
            Ar = T.alloc_fragment((64, K), "float16")
            Bs = T.alloc_shared((K, N), "float16")
            Cl = T.alloc_fragment((64, N), "float32")
            T.copy(A[by * 64, 0], Ar)
            T.copy(B, Bs)
            T.gemm(Ar, Bs, Cl, clear_accum=True)  # default policy (Square): 2 x 2 warps, A held by both of a row
            T.copy(Cl, C[by * 64, 0])
    return k


def _check(func, M, N, K):
    rng = np.random.default_rng(SEED)
    print("seed", SEED)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c = np.zeros((M, N), np.float32)
    tilelang.compile(func, target="cuda", execution_backend="emulator")(a, b, c)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(c, ref, rtol=2e-3, atol=2e-3)
    return tilelang.compile(func, target="cuda -arch=sm_80")


@pytest.mark.parametrize("policy", [None, T.GemmWarpPolicy.FullRow, T.GemmWarpPolicy.Square])
def test_sixteen_row_accumulator_on_four_warps(policy):
    k = _check(small_m_gemm(40, 128, 64, policy), 40, 128, 64)
    assert any("warps 1x4" in c for c in k.choices), k.choices


def test_register_a_with_the_default_policy():
    """The warp split follows the policy and the tile only, as in TileLang (it used to switch to 4 x 1 when A
    is in registers); the two warps of a warp row each hold its rows of A."""
    k = _check(register_a_gemm(100, 64, 32), 100, 64, 32)
    assert any("A in registers" in c and "warps 2x2" in c for c in k.choices), k.choices
    assert k.layouts["Ar"] == "mma_A(64x32, warps 2x2, 2 replicas)"
