"""float32 (tf32) T.gemm with an operand in registers (TileLang's gated-delta-net backward computes a transposed
tf32 fragment and multiplies it: `T.gemm(Q_fragment_t, dO_shared_t, ...)`). Before: "float32 (tf32) T.gemm on
CUDA takes A and B from shared memory". Now such a fragment gets the m16n8k8 .tf32 fragment layout (its own
element placement, not the 16-bit one), rounded to TF32 as it is fed to mma.sync. Layout tables hand-checked
against the PTX ISA's m16n8k8 .tf32 fragment figures; numerics in the emulator against NumPy (float64) on
seeded inputs, with the TF32 rounding bound."""
import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang import _ffi

SEED = 3217


def test_tf32_operand_a_layout_table():
    # PTX ISA, m16n8k8 .tf32 A (16 x 8, row): a0 (g, t), a1 (g + 8, t), a2 (g, t + 4), a3 (g + 8, t + 4),
    # g = lane / 4, t = lane % 4. 32 x 16 over warps 2 x 2: warps 2, 3 are replicas of warps 0, 1.
    shape, table, desc = _ffi.fragment_table("mma_A_tf32", [32, 16, 2, 2])
    assert shape == [32, 16] and desc == "mma_A_tf32(32x16, warps 2x2, 2 replicas)"
    want = {}
    for warp in range(2):
        for lane in range(32):
            g, t = lane // 4, lane % 4
            for kk in range(2):
                for e, (dr, dc) in enumerate([(0, 0), (8, 0), (0, 4), (8, 4)]):
                    want[(warp * 16 + g + dr, kk * 8 + t + dc)] = (warp * 32 + lane, kk * 4 + e)
    for (i, k), tl in want.items():
        assert tuple(table[i * 16 + k]) == tl, (i, k)


def test_tf32_operand_b_layout_table():
    # PTX ISA, m16n8k8 .tf32 B (8 x 8, col): b0 (k = t, n = g), b1 (k = t + 4, n = g).
    shape, table, desc = _ffi.fragment_table("mma_B_tf32", [16, 16, 1, 2, 0])  # K, N, wm, wn, trans
    assert shape == [16, 16] and desc == "mma_B_tf32(KxN 16x16, warps 1x2)"
    for warp in range(2):
        for lane in range(32):
            g, t = lane // 4, lane % 4
            for kk in range(2):
                for e in range(2):
                    k, n = kk * 8 + t + 4 * e, warp * 8 + g
                    assert tuple(table[k * 16 + n]) == (warp * 32 + lane, kk * 2 + e), (k, n)


def _kernel(M, N, K, where, trans_A=False, trans_B=False, threads=128):
    a_shape = (K, M) if trans_A else (M, K)
    b_shape = (N, K) if trans_B else (K, N)

    @T.prim_func
    def tf32_regs(A: T.Tensor(a_shape, "float32"), B: T.Tensor(b_shape, "float32"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=threads) as bx:
            a_s = T.alloc_shared(a_shape, "float32")
            b_s = T.alloc_shared(b_shape, "float32")
            a_r = T.alloc_fragment(a_shape, "float32")
            b_r = T.alloc_fragment(b_shape, "float32")
            c = T.alloc_fragment((M, N), "float32")
            T.copy(A, a_s)
            T.copy(B, b_s)
            if where == "A":
                for i, j in T.Parallel(*a_shape):  # computed on in registers first
                    a_r[i, j] = a_s[i, j] * 2.0
                T.gemm(a_r, b_s, c, transpose_A=trans_A, transpose_B=trans_B, clear_accum=True)
            else:
                for i, j in T.Parallel(*b_shape):
                    b_r[i, j] = b_s[i, j] * 2.0
                T.gemm(a_s, b_r, c, transpose_A=trans_A, transpose_B=trans_B, clear_accum=True)
            T.copy(c, C)

    return tf32_regs


@pytest.mark.parametrize("where,trans_A,trans_B,M,N,K", [
    ("A", False, False, 64, 64, 32), ("A", True, True, 64, 32, 16), ("A", False, True, 16, 64, 32),
    ("B", False, False, 64, 64, 32), ("B", False, True, 32, 64, 16),
])
def test_tf32_register_operand_in_the_emulator(where, trans_A, trans_B, M, N, K):
    print(f"seed {SEED}")
    rng = np.random.default_rng(SEED)
    a = rng.standard_normal((K, M) if trans_A else (M, K)).astype(np.float32)
    b = rng.standard_normal((N, K) if trans_B else (K, N)).astype(np.float32)
    k = tilelang.compile(_kernel(M, N, K, where, trans_A, trans_B), target="cuda -arch=sm_80",
                         execution_backend="emulator")
    assert any("mma.sync m16n8k8 tf32" in c and where + " in registers" in c for c in k.choices), k.choices
    c = np.zeros((M, N), np.float32)
    k(a, b, c)
    a64 = a.astype(np.float64).T if trans_A else a.astype(np.float64)
    b64 = b.astype(np.float64).T if trans_B else b.astype(np.float64)
    ref = 2 * a64 @ b64
    # both operands rounded to TF32 (relative 2^-11 each), summed in float32
    bound = 2 * (2 * 2.0**-11 + K * 2.0**-24) * (np.abs(a64) @ np.abs(b64))
    err = np.abs(c - ref)
    assert np.all(err <= bound), err.max()
    assert err.max() > 1e-6  # TF32 really rounded (a float32 product would be ~100x closer)


def test_tf32_register_operand_ptx():
    ptx = tilelang.compile(_kernel(64, 64, 32, "A"), target="cuda -arch=sm_80").get_ptx()
    assert "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32" in ptx
    assert "cvt.rna.tf32.f32" in ptx
