"""T.alloc_reducer / T.finalize_reducer (the language issue's missing names; TileLang's GEMV example): a
sum reducer that the threads of a T.Parallel nest add into, here one shared copy updated with atomic adds
(a performance warning says TileLang keeps per-thread copies), on the CPU target, OpenCL (PoCL) and the
CUDA, HIP and Metal lowerings in the emulator, against NumPy in float64 at ragged sizes. Before:
AttributeError (no such name)."""
import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import (TileLangPerformanceWarning, TileLangSyntaxError, TileLangTypeError,
                             TileLangUnsupportedError)

SEED = 20261206


def gemv(M, N, block_M=32, block_N=64, threads=128):
    """y = A @ x in TileLang's reducer style."""

    @T.prim_func
    def k(A: T.Tensor((M, N), "float32"), x: T.Tensor((N,), "float32"), y: T.Tensor((M,), "float32")):
        with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bm:
            acc = T.alloc_reducer(block_M, "float32", replication="all")
            T.clear(acc)
            for kn in T.serial(T.ceildiv(N, block_N)):
                for i, j in T.Parallel(block_M, block_N):
                    acc[i] += A[bm * block_M + i, kn * block_N + j] * x[kn * block_N + j]
            T.finalize_reducer(acc)
            T.copy(acc, y[bm * block_M])

    return k


@pytest.mark.parametrize("target,backend", [("cpu", None), ("opencl", None), ("cuda", "emulator"),
                                            ("hip", "emulator"), ("metal", "emulator")])
def test_gemv_with_a_reducer_matches_numpy(target, backend):
    M, N = 70, 150  # ragged: neither is a multiple of the blocks
    r = np.random.default_rng(SEED)
    print(f"seed {SEED}")
    a = r.standard_normal((M, N)).astype(np.float32)
    x = r.standard_normal(N).astype(np.float32)
    y = np.full(M, np.nan, np.float32)
    with pytest.warns(TileLangPerformanceWarning, match="atomic adds"):
        f = gemv(M, N)
    tilelang.compile(f, target=target, execution_backend=backend)(a, x, y)
    np.testing.assert_allclose(y.astype(np.float64), a.astype(np.float64) @ x.astype(np.float64), rtol=1e-4,
                               atol=1e-4)


def test_the_updates_are_atomic_adds_in_the_generated_code():
    with pytest.warns(TileLangPerformanceWarning):
        f = gemv(64, 128)
    src = tilelang.compile(f, target="cuda -arch=sm_80").get_kernel_source()
    assert "tl::atomic_add(" in src


def test_reducer_misuse_is_an_error():
    with pytest.raises(TileLangUnsupportedError, match="op='sum'"):
        @T.prim_func
        def k(A: T.Tensor((8,), "float32")):
            with T.Kernel(1, threads=8):
                T.alloc_reducer(8, "float32", op="max")
    with pytest.raises(TileLangSyntaxError, match=r"updated with \+="):
        @T.prim_func
        def k2(A: T.Tensor((8,), "float32")):
            with T.Kernel(1, threads=8):
                R = T.alloc_reducer(8, "float32")
                for i in T.Parallel(8):
                    R[i] *= A[i]
    with pytest.raises(TileLangTypeError, match="T.alloc_reducer"):
        @T.prim_func
        def k3(A: T.Tensor((8,), "float32")):
            with T.Kernel(1, threads=8):
                S = T.alloc_shared((8,), "float32")
                T.finalize_reducer(S)
