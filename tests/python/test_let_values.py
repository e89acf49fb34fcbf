"""A Python assignment in a kernel (`x = A[tx] + 1`) is a let: its value is computed once, where it is
written, as in TileLang (TVM's LetStmt). Before: a let whose value read the thread index was substituted into
its uses, so a store between the let and a use changed the value (`x = A[tx] + 1; A[tx] = 100; C[tx] = x`
gave 101 on every target, a silent wrong result)."""
import numpy as np
import pytest

import tilelang
import tilelang.language as T

SEED = 20261207
TARGETS = [("cpu", None), ("cuda", "emulator"), ("opencl", None), ("metal", "emulator")]


def read_then_overwrite(n):
    @T.prim_func
    def k(A: T.Tensor((n,), "float32"), C: T.Tensor((n,), "float32")):
        with T.Kernel(1, threads=n):
            tx = T.get_thread_binding(0)
            x = A[tx] + 1
            A[tx] = 100.0
            C[tx] = x * 2

    return k


def swap_through_lets(n):
    """Each thread swaps its element with its neighbour's: both values are read before either is written."""

    @T.prim_func
    def k(A: T.Tensor((n,), "int32")):
        with T.Kernel(1, threads=n // 2):
            tx = T.get_thread_binding(0)
            lo = A[2 * tx]
            hi = A[2 * tx + 1]
            A[2 * tx] = hi
            A[2 * tx + 1] = lo

    return k


def accumulate_in_a_loop(n, steps):
    """A let inside a loop reads a value the loop's previous trip wrote."""

    @T.prim_func
    def k(A: T.Tensor((n,), "float32"), C: T.Tensor((n,), "float32")):
        with T.Kernel(1, threads=n):
            tx = T.get_thread_binding(0)
            for s in T.serial(steps):
                old = C[tx]
                C[tx] = A[tx]
                C[tx] = C[tx] + old * 0.5

    return k


@pytest.mark.parametrize("target,backend", TARGETS)
def test_a_let_keeps_the_value_it_read(target, backend):
    r = np.random.default_rng(SEED)
    print(f"seed {SEED}")
    a = r.standard_normal(64).astype(np.float32)
    c = np.zeros_like(a)
    ref = (a.astype(np.float64) + 1) * 2
    tilelang.compile(read_then_overwrite(64), target=target, execution_backend=backend)(a, c)
    np.testing.assert_allclose(c, ref, rtol=1e-6)
    assert (a == 100).all()


@pytest.mark.parametrize("target,backend", TARGETS)
def test_swap_through_lets(target, backend):
    a = np.arange(96, dtype=np.int32) * 3 - 50
    ref = a.reshape(-1, 2)[:, ::-1].reshape(-1).copy()
    tilelang.compile(swap_through_lets(96), target=target, execution_backend=backend)(a)
    np.testing.assert_array_equal(a, ref)


@pytest.mark.parametrize("target,backend", TARGETS)
def test_a_let_in_a_loop_reads_the_previous_trip(target, backend):
    r = np.random.default_rng(SEED)
    a = r.standard_normal(32).astype(np.float32)
    c = np.zeros_like(a)
    tilelang.compile(accumulate_in_a_loop(32, 4), target=target, execution_backend=backend)(a, c)
    ref = np.zeros(32)
    for _ in range(4):
        ref = a + ref * 0.5
    np.testing.assert_allclose(c, ref, rtol=1e-6)
