"""T.float6_e2m3fn and T.float6_e3m2fn, the OCP MX fp6 dtypes (docs/semantics.md): one value a byte (the code in
the low 6 bits, as ml_dtypes stores them), every code finite, conversions rounding to nearest even and
saturating (7.5 / 28), NaN to -0. Every backend that has them (CPU, CUDA at IR and PTX level, HIP) against
ml_dtypes' conversions and NumPy in float64; Metal, OpenCL and Ascend refuse them by name.
"""
import os

import ml_dtypes
import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import TileLangUnsupportedError

FMTS = {"float6_e2m3fn": (ml_dtypes.float6_e2m3fn, 7.5), "float6_e3m2fn": (ml_dtypes.float6_e3m2fn, 28.0)}

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


def convert(N, dt):
    @T.prim_func
    def cvt(X: T.Tensor((N,), "float32"), Q: T.Tensor((N,), dt), Y: T.Tensor((N,), "float32"),
            C: T.Tensor((N,), "uint8"), H: T.Tensor((N,), "float16")):
        with T.Kernel(T.ceildiv(N, 64), threads=64) as bx:
            for i in T.Parallel(64):
                if bx * 64 + i < N:
                    x = X[bx * 64 + i]
                    Q[bx * 64 + i] = T.cast(x, dt)
                    Y[bx * 64 + i] = T.cast(T.cast(x * 2, dt), "float32") + 1
                    C[bx * 64 + i] = T.reinterpret(T.cast(x, dt), T.uint8)
                    H[bx * 64 + i] = T.cast(T.cast(T.cast(x, "float16"), dt), "float16")

    return cvt


def ties(np_t):
    """Every midpoint between neighbouring magnitudes of the format, and a little either side of it."""
    mags = np.arange(32, dtype=np.uint8).view(np_t).astype(np.float64)
    mid = (mags[:-1] + mags[1:]) / 2
    return np.concatenate([mid, np.nextafter(mid, 0), np.nextafter(mid, 100)]).astype(np.float32)


@pytest.mark.parametrize("kw", TARGETS, ids=lambda kw: kw["target"])
@pytest.mark.parametrize("dt", list(FMTS))
def test_conversions_round_to_nearest_even_and_saturate_as_ml_dtypes(dt, kw):
    """float32 / float16 -> fp6 -> float on each backend, bit for bit what ml_dtypes gives: every tie between
    neighbours (to the even code) and its neighbours, values past the largest and infinities (saturated),
    subnormals, signed zeros, NaN (-0), a ragged length."""
    np_t, top = FMTS[dt]
    rng = _rng()
    t = ties(np_t)
    special = np.array([top, top * 1.01, 1e6, np.inf, -np.inf, np.nan, -0.0, 0.0, -top * 3, 1e-30, -1e-3],
                       np.float32)
    x = np.concatenate([t, -t, special, (rng.standard_normal(150) * top / 3).astype(np.float32)])
    N = len(x)
    k = tilelang.compile(convert(N, dt), **kw)
    q = np.zeros(N, np_t)
    y = np.zeros(N, np.float32)
    c = np.zeros(N, np.uint8)
    h = np.zeros(N, np.float16)
    k(x, q, y, c, h)
    ref = x.astype(np_t).view(np.uint8).copy()
    ref[np.isnan(x)] = 32  # NaN gives -0 here whatever its sign (ml_dtypes flips the sign bit)
    np.testing.assert_array_equal(q.view(np.uint8), ref)
    np.testing.assert_array_equal(c, ref)
    np.testing.assert_array_equal(y[~np.isnan(x)], (x * 2).astype(np_t).astype(np.float32)[~np.isnan(x)] + 1)
    with np.errstate(over="ignore"):
        hx = x.astype(np.float16)
    fin = ~np.isnan(x)
    np.testing.assert_array_equal(h[fin], hx.astype(np_t).astype(np.float16)[fin])


@pytest.mark.parametrize("dt", list(FMTS))
def test_every_code_decodes_and_the_upper_bits_are_ignored(dt):
    np_t, _ = FMTS[dt]

    @T.prim_func
    def dec(B: T.Tensor((256,), "uint8"), Y: T.Tensor((256,), "float32")):
        with T.Kernel(1, threads=256) as bx:
            for i in T.Parallel(256):
                Y[i] = T.cast(T.reinterpret(B[i], dt), "float32")

    b = np.arange(256, dtype=np.uint8)
    want = (b & 63).view(np_t).astype(np.float32)
    for kw in TARGETS:
        y = np.zeros(256, np.float32)
        tilelang.compile(dec, **kw)(b, y)
        np.testing.assert_array_equal(y, want, err_msg=str(kw))


def mxfp6_gemm(M, N, K, dt, BM=64, BN=64, BK=32, G=32):
    """C = A @ (W * 2^(S - 127)): fp6 weights with one e8m0 scale a group of G rows, staged through shared
    memory as fp6, dequantised into a float16 tile, multiplied on the tensor cores / CPU."""
    @T.prim_func
    def mm(A: T.Tensor((M, K), "float16"), W: T.Tensor((K, N), dt), S: T.Tensor((K // G, N), "uint8"),
           C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, BN), T.ceildiv(M, BM), threads=128) as (bx, by):
            A_s = T.alloc_shared((BM, BK), "float16")
            W_s = T.alloc_shared((BK, BN), dt)
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


@pytest.mark.parametrize("kw", TARGETS, ids=lambda kw: kw["target"])
@pytest.mark.parametrize("dt", list(FMTS))
def test_a_dequantising_gemm_with_fp6_tiles_matches_numpy(dt, kw):
    np_t, top = FMTS[dt]
    rng = _rng()
    M, N, K, G = 72, 128, 64, 32
    a = rng.standard_normal((M, K)).astype(np.float16)
    w = (rng.standard_normal((K, N)) * top / 3).astype(np_t)
    s = rng.integers(122, 132, size=(K // G, N)).astype(np.uint8)
    c = np.zeros((M, N), np.float32)
    tilelang.compile(mxfp6_gemm(M, N, K, dt), **kw)(a, w, s, c)
    wd = w.astype(np.float64) * np.exp2(np.repeat(s.astype(np.float64), G, axis=0) - 127)
    np.testing.assert_allclose(c, a.astype(np.float64) @ wd, rtol=1e-4, atol=1e-3)


def test_hip_and_cuda_sources_build_with_fp6():
    """The generated HIP (our fp6 types in include/tl_device/hip/fp8.h) assembles for gfx90a; NVRTC compiles the
    CUDA ones (include/tl_device/cuda/common.h)."""
    for dt, name in (("float6_e2m3fn", "e2m3"), ("float6_e3m2fn", "e3m2")):
        k = tilelang.compile(convert(96, dt), target="hip -arch=gfx90a")
        assert f"tl::fp6_{name}_t" in k.get_kernel_source() and ".amdhsa_kernel" in k.get_assembly()
        k = tilelang.compile(convert(96, dt), target="cuda -arch=sm_90a")
        assert f"tl::float6_{name}_t" in k.get_kernel_source()


@pytest.mark.parametrize("target,why", [("metal", "MSL has no 6-bit float type"),
                                        ("opencl", "float6_e2m3fn"),
                                        ("ascend", r"float6_e2m3fn \(AscendC has no such type\)")])
def test_targets_without_fp6_refuse_it_by_name(target, why):
    with pytest.raises(TileLangUnsupportedError, match=why):
        tilelang.compile(convert(64, "float6_e2m3fn"), target=target)


def test_the_dtype_objects():
    for dt, (np_t, _) in FMTS.items():
        d = getattr(T, dt)
        assert d.bits == 6 and d.itemsize == 1 and d.as_numpy() == np.dtype(np_t) and T.dtype(dt) == d
    assert T.dtype("float6_e2m3") == T.float6_e2m3fn and T.dtype("float6_e3m2") == T.float6_e3m2fn
