"""8-bit T.gemm (int8, fp8: mma.sync m16n8k32) with an operand in registers (TileLang's w4a8 dequant GEMM
dequantises int4 weights into an int8 fragment and multiplies it). Before: "int8 T.gemm on CUDA takes A and B
from shared memory (a register operand would need the m16n8k32 8-bit fragment layout)". Now such a fragment
gets the m16n8k32 layout: the bytes of the 16-bit operand layout over half the K. Layout tables hand-checked
against the PTX ISA's m16n8k32 fragment figures; numerics in the emulator against NumPy on seeded inputs."""
import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang import _ffi

SEED = 4099


def test_int8_operand_a_layout_table():
    # PTX ISA, m16n8k32 A (.s8): a_i at row g + 8 * ((i >> 2) & 1), col 4t + (i & 3) + 16 * (i >= 8);
    # g = lane / 4, t = lane % 4. 32 x 64 over warps 2 x 1.
    shape, table, desc = _ffi.fragment_table("mma_A8", [32, 64, 2, 1])
    assert shape == [32, 64]
    for warp in range(2):
        for lane in range(32):
            g, t = lane // 4, lane % 4
            for kk in range(2):
                for i in range(16):
                    r = warp * 16 + g + 8 * ((i >> 2) & 1)
                    k = kk * 32 + 4 * t + (i & 3) + 16 * (i >= 8)
                    assert tuple(table[r * 64 + k]) == (warp * 32 + lane, kk * 16 + i), (r, k)


def test_int8_operand_b_layout_table():
    # PTX ISA, m16n8k32 B (.s8): b_i at row (k) 4t + (i & 3) + 16 * (i >= 4), col (n) g. K x N 32 x 16, warps 1x2.
    shape, table, desc = _ffi.fragment_table("mma_B8", [32, 16, 1, 2, 0])
    assert shape == [32, 16]
    for warp in range(2):
        for lane in range(32):
            g, t = lane // 4, lane % 4
            for i in range(8):
                k, n = 4 * t + (i & 3) + 16 * (i >= 4), warp * 8 + g
                assert tuple(table[k * 16 + n]) == (warp * 32 + lane, i), (k, n)


def _kernel(M, N, K, where, threads=128, policy=T.GemmWarpPolicy.Square):
    @T.prim_func
    def s8_regs(A: T.Tensor((M, K), "int8"), B: T.Tensor((N, K), "int8"), C: T.Tensor((M, N), "int32")):
        with T.Kernel(1, threads=threads) as bx:
            a_s = T.alloc_shared((M, K), "int8")
            b_s = T.alloc_shared((N, K), "int8")
            a_r = T.alloc_fragment((M, K), "int8")
            b_r = T.alloc_fragment((N, K), "int8")
            c = T.alloc_fragment((M, N), "int32")
            T.copy(A, a_s)
            T.copy(B, b_s)
            if where == "A":
                for i, j in T.Parallel(M, K):  # computed in registers (as a dequantisation would)
                    a_r[i, j] = a_s[i, j] - 1
                T.gemm(a_r, b_s, c, transpose_B=True, clear_accum=True, policy=policy)
            else:
                for i, j in T.Parallel(N, K):
                    b_r[i, j] = b_s[i, j] - 1
                T.gemm(a_s, b_r, c, transpose_B=True, clear_accum=True, policy=policy)
            T.copy(c, C)

    return s8_regs


@pytest.mark.parametrize("where,M,N,K,threads,policy", [
    ("A", 64, 64, 64, 128, T.GemmWarpPolicy.Square), ("A", 16, 64, 64, 128, T.GemmWarpPolicy.FullCol),
    ("B", 64, 64, 32, 128, T.GemmWarpPolicy.Square), ("B", 64, 32, 64, 128, T.GemmWarpPolicy.FullRow),
])
def test_int8_register_operand_in_the_emulator(where, M, N, K, threads, policy):
    print(f"seed {SEED}")
    rng = np.random.default_rng(SEED)
    a = rng.integers(-100, 100, (M, K)).astype(np.int8)
    b = rng.integers(-100, 100, (N, K)).astype(np.int8)
    k = tilelang.compile(_kernel(M, N, K, where, threads, policy), target="cuda -arch=sm_80",
                         execution_backend="emulator")
    assert any("mma.sync m16n8k32 s8" in c and where + " in registers" in c for c in k.choices), k.choices
    c = np.zeros((M, N), np.int32)
    k(a, b, c)
    a64, b64 = a.astype(np.int64), b.astype(np.int64)
    if where == "A":
        a64 = a64 - 1
    else:
        b64 = b64 - 1
    np.testing.assert_array_equal(c.astype(np.int64), a64 @ b64.T)


def test_int8_register_operand_ptx():
    ptx = tilelang.compile(_kernel(64, 64, 64, "A"), target="cuda -arch=sm_80").get_ptx()
    assert "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32" in ptx
    assert "ld.local" not in ptx
