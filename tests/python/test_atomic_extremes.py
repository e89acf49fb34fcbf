"""T.atomic_max and T.atomic_min (the language issue's missing names): a column-wise max / min over rows
that many blocks update at once, scalar and tile forms, every dtype they take (int32, uint32, int64,
uint64, float32, float64), on the CPU target, OpenCL (PoCL) and the CUDA, HIP and Metal lowerings in the
emulator, against NumPy. Sources are compiled for real (NVRTC, hipcc, clang for MSL) by the
codegen tests below. Before: AttributeError (no such name)."""
import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import TileLangTypeError, TileLangUnsupportedError

SEED = 20261202
DTYPES = ["int32", "uint32", "int64", "uint64", "float32", "float64"]


def extremes(M, N, dtype, tile):
    """Mx[j] = max over rows of X[:, j], Mn[j] = min: block b handles rows b*4 .. b*4+3."""

    @T.prim_func
    def k(X: T.Tensor((M, N), dtype), Mx: T.Tensor((N,), dtype), Mn: T.Tensor((N,), dtype)):
        with T.Kernel(T.ceildiv(M, 4), threads=32) as b:
            if tile:
                for r in T.serial(4):
                    if b * 4 + r < M:
                        T.atomic_max(Mx[0:N], X[b * 4 + r, 0:N])
                        T.atomic_min(Mn[0:N], X[b * 4 + r, 0:N])
            else:
                for r, j in T.Parallel(4, N):
                    if b * 4 + r < M:
                        T.atomic_max(Mx[j], X[b * 4 + r, j])
                        T.atomic_min(Mn[j], X[b * 4 + r, j])

    return k


def _inputs(M, N, dtype):
    r = np.random.default_rng(SEED)
    print(f"seed {SEED}")
    np_t = np.dtype(dtype)
    if np_t.kind == "f":
        x = (r.standard_normal((M, N)) * 100).astype(np_t)
    elif np_t.kind == "u":
        x = r.integers(0, np.iinfo(np_t).max, (M, N), dtype=np_t, endpoint=True)
    else:
        info = np.iinfo(np_t)
        x = r.integers(info.min, info.max, (M, N), dtype=np_t, endpoint=True)
    if np_t.kind == "f":
        lo, hi = np.array(-np.inf, np_t), np.array(np.inf, np_t)
    else:
        lo, hi = np.array(np.iinfo(np_t).min, np_t), np.array(np.iinfo(np_t).max, np_t)
    return x, np.full(N, lo, np_t), np.full(N, hi, np_t)


def _check(kernel, M, N, dtype):
    x, mx, mn = _inputs(M, N, dtype)
    kernel(x, mx, mn)
    np.testing.assert_array_equal(mx, x.max(axis=0))
    np.testing.assert_array_equal(mn, x.min(axis=0))


WHERE = [("cpu", None), ("opencl", None), ("cuda", "emulator"), ("hip", "emulator"), ("metal", "emulator")]


@pytest.mark.parametrize("target,backend", WHERE)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("tile", [False, True])
def test_atomic_max_min(target, backend, dtype, tile):
    if target == "metal" and dtype not in ("int32", "uint32", "float32"):
        with pytest.raises(TileLangUnsupportedError, match="Metal"):
            tilelang.compile(extremes(37, 24, dtype, tile), target=target, execution_backend=backend)
        return
    M, N = 37, 24  # 10 blocks, the last one ragged
    k = tilelang.compile(extremes(M, N, dtype, tile), target=target, execution_backend=backend)
    _check(k, M, N, dtype)


def test_nan_never_replaces_an_element():
    @T.prim_func
    def k(X: T.Tensor((8,), "float32"), Mx: T.Tensor((1,), "float32")):
        with T.Kernel(1, threads=8):
            for i in T.Parallel(8):
                T.atomic_max(Mx[0], X[i])

    x = np.array([1, np.nan, 3, 2, np.nan, -1, 0, 2.5], np.float32)
    for target, backend in WHERE:
        m = np.full(1, -np.inf, np.float32)
        tilelang.compile(k, target=target, execution_backend=backend)(x, m)
        assert m[0] == 3.0, (target, m)


@pytest.mark.parametrize("target", ["cuda -arch=sm_80", "hip", "metal", "opencl"])
def test_generated_sources_compile(target):
    """NVRTC, hipcc and clang (MSL) build the generated code (the codegen tests' compilers); OpenCL's
    program is built by PoCL above."""
    k = tilelang.compile(extremes(37, 24, "float32", False), target=target)
    src = k.get_kernel_source()
    assert "atomic_max" in src and "atomic_min" in src
    if target.startswith("cuda"):
        assert "atom.global.cas" in k.get_ptx() or "atom.cas" in k.get_ptx()


def test_atomic_max_refuses_narrow_and_bool_elements():
    with pytest.raises(TileLangTypeError, match="32- and 64-bit elements"):
        @T.prim_func
        def k(X: T.Tensor((8,), "float16")):
            with T.Kernel(1, threads=8):
                for i in T.Parallel(8):
                    T.atomic_max(X[0], X[i])


def test_printed_and_compared_by_kind():
    from tilelang import _ffi

    f_max, f_min = (extremes(8, 8, "float32", True), extremes(8, 8, "float32", True))
    assert "T.atomic_max(" in f_max.script() and "T.atomic_min(" in f_max.script()
    assert _ffi.structural_equal(f_max, f_min)

    def one(kind):
        @T.prim_func
        def k(X: T.Tensor((8,), "int32"), M: T.Tensor((1,), "int32")):
            with T.Kernel(1, threads=8):
                for i in T.Parallel(8):
                    if kind == "max":
                        T.atomic_max(M[0], X[i])
                    else:
                        T.atomic_min(M[0], X[i])

        return k

    assert not _ffi.structural_equal(one("max"), one("min"))
