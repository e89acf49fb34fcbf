"""InjectBoundGuards: element-wise global accesses that may fall outside the tensor are guarded (a
store is skipped, a load reads 0); proven ones are left alone; provably-outside ones are errors.
Checked as a pass (before/expected) and end to end: a grid that overhangs a 100-row output must not
write past it, on the CPU target and in the emulator."""
import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import TileLangTypeError

from passes import assert_equal, run

SEED = 1130


def overhanging(M=100, N=48, block=32):
    @T.prim_func
    def k(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(M, block), threads=128) as bx:
            for i, j in T.Parallel(block, N):
                B[bx * block + i, j] = A[bx * block + i, j] * 2.0 + 1.0
    return k


def test_guards_only_what_is_not_proven():
    @T.prim_func
    def before(A: T.Tensor((100, 48), "float32"), B: T.Tensor((100, 48), "float32")):
        with T.Kernel(4, threads=128) as bx:
            for i, j in T.Parallel(32, 48):
                B[bx * 32 + i, j] = A[bx * 32 + i, j] * 2.0 + 1.0
            for i in T.Parallel(32):
                if bx * 32 + i < 100:  # the user's own guard is a known fact
                    B[bx * 32 + i, 0] = A[bx * 32 + i, 47]

    @T.prim_func
    def expected(A: T.Tensor((100, 48), "float32"), B: T.Tensor((100, 48), "float32")):
        with T.Kernel(4, threads=128) as bx:
            for i, j in T.Parallel(32, 48):
                if bx * 32 + i < 100:  # j < 48 and both lower bounds are proven
                    B[bx * 32 + i, j] = T.if_then_else(bx * 32 + i < 100, A[bx * 32 + i, j], 0.0) * 2.0 + 1.0
            for i in T.Parallel(32):
                if bx * 32 + i < 100:
                    B[bx * 32 + i, 0] = A[bx * 32 + i, 47]

    assert_equal(run("InjectBoundGuards", before), expected)


def test_divisible_sizes_get_no_guard():
    f = run("InjectBoundGuards", overhanging(M=128))
    from tilelang import _ffi
    assert "if " not in _ffi.print_func(f) and "if_then_else" not in _ffi.print_func(f)


def test_an_access_always_outside_is_an_error():
    @T.prim_func
    def k(A: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(32):
                A[i + 1000] = 0.0

    with pytest.raises(TileLangTypeError, match=r"index i \+ 1000 of dimension 0 of 'A' is always outside the "
                                                r"tensor \(extent 64\)") as e:
        tilelang.compile(k, target="cpu")
    assert "test_inject_bound_guards.py" in str(e.value)


@pytest.mark.parametrize("backend", ["cpu", "emulator"])
def test_overhanging_grid_writes_nothing_past_the_tensor(backend):
    rng = np.random.default_rng(SEED)
    print("seed", SEED)
    a = rng.standard_normal((100, 48)).astype(np.float32)
    # B is the first 100 rows of a larger array: rows 100.. must stay untouched
    big = np.full((128, 48), 7.0, np.float32)
    b = big[:100]
    k = overhanging()
    kern = tilelang.compile(k, target="cpu") if backend == "cpu" else \
        tilelang.compile(k, target="cuda", execution_backend="emulator")
    kern(a, b)
    np.testing.assert_allclose(b.astype(np.float64), a.astype(np.float64) * 2 + 1, rtol=1e-6)
    assert (big[100:] == 7.0).all()
