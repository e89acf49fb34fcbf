"""PlanSharedMemory's liveness inside loops (src/transform/plan_shared_memory.cc): a shared tile whose first use in
an iteration overwrites it whole (a synchronous T.copy of the whole tile, a lowering's staging tile) holds nothing
across iterations, so its bytes may serve another tile between its last use and the next iteration's copy. Each
case checks the planned offsets in the shared-memory table and runs the kernel in the emulator (which reports any
race or read of another buffer's bytes) against NumPy; the cases that must not share are checked not to."""
import re

import numpy as np
import pytest

import tilelang
import tilelang.language as T


def offsets(kernel):
    rep = kernel.get_shared_memory_report()
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\w+)\s.*\s(\d+)$", rep, re.M)}, rep


def two_phase(n=4, rows=32, cols=64, partial_y=False, carried_x=False):
    """Per iteration: X = A[k] (whole copy), out += X; then Y = B[k] (whole, or half with partial_y), out += Y.
    carried_x: X is also read at the top of the next iteration before its copy (a loop-carried value)."""

    @T.prim_func
    def main(A: T.Tensor((n * rows, cols), "float32"), B: T.Tensor((n * rows, cols), "float32"),
             O: T.Tensor((rows, cols), "float32")):
        with T.Kernel(1, threads=128) as bx:
            X = T.alloc_shared((rows, cols), "float32")
            Y = T.alloc_shared((rows, cols), "float32")
            acc = T.alloc_fragment((rows, cols), "float32")
            T.clear(acc)
            if carried_x:
                T.copy(A[0, 0], X)
            for k in T.serial(n):
                if carried_x:
                    for i, j in T.Parallel(rows, cols):
                        acc[i, j] += X[i, j]
                T.copy(A[k * rows, 0], X)
                for i, j in T.Parallel(rows, cols):
                    acc[i, j] += X[i, j] * 2
                if partial_y:
                    T.copy(B[k * rows, 0], Y[0:rows // 2, :])
                    for i, j in T.Parallel(rows // 2, cols):
                        acc[i, j] += Y[i, j]
                else:
                    T.copy(B[k * rows, 0], Y)
                    for i, j in T.Parallel(rows, cols):
                        acc[i, j] += Y[i, j]
            T.copy(acc, O)

    return main


def reference(a, b, n, rows, partial_y, carried_x):
    out = np.zeros((rows, a.shape[1]))
    for k in range(n):
        if carried_x:
            out += a[(k - 1) * rows:k * rows] if k else a[:rows]
        out += 2 * a[k * rows:(k + 1) * rows]
        h = rows // 2 if partial_y else rows
        out[:h] += b[k * rows:k * rows + h]
    return out


@pytest.mark.parametrize("target", ["metal", "opencl"])
@pytest.mark.parametrize("partial_y,carried_x,share", [(False, False, True), (True, False, False),
                                                        (False, True, False)])
def test_iteration_local_tiles_share_bytes(target, partial_y, carried_x, share):
    rng = np.random.default_rng(7)
    n, rows, cols = 4, 32, 64
    f = two_phase(n, rows, cols, partial_y, carried_x)
    k = tilelang.compile(f, target=target, execution_backend="emulator")
    off, rep = offsets(k)
    assert (off["X"] == off["Y"]) == share, rep
    a = rng.standard_normal((n * rows, cols)).astype(np.float32)
    b = rng.standard_normal((n * rows, cols)).astype(np.float32)
    o = np.full((rows, cols), np.nan, np.float32)
    k(a, b, o)
    np.testing.assert_allclose(o, reference(a, b, n, rows, partial_y, carried_x), rtol=1e-5, atol=1e-5)


def test_async_copies_keep_the_whole_loop_rule():
    """On sm_80 the copies are cp.async (their writes land later than their statement): no sharing inside the loop,
    and the kernel still runs correctly."""
    n, rows, cols = 4, 32, 64
    f = two_phase(n, rows, cols)
    k = tilelang.compile(f, target="cuda -arch=sm_80", execution_backend="emulator")
    off, rep = offsets(k)
    assert off["X"] != off["Y"], rep
