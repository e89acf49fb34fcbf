"""T.Parallel with an extent known only at run time (the flagship-kernels issue, item 2). Before: a parse
error ("T.Parallel extents must be compile-time constants"). Expected: on the GPU targets the nest becomes
a guarded partition over the block's threads (PartitionDynamicParallel: rounds of threads x 16 bytes of
elements, a guard on the tail), on the CPU target a plain loop; a nest that touches a fragment is a clear
error (a fragment's layout is fixed at compile time). Against NumPy on every target at ragged sizes."""
import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import TileLangUnsupportedError

SEED = 31
WHERE = [("cpu", None), ("opencl", None), ("cuda", "emulator"), ("hip", "emulator"), ("metal", "emulator")]
n = T.dynamic("n")


def rows_kernel():
    @T.prim_func
    def k(A: T.Tensor((n, 64), "float32"), B: T.Tensor((n, 64), "float32")):
        with T.Kernel(1, threads=128):
            for i, j in T.Parallel(n, 64):
                B[i, j] = A[i, j] * 2.0 + 1.0

    return k


def through_shared_kernel():
    """The extent read from memory, and a shared buffer written by one dynamic nest and read by the next
    (the barrier between them comes from InsertBarriers)."""

    @T.prim_func
    def k(Len: T.Tensor((1,), "int32"), A: T.Tensor((256,), "float16"), B: T.Tensor((256,), "float16")):
        with T.Kernel(1, threads=64):
            S = T.alloc_shared((256,), "float16")
            m = Len[0]
            for i in T.Parallel(m):
                S[i] = A[i]
            for i in T.Parallel(m):
                B[i] = S[m - 1 - i]

    return k


@pytest.mark.parametrize("target,backend", WHERE)
def test_rows_known_at_run_time(target, backend):
    k = tilelang.compile(rows_kernel(), target=target, execution_backend=backend)
    for rows in (1, 5, 37):
        print(f"seed {SEED + rows}")
        a = np.random.default_rng(SEED + rows).standard_normal((rows, 64)).astype(np.float32)
        b = np.zeros_like(a)
        k(a, b)
        np.testing.assert_array_equal(b, a * np.float32(2) + np.float32(1))


@pytest.mark.parametrize("target,backend", WHERE)
def test_extent_read_from_memory_through_shared(target, backend):
    k = tilelang.compile(through_shared_kernel(), target=target, execution_backend=backend)
    a = np.random.default_rng(SEED).standard_normal(256).astype(np.float16)
    print(f"seed {SEED}")
    for m in (1, 63, 200):
        b = np.zeros(256, np.float16)
        k(np.array([m], np.int32), a, b)
        np.testing.assert_array_equal(b[:m], a[:m][::-1])
        assert not b[m:].any()


def test_every_thread_takes_part():
    """float32 rows on 128 threads: rounds of 128 x 4 elements (16-byte accesses), not 32 busy threads."""
    src = tilelang.compile(rows_kernel(), target="cuda -arch=sm_80").get_kernel_source()
    assert "floordiv((n + 7), 8)" in src and "(o * 512)" in src, src


def test_a_fragment_in_a_dynamic_nest_is_an_error():
    @T.prim_func
    def k(A: T.Tensor((n,), "float32"), B: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=64):
            F = T.alloc_fragment((64,), "float32")
            T.fill(F, 0.0)
            for i in T.Parallel(n):
                F[i % 64] = A[i]
            T.copy(F, B)

    with pytest.raises(TileLangUnsupportedError, match="cannot touch the fragment 'F'"):
        tilelang.compile(k, target="cuda -arch=sm_80")
