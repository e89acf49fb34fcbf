"""fp4 (float4_e2m1fn) operands of the tcgen05 MMA on sm_100a (docs/blackwell.md, "fp4 operands"): kind::f8f6f4
and the block-scaled kind::mxf8f6f4 (MXFP4, alone or with MXFP8) read sub-byte values from shared memory in a
padded form, 16 values of K two a byte in the first 8 bytes of each 16; TMA fills it from a tensor stored two values
a byte with the format 16U4_ALIGN16B (CUDA's cuda.h), counting the 8 bytes of each group it reads.

Before: `T.tcgen05_gemm(A_s, B_s, ...)` with a float4_e2m1fn A_s (TileLang's T.float4_e2m1_unpacked) was refused
("takes float16 or bfloat16 ... or float8_e4m3fn / float8_e5m2 A and B").
Expected: the tile only T.tma_copy fills and only tcgen05 gemms read becomes uint8 [rows, K] in that form, its
tensor uint8 [rows, K / 2] (an argument passed packed, or packed on the host), the copy a 16U4_ALIGN16B TMA and the
MMA's A / B type E2M1 (5). Both emulators run it from the ISA's and the driver's rules (tensor_map_image.h,
smem_matrix.h: PaddedFp4Column); the gaps are never written, so an MMA reading one would be reported as an
uninitialised read. Results against float64 NumPy on seeded random inputs, ragged M and N (TMA's zero fill)."""
import os
import re

import ml_dtypes
import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import TileLangError

from test_tcgen05_blockscaled import mxfp8_gemm, pack_scales, run_scaled

SM100A = "cuda -arch=sm_100a"
F4 = ml_dtypes.float4_e2m1fn
E4M3 = ml_dtypes.float8_e4m3fn


def _rng():
    seed = int(os.environ.get("TL_TEST_SEED") or np.random.SeedSequence().entropy % 2**32)
    print("seed", seed)
    return np.random.default_rng(seed)


def fp4_gemm(M, N, K, a_dtype="float4_e2m1fn", b_dtype="float8_e4m3fn", bK=128, fill_a="tma"):
    """C = A @ B^T (float32), A [M, K], B [N, K] (K-major both), 128 x 128 tiles, one K tile a step: warp 0
    loads with T.tma_copy, one thread of warp 1 issues T.tcgen05_gemm (kind::f8f6f4), every thread reads the
    accumulator. TileLang's maint/gemm fp4 check, with a K loop and a grid."""
    bM = bN = 128

    @T.prim_func
    def main(A: T.Tensor((M, K), a_dtype), B: T.Tensor((N, K), b_dtype), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(M, bM), T.ceildiv(N, bN), threads=128) as (bx, by):
            A_s = T.alloc_shared((bM, bK), a_dtype)
            B_s = T.alloc_shared((bN, bK), b_dtype)
            acc = T.alloc_tmem([bM, bN], "float32")
            out = T.alloc_fragment((bM, bN), "float32")
            loaded = T.alloc_barrier([32])
            consumed = T.alloc_barrier([1])
            tx = T.get_thread_binding()
            for k in T.serial(K // bK):
                if tx < 32:
                    T.mbarrier_wait_parity(consumed, (k & 1) ^ 1)
                    if fill_a == "tma":
                        T.tma_copy(A[bx * bM:(bx + 1) * bM, k * bK:(k + 1) * bK], A_s, barrier=loaded)
                    else:
                        T.copy(A[bx * bM:(bx + 1) * bM, k * bK:(k + 1) * bK], A_s)
                    T.tma_copy(B[by * bN:(by + 1) * bN, k * bK:(k + 1) * bK], B_s, barrier=loaded)
                    T.mbarrier_arrive(loaded)
                elif tx < 64:
                    T.mbarrier_wait_parity(loaded, k & 1)
                    T.tcgen05_gemm(A_s, B_s, acc, transpose_B=True, mbar=consumed, clear_accum=k == 0)
            T.mbarrier_wait_parity(consumed, (K // bK - 1) & 1)
            T.copy(acc, out)
            T.copy(out, C[bx * bM, by * bN])

    return main


def _values(rng, shape, dtype):
    return (rng.standard_normal(shape) * (2.0 if dtype == F4 else 1.0)).astype(dtype)


def _packed(a):
    """float4_e2m1fn [..., K] -> int8 [..., K / 2], the first of each pair in the low nibble (TileLang's packing)."""
    c = a.view(np.uint8) & 0xF
    return (c[..., 0::2] | (c[..., 1::2] << 4)).astype(np.uint8).view(np.int8)


@pytest.mark.parametrize("M,N,K,a_fp4,b_fp4,packed", [
    (200, 128, 256, True, False, False),   # ragged M: the second tile's rows past 200 read as zeros
    (128, 100, 384, False, True, True),    # fp4 B, ragged N, the argument passed packed (int8 [N, K / 2])
    (256, 256, 128, True, True, False),
])
def test_fp4_operands_of_kind_f8f6f4(M, N, K, a_fp4, b_fp4, packed):
    rng = _rng()
    a = _values(rng, (M, K), F4 if a_fp4 else E4M3)
    b = _values(rng, (N, K), F4 if b_fp4 else E4M3)
    k = tilelang.compile(fp4_gemm(M, N, K, "float4_e2m1fn" if a_fp4 else "float8_e4m3fn",
                                  "float4_e2m1fn" if b_fp4 else "float8_e4m3fn"),
                         target=SM100A, execution_backend="emulator")
    c = np.full((M, N), np.nan, np.float32)
    k(_packed(a) if packed and a_fp4 else a, _packed(b) if packed and b_fp4 else b, c)
    ref = a.astype(np.float64) @ b.astype(np.float64).T
    np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-5 * np.abs(ref).max())
    text = "\n".join(k.choices)
    ab = ("e2m1" if a_fp4 else "e4m3") + "_" + ("e2m1" if b_fp4 else "e4m3")
    assert f"tcgen05.mma.cta_group::1.kind::f8f6f4 128x128x32 {ab}" in text, text
    for name, fp4 in (("A_s", a_fp4), ("B_s", b_fp4)):
        assert (f"tile '{name}' is stored as the tensor cores read fp4 (uint8 (128, 128)" in text) == fp4, text
    assert "(format 16U4_ALIGN16B)" in text and "8192 bytes arriving" in text, text


@pytest.mark.parametrize("M,N,K,b_dtype,pair", [
    (128, 128, 640, "float8_e4m3fn", False),  # MXFP4 x MXFP8, five K groups (the last word's bytes 1-3 unused)
    (256, 256, 512, "float4_e2m1fn", True),   # MXFP4 x MXFP4 on a CTA pair (256 x 256)
])
def test_mxfp4_block_scaled(M, N, K, b_dtype, pair):
    rng = _rng()
    gran = 128
    ng = (K // gran + 3) // 4 * 4
    a = _values(rng, (M, K), F4)
    b = _values(rng, (N, K), F4 if b_dtype == "float4_e2m1fn" else E4M3)
    sfa8 = rng.integers(121, 133, (M, ng)).astype(np.uint8)
    sfb8 = rng.integers(121, 133, (N, ng)).astype(np.uint8)
    sfa8[:, K // gran:] = 255  # NaN scales where the kernel must not look
    sfb8[:, K // gran:] = 255
    text = run_scaled(mxfp8_gemm(M, N, K, "float4_e2m1fn", b_dtype, True, pair), a, b, sfa8, sfb8, gran)
    grp = "2" if pair else "1"
    ab = "e2m1_" + ("e2m1" if b_dtype == "float4_e2m1fn" else "e4m3")
    assert f"tcgen05.mma.cta_group::{grp}.kind::mxf8f6f4.block_scale.scale_vec::1X {M if not pair else 256}x" in text
    assert ab in text, text


@pytest.mark.parametrize("M,N,K,bK,pair", [
    (128, 128, 512, 128, False),  # a scale word a k tile: two k64 steps, half-words 0 and 2
    (256, 256, 512, 256, True),   # a CTA pair, two word groups a k tile
])
def test_mxfp4_with_a_scale_per_32_is_kind_mxf4(M, N, K, bK, pair):
    """Before: MXFP4 x MXFP4 with E8M0 scales per 32 values ran as kind::mxf8f6f4 (fp4 in the padded form, k32).
    Expected: tcgen05.mma kind::mxf4.block_scale.scale_vec::2X (PTX ISA 9.7.16.10.7), the fp4 tensors and tiles
    two values a byte (half the shared memory), k64 an instruction, a step's two scales the half-word the
    instruction descriptor's scale ids (0 / 2) name of each word. Both emulators against float64 NumPy; bytes of
    the scale words the kernel must not read hold NaN."""
    rng = _rng()
    gran = 32
    ng = (K // gran + 3) // 4 * 4
    a = _values(rng, (M, K), F4)
    b = _values(rng, (N, K), F4)
    sfa8 = rng.integers(121, 133, (M, ng)).astype(np.uint8)
    sfb8 = rng.integers(121, 133, (N, ng)).astype(np.uint8)
    text = run_scaled(mxfp8_gemm(M, N, K, "float4_e2m1fn", "float4_e2m1fn", True, pair, gran=gran, bK=bK),
                      a, b, sfa8, sfb8, gran)
    grp = "2" if pair else "1"
    assert (f"tcgen05.mma.cta_group::{grp}.kind::mxf4.block_scale.scale_vec::2X {M if not pair else 256}x"
            f"{N}x64 e2m1_e2m1 (two values a byte)") in text, text
    assert "at step s the half-word at byte (k_start + 64 s) / 32 % 4 of each word" in text, text
    for name in ("A_s", "B_s"):
        assert f"tile '{name}' is stored two values a byte" in text, text


def test_mxfp4_with_coarser_scales_keeps_kind_mxf8f6f4():
    """A granularity of 64 or more: scale_vec::2X would read two different bytes for a step whose two halves share
    one scale, so MXFP4 stays kind::mxf8f6f4 (1X, a byte a k32 step) in the padded form."""
    k = tilelang.compile(mxfp8_gemm(128, 128, 512, "float4_e2m1fn", "float4_e2m1fn", True, gran=64),
                         target=SM100A, execution_backend="emulator")
    text = "\n".join(k.choices)
    assert "kind::mxf8f6f4.block_scale.scale_vec::1X 128x128x32 e2m1_e2m1" in text, text


def test_kind_mxf4_compiles_for_sm100a():
    """1024^3 MXFP4 (scales per 32): the PTX holds tcgen05.mma kind::mxf4.block_scale.scale_vec::2X, ptxas makes
    it UTCOMMA (the fp4 tensor-core MMA) fed by UTMALDG.2D byte copies; no spills."""
    k = tilelang.compile(mxfp8_gemm(1024, 1024, 1024, "float4_e2m1fn", "float4_e2m1fn", True, gran=32, stages=4),
                         target=SM100A)
    assert "tcgen05.mma.cta_group::1.kind::mxf4.block_scale.scale_vec::2X" in k.get_ptx()
    res = k.get_resource_usage()
    assert res["spill_stores"] == 0 and res["spill_loads"] == 0, res
    sass = k.get_sass()
    assert re.search(r"\bUTCOMMA\b", sass) and re.search(r"\bUTMALDG\.2D\b", sass)


def test_fp4_gemms_compile_for_sm100a():
    for kern, kind in ((fp4_gemm(1024, 1024, 1024), "kind::f8f6f4"),
                       (mxfp8_gemm(1024, 1024, 1024, "float4_e2m1fn", "float4_e2m1fn", True, stages=4),
                        "kind::mxf8f6f4.block_scale.scale_vec::1X")):
        k = tilelang.compile(kern, target=SM100A)
        ptx = k.get_ptx()
        assert f"tcgen05.mma.cta_group::1.{kind}" in ptx and "cp.async.bulk.tensor.2d" in ptx
        res = k.get_resource_usage()
        assert res["spill_stores"] == 0 and res["spill_loads"] == 0, res
        sass = k.get_sass()
        assert re.search(r"\bUTCQMMA\b", sass) and re.search(r"\bUTMALDG\.2D\b", sass)


def test_fp4_tiles_the_padded_form_cannot_serve_are_refused():
    # filled by the threads (T.copy): only TMA writes the padded form here
    with pytest.raises(TileLangError, match=re.escape("'A_s' or its tensor has another use")):
        tilelang.compile(fp4_gemm(128, 128, 256, fill_a="copy"), target=SM100A)
    # a tile 64 values wide: 16U4_ALIGN16B's box is 128 values
    with pytest.raises(TileLangError, match=re.escape("a box 128 wide")):
        tilelang.compile(fp4_gemm(128, 128, 256, bK=64), target=SM100A)


def test_fp4_rows_not_a_multiple_of_128_are_refused_at_launch():
    """The driver encodes 16U4_ALIGN16B maps of rows of a multiple of 128 values only; the emulators check the
    same rule where the map is encoded (a GPU launch gets cuTensorMapEncodeTiled's refusal)."""
    M, N, K = 128, 128, 192
    rng = _rng()
    k = tilelang.compile(fp4_gemm(M, N, K), target=SM100A, execution_backend="emulator")
    with pytest.raises(TileLangError, match=re.escape("rows are 192 values, not a multiple of 128")):
        k(_values(rng, (M, K), F4), _values(rng, (N, K), E4M3), np.zeros((M, N), np.float32))


def test_fp4_operands_are_k_major():
    with pytest.raises(TileLangError, match=re.escape("fp4 and fp6 operands are K-major")):
        @T.prim_func
        def main(A: T.Tensor((128, 128), "float8_e4m3fn"), B: T.Tensor((128, 128), "float4_e2m1fn"),
                 C: T.Tensor((128, 128), "float32")):
            with T.Kernel(1, threads=128):
                A_s = T.alloc_shared((128, 128), "float8_e4m3fn")
                B_s = T.alloc_shared((128, 128), "float4_e2m1fn")
                acc = T.alloc_tmem([128, 128], "float32")
                bar = T.alloc_barrier([1])
                T.tcgen05_gemm(A_s, B_s, acc, mbar=bar, clear_accum=True)  # B [K, N]: MN-major


def nvfp4_gemm(M, N, K, stages=2, pair=False):
    """NVFP4 on sm_100a: C (float32) = sum over 16-value K blocks of (A * sa) @ (B * sb)^T, A [M, K] and B [N, K]
    fp4, sa / sb UE4M3 (one a 16 values, four a uint32 word, group-major: word g * rows + r holds row r's scales of
    blocks 4 g .. 4 g + 3). The block-scaled kernel of test_tcgen05_blockscaled with a granularity of 16: a 128 x
    128 x 128 tile takes two word groups of each, loaded with its operands, reordered by warp 2 and copied into 8
    columns of tensor memory by warp 1, whose MMAs (kind::mxf4nvf4.block_scale.block16, k64) take group
    ((k_start + 64 s) / 64) % 2 at step s. A pair: 256 x 256, each block 128 rows of A and 128 of B's columns, the
    scales of all 256 columns of B in each block."""
    return mxfp8_gemm(M, N, K, "float4_e2m1fn", "float4_e2m1fn", True, pair, stages=stages, gran=16)


def _ue4m3(rng, shape):
    """UE4M3 scale bytes 0.25 .. 4 (e4m3 codes 0x28 .. 0x48, sign clear) and their values."""
    b = rng.integers(0x28, 0x49, shape).astype(np.uint8)
    return b, b.view(E4M3).astype(np.float64)


def _nvfp4_reference(a, b, sa, sb):
    K = a.shape[1]
    return (a.astype(np.float64) * np.repeat(sa[:, :K // 16], 16, axis=1)) @ \
        (b.astype(np.float64) * np.repeat(sb[:, :K // 16], 16, axis=1)).T


@pytest.mark.parametrize("M,N,K,pair", [(128, 128, 256, False), (256, 256, 384, True)])
def test_nvfp4_on_sm100a_in_the_emulator(M, N, K, pair):
    rng = _rng()
    a = _values(rng, (M, K), F4)
    b = _values(rng, (N, K), F4)
    sa8, sa = _ue4m3(rng, (M, K // 16))
    sb8, sb = _ue4m3(rng, (N, K // 16))
    k = tilelang.compile(nvfp4_gemm(M, N, K, pair=pair), target=SM100A, execution_backend="emulator")
    c = np.full((M, N), np.nan, np.float32)
    k(_packed(a), b, pack_scales(sa8), pack_scales(sb8), c)  # A passed packed, B one value a byte
    ref = _nvfp4_reference(a, b, sa, sb)
    np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-5 * np.abs(ref).max())
    text = "\n".join(k.choices)
    grp = "2" if pair else "1"
    assert f"tcgen05.mma.cta_group::{grp}.kind::mxf4nvf4.block_scale.block16 {256 if pair else 128}x" in text, text
    assert "word group ((k_start + 64 s) / 64) % 2" in text, text
    assert "tile 'A_s' is stored two values a byte (uint8 (2, 128, 64))" in text, text


def test_nvfp4_scales_are_taken_a_block_at_a_time():
    """One UE4M3 byte changed (row 7, K block 5: the second byte of word group 1) changes row 7 of C only, by
    exactly that block's products times the new scale (the emulator takes byte j of the word for k in [16 j, 16 j +
    16) of the step)."""
    rng = _rng()
    M = N = 128
    K = 256
    a = _values(rng, (M, K), F4)
    b = _values(rng, (N, K), F4)
    sa8 = np.full((M, K // 16), 0x38, np.uint8)  # 1.0
    sb8 = np.full((N, K // 16), 0x38, np.uint8)
    k = tilelang.compile(nvfp4_gemm(M, N, K), target=SM100A, execution_backend="emulator")
    c0 = np.zeros((M, N), np.float32)
    k(a, b, pack_scales(sa8), pack_scales(sb8), c0)
    sa8[7, 5] = 0x48  # 4.0
    c1 = np.zeros((M, N), np.float32)
    k(a, b, pack_scales(sa8), pack_scales(sb8), c1)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    block = a64[7, 80:96] @ b64[:, 80:96].T
    np.testing.assert_allclose(c1[7], c0[7] + 3 * block, rtol=1e-6, atol=1e-6)
    assert np.array_equal(np.delete(c1, 7, axis=0), np.delete(c0, 7, axis=0))


def test_nvfp4_compiles_for_sm100a():
    k = tilelang.compile(nvfp4_gemm(1024, 1024, 1024, stages=4), target=SM100A)
    ptx = k.get_ptx()
    assert "tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16" in ptx
    res = k.get_resource_usage()
    assert res["spill_stores"] == 0 and res["spill_loads"] == 0, res
    assert re.search(r"\bUTCOMMA\.4X\b", k.get_sass())


def test_nvfp4_misuse_is_a_clear_error():
    with pytest.raises(TileLangError, match=re.escape("a granularity of 16 is NVFP4")):
        tilelang.compile(mxfp8_gemm(128, 128, 256, "float4_e2m1fn", "float8_e4m3fn", True, gran=16), target=SM100A)


F6 = {"float6_e2m3fn": ml_dtypes.float6_e2m3fn, "float6_e3m2fn": ml_dtypes.float6_e3m2fn}


def _packed6(a):
    """fp6 [..., K] -> uint8 [..., 3 K / 4]: each four values in 3 bytes, the first in the lowest 6 bits."""
    c = (a.view(np.uint8) & 0x3F).astype(np.uint32)
    w = c[..., 0::4] | (c[..., 1::4] << 6) | (c[..., 2::4] << 12) | (c[..., 3::4] << 18)
    return np.stack([w & 0xFF, (w >> 8) & 0xFF, (w >> 16) & 0xFF], axis=-1).astype(np.uint8).reshape(
        *a.shape[:-1], a.shape[-1] * 3 // 4)


@pytest.mark.parametrize("M,N,K,a_dtype,b_dtype,packed", [
    (200, 128, 256, "float6_e2m3fn", "float8_e4m3fn", False),   # ragged M
    (128, 100, 128, "float8_e5m2", "float6_e3m2fn", True),      # fp6 B passed packed, ragged N
    (128, 128, 384, "float6_e3m2fn", "float6_e2m3fn", False),
])
def test_fp6_operands_of_kind_f8f6f4(M, N, K, a_dtype, b_dtype, packed):
    """fp6 (MX e2m3 / e3m2) operands: tensors four values in 3 bytes, tiles 16 values in the first 12 bytes of each
    16 (TMA 16U6_ALIGN16B), the MMA's type E2M3 (3) / E3M2 (4)."""
    rng = _rng()
    dt = lambda name: F6.get(name) or getattr(ml_dtypes, name)  # noqa: E731
    a = (rng.standard_normal((M, K)) * 2).astype(dt(a_dtype))
    b = (rng.standard_normal((N, K)) * 2).astype(dt(b_dtype))
    k = tilelang.compile(fp4_gemm(M, N, K, a_dtype, b_dtype), target=SM100A, execution_backend="emulator")
    c = np.full((M, N), np.nan, np.float32)
    k(_packed6(a) if packed and a_dtype in F6 else a, _packed6(b) if packed and b_dtype in F6 else b, c)
    ref = a.astype(np.float64) @ b.astype(np.float64).T
    np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-5 * np.abs(ref).max())
    text = "\n".join(k.choices)
    name = {"float6_e2m3fn": "e2m3", "float6_e3m2fn": "e3m2", "float8_e4m3fn": "e4m3", "float8_e5m2": "e5m2"}
    assert f"kind::f8f6f4 128x128x32 {name[a_dtype]}_{name[b_dtype]}" in text, text
    assert "(format 16U6_ALIGN16B)" in text and "in the first 12 bytes of each 16" in text, text


def test_mxfp6_block_scaled():
    """MXFP6 x MXFP8 (kind::mxf8f6f4, E8M0 scales per 128) on a CTA pair, against NumPy."""
    rng = _rng()
    M = N = 256
    K, gran = 512, 128
    a = (rng.standard_normal((M, K)) * 2).astype(ml_dtypes.float6_e2m3fn)
    b = rng.standard_normal((N, K)).astype(E4M3)
    sfa8 = rng.integers(121, 133, (M, 4)).astype(np.uint8)
    sfb8 = rng.integers(121, 133, (N, 4)).astype(np.uint8)
    text = run_scaled(mxfp8_gemm(M, N, K, "float6_e2m3fn", "float8_e4m3fn", True, True), a, b, sfa8, sfb8, gran)
    assert "kind::mxf8f6f4.block_scale.scale_vec::1X 256x256x32 e2m3_e4m3" in text


def test_fp6_gemm_compiles_for_sm100a():
    k = tilelang.compile(fp4_gemm(1024, 1024, 1024, "float6_e3m2fn", "float6_e2m3fn"), target=SM100A)
    assert "tcgen05.mma.cta_group::1.kind::f8f6f4" in k.get_ptx()
    res = k.get_resource_usage()
    assert res["spill_stores"] == 0 and res["spill_loads"] == 0, res
    assert re.search(r"\bUTCQMMA\b", k.get_sass())
