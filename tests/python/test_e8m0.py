"""float8_e8m0fnu (OCP MX E8M0, the MX formats' scale: 2^(c - 127), 255 NaN, no sign or zero), TileLang's
T.float8_e8m0fnu. Before: the name was unknown ("cannot find dtype"). Expected: a storage dtype of one byte whose
conversions round to the nearest power of two with ties up, below 2^-127 to 2^-127, and zero, negatives, NaN,
infinities and overflow to NaN, as ml_dtypes does: checked byte for byte against ml_dtypes on the CPU, in the
emulator (CUDA, HIP) and at PTX level (NVRTC's PTX of the CUDA header); and as the scale dtype of
T.mma_gemm_blockscaled (the same bytes as uint8 E8M0 scales) on the CPU, sm_120a and gfx950 against float64 NumPy.
Metal refuses it with the reason."""
import os

import ml_dtypes
import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import TileLangError

from test_blockscaled_gemm import GFX950, SM120A, _inputs, blockscaled_gemm

E8M0 = ml_dtypes.float8_e8m0fnu


def _rng():
    seed = int(os.environ.get("TL_TEST_SEED") or np.random.SeedSequence().entropy % 2**32)
    print("seed", seed)
    return np.random.default_rng(seed)


def convert(n):
    """Y = X as e8m0; Z = float(Y) * 2 (the value read back)."""
    @T.prim_func
    def main(X: T.Tensor((n,), "float32"), Y: T.Tensor((n,), "float8_e8m0fnu"), Z: T.Tensor((n,), "float32")):
        with T.Kernel(T.ceildiv(n, 128), threads=128) as bx:
            for i in T.Parallel(128):
                if bx * 128 + i < n:
                    Y[bx * 128 + i] = X[bx * 128 + i]
                    Z[bx * 128 + i] = T.float32(Y[bx * 128 + i]) * 2
    return main


EDGES = [0, -0.0, -1, 1, 1.5, 1.4999, 3, 2.9, 0.75, 2.0**-127, 2.0**-128, 1.5 * 2.0**-127, 2.0**-140, 1.7e38,
         1.5 * 2.0**126, 2.6e38, np.inf, -np.inf, np.nan, 5e-39, 7.3e-39]


@pytest.mark.parametrize("target,backend", [("cpu", None), ("cuda -arch=sm_90a", "emulator"),
                                            ("cuda -arch=sm_120a", "ptx"), ("hip -arch=gfx942", "emulator")])
def test_conversions_match_ml_dtypes(target, backend):
    rng = _rng()
    x = np.concatenate([np.array(EDGES, np.float32),
                        (rng.standard_normal(300) * 10.0 ** rng.integers(-35, 35, 300)).astype(np.float32),
                        np.abs(rng.standard_normal(100)).astype(np.float32)])
    want = x.astype(E8M0)
    kw = {"execution_backend": backend} if backend else {}
    k = tilelang.compile(convert(len(x)), target=target, **kw)
    y, z = np.zeros(len(x), E8M0), np.zeros(len(x), np.float32)
    k(x, y, z)
    bad = np.nonzero(y.view(np.uint8) != want.view(np.uint8))[0]
    assert not len(bad), (x[bad][:8], y.view(np.uint8)[bad][:8], want.view(np.uint8)[bad][:8])
    zw = want.astype(np.float32) * 2
    assert ((z == zw) | (np.isnan(z) & np.isnan(zw))).all()


def copy(n):
    @T.prim_func
    def main(Y: T.Tensor((n,), "float8_e8m0fnu"), Z: T.Tensor((n,), "float8_e8m0fnu")):
        with T.Kernel(1, threads=128):
            for i in T.Parallel(n):
                Z[i] = Y[i]
    return main


def test_the_device_headers_assemble_and_other_targets_refuse():
    """The CUDA and HIP conversions build (NVRTC / ptxas, clang for gfx942); Metal, OpenCL and Ascend have no such
    type: refused with the reason."""
    for target in ("cuda -arch=sm_100a", "hip -arch=gfx942"):
        tilelang.compile(convert(1000), target=target)
    for target, why in (("metal", r"float8_e8m0fnu \(MSL has no 8-bit float type\)"),
                        ("opencl", r"does not support the dtype float8_e8m0fnu"),
                        ("ascend", r"float8_e8m0fnu \(AscendC has no such type\)")):
        with pytest.raises(TileLangError, match=why):
            tilelang.compile(copy(128), target=target)


@pytest.mark.parametrize("target,backend,at", [("cpu", None, "float8_e4m3fn"),
                                               (SM120A, "emulator", "float4_e2m1fn"),
                                               (SM120A, "emulator", "float8_e5m2"),
                                               (GFX950, "emulator", "float8_e4m3fn")])
def test_scales_as_float8_e8m0fnu_tensors(target, backend, at):
    """T.mma_gemm_blockscaled with SFA / SFB float8_e8m0fnu tensors and tiles gives what uint8 E8M0 scales give
    (the same bytes), NaN scales included, ragged, against float64 NumPy."""
    rng = _rng()
    M, N, K = 72, 100, 256
    a, b, sa, sb, ref = _inputs(rng, M, N, K, at, "float8_e4m3fn", 32)
    sa[3, 1] = 255  # NaN: row 3 of C
    f = blockscaled_gemm(M, N, K, 64, 64, 128, at=at, bt="float8_e4m3fn", sf_dtype="float8_e8m0fnu")
    kw = {"execution_backend": backend} if backend else {}
    c = np.full((M, N), -1.0, np.float32)
    tilelang.compile(f, target=target, **kw)(a, b, sa.view(E8M0), sb.view(E8M0), c)
    assert np.isnan(c[3]).all() and not np.isnan(np.delete(c, 3, axis=0)).any()
    rest = np.delete(ref, 3, axis=0)
    np.testing.assert_allclose(np.delete(c, 3, axis=0), rest, rtol=1e-5, atol=1e-6 * np.abs(rest).max())
