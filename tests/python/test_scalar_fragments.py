"""Scalar reads and writes of small fragments outside T.Parallel (online-softmax running values,
block-sparse masks), as TileLang kernels write them: such a fragment is whole in every thread
(replicated), and scalar code runs the same in every thread. Emulator and CPU against NumPy."""
import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import TileLangPerformanceWarning

SEED = 77


def running_max(M, N, block):
    @T.prim_func
    def k(A: T.Tensor((M, N), "float32"), O: T.Tensor((M,), "float32")):
        with T.Kernel(T.ceildiv(M, block), threads=64) as bx:
            best = T.alloc_fragment((1,), "float32")
            row = T.alloc_fragment((N,), "float32")
            for r in T.serial(block):
                best[0] = -T.infinity("float32")
                T.copy(A[bx * block + r, 0:N], row)
                for j in T.serial(N):
                    best[0] = T.max(best[0], row[j])
                if bx * block + r < M:
                    O[bx * block + r] = best[0]
    return k


@pytest.mark.parametrize("backend", ["cpu", "emulator"])
def test_running_max_in_a_scalar_fragment(backend):
    M, N = 37, 24  # ragged: 37 rows in blocks of 8
    rng = np.random.default_rng(SEED)
    print("seed", SEED)
    a = rng.standard_normal((M, N)).astype(np.float32)
    o = np.zeros(M, np.float32)
    k = running_max(M, N, 8)
    kern = tilelang.compile(k, target="cpu") if backend == "cpu" else \
        tilelang.compile(k, target="cuda", execution_backend="emulator")
    kern(a, o)
    np.testing.assert_array_equal(o, a.max(axis=1))
    if backend == "emulator":
        cuda = tilelang.compile(k, target="cuda -arch=sm_80")
        assert cuda.layouts["best"] == "replicated(1)"


def test_cuda_cumsum_of_a_single_row_fragment():
    """Fuzzing defect: T.cumsum on a (1, N) fragment read other threads' registers on CUDA. The fragment
    is replicated (the scan runs whole in every thread), so the copy into it must fill every thread's copy."""
    N = 64
    rng = np.random.default_rng(SEED)
    print("seed", SEED)

    @T.prim_func
    def k(A: T.Tensor((1, N), "float32"), B: T.Tensor((1, N), "float32")):
        with T.Kernel(1, threads=32) as bx:
            F = T.alloc_fragment((1, N), "float32")
            T.copy(A, F)
            T.cumsum(F, dim=1)
            T.copy(F, B)

    a = rng.integers(-5, 6, size=(1, N)).astype(np.float32)
    b = np.zeros((1, N), np.float32)
    tilelang.compile(k, target="cuda", execution_backend="emulator")(a, b)
    np.testing.assert_array_equal(b, np.cumsum(a, axis=1))


def test_fragment_row_indexed_by_an_outer_loop_is_staged_through_shared_memory():
    """A fragment row chosen by a serial loop variable inside T.Parallel: which thread holds an element cannot
    be proven (guessing once gave wrong numbers silently; then it was a layout error). Now the fragment, which
    the nest only reads, is staged through a shared tile first, with a performance warning at the line."""
    N = 64

    @T.prim_func
    def k(A: T.Tensor((4, N), "float32"), B: T.Tensor((4, N), "float32")):
        with T.Kernel(1, threads=32) as bx:
            F = T.alloc_fragment((4, N), "float32")
            T.copy(A, F)
            for r in T.serial(4):
                T.copy(F[r, 0:N], B[r, 0:N])

    with pytest.warns(TileLangPerformanceWarning, match=r"test_scalar_fragments.py:\d+: fragment 'F' .* is read in a "
                      r"T.Parallel loop .* staged through shared memory \(1024 bytes\)"):
        kern = tilelang.compile(k, target="cuda -arch=sm_80", execution_backend="emulator")
    seed = 3
    print(f"seed {seed}")
    a = np.random.default_rng(seed).standard_normal((4, N)).astype(np.float32)
    b = np.zeros((4, N), np.float32)
    kern(a, b)
    np.testing.assert_array_equal(b, a)
