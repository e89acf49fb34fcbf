"""T.mma_gemm_blockscaled (TileLang's block-scaled gemm), MXFP8, MXFP6 and MXFP4: A and B float8_e4m3fn /
float8_e5m2 / float6_e2m3fn / float6_e3m2fn / float4_e2m1fn (fp4 and fp6 tiles hold one value a byte; gfx950's
wrapper packs fp4 two a byte and fp6 into a 6-bit stream for the MFMA), one E8M0 scale
(uint8, 2^(s - 127)) per 32 K elements of each row of A and each column of B. On AMD CDNA4 (hip -arch=gfx950) it is
the scaled MFMAs v_mfma_scale_f32_{32x32x64,16x16x128}_f8f6f4 (code objects built by ziglang's clang, numbers from
the emulator, whose scale semantics tests/cpp/test_emulator_hip.cc hand-works); on sm_120a the warp-level
block-scaled mma.sync (kind::mxf4nvf4, kind::mxf4, kind::mxf8f6f4; tests/cpp/test_emulator_ptx.cc hand-works them);
on the CPU a reference loop nest.
Both are compared with a float64 NumPy reference on seeded random inputs at ragged sizes; the targets without a
lowering say so."""
import os
import re

import ml_dtypes
import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import TileLangArgumentError, TileLangLayoutError, TileLangTypeError, TileLangUnsupportedError

GFX950 = "hip -arch=gfx950"
NP = {"float8_e4m3fn": ml_dtypes.float8_e4m3fn, "float8_e5m2": ml_dtypes.float8_e5m2,
      "float4_e2m1fn": ml_dtypes.float4_e2m1fn, "float6_e2m3fn": ml_dtypes.float6_e2m3fn,
      "float6_e3m2fn": ml_dtypes.float6_e3m2fn}


def _rng():
    seed = int(os.environ.get("TL_TEST_SEED") or np.random.SeedSequence().entropy % 2**32)
    print("seed", seed)
    return np.random.default_rng(seed)


def blockscaled_gemm(M, N, K, bm, bn, bk, at="float8_e4m3fn", bt="float8_e4m3fn", g=32, whole_k_scales=False,
                     threads=128, sf_dtype="uint8", sf_layout=None):
    """C = (A * sa) @ (B * sb). Scale tiles per K step (SFA_s: [bm, bk / g], k_start = ko * bk), or with
    whole_k_scales the rows' scales for all of K loaded once (SFA_s: [bm, K / g])."""
    sfk = K // g if whole_k_scales else bk // g

    @T.prim_func
    def main(A: T.Tensor((M, K), at), B: T.Tensor((K, N), bt), SA: T.Tensor((M, K // g), sf_dtype),
             SB: T.Tensor((N, K // g), sf_dtype), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=threads) as (bx, by):
            A_s = T.alloc_shared((bm, bk), at)
            B_s = T.alloc_shared((bk, bn), bt)
            SA_s = T.alloc_shared((bm, sfk), sf_dtype)
            SB_s = T.alloc_shared((bn, sfk), sf_dtype)
            C_l = T.alloc_fragment((bm, bn), "float32")
            T.clear(C_l)
            if whole_k_scales:
                T.copy(SA[by * bm, 0], SA_s)
                T.copy(SB[bx * bn, 0], SB_s)
            for ko in T.Pipelined(T.ceildiv(K, bk), num_stages=2):
                T.copy(A[by * bm, ko * bk], A_s)
                T.copy(B[ko * bk, bx * bn], B_s)
                if not whole_k_scales:
                    T.copy(SA[by * bm, ko * (bk // g)], SA_s)
                    T.copy(SB[bx * bn, ko * (bk // g)], SB_s)
                T.mma_gemm_blockscaled(A_s, B_s, C_l, SA_s, SB_s, k_start=ko * bk, sf_a_granularity_k=g,
                                       sf_b_granularity_k=g, sf_layout=sf_layout)
            T.copy(C_l, C[by * bm, bx * bn])

    return main


def _inputs(rng, M, N, K, at, bt, g=32):
    a = (rng.standard_normal((M, K)) * 3).astype(NP[at])
    b = (rng.standard_normal((K, N)) * 3).astype(NP[bt])
    sa = rng.integers(118, 137, (M, K // g)).astype(np.uint8)  # 2^-9 .. 2^9
    sb = rng.integers(118, 137, (N, K // g)).astype(np.uint8)
    ea = np.repeat(2.0 ** (sa.astype(np.float64) - 127), g, axis=1)
    eb = np.repeat(2.0 ** (sb.astype(np.float64) - 127), g, axis=1).T
    ref = (a.astype(np.float64) * ea) @ (b.astype(np.float64) * eb)
    return a, b, sa, sb, ref


@pytest.mark.parametrize("at,bt,tiles,whole,mfma", [
    ("float8_e4m3fn", "float8_e4m3fn", (128, 128, 64), False, r"v_mfma_scale_f32_32x32x64_f8f6f4 [^\n]*\]\n"),
    ("float8_e4m3fn", "float8_e5m2", (128, 128, 128), True, r"v_mfma_scale_f32_32x32x64_f8f6f4 .* cbsz:1\n"),
    ("float8_e5m2", "float8_e4m3fn", (64, 48, 128), False, r"v_mfma_scale_f32_16x16x128_f8f6f4 .* blgp:1\n"),
])
def test_mxfp8_on_gfx950(at, bt, tiles, whole, mfma):
    """The code object holds the scaled MFMA (the MFMA computes B^T A^T: cbsz names B's format), no spills; the
    emulator matches NumPy (fp32 accumulation of exactly scaled products)."""
    rng = _rng()
    M, N, K = 200, 136, 256
    f = blockscaled_gemm(M, N, K, *tiles, at=at, bt=bt, whole_k_scales=whole)
    k = tilelang.compile(f, target=GFX950)
    asm = k.get_assembly()
    assert re.search(mfma, asm), sorted(set(re.findall(r"v_mfma\w+", asm)))
    res = k.get_resource_usage()
    assert res["scratch_bytes"] == 0 and res["spill_stores"] == 0 and res["mfma_count"] > 0, res
    assert any("T.mma_gemm_blockscaled: MFMA v_mfma_scale_f32_" in c for c in k.choices), k.choices
    a, b, sa, sb, ref = _inputs(rng, M, N, K, at, bt)
    c = np.full((M, N), np.nan, np.float32)
    tilelang.compile(f, target=GFX950, execution_backend="emulator")(a, b, sa, sb, c)
    np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-6 * np.abs(ref).max())


@pytest.mark.parametrize("at,bt,tiles,mfma,widths", [
    ("float4_e2m1fn", "float4_e2m1fn", (128, 128, 64), r"v_mfma_scale_f32_32x32x64_f8f6f4 .* cbsz:4 blgp:4$", (4, 4)),
    ("float4_e2m1fn", "float8_e4m3fn", (64, 48, 128), r"v_mfma_scale_f32_16x16x128_f8f6f4 (?!.*cbsz).* blgp:4$",
     (8, 4)),
    ("float8_e5m2", "float4_e2m1fn", (128, 128, 128), r"v_mfma_scale_f32_32x32x64_f8f6f4 .* cbsz:4 blgp:1$", (4, 8)),
])
def test_mxfp4_on_gfx950(at, bt, tiles, mfma, widths):
    """MXFP4 (and fp4 mixed with fp8): the scaled MFMA with format 4 for the fp4 operand (the MFMA computes
    B^T A^T: cbsz names B's format, blgp A's), the fp4 operand packed two values a byte into 4 VGPRs (an fp8 one
    takes 8); the emulator and the CPU target match NumPy at ragged M / N."""
    rng = _rng()
    M, N, K = 200, 136, 256
    f = blockscaled_gemm(M, N, K, *tiles, at=at, bt=bt)
    k = tilelang.compile(f, target=GFX950)
    asm = k.get_assembly()
    lines = [ln.strip() for ln in asm.splitlines() if "v_mfma_scale" in ln]
    assert lines and all(re.search(mfma, ln) for ln in lines), lines[:3]
    for ln in lines:  # src0 (B's registers), src1 (A's)
        regs = re.findall(r"v\[(\d+):(\d+)\]", ln)[1:3]
        assert tuple(int(b) - int(a) + 1 for a, b in regs) == widths, ln
    res = k.get_resource_usage()
    assert res["scratch_bytes"] == 0 and res["spill_stores"] == 0 and res["mfma_count"] > 0, res
    a, b, sa, sb, ref = _inputs(rng, M, N, K, at, bt)
    for target, backend in (("cpu", None), (GFX950, "emulator")):
        c = np.full((M, N), np.nan, np.float32)
        kw = {"execution_backend": backend} if backend else {}
        tilelang.compile(f, target=target, **kw)(a, b, sa, sb, c)
        np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-6 * np.abs(ref).max(), err_msg=target)


def mxfp4_nt_gemm(M, N, K, bm, bn, bk, threads=256, stages=2, tile_dtype="float4_e2m1fn", b_dtype=None):
    """MXFP4 with B stored N x K (transpose_B): both operands K-major, the form gfx950 stores two values a byte.
    tile_dtype="uint8" writes that form by hand: uint8 tensors and tiles [rows, K / 2] of codes two a byte. B
    takes b_dtype when given (an fp8 B: W4A8)."""
    b_dtype = b_dtype or tile_dtype
    ka = 2 if tile_dtype == "uint8" else 1  # values a stored element
    kb = 2 if b_dtype == "uint8" else 1

    @T.prim_func
    def main(A: T.Tensor((M, K // ka), tile_dtype), B: T.Tensor((N, K // kb), b_dtype),
             SA: T.Tensor((M, K // 32), "uint8"), SB: T.Tensor((N, K // 32), "uint8"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=threads) as (bx, by):
            A_s = T.alloc_shared((bm, bk // ka), tile_dtype)
            B_s = T.alloc_shared((bn, bk // kb), b_dtype)
            SA_s = T.alloc_shared((bm, bk // 32), "uint8")
            SB_s = T.alloc_shared((bn, bk // 32), "uint8")
            C_l = T.alloc_fragment((bm, bn), "float32")
            T.clear(C_l)
            for ko in T.Pipelined(T.ceildiv(K, bk), num_stages=stages):
                T.copy(A[by * bm, ko * (bk // ka)], A_s)
                T.copy(B[bx * bn, ko * (bk // kb)], B_s)
                T.copy(SA[by * bm, ko * (bk // 32)], SA_s)
                T.copy(SB[bx * bn, ko * (bk // 32)], SB_s)
                T.mma_gemm_blockscaled(A_s, B_s, C_l, SA_s, SB_s, transpose_B=True, k_start=ko * bk,
                                       sf_a_granularity_k=32, sf_b_granularity_k=32)
            T.copy(C_l, C[by * bm, bx * bn])

    return main


def _mxfp4_nt_inputs(rng, M, N, K):
    """fp4 codes of A [M, K] and B [N, K] (uint8, one a byte), E8M0 scales, and the float64 reference."""
    values = np.array([0, .5, 1, 1.5, 2, 3, 4, 6, -0., -.5, -1, -1.5, -2, -3, -4, -6])
    ca = rng.integers(0, 16, (M, K)).astype(np.uint8)
    cb = rng.integers(0, 16, (N, K)).astype(np.uint8)
    sa = rng.integers(118, 137, (M, K // 32)).astype(np.uint8)
    sb = rng.integers(118, 137, (N, K // 32)).astype(np.uint8)
    ea = np.repeat(2.0 ** (sa.astype(np.float64) - 127), 32, axis=1)
    eb = np.repeat(2.0 ** (sb.astype(np.float64) - 127), 32, axis=1)
    return ca, cb, sa, sb, (values[ca] * ea) @ (values[cb] * eb).T


@pytest.mark.parametrize("M,N,K,tiles,threads", [(200, 136, 320, (128, 128, 128), 256),
                                                 (72, 40, 256, (64, 64, 128), 128),
                                                 (96, 80, 128, (32, 32, 64), 64)])
def test_mxfp4_on_gfx950_is_stored_two_values_a_byte(M, N, K, tiles, threads):
    """gfx950 MXFP4 with both operands K-major: the fp4 tensors and tiles are stored two values a byte (the choice
    table says so; half the LDS of one-a-byte tiles), and a lane's 32 values are one 16-byte LDS read in the
    MFMA's register format: no packing instructions (v_bfi_b32 / v_lshlrev_b32, which the one-a-byte form of
    the same GEMM needs), 4 VGPRs an operand. The emulator matches NumPy at ragged M, N and K, with A and B
    passed packed (int8 [rows, K / 2]) or one a byte (ml_dtypes); the CPU target gives the same numbers."""
    rng = _rng()
    bm, bn, bk = tiles
    f = mxfp4_nt_gemm(M, N, K, bm, bn, bk, threads=threads)
    k = tilelang.compile(f, target=GFX950)
    for name, what in (("A", "tensor"), ("B", "tensor"), ("A_s", "tile"), ("B_s", "tile")):
        assert any(f"{what} '{name}' is stored two values a byte" in ch and "MXFP4" in ch for ch in k.choices), \
            k.choices
    assert any("fp4 operands stored two values a byte, read as stored" in ch for ch in k.choices), k.choices
    asm = k.get_assembly()
    lines = [ln.strip() for ln in asm.splitlines() if "v_mfma_scale" in ln]
    assert lines and all(re.search(r"cbsz:4 blgp:4$", ln) for ln in lines), lines[:3]
    for ln in lines:
        regs = re.findall(r"v\[(\d+):(\d+)\]", ln)[1:3]
        assert tuple(int(b) - int(a) + 1 for a, b in regs) == (4, 4), ln
    assert "ds_read_b128" in asm and "v_bfi_b32" not in asm
    res = k.get_resource_usage()
    assert res["scratch_bytes"] == 0 and res["spill_stores"] == 0, res
    # two stages of A and B tiles, bk / 2 bytes a row, and the scale tiles (one a byte, the operand tiles alone
    # would take 2 (bm + bn) bk bytes)
    packed_bytes = 2 * (bm + bn) * (bk // 2)
    assert packed_bytes <= res["lds_bytes"] <= packed_bytes + 2 * (bm + bn) * (bk // 32) + 1024, res
    ca, cb, sa, sb, ref = _mxfp4_nt_inputs(rng, M, N, K)
    tol = dict(rtol=1e-5, atol=1e-6 * np.abs(ref).max())
    ke = tilelang.compile(f, target=GFX950, execution_backend="emulator")
    for a, b in ((_packed(ca), _packed(cb)), (ca.view(ml_dtypes.float4_e2m1fn), cb.view(ml_dtypes.float4_e2m1fn))):
        c = np.full((M, N), np.nan, np.float32)
        ke(a, b, sa, sb, c)
        np.testing.assert_allclose(c, ref, **tol)
    c = np.full((M, N), np.nan, np.float32)
    tilelang.compile(f, target="cpu")(_packed(ca), _packed(cb), sa, sb, c)
    np.testing.assert_allclose(c, ref, **tol)


@pytest.mark.parametrize("bt", ["float8_e4m3fn", "float8_e5m2"])
def test_w4a8_on_gfx950_stores_the_fp4_operand_two_values_a_byte(bt):
    """fp4 A (MXFP4 weights) x fp8 B (MXFP8 activations), both K-major: on gfx950 each operand is packed on its
    own, so A's tensor and tile are stored two values a byte and read as stored (no repacking), B stays fp8; the
    emulator and the CPU target match NumPy at ragged sizes, with A passed packed or one a byte."""
    rng = _rng()
    M, N, K = 200, 136, 320
    f = mxfp4_nt_gemm(M, N, K, 128, 128, 128, b_dtype=bt)
    k = tilelang.compile(f, target=GFX950)
    for name, what in (("A", "tensor"), ("A_s", "tile")):
        assert any(f"{what} '{name}' is stored two values a byte" in ch for ch in k.choices), k.choices
    assert not any("'B" in ch and "two values a byte" in ch for ch in k.choices), k.choices
    assert any("fp4 A stored two values a byte, read as stored" in ch for ch in k.choices), k.choices
    asm = k.get_assembly()
    lines = [ln.strip() for ln in asm.splitlines() if "v_mfma_scale" in ln]
    fmt = "1" if bt == "float8_e5m2" else None  # (the MFMA computes B^T A^T: cbsz is B's format, blgp A's)
    assert lines and all(ln.endswith("blgp:4") and (f"cbsz:{fmt}" in ln if fmt else "cbsz" not in ln)
                         for ln in lines), lines[:3]
    for ln in lines:
        regs = re.findall(r"v\[(\d+):(\d+)\]", ln)[1:3]
        assert tuple(int(b) - int(a) + 1 for a, b in regs) == (8, 4), ln  # B's fp8 in 8 VGPRs, A's fp4 in 4
    assert "v_bfi_b32" not in asm
    res = k.get_resource_usage()
    assert res["scratch_bytes"] == 0 and res["spill_stores"] == 0, res
    values = np.array([0, .5, 1, 1.5, 2, 3, 4, 6, -0., -.5, -1, -1.5, -2, -3, -4, -6])
    ca = rng.integers(0, 16, (M, K)).astype(np.uint8)
    b = (rng.standard_normal((N, K)) * 3).astype(NP[bt])
    sa = rng.integers(118, 137, (M, K // 32)).astype(np.uint8)
    sb = rng.integers(118, 137, (N, K // 32)).astype(np.uint8)
    ref = (values[ca] * np.repeat(2.0 ** (sa - 127.0), 32, axis=1)) @ \
        (b.astype(np.float64) * np.repeat(2.0 ** (sb - 127.0), 32, axis=1)).T
    tol = dict(rtol=1e-5, atol=1e-6 * np.abs(ref).max())
    ke = tilelang.compile(f, target=GFX950, execution_backend="emulator")
    for a in (_packed(ca), ca.view(ml_dtypes.float4_e2m1fn)):
        c = np.full((M, N), np.nan, np.float32)
        ke(a, b, sa, sb, c)
        np.testing.assert_allclose(c, ref, **tol)
    c = np.full((M, N), np.nan, np.float32)
    tilelang.compile(f, target="cpu")(_packed(ca), b, sa, sb, c)
    np.testing.assert_allclose(c, ref, **tol)


def test_mxfp4_tiles_written_two_a_byte_by_the_program():
    """A program may hold the codes two a byte itself (uint8 tensors and tiles [rows, K / 2]): gfx950 reads them
    as stored, the CPU target decodes each nibble (the low one first), both match NumPy; a packed operand must be
    K-major."""
    rng = _rng()
    M, N, K = 136, 72, 256
    f = mxfp4_nt_gemm(M, N, K, 64, 64, 128, threads=128, tile_dtype="uint8")
    ca, cb, sa, sb, ref = _mxfp4_nt_inputs(rng, M, N, K)
    for target, kw in ((GFX950, {"execution_backend": "emulator"}), ("cpu", {})):
        c = np.full((M, N), np.nan, np.float32)
        k = tilelang.compile(f, target=target, **kw)
        k(_packed(ca).view(np.uint8), _packed(cb).view(np.uint8), sa, sb, c)
        np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-6 * np.abs(ref).max(), err_msg=target)
    asm = tilelang.compile(f, target=GFX950).get_assembly()
    assert "v_mfma_scale_f32_32x32x64_f8f6f4" in asm and "v_bfi_b32" not in asm

    @T.prim_func
    def half_packed(A: T.Tensor((64, 64), "uint8"), B: T.Tensor((64, 128), "float4_e2m1fn"),
                    SA: T.Tensor((64, 2), "uint32"), SB: T.Tensor((64, 2), "uint32"), C: T.Tensor((64, 64), "float32")):
        with T.Kernel(1, threads=128):
            A_s = T.alloc_shared((64, 64), "uint8")
            B_s = T.alloc_shared((64, 128), "float4_e2m1fn")
            SA_s = T.alloc_shared((64, 2), "uint32")
            SB_s = T.alloc_shared((64, 2), "uint32")
            C_l = T.alloc_fragment((64, 64), "float32")
            T.copy(A, A_s)
            T.copy(B, B_s)
            T.copy(SA, SA_s)
            T.copy(SB, SB_s)
            T.mma_gemm_blockscaled(A_s, B_s, C_l, SA_s, SB_s, transpose_B=True, clear_accum=True, k_start=0,
                                   sf_a_granularity_k=16, sf_b_granularity_k=16)
            T.copy(C_l, C)

    # sm_120a's NVFP4 kernel reads both operands packed or neither (gfx950 packs each on its own)
    with pytest.raises(TileLangUnsupportedError, match=r"both operands as uint8 fp4 codes two a byte or neither"):
        tilelang.compile(half_packed, target=SM120A)

    with pytest.raises(TileLangTypeError, match=r"packed fp4 \(uint8\) tiles are K-major"):
        @T.prim_func
        def n_major(A: T.Tensor((64, 64), "uint8"), B: T.Tensor((64, 64), "uint8"), SA: T.Tensor((64, 4), "uint8"),
                    SB: T.Tensor((64, 4), "uint8"), C: T.Tensor((64, 64), "float32")):
            with T.Kernel(1, threads=64):
                A_s = T.alloc_shared((64, 64), "uint8")
                B_s = T.alloc_shared((64, 64), "uint8")
                C_l = T.alloc_fragment((64, 64), "float32")
                T.copy(A, A_s)
                T.copy(B, B_s)
                T.mma_gemm_blockscaled(A_s, B_s, C_l, SA, SB, clear_accum=True, k_start=0, sf_a_granularity_k=32,
                                       sf_b_granularity_k=32)
                T.copy(C_l, C)


@pytest.mark.parametrize("at,bt,tiles,mfma,widths", [
    ("float6_e2m3fn", "float6_e2m3fn", (128, 128, 64), r"v_mfma_scale_f32_32x32x64_f8f6f4 .* cbsz:2 blgp:2$", (6, 6)),
    ("float6_e3m2fn", "float6_e2m3fn", (64, 48, 128), r"v_mfma_scale_f32_16x16x128_f8f6f4 .* cbsz:2 blgp:3$",
     (6, 6)),
    ("float6_e3m2fn", "float8_e4m3fn", (128, 128, 128), r"v_mfma_scale_f32_32x32x64_f8f6f4 (?!.*cbsz).* blgp:3$",
     (8, 6)),
    ("float4_e2m1fn", "float6_e3m2fn", (128, 128, 64), r"v_mfma_scale_f32_32x32x64_f8f6f4 .* cbsz:3 blgp:4$", (6, 4)),
])
def test_mxfp6_on_gfx950(at, bt, tiles, mfma, widths):
    """MXFP6 (E2M3 format 2, E3M2 format 3; alone, mixed with each other, with fp8 and with fp4): the scaled MFMA
    with each operand's format (cbsz names B's, blgp A's), an fp6 operand packed into a 6-bit stream in 6 VGPRs (an
    fp8 one takes 8, an fp4 one 4); the emulator and the CPU target match NumPy at ragged M / N."""
    rng = _rng()
    M, N, K = 200, 136, 256
    f = blockscaled_gemm(M, N, K, *tiles, at=at, bt=bt)
    k = tilelang.compile(f, target=GFX950)
    asm = k.get_assembly()
    lines = [ln.strip() for ln in asm.splitlines() if "v_mfma_scale" in ln]
    assert lines and all(re.search(mfma, ln) for ln in lines), lines[:3]
    for ln in lines:  # src0 (B's registers), src1 (A's)
        regs = re.findall(r"v\[(\d+):(\d+)\]", ln)[1:3]
        assert tuple(int(b) - int(a) + 1 for a, b in regs) == widths, ln
    res = k.get_resource_usage()
    assert res["scratch_bytes"] == 0 and res["spill_stores"] == 0 and res["mfma_count"] > 0, res
    assert "tl::fp6_pack<32>" in k.get_kernel_source()
    a, b, sa, sb, ref = _inputs(rng, M, N, K, at, bt)
    for target, backend in (("cpu", None), (GFX950, "emulator")):
        c = np.full((M, N), np.nan, np.float32)
        kw = {"execution_backend": backend} if backend else {}
        tilelang.compile(f, target=target, **kw)(a, b, sa, sb, c)
        np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-6 * np.abs(ref).max(), err_msg=target)


def test_plain_gemm_refuses_fp6():
    with pytest.raises(TileLangTypeError, match=r"T.gemm does not take float6_e2m3fn operands .*T.mma_gemm_blockscaled"):
        @T.prim_func
        def g(A: T.Tensor((64, 64), "float6_e2m3fn"), B: T.Tensor((64, 64), "float6_e2m3fn"),
              C: T.Tensor((64, 64), "float32")):
            with T.Kernel(1, threads=128) as bx:
                A_s = T.alloc_shared((64, 64), "float6_e2m3fn")
                B_s = T.alloc_shared((64, 64), "float6_e2m3fn")
                C_l = T.alloc_fragment((64, 64), "float32")
                T.copy(A, A_s)
                T.copy(B, B_s)
                T.gemm(A_s, B_s, C_l)
                T.copy(C_l, C)

        tilelang.compile(g, target="cpu")


@pytest.mark.parametrize("g,whole", [(32, False), (64, True), (128, False)])
def test_cpu_reference_and_granularities(g, whole):
    """The CPU target's loop nest and gfx950's MFMAs give the same numbers, for granularities 32, 64 and 128 (one
    scale for two or four of the MFMA's 32-value blocks)."""
    rng = _rng()
    M, N, K = 72, 100, 256
    f = blockscaled_gemm(M, N, K, 64, 64, 128, g=g, whole_k_scales=whole)
    a, b, sa, sb, ref = _inputs(rng, M, N, K, "float8_e4m3fn", "float8_e4m3fn", g)
    for target, backend in (("cpu", None), (GFX950, "emulator")):
        c = np.full((M, N), np.nan, np.float32)
        kw = {"execution_backend": backend} if backend else {}
        tilelang.compile(f, target=target, **kw)(a, b, sa, sb, c)
        np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-6 * np.abs(ref).max(), err_msg=target)


def test_nan_scale_and_printer_round_trip():
    """E8M0 255 is NaN: it poisons exactly the rows it scales; the printed program parses back to the same one."""
    rng = _rng()
    M, N, K = 64, 64, 128
    f = blockscaled_gemm(M, N, K, 64, 64, 128)
    text = f.script()
    assert "T.mma_gemm_blockscaled(A_s, B_s, C_l, SA_s, SB_s, k_start=ko * 128, sf_a_granularity_k=32, " \
           "sf_b_granularity_k=32)" in text, text
    assert tilelang._ffi.structural_equal(f, T.parse_source(text))
    a, b, sa, sb, ref = _inputs(rng, M, N, K, "float8_e4m3fn", "float8_e4m3fn")
    sa[5, 2] = 255
    for target, backend in (("cpu", None), (GFX950, "emulator")):
        c = np.zeros((M, N), np.float32)
        kw = {"execution_backend": backend} if backend else {}
        tilelang.compile(f, target=target, **kw)(a, b, sa, sb, c)
        assert np.isnan(c[5]).all() and not np.isnan(np.delete(c, 5, axis=0)).any(), target
        rest = np.delete(ref, 5, axis=0)
        np.testing.assert_allclose(np.delete(c, 5, axis=0), rest, rtol=1e-5, atol=1e-6 * np.abs(rest).max())


# ---- what is refused, and how ---------------------------------------------------------------------------

def test_targets_without_a_lowering_say_where_it_is():
    f = blockscaled_gemm(128, 128, 128, 128, 128, 64)
    with pytest.raises(TileLangUnsupportedError,
                       match=r"block-scaled MMA of sm_120a / sm_121a .*: target cuda -arch=sm_120a; sm_90a has none"):
        tilelang.compile(f, target="cuda -arch=sm_90a", execution_backend="emulator")
    g = nvfp4_gemm(128, 128, 128, 128, 128, 128)
    with pytest.raises(TileLangUnsupportedError, match=r"uint32 scale words is NVFP4 \(UE4M3 scales per 16 elements\), which CDNA4's "
                                                       r"scaled MFMAs do not take"):
        tilelang.compile(g, target=GFX950, execution_backend="emulator")
    with pytest.raises(TileLangUnsupportedError, match=r"CDNA4's scaled MFMAs .* gfx942 has none"):
        tilelang.compile(f, target="hip -arch=gfx942", execution_backend="emulator")


@pytest.mark.parametrize("kw,err,match", [
    (dict(g=16), TileLangTypeError, r"sf_a_granularity_k must be a positive multiple of 32 .* got 16"),
    (dict(sf_dtype="uint32"), TileLangTypeError,
     r"uint32 scale words is NVFP4: float4_e2m1fn A and B .* got A float8_e4m3fn, B float8_e4m3fn \(MX formats take "
     r"E8M0 scales as uint8\)"),
    (dict(at="float16", bt="float16"), TileLangTypeError, r"takes float8_e4m3fn / float8_e5m2 / float6_e2m3fn / float6_e3m2fn / float4_e2m1fn A and B"),
    (dict(sf_layout="blockscaled_chunk_kmajor"), TileLangTypeError,
     r"sf_layout='blockscaled_chunk_kmajor' is NVFP4: float4_e2m1fn A and B .* with UE4M3 scales; got A float8_e4m3fn"),
    (dict(at="float4_e2m1fn", bt="float4_e2m1fn", sf_layout="blockscaled_chunk_kmajor"), TileLangTypeError,
     r"sf_a_granularity_k must be 16 with sf_layout='blockscaled_chunk_kmajor'"),
    (dict(sf_layout="kmajor"), TileLangUnsupportedError, r"the scale layouts are None / 'rowmajor'"),
])
def test_malformed_calls_are_clear_errors(kw, err, match):
    with pytest.raises(err, match=match) as e:
        f = blockscaled_gemm(128, 128, 128, 128, 128, 64, **kw)
        tilelang.compile(f, target="cpu")
    assert "test_blockscaled_gemm.py" in str(e.value)


def test_k_tile_shallower_than_the_scaled_mfma_is_a_layout_error():
    f = blockscaled_gemm(128, 128, 128, 128, 128, 32)  # 32x32 tiles need K steps of 64
    with pytest.raises(TileLangLayoutError, match=r"the K tile \(32\) must be a multiple of 64"):
        tilelang.compile(f, target=GFX950, execution_backend="emulator")


def test_the_device_fp6_packer_gives_the_emulators_stream(tmp_path):
    """tl::fp6_pack of include/tl_device/hip/common.h (plain C++ on words), compiled by the host compiler, packs 32
    codes into the same 6-bit stream as the emulator's tl.fp6_pack (tests/cpp/test_emulator_hip.cc hand-works it):
    value e at bits 6e .. 6e + 5, the upper two bits of each input byte ignored, bytes 24..31 zero."""
    import shutil
    import subprocess

    from tilelang.jit.headers import include_dir

    src = open(os.path.join(include_dir(), "tl_device", "hip", "common.h")).read()
    start = src.index("template <int N>\nTL_DEV void fp6_pack(void* p) {")
    body = src[start:src.index("\n}\n", start) + 3]
    prog = tmp_path / "t.cc"
    prog.write_text("#include <cstdio>\n#define TL_DEV inline\n" + body + """
int main() {
  unsigned char r[32];
  for (int e = 0; e < 32; ++e) r[e] = (unsigned char)(0xC0 | e);
  fp6_pack<32>(r);
  for (int i = 0; i < 32; ++i) std::printf("%d ", r[i]);
}
""")
    cxx = shutil.which("g++") or shutil.which("clang++")
    subprocess.run([cxx, "-std=c++17", str(prog), "-o", str(tmp_path / "t")], check=True)
    got = [int(x) for x in subprocess.run([str(tmp_path / "t")], capture_output=True, text=True).stdout.split()]
    want = [0] * 32
    for e in range(32):
        for b in range(6):
            if (e >> b) & 1:
                want[(6 * e + b) // 8] |= 1 << ((6 * e + b) % 8)
    assert got == want and got[:3] == [0x40, 0x20, 0x0C]


# ---- NVFP4 (sm_120a's mma.sync kind::mxf4nvf4 block_scale, and the CPU) --------------------------------------

SM120A = "cuda -arch=sm_120a"


def nvfp4_gemm(M, N, K, bm, bn, bk, threads=128, stages=2, stage_a_by_loop=False, rowmajor=False):
    """TileLang's SM120 NVFP4 form: A [M, K] and B [N, K] float4_e2m1fn, the UE4M3 scales four a uint32 word per
    64 K, each (row block, K block) tile of scale words stored as its own [bm, bk / 64] slice in the chunked
    K-major order (chunk_kmajor_words below). stage_a_by_loop: A's tile is filled by a T.Parallel loop instead of
    T.copy (M a multiple of bm), so A and its tile keep one value a byte on sm_120a. rowmajor: the scale words in
    plain [rows, K / 64] tensors (rowmajor_words), TileLang's other SM120 form."""
    wpk = bk // 64

    @T.prim_func
    def main(A: T.Tensor((M, K), "float4_e2m1fn"), B: T.Tensor((N, K), "float4_e2m1fn"),
             SA: T.Tensor((M, K // 64) if rowmajor else (T.ceildiv(M, bm) * (K // bk) * bm, wpk), "uint32"),
             SB: T.Tensor((N, K // 64) if rowmajor else (T.ceildiv(N, bn) * (K // bk) * bn, wpk), "uint32"),
             C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=threads) as (bx, by):
            A_s = T.alloc_shared((bm, bk), "float4_e2m1fn")
            B_s = T.alloc_shared((bn, bk), "float4_e2m1fn")
            SA_s = T.alloc_shared((bm, wpk), "uint32")
            SB_s = T.alloc_shared((bn, wpk), "uint32")
            C_l = T.alloc_fragment((bm, bn), "float32")
            T.clear(C_l)
            for ko in T.Pipelined(K // bk, num_stages=stages):
                if stage_a_by_loop:
                    for i, j in T.Parallel(bm, bk):
                        A_s[i, j] = A[by * bm + i, ko * bk + j]
                else:
                    T.copy(A[by * bm, ko * bk], A_s)
                T.copy(B[bx * bn, ko * bk], B_s)
                if rowmajor:
                    T.copy(SA[by * bm, ko * wpk], SA_s)
                    T.copy(SB[bx * bn, ko * wpk], SB_s)
                else:
                    T.copy(SA[(by * (K // bk) + ko) * bm, 0], SA_s)
                    T.copy(SB[(bx * (K // bk) + ko) * bn, 0], SB_s)
                T.mma_gemm_blockscaled(A_s, B_s, C_l, SA_s, SB_s, transpose_B=True, k_start=ko * bk,
                                       sf_a_granularity_k=16, sf_b_granularity_k=16,
                                       sf_layout="rowmajor" if rowmajor else "blockscaled_chunk_kmajor")
            T.copy(C_l, C[by * bm, bx * bn])

    return main


def chunk_kmajor_words(scale_bytes, rows_per_tile, bk):
    """[R, K / 16] UE4M3 bytes -> the kernel's scale tensor, written from the layout's definition
    (src/op/gemm_blockscaled.h): word w of a row holds the bytes of groups 4 w .. 4 w + 3 (the first in bits 0-7);
    the words of row tile t and K tile q form slice t * (K / bk) + q, a [rows_per_tile, bk / 64] block in which
    the word w of tile row m is flat element w * rows_per_tile + (m % 32) * (rows_per_tile / 32) + m / 32."""
    R, G = scale_bytes.shape
    Rp = -(-R // rows_per_tile) * rows_per_tile
    full = np.zeros((Rp, G), np.uint32)
    full[:R] = scale_bytes
    words = full[:, 0::4] | (full[:, 1::4] << 8) | (full[:, 2::4] << 16) | (full[:, 3::4] << 24)
    wpk, kt = bk // 64, (G * 16) // bk
    out = np.zeros((Rp // rows_per_tile * kt, rows_per_tile * wpk), np.uint32)
    for t in range(Rp // rows_per_tile):
        for q in range(kt):
            for m in range(rows_per_tile):
                for w in range(wpk):
                    flat = w * rows_per_tile + (m % 32) * (rows_per_tile // 32) + m // 32
                    out[t * kt + q, flat] = words[t * rows_per_tile + m, q * wpk + w]
    return out.reshape(-1, wpk)


def _nvfp4_inputs(rng, M, N, K):
    """Random fp4 codes (every one of the 16), and UE4M3 scales: normal ones from 2^-6 to 2^8, subnormals, zero."""
    ca = rng.integers(0, 16, (M, K), dtype=np.uint8)
    cb = rng.integers(0, 16, (N, K), dtype=np.uint8)
    pool = np.concatenate([np.arange(0x08, 0x78, 3), [0x01, 0x05, 0x00]]).astype(np.uint8)
    sa = pool[rng.integers(0, len(pool), (M, K // 16))]
    sb = pool[rng.integers(0, len(pool), (N, K // 16))]
    fa = ca.view(ml_dtypes.float4_e2m1fn).astype(np.float64)
    fb = cb.view(ml_dtypes.float4_e2m1fn).astype(np.float64)
    va = np.repeat(sa.view(ml_dtypes.float8_e4m3fn).astype(np.float64), 16, axis=1)
    vb = np.repeat(sb.view(ml_dtypes.float8_e4m3fn).astype(np.float64), 16, axis=1)
    ref = (fa * va) @ (fb * vb).T
    return ca, cb, sa, sb, ref


def _packed(codes):
    """Two fp4 codes a byte, the first in the low nibble: TileLang's int8 [rows, K / 2] form of an fp4 tensor."""
    return (codes[:, 0::2] | (codes[:, 1::2] << 4)).view(np.int8)


@pytest.mark.parametrize("M,N,K,tiles", [(200, 96, 256, (128, 64, 128)), (128, 56, 384, (128, 64, 128)),
                                         (72, 40, 128, (64, 64, 64))])
def test_nvfp4_on_sm120a_matches_numpy(M, N, K, tiles):
    """Ragged NVFP4 GEMMs on sm_120a: the emulator runs the lowered mma.sync kind::mxf4nvf4 (and, through the test
    harness, the PTX emulator NVRTC's PTX) against a float64 reference; A and B are passed packed two a byte as
    TileLang's callers do (int8 [rows, K / 2]) and one a byte (ml_dtypes), the CPU target computes the same."""
    rng = _rng()
    bm, bn, bk = tiles
    ca, cb, sa, sb, ref = _nvfp4_inputs(rng, M, N, K)
    SA, SB = chunk_kmajor_words(sa, bm, bk), chunk_kmajor_words(sb, bn, bk)
    f = nvfp4_gemm(M, N, K, bm, bn, bk)
    k = tilelang.compile(f, target=SM120A, execution_backend="emulator")
    tol = dict(rtol=1e-5, atol=1e-6 * np.abs(ref).max())
    a_packed, b_packed = _packed(ca), _packed(cb)
    c = np.full((M, N), np.nan, np.float32)
    k(a_packed, b_packed, SA, SB, c)
    np.testing.assert_allclose(c, ref, **tol)
    assert (a_packed == _packed(ca)).all(), "the packed argument is written back unchanged"
    c = np.full((M, N), np.nan, np.float32)
    k(ca.view(ml_dtypes.float4_e2m1fn), cb.view(ml_dtypes.float4_e2m1fn), SA, SB, c)
    np.testing.assert_allclose(c, ref, **tol)
    c = np.full((M, N), np.nan, np.float32)
    tilelang.compile(f, target="cpu")(a_packed, b_packed, SA, SB, c)
    np.testing.assert_allclose(c, ref, **tol)


def test_nvfp4_tiles_one_value_a_byte_where_a_loop_fills_them():
    """A filled by a T.Parallel loop keeps one value a byte, tensor and tile, and so does B (a gemm's operands are
    stored alike): the same numbers, in both emulators (the gemm packs each register from 8 bytes), and on the
    CPU."""
    rng = _rng()
    M, N, K, bm, bn, bk = 128, 72, 256, 64, 64, 128
    ca, cb, sa, sb, ref = _nvfp4_inputs(rng, M, N, K)
    SA, SB = chunk_kmajor_words(sa, bm, bk), chunk_kmajor_words(sb, bn, bk)
    f = nvfp4_gemm(M, N, K, bm, bn, bk, stage_a_by_loop=True)
    k = tilelang.compile(f, target=SM120A, execution_backend="emulator")
    assert not any("stored two values a byte" in ch for ch in k.choices), k.choices
    assert any("one value a byte in shared memory, a register from 8 bytes" in ch for ch in k.choices), k.choices
    for target, kw in ((SM120A, {"execution_backend": "emulator"}), ("cpu", {})):
        c = np.full((M, N), np.nan, np.float32)
        tilelang.compile(f, target=target, **kw)(_packed(ca), cb.view(ml_dtypes.float4_e2m1fn), SA, SB, c)
        np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-6 * np.abs(ref).max(), err_msg=target)


def test_packed_fp4_arguments_are_checked():
    f = nvfp4_gemm(128, 64, 128, 128, 64, 128)
    k = tilelang.compile(f, target=SM120A, execution_backend="emulator")
    ca, cb, sa, sb, _ = _nvfp4_inputs(np.random.default_rng(0), 128, 64, 128)
    SA, SB = chunk_kmajor_words(sa, 128, 128), chunk_kmajor_words(sb, 64, 128)
    c = np.zeros((128, 64), np.float32)
    with pytest.raises(TileLangArgumentError, match=r"argument 0 \('A'\) of kernel 'main' is a float4_e2m1fn tensor "
                                                    r"\[128, 128\]: pass it packed two values a byte .* got float16"):
        k(ca.astype(np.float16), _packed(cb), SA, SB, c)
    with pytest.raises(TileLangArgumentError, match=r"'A'"):  # packed, but for a [128, 256] tensor
        k(np.zeros((128, 128), np.int8), _packed(cb), SA, SB, c)


def _assert_built(k, ptx_instruction, sass_pattern):
    """The PTX holds the instruction, ptxas assembled it to the SASS pattern, and nothing spilled."""
    assert ptx_instruction in k.get_ptx()
    res = k.get_resource_usage()
    assert res["spill_stores"] == 0 and res["spill_loads"] == 0, res
    assert re.search(sass_pattern, k.get_sass()), f"no {sass_pattern} in the SASS"


def test_nvfp4_is_omma_on_sm120a():
    """TileLang's example tiles (128 x 128 x 256, two stages): A and B, tensors and tiles, two values a byte (64 KB
    of operand tiles, under sm_120a's 99 KB; one a byte they would need 128 KB), copied by TMA as bytes. The PTX
    holds the block-scaled mma.sync; ptxas assembles it to OMMA.SF.16864 with UE4M3 scales, 4X; the choice table
    says what the gemm became; no spills."""
    k = tilelang.compile(nvfp4_gemm(256, 256, 512, 128, 128, 256), target=SM120A)
    for name, what in (("A", "tensor"), ("B", "tensor"), ("A_s", "tile"), ("B_s", "tile")):
        assert any(f"{what} '{name}' is stored two values a byte" in ch for ch in k.choices), k.choices
    assert any("T.copy A -> A_s: TMA" in ch and "box 128x128" in ch for ch in k.choices), k.choices
    assert k.get_resource_usage()["shared_bytes"] < 80 * 1024
    _assert_built(k, "mma.sync.aligned.m16n8k64.row.col.kind::mxf4nvf4.block_scale.scale_vec::4X.f32.e2m1.e2m1.f32.ue4m3",
                  r"\bOMMA\.SF\.16864\.F32\.E2M1\.E2M1\.UE4M3\.4X\b")
    assert any("mma.sync m16n8k64 kind::mxf4nvf4" in ch for ch in k.choices), k.choices


def test_nvfp4_nan_scale_poisons_its_row_and_column():
    """UE4M3 0x7F is NaN: one in SFA poisons exactly its row of C, one in SFB its column (both emulators, the CPU)."""
    rng = _rng()
    M, N, K = 64, 64, 128
    ca, cb, sa, sb, ref = _nvfp4_inputs(rng, M, N, K)
    sa[9, 3], sb[17, 6] = 0x7F, 0x7F
    SA, SB = chunk_kmajor_words(sa, 64, 64), chunk_kmajor_words(sb, 64, 64)
    f = nvfp4_gemm(M, N, K, 64, 64, 64)
    for target, backend in ((SM120A, "emulator"), ("cpu", None)):
        c = np.zeros((M, N), np.float32)
        kw = {"execution_backend": backend} if backend else {}
        tilelang.compile(f, target=target, **kw)(_packed(ca), _packed(cb), SA, SB, c)
        bad = np.zeros((M, N), bool)
        bad[9, :] = bad[:, 17] = True
        assert np.isnan(c[bad]).all() and not np.isnan(c[~bad]).any(), target
        np.testing.assert_allclose(c[~bad], ref[~bad], rtol=1e-5, atol=1e-6 * np.abs(ref[~bad]).max())


# ---- MXFP8 on sm_120a (mma.sync kind::mxf8f6f4 block_scale scale_vec::1X) ------------------------------------

@pytest.mark.parametrize("at,bt,g,whole", [("float8_e4m3fn", "float8_e4m3fn", 32, False),
                                           ("float8_e4m3fn", "float8_e5m2", 64, True),
                                           ("float8_e5m2", "float8_e4m3fn", 128, False)])
def test_mxfp8_on_sm120a_matches_numpy(at, bt, g, whole):
    """Ragged MXFP8 GEMMs (B stored [K, N]) with E8M0 scales per 32, 64 and 128 K, the tile's own groups or all
    of K's: the thread-level emulator (and the PTX emulator, through the test harness) against float64 NumPy."""
    rng = _rng()
    M, N, K = 72, 100, 256
    f = blockscaled_gemm(M, N, K, 64, 64, 128, at=at, bt=bt, g=g, whole_k_scales=whole)
    a, b, sa, sb, ref = _inputs(rng, M, N, K, at, bt, g)
    k = tilelang.compile(f, target=SM120A, execution_backend="emulator")
    assert any("mma.sync m16n8k32 kind::mxf8f6f4 block_scale scale_vec::1X" in ch for ch in k.choices), k.choices
    c = np.full((M, N), np.nan, np.float32)
    k(a, b, sa, sb, c)
    np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-6 * np.abs(ref).max())


def test_mxfp8_is_qmma_sf_on_sm120a():
    """The PTX holds kind::mxf8f6f4 with the operand types as declared; ptxas makes it QMMA.SF.16832 with E8 (ue8m0) scales."""
    k = tilelang.compile(blockscaled_gemm(256, 256, 512, 128, 128, 128, at="float8_e4m3fn", bt="float8_e5m2"),
                         target=SM120A)
    _assert_built(k, "mma.sync.aligned.m16n8k32.row.col.kind::mxf8f6f4.block_scale.scale_vec::1X.f32.e4m3.e5m2.f32.ue8m0",
                  r"\bQMMA\.SF\.16832\.F32\.E4M3\.E5M2\.E8\b")  # E8: ue8m0


# ---- MXFP4 (kind::mxf4), MXFP6 and mixed MX operands (kind::mxf8f6f4) on sm_120a --------------------------

@pytest.mark.parametrize("M,N,K,tiles,threads,packed_args", [(200, 136, 256, (128, 64, 128), 128, True),
                                                             (72, 40, 384, (64, 64, 128), 128, False),
                                                             (96, 80, 128, (32, 32, 64), 32, True)])
def test_mxfp4_on_sm120a_is_kind_mxf4(M, N, K, tiles, threads, packed_args):
    """MXFP4 (fp4 A and B, an E8M0 scale per 32) with both operands K-major on sm_120a: mma.sync m16n8k64
    kind::mxf4 block_scale scale_vec::2X (a k64 step takes two scales a row), the fp4 tensors and tiles two values
    a byte as the instruction reads them. Ragged, 1 to 4 warps, arguments packed (int8 [rows, K / 2]) or one a
    byte (ml_dtypes); both emulators (the PTX one through the test harness) and the CPU against float64 NumPy."""
    rng = _rng()
    ca, cb, sa, sb, ref = _mxfp4_nt_inputs(rng, M, N, K)
    f = mxfp4_nt_gemm(M, N, K, *tiles, threads=threads)
    k = tilelang.compile(f, target=SM120A, execution_backend="emulator")
    assert any("mma.sync m16n8k64 kind::mxf4 block_scale scale_vec::2X e2m1 x e2m1 with ue8m0 scales" in ch
               for ch in k.choices), k.choices
    for name, what in (("A", "tensor"), ("B", "tensor"), ("A_s", "tile"), ("B_s", "tile")):
        assert any(f"{what} '{name}' is stored two values a byte" in ch for ch in k.choices), k.choices
    args = (_packed(ca), _packed(cb)) if packed_args else (ca.view(ml_dtypes.float4_e2m1fn),
                                                           cb.view(ml_dtypes.float4_e2m1fn))
    for kern in (k, tilelang.compile(f, target="cpu")):
        c = np.full((M, N), np.nan, np.float32)
        kern(*args, sa, sb, c)
        np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-6 * np.abs(ref).max())


@pytest.mark.parametrize("at,bt,g", [("float6_e2m3fn", "float6_e2m3fn", 32),
                                     ("float6_e3m2fn", "float6_e2m3fn", 64),
                                     ("float4_e2m1fn", "float8_e4m3fn", 32),
                                     ("float8_e5m2", "float4_e2m1fn", 128),
                                     ("float6_e3m2fn", "float4_e2m1fn", 32),
                                     ("float4_e2m1fn", "float4_e2m1fn", 64)])
def test_mx_operands_on_sm120a_match_numpy(at, bt, g):
    """MXFP6, and MXFP4 / MXFP6 / MXFP8 mixed, with B stored [K, N] (tiles one value a byte): mma.sync m16n8k32
    kind::mxf8f6f4 scale_vec::1X, each value in a byte of its register (fp6 in bits 0-5, fp4 shifted to bits 2-5:
    the PTX emulator reports any other placement); fp4 with fp4 is kind::mxf4 (2X) from one-a-byte tiles. Scales
    per 32, 64 and 128 K. Ragged; both emulators against float64 NumPy."""
    rng = _rng()
    M, N, K = 72, 100, 256
    f = blockscaled_gemm(M, N, K, 64, 64, 128, at=at, bt=bt, g=g)
    a, b, sa, sb, ref = _inputs(rng, M, N, K, at, bt, g)
    k = tilelang.compile(f, target=SM120A, execution_backend="emulator")
    names = {"float8_e4m3fn": "e4m3", "float8_e5m2": "e5m2", "float6_e3m2fn": "e3m2", "float6_e2m3fn": "e2m3",
             "float4_e2m1fn": "e2m1"}
    want = ("mma.sync m16n8k64 kind::mxf4 block_scale scale_vec::2X" if at == bt == "float4_e2m1fn" else
            f"mma.sync m16n8k32 kind::mxf8f6f4 block_scale scale_vec::1X {names[at]}.{names[bt]} with ue8m0 scales")
    assert any(want in ch for ch in k.choices), k.choices
    c = np.full((M, N), np.nan, np.float32)
    k(a, b, sa, sb, c)
    np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-6 * np.abs(ref).max())


@pytest.mark.parametrize("at,bt,ptx,sass", [
    ("float4_e2m1fn", "float4_e2m1fn",
     "mma.sync.aligned.m16n8k64.row.col.kind::mxf4.block_scale.scale_vec::2X.f32.e2m1.e2m1.f32.ue8m0",
     r"\bOMMA\.SF\.16864\.F32\.E2M1\.E2M1\.E8\b"),
    ("float6_e2m3fn", "float6_e3m2fn",
     "mma.sync.aligned.m16n8k32.row.col.kind::mxf8f6f4.block_scale.scale_vec::1X.f32.e2m3.e3m2.f32.ue8m0",
     r"\bQMMA\.SF\.16832\.F32\.E2M3\.E3M2\.E8\b"),
    ("float4_e2m1fn", "float8_e4m3fn",
     "mma.sync.aligned.m16n8k32.row.col.kind::mxf8f6f4.block_scale.scale_vec::1X.f32.e2m1.e4m3.f32.ue8m0",
     r"\bQMMA\.SF\.16832\.F32\.E2M1\.E4M3\.E8\b"),
])
def test_mx_sub_byte_instructions_on_sm120a(at, bt, ptx, sass):
    """The PTX holds the block-scaled mma.sync the choice table names; ptxas makes it OMMA.SF.16864 (kind::mxf4)
    or QMMA.SF.16832 (kind::mxf8f6f4) with E8 (ue8m0) scales and the operand types as declared; no spills."""
    if at == bt == "float4_e2m1fn":
        k = tilelang.compile(mxfp4_nt_gemm(256, 256, 512, 128, 128, 128, threads=128), target=SM120A)
    else:
        k = tilelang.compile(blockscaled_gemm(256, 256, 512, 128, 128, 128, at=at, bt=bt), target=SM120A)
    _assert_built(k, ptx, sass)


def rowmajor_words(scale_bytes):
    """[R, K / 16] UE4M3 bytes -> [R, K / 64] uint32 words, byte j of word w the scale of group 4 w + j."""
    b = scale_bytes.astype(np.uint32)
    return np.ascontiguousarray(b[:, 0::4] | (b[:, 1::4] << 8) | (b[:, 2::4] << 16) | (b[:, 3::4] << 24))


def test_nvfp4_row_major_scale_words():
    """TileLang's other SM120 form: UE4M3 words in plain [rows, K / 64] tensors (sf_layout='rowmajor', uint32
    scales): the same numbers in both emulators and on the CPU, ragged."""
    rng = _rng()
    M, N, K, bm, bn, bk = 200, 72, 256, 128, 64, 128
    ca, cb, sa, sb, ref = _nvfp4_inputs(rng, M, N, K)
    f = nvfp4_gemm(M, N, K, bm, bn, bk, rowmajor=True)
    for target, kw in ((SM120A, {"execution_backend": "emulator"}), ("cpu", {})):
        c = np.full((M, N), np.nan, np.float32)
        tilelang.compile(f, target=target, **kw)(_packed(ca), _packed(cb), rowmajor_words(sa), rowmajor_words(sb), c)
        np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-6 * np.abs(ref).max(), err_msg=target)
