"""GroupGemmBlocksCPU: a GEMM kernel over a large grid runs 2 x 2 groups of blocks in lockstep over k
(one copy of each A and B tile per k step serves two blocks). Checks the rewrite is recorded and
visible in the generated source, numerics against NumPy in float64 (grids with an odd edge, whose
missing blocks must be skipped, ragged M / N / K, the CPU target's micro-kernel families forced in
turn), and that kernels outside the pattern are left alone.
"""
import re
import zlib

import numpy as np
import pytest

import tilelang
import tilelang.language as T

HOST = set(tilelang.Target("cpu").features)
GROUPED = "blocks run in 2x2 groups in lockstep over k"


def _seed(*key):
    seed = zlib.crc32(repr(key).encode())
    print(f"seed {seed} for {key}")
    return np.random.default_rng(seed)


def _gemm(M, N, Kd, bm, bn, bk, swap=False, dtype="float32"):
    """C = A @ B with bm x bn x bk tiles. swap: the x block index walks rows (A depends on bx)."""

    @T.prim_func
    def main(A: T.Tensor((M, Kd), dtype), B: T.Tensor((Kd, N), dtype), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(M if swap else N, bm if swap else bn), T.ceildiv(N if swap else M, bn if swap else bm),
                      threads=128) as (bx, by):
            A_s = T.alloc_shared((bm, bk), dtype)
            B_s = T.alloc_shared((bk, bn), dtype)
            C_l = T.alloc_fragment((bm, bn), "float32")
            row, col = (bx, by) if swap else (by, bx)
            T.clear(C_l)
            for k in T.Pipelined(T.ceildiv(Kd, bk), num_stages=2):
                T.copy(A[row * bm, k * bk], A_s)
                T.copy(B[k * bk, col * bn], B_s)
                T.gemm(A_s, B_s, C_l)
            T.copy(C_l, C[row * bm, col * bn])

    return main


def _check(k, M, N, Kd, key, dtype=np.float32):
    rng = _seed(*key)
    A = rng.standard_normal((M, Kd)).astype(dtype)  # fp16 inputs are exact in the float64 reference
    B = rng.standard_normal((Kd, N)).astype(dtype)
    C = np.full((M, N), np.nan, np.float32)  # every element must be written, edge blocks included
    k(A, B, C)
    ref = A.astype(np.float64) @ B.astype(np.float64)
    np.testing.assert_allclose(C, ref, rtol=1e-5, atol=1e-4 * np.sqrt(Kd))


FORCED = ["cpu", "cpu -mcpu=x86-64-v2"] + (["cpu -mattr=-avx512f"] if "avx512f" in HOST else [])


@pytest.mark.parametrize("M,N,Kd,bm,bn,bk,target", [
    (270, 262, 100, 16, 16, 32, FORCED[0]),   # a 17 x 17 grid: the last group row and column are half empty
    (270, 262, 100, 16, 16, 32, FORCED[1]),
    (256, 250, 120, 16, 16, 32, FORCED[-1]),  # a 16 x 16 grid (no guards), ragged N and K
    (1030, 1024, 128, 64, 64, 128, "cpu"),    # bk = 128: not coalesced, grouped all the same; 17 x 16
])
def test_grouped_blocks_are_exact(M, N, Kd, bm, bn, bk, target):
    k = tilelang.compile(_gemm(M, N, Kd, bm, bn, bk), target=target)
    assert any(GROUPED in c for c in k.choices), k.choices
    src = k.get_kernel_source()
    for name in ("A_s_0", "A_s_1", "B_s_0", "B_s_1", "C_l_00", "C_l_01", "C_l_10", "C_l_11"):
        assert re.search(r"\b" + name + r"\b", src), name
    # The K loop copies two A tiles and two B tiles per step (not one per block of the group).
    assert len(re.findall(r"\bA_s_[01]\[[^;=]*\]\s*=[^=]", src)) <= 4, src
    _check(k, M, N, Kd, ("group", M, N, Kd, bm, bn, bk, target))


@pytest.mark.parametrize("M,N,Kd,bm,bn,bk,swap,why", [
    (128, 128, 64, 16, 16, 32, False, "8 x 8 blocks make 16 groups: too few to keep the cores busy"),
    (270, 262, 100, 16, 16, 32, True, "the A tile depends on the x block index"),
    (270, 262, 77, 16, 16, 32, False, "3 k steps in groups of 4: per-step copies, not the copy-copy-gemm loop"),
])
def test_not_grouped(M, N, Kd, bm, bn, bk, swap, why):
    k = tilelang.compile(_gemm(M, N, Kd, bm, bn, bk, swap=swap), target="cpu")
    assert not any(GROUPED in c for c in k.choices), (why, k.choices)
    _check(k, M, N, Kd, ("ungrouped", M, N, Kd, bm, bn, bk, swap))


def test_grouped_blocks_fp16_inputs():
    k = tilelang.compile(_gemm(270, 262, 100, 16, 16, 32, dtype="float16"), target="cpu")
    assert any(GROUPED in c for c in k.choices), k.choices
    _check(k, 270, 262, 100, ("group-fp16",), dtype=np.float16)


def test_grouped_blocks_transposed_b():
    M, N, Kd, bm, bn, bk = 262, 270, 100, 16, 16, 32

    @T.prim_func
    def main(A: T.Tensor((M, Kd), "float32"), B: T.Tensor((N, Kd), "float32"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            A_s = T.alloc_shared((bm, bk), "float32")
            B_s = T.alloc_shared((bn, bk), "float32")
            C_l = T.alloc_fragment((bm, bn), "float32")
            T.clear(C_l)
            for k in T.Pipelined(T.ceildiv(Kd, bk), num_stages=2):
                T.copy(A[by * bm, k * bk], A_s)
                T.copy(B[bx * bn, k * bk], B_s)
                T.gemm(A_s, B_s, C_l, transpose_B=True)
            T.copy(C_l, C[by * bm, bx * bn])

    k = tilelang.compile(main, target="cpu")
    assert any(GROUPED in c for c in k.choices), k.choices
    rng = _seed("group-transB")
    A = rng.standard_normal((M, Kd)).astype(np.float32)
    B = rng.standard_normal((N, Kd)).astype(np.float32)
    C = np.full((M, N), np.nan, np.float32)
    k(A, B, C)
    np.testing.assert_allclose(C, A.astype(np.float64) @ B.T.astype(np.float64), rtol=1e-5, atol=1e-4 * np.sqrt(Kd))
