"""Per-thread code stays a size the backend compilers handle (the reliability issue's compile blow-up):
T.cumsum along the last axis of a fragment with at least a line per thread deals a line to each thread
instead of keeping the whole tile in every thread, and a loop over a
thread's elements is fully unrolled only while the code it expands to stays within a budget ("#pragma
unroll 4" past it). Numbers against NumPy in the emulator (CUDA, HIP, Metal lowerings) and on OpenCL."""
import re

import numpy as np
import pytest

import tilelang
import tilelang.language as T

SEED = 77


def scan(M, N, dim, reverse=False, threads=128):
    @T.prim_func
    def k(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=threads) as bx:
            F = T.alloc_fragment((M, N), "float32")
            T.copy(A, F)
            T.cumsum(F, dim=dim, reverse=reverse)
            T.copy(F, B)

    return k


def _want(a, dim, reverse):
    x = a.astype(np.float64)
    if reverse:
        return np.flip(np.cumsum(np.flip(x, dim), dim), dim)
    return np.cumsum(x, dim)


def _run(k, a):
    b = np.zeros_like(a)
    k(a, b)
    return b


@pytest.mark.parametrize("reverse", [False, True])
def test_fragment_scan_along_the_last_axis_is_a_line_per_thread(reverse):
    a = np.random.default_rng(SEED).standard_normal((32, 64)).astype(np.float32)
    # 32 lines over 32 threads: a line each (with 128 threads the tile would stay replicated)
    src = tilelang.compile(scan(32, 64, 1, reverse, threads=32), target="cuda -arch=sm_80").get_kernel_source()
    sizes = [int(x) for x in re.findall(r"float F\[(\d+)\]", src)]
    assert sizes and max(sizes) <= 64, f"each thread holds one 64-element line, not the whole tile: {sizes}"
    for target in ("cuda", "hip", "metal"):
        k = tilelang.compile(scan(32, 64, 1, reverse, threads=32), target=target, execution_backend="emulator")
        np.testing.assert_allclose(_run(k, a), _want(a, 1, reverse), rtol=1e-5, atol=1e-4, err_msg=target)
    k = tilelang.compile(scan(32, 64, 1, reverse, threads=32), target="opencl")
    np.testing.assert_allclose(_run(k, a), _want(a, 1, reverse), rtol=1e-5, atol=1e-4)
    # fewer lines than threads: replicated, and its big loops are not fully unrolled
    src = tilelang.compile(scan(32, 64, 1, reverse), target="cuda -arch=sm_80").get_kernel_source()
    assert "float F[2048]" in src and "#pragma unroll 4" in src, src


@pytest.mark.parametrize("M,N,threads", [(200, 16, 128), (5, 48, 64), (1, 64, 32)])
def test_more_or_fewer_lines_than_threads(M, N, threads):
    a = np.random.default_rng(SEED + M).standard_normal((M, N)).astype(np.float32)
    k = tilelang.compile(scan(M, N, 1, threads=threads), target="cuda", execution_backend="emulator")
    np.testing.assert_allclose(_run(k, a), _want(a, 1, False), rtol=1e-5, atol=1e-4)


def test_big_replicated_loops_are_not_fully_unrolled():
    """A scan along the first axis keeps the whole (32, 64) tile in every thread; its loops over 2048
    elements get "#pragma unroll 4", small loops stay fully unrolled."""
    a = np.random.default_rng(SEED + 1).standard_normal((32, 64)).astype(np.float32)
    src = tilelang.compile(scan(32, 64, 0), target="cuda -arch=sm_80").get_kernel_source()
    assert "float F[2048]" in src
    pragmas = re.findall(r"#pragma unroll( \d+)?\n\s*for \(int32_t \w+ = 0; \w+ < 0 \+ (\d+);", src)
    assert pragmas, src
    for factor, trip in pragmas:
        assert (factor.strip() == "4") == (int(trip) >= 2048), (factor, trip)
    k = tilelang.compile(scan(32, 64, 0), target="cuda", execution_backend="emulator")
    np.testing.assert_allclose(_run(k, a), _want(a, 0, False), rtol=1e-5, atol=1e-4)
