"""LDS bank conflicts of the HIP lowering, counted by the emulator on the accesses the lowering makes (32 banks
of 4 bytes, 128 bytes a pass), and the widths of the operand reads in the gfx90a assembly. Numerics against
NumPy float64 on seeded inputs, ragged sizes."""
import re

import numpy as np
import pytest

import tilelang
import tilelang.language as T

import kernels
from test_hip import NP, _rng, check_code_object, f64


# The 16-bit operand tiles of the two MFMA shapes: the reference GEMM's 128x128x32 tile on 2 waves (64x128 each:
# 32x32x8) and a 64x64x32 tile on 4 waves in a column (16x64 each: 16x16x16); K tiles of 32 are k-packed.
_TILES = [(128, 128, 32, 128, T.GemmWarpPolicy.Square), (64, 64, 32, 256, T.GemmWarpPolicy.FullRow)]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("trans_A,trans_B", [(False, False), (False, True), (True, False), (True, True)])
def test_mfma_lds_accesses_are_bank_conflict_free(dtype, trans_A, trans_B):
    """The emulator counts the LDS banks of every access the lowering makes (32 banks of 4 bytes, 128 bytes a
    pass: 32 lanes of a ds_read_u16, 8 of a ds_read_b128). The MFMA operand reads of A and B -- 16-byte reads of
    an M x K A and an N x K B, 2-byte column reads of a K x M A and a K x N B (their tiles take the k-rows
    swizzle) -- and the 16-byte copy writes take one cycle a pass, for both MFMA shapes, ragged sizes."""
    rng = _rng()
    M, N, K = 200, 136, 96
    for bm, bn, bk, threads, policy in _TILES:
        f = kernels.matmul_transposed(M, N, K, bm, bn, bk, trans_A, trans_B, dtype=dtype, out_dtype="float32",
                                      threads=threads, policy=policy)
        e = tilelang.compile(f, target="hip", execution_backend="emulator")
        a = rng.standard_normal((K, M) if trans_A else (M, K)).astype(NP[dtype])
        b = rng.standard_normal((N, K) if trans_B else (K, N)).astype(NP[dtype])
        c = np.full((M, N), np.nan, np.float32)
        e(a, b, c)
        ref = (f64(a).T if trans_A else f64(a)) @ (f64(b).T if trans_B else f64(b))
        np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-4)
        banks = e.last_bank_conflicts
        for key in (("A_shared", "read"), ("B_shared", "read"), ("A_shared", "write"), ("B_shared", "write")):
            assert banks[key]["passes"] > 0 and banks[key]["extra_cycles"] == 0, (bm, key, banks[key])


def test_bank_count_sees_conflicts_of_unswizzled_tiles():
    """The count is not blind: a K x N B tile 48 columns wide (96-byte rows: no whole chunk-XOR pattern, so
    row-major) is read down its columns with 2-way conflicts (rows 8 apart are 768 bytes apart, a multiple of 128)."""
    rng = _rng()
    M, N, K = 100, 72, 88
    e = tilelang.compile(kernels.matmul(M, N, K, 64, 48, 32, dtype="float16", out_dtype="float32"), target="hip",
                         execution_backend="emulator")
    a, b = rng.standard_normal((M, K)).astype(np.float16), rng.standard_normal((K, N)).astype(np.float16)
    c = np.zeros((M, N), np.float32)
    e(a, b, c)
    np.testing.assert_allclose(c, f64(a) @ f64(b), rtol=1e-5, atol=1e-4)
    banks = e.last_bank_conflicts
    assert banks[("B_shared", "read")]["max_ways"] == 2, banks
    assert banks[("A_shared", "read")]["extra_cycles"] == 0, banks


@pytest.mark.parametrize("trans_A,trans_B", [(False, False), (False, True), (True, False), (True, True)])
def test_mfma_operand_reads_in_the_assembly(trans_A, trans_B):
    """gfx90a code objects of the reference tile for every transpose: no scratch, and the operand reads are the
    widths meant -- 16 bytes a lane (ds_read_b128) for an M x K A or an N x K B, 2 bytes (ds_read_u16, or its d16
    forms filling half a register) for the column reads of a K x M A or a K x N B."""
    bm, bn, bk, threads, policy = _TILES[0]
    f = kernels.matmul_transposed(256, 256, 64, bm, bn, bk, trans_A, trans_B, dtype="float16",
                                  out_dtype="float32", threads=threads, policy=policy)
    k = tilelang.compile(f, target="hip")
    check_code_object(k, "v_mfma_f32_32x32x8f16")
    asm = k.get_assembly()
    assert ("ds_read_b128" in asm) == (not trans_A or trans_B), asm.count("ds_read_b128")
    assert bool(re.search(r"ds_read_u16|ds_read_u16_d16", asm)) == (trans_A or not trans_B)
    assert "global_store_dwordx4" in asm  # float32 C: 4 consecutive columns a lane
