"""An on-chip buffer (shared, fragment, local) indexed by a loop past its declared shape is a compile error at
the line, on every target (TileLangTypeError, beside the check of indices always outside). Before: the CPU target wrote past the array silently (TileLang's attention-sink
backward declares `sinks` with `heads` entries and fills it in a T.Parallel(block_M): one NaN row there, 2.0078
instead of 2.0 in the reduced form below), the emulator reported it only when run."""
import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import TileLangTypeError

TARGETS = [("cpu", None), ("cuda", "emulator"), ("hip", "emulator"), ("opencl", None)]


def sinks_like(heads, M=64, guarded=False):
    @T.prim_func
    def k(S: T.Tensor((heads,), "float32"), X: T.Tensor((M,), "float32"), Y: T.Tensor((M,), "float32")):
        with T.Kernel(1, threads=128):
            sinks = T.alloc_fragment((heads,), "float32")
            acc = T.alloc_fragment((M,), "float32")
            T.copy(X, acc)
            for i in T.Parallel(M):
                if guarded:
                    if i < heads:
                        sinks[i] = S[i]
                else:
                    sinks[i] = S[0]
            for i in T.Parallel(M):
                acc[i] += sinks[i % heads]
            T.copy(acc, Y)

    return k


@pytest.mark.parametrize("target,backend", TARGETS)
def test_a_fragment_filled_past_its_shape_is_an_error(target, backend):
    with pytest.raises(TileLangTypeError, match=r"index 0 of 'sinks' \(i\) is 63 at i = 63, outside the "
                                                r"buffer's extent 2") as e:
        tilelang.compile(sinks_like(2), target=target, execution_backend=backend)
    assert "test_on_chip_bounds.py" in str(e.value) and "sinks[i] = S[0]" in str(e.value)


@pytest.mark.parametrize("target,backend", TARGETS)
def test_in_range_and_guarded_accesses_compile_and_run(target, backend):
    x = np.arange(64, dtype=np.float32)
    s64 = np.linspace(-1, 1, 64).astype(np.float32)
    y = np.zeros(64, np.float32)
    tilelang.compile(sinks_like(64), target=target, execution_backend=backend)(s64, x, y)  # in range
    np.testing.assert_allclose(y, x + s64[0])
    s4 = np.array([0.5, -1.0, 2.0, 3.0], np.float32)
    y = np.zeros(64, np.float32)
    tilelang.compile(sinks_like(4, guarded=True), target=target, execution_backend=backend)(s4, x, y)  # `if i < 4`
    np.testing.assert_allclose(y, x + s4[np.arange(64) % 4])


def test_serial_loops_and_block_indices_are_checked():
    @T.prim_func
    def shifted(A: T.Tensor((5,), "float32")):
        with T.Kernel(1, threads=32):
            S = T.alloc_shared((5,), "float32")
            for k in T.serial(5):
                S[k + 1] = A[k]

    with pytest.raises(TileLangTypeError, match=r"index 0 of 'S' \(k \+ 1\) is 5 at k = 4"):
        tilelang.compile(shifted, target="cpu")

    @T.prim_func
    def per_block(A: T.Tensor((4,), "float32")):
        with T.Kernel(4, threads=32) as bx:
            L = T.alloc_local((2,), "float32")
            L[bx] = A[bx]

    with pytest.raises(TileLangTypeError, match=r"index 0 of 'L' \(bx\) is 3 at bx = 3"):
        tilelang.compile(per_block, target="cuda", execution_backend="emulator")


def test_a_run_time_extent_is_not_a_witness():
    """A loop whose extent is known only at run time (its bound is an upper bound, not an iteration that runs) is
    not judged: here the caller keeps `valid` within the tile."""

    @T.prim_func
    def clipped(A: T.Tensor((128,), "float32"), B: T.Tensor((128,), "float32"), valid: T.int32):
        with T.Kernel(1, threads=32):
            S = T.alloc_shared((64,), "float32")
            for k in T.serial(T.min(valid, 128)):
                S[k] = A[k] * 2.0
            for k in T.serial(T.min(valid, 128)):
                B[k] = S[k]

    a = np.arange(128, dtype=np.float32)
    b = np.zeros(128, np.float32)
    tilelang.compile(clipped, target="cpu")(a, b, 40)
    np.testing.assert_array_equal(b[:40], a[:40] * 2)
