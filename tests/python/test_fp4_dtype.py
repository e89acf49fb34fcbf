"""T.float4_e2m1fn, the OCP MX fp4 dtype (docs/semantics.md): one value a byte (the code in the low nibble, as
ml_dtypes.float4_e2m1fn stores it), conversions rounding to nearest even and saturating at 6, NaN to -0.
Every backend that has it (CPU, CUDA at IR and PTX level, HIP) against ml_dtypes' conversions and NumPy in
float64; Metal, OpenCL and Ascend refuse it by name.
"""
import os

import ml_dtypes
import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import TileLangUnsupportedError

FP4 = ml_dtypes.float4_e2m1fn

TARGETS = [
    dict(target="cpu"),
    dict(target="cuda -arch=sm_80", execution_backend="emulator"),
    dict(target="cuda -arch=sm_100a", execution_backend="ptx"),
    dict(target="hip -arch=gfx90a", execution_backend="emulator"),
    dict(target="hip -arch=gfx950", execution_backend="emulator"),
]


def _rng():
    seed = int(os.environ.get("TL_TEST_SEED") or np.random.SeedSequence().entropy % 2**32)
    print("seed", seed)
    return np.random.default_rng(seed)


def convert(N):
    @T.prim_func
    def cvt(X: T.Tensor((N,), "float32"), Q: T.Tensor((N,), "float4_e2m1fn"), Y: T.Tensor((N,), "float32"),
            C: T.Tensor((N,), "uint8"), H: T.Tensor((N,), "float16")):
        with T.Kernel(T.ceildiv(N, 64), threads=64) as bx:
            for i in T.Parallel(64):
                if bx * 64 + i < N:
                    x = X[bx * 64 + i]
                    Q[bx * 64 + i] = T.cast(x, T.float4_e2m1fn)
                    Y[bx * 64 + i] = T.cast(T.cast(x * 2, T.float4_e2m1fn), "float32") + 1
                    C[bx * 64 + i] = T.reinterpret(T.cast(x, T.float4_e2m1fn), T.uint8)
                    H[bx * 64 + i] = T.cast(T.cast(T.cast(x, "float16"), T.float4_e2m1fn), "float16")

    return cvt


@pytest.mark.parametrize("kw", TARGETS, ids=lambda kw: kw["target"])
def test_conversions_round_to_nearest_even_and_saturate_as_ml_dtypes(kw):
    """float32 / float16 -> fp4 -> float on each backend, bit for bit what ml_dtypes gives: every tie between
    neighbours (to the even code), values past 6 and infinities (6), signed zeros, NaN (-0), ragged length."""
    rng = _rng()
    N = 203
    x = (rng.standard_normal(N) * 3).astype(np.float32)
    special = [0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, 5.5, 6.0, 7.0, 1e6, np.inf, -np.inf, np.nan, -0.0, 0.0,
               -0.25, -0.3, -2.5, -3.5, 1e-30]
    x[:len(special)] = special
    k = tilelang.compile(convert(N), **kw)
    q = np.zeros(N, FP4)
    y = np.zeros(N, np.float32)
    c = np.zeros(N, np.uint8)
    h = np.zeros(N, np.float16)
    k(x, q, y, c, h)
    ref = x.astype(FP4)
    np.testing.assert_array_equal(q.view(np.uint8), ref.view(np.uint8))
    np.testing.assert_array_equal(c, ref.view(np.uint8))
    np.testing.assert_array_equal(y, (x * 2).astype(FP4).astype(np.float32) + 1)
    with np.errstate(over="ignore"):  # 1e6 is infinity in float16 (6 in fp4)
        np.testing.assert_array_equal(h, x.astype(np.float16).astype(FP4).astype(np.float16))
    # the codes of the table: 0 .. 7 are +{0, 0.5, 1, 1.5, 2, 3, 4, 6}, 8 .. 15 their negatives
    assert list(c[:9]) == [0, 2, 2, 4, 4, 6, 6, 7, 7] and c[13] == 8 and c[14] == 8


def test_every_code_decodes_and_the_upper_nibble_is_ignored():
    """uint8 bytes reinterpreted as fp4 (TileLang's packed-nibble pattern writes whole bytes): the low nibble is
    the code, whatever the upper one holds."""
    @T.prim_func
    def dec(B: T.Tensor((256,), "uint8"), Y: T.Tensor((256,), "float32")):
        with T.Kernel(1, threads=256) as bx:
            for i in T.Parallel(256):
                Y[i] = T.cast(T.reinterpret(B[i], T.float4_e2m1fn), "float32")

    b = np.arange(256, dtype=np.uint8)
    want = (b & 15).view(FP4).astype(np.float32)
    for kw in TARGETS:
        y = np.zeros(256, np.float32)
        tilelang.compile(dec, **kw)(b, y)
        np.testing.assert_array_equal(y, want, err_msg=str(kw))


def mxfp4_gemm(M, N, K, BM=64, BN=64, BK=32, G=32):
    """C = A @ (W * 2^(S - 127)): fp4 weights (K x N) with one e8m0 scale a group of G rows (MXFP4), staged
    through shared memory as fp4, dequantised into a float16 tile, multiplied on the tensor cores / CPU."""
    @T.prim_func
    def mm(A: T.Tensor((M, K), "float16"), W: T.Tensor((K, N), "float4_e2m1fn"), S: T.Tensor((K // G, N), "uint8"),
           C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, BN), T.ceildiv(M, BM), threads=128) as (bx, by):
            A_s = T.alloc_shared((BM, BK), "float16")
            W_s = T.alloc_shared((BK, BN), "float4_e2m1fn")
            B_s = T.alloc_shared((BK, BN), "float16")
            C_l = T.alloc_fragment((BM, BN), "float32")
            T.clear(C_l)
            for k in T.Pipelined(K // BK, num_stages=2):
                T.copy(A[by * BM, k * BK], A_s)
                T.copy(W[k * BK, bx * BN], W_s)
                for i, j in T.Parallel(BK, BN):
                    e = T.cast(S[(k * BK + i) // G, bx * BN + j], "float32") - 127
                    B_s[i, j] = T.cast(T.cast(W_s[i, j], "float32") * T.exp2(e), "float16")
                T.gemm(A_s, B_s, C_l)
            T.copy(C_l, C[by * BM, bx * BN])

    return mm


@pytest.mark.parametrize("kw", TARGETS + [dict(target="cuda -arch=sm_90a", execution_backend="emulator")],
                         ids=lambda kw: kw["target"])
def test_an_mxfp4_gemm_with_fp4_tiles_matches_numpy(kw):
    rng = _rng()
    M, N, K, G = 72, 128, 128, 32
    a = rng.standard_normal((M, K)).astype(np.float16)
    w = (rng.standard_normal((K, N)) * 2).astype(FP4)
    s = rng.integers(122, 132, size=(K // G, N)).astype(np.uint8)
    c = np.zeros((M, N), np.float32)
    tilelang.compile(mxfp4_gemm(M, N, K), **kw)(a, w, s, c)
    wd = w.astype(np.float64) * np.exp2(np.repeat(s.astype(np.float64), G, axis=0) - 127)
    np.testing.assert_allclose(c, a.astype(np.float64) @ wd, rtol=1e-4, atol=1e-3)


def test_hip_code_objects_build_with_fp4():
    """The generated HIP (our fp4 type in include/tl_device/hip/fp8.h) assembles for gfx90a."""
    k = tilelang.compile(convert(96), target="hip -arch=gfx90a")
    assert "tl::fp4_e2m1_t" in k.get_kernel_source() and ".amdhsa_kernel" in k.get_assembly()


@pytest.mark.parametrize("target,why", [("metal", "MSL has no 4-bit float type"),
                                        ("opencl", "float4_e2m1fn"),
                                        ("ascend", r"float4_e2m1fn \(AscendC has no such type\)")])
def test_targets_without_fp4_refuse_it_by_name(target, why):
    with pytest.raises(TileLangUnsupportedError, match=why):
        tilelang.compile(convert(64), target=target)


def test_the_dtype_object():
    assert T.float4_e2m1fn.bits == 4 and T.float4_e2m1fn.itemsize == 1
    assert T.float4_e2m1fn.as_numpy() == np.dtype(FP4)
    assert T.dtype("float4_e2m1fn") == T.float4_e2m1fn
    # TileLang's tag for fp4 kept one value a byte is this dtype's storage here
    assert T.float4_e2m1_unpacked == T.float4_e2m1fn and T.dtype("float4_e2m1_unpacked") == T.float4_e2m1fn

