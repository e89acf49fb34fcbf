"""A T.Parallel nest (or a T.copy lowered to one) that reads a fragment its threads do not hold (TileLang's flash
decoding copies a row slice of an accumulator to shared memory, writes shared memory from T.reduce_max's row
vector in a (rows, cols) nest, and mhc_pre reads a gemm operand fragment at an outer loop's offset). Before: a
"layout conflict in T.Parallel loop" / "depends on a variable other than the loop's own" error. Now a fragment
the nest only reads is staged through a shared tile first (its owners write it; barriers order the reads), with
a performance warning. Numerics against NumPy (float64) on seeded inputs, in the emulators and on the CPU."""
import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import TileLangPerformanceWarning

SEED = 911
TARGETS = ["cpu", "cuda -arch=sm_80", "hip", "metal"]


def _compile(f, target, staged=True):
    kw = {} if target == "cpu" else {"execution_backend": "emulator"}
    if target == "cpu" or not staged:
        return tilelang.compile(f, target=target, **kw)
    with pytest.warns(TileLangPerformanceWarning, match=r"test_fragment_staging.py:\d+: fragment '\w+' .* staged "
                      r"through shared memory"):
        return tilelang.compile(f, target=target, **kw)


def _ab():
    print(f"seed {SEED}")
    rng = np.random.default_rng(SEED)
    return rng.standard_normal((64, 32)).astype(np.float16), rng.standard_normal((64, 32)).astype(np.float16)


@pytest.mark.parametrize("target", TARGETS)
def test_row_slice_of_an_accumulator_copied_to_shared(target):
    @T.prim_func
    def slice_copy(A: T.Tensor((64, 32), "float16"), B: T.Tensor((64, 32), "float16"), O: T.Tensor((5, 64), "float16")):
        with T.Kernel(1, threads=128) as bx:
            a = T.alloc_shared((64, 32), "float16")
            b = T.alloc_shared((64, 32), "float16")
            acc = T.alloc_fragment((64, 64), "float32")
            o = T.alloc_shared((5, 64), "float16")
            T.copy(A, a)
            T.copy(B, b)
            T.clear(acc)
            T.gemm(a, b, acc, transpose_B=True)
            T.copy(acc[3:8, :], o)
            T.copy(o, O)

    a, b = _ab()
    o = np.zeros((5, 64), np.float16)
    _compile(slice_copy, target)(a, b, o)
    ref = (a.astype(np.float64) @ b.astype(np.float64).T)[3:8]
    np.testing.assert_allclose(o.astype(np.float64), ref, rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("target", TARGETS)
def test_row_vector_of_a_reduction_read_by_a_wider_nest(target):
    @T.prim_func
    def rows(A: T.Tensor((64, 32), "float16"), B: T.Tensor((64, 32), "float16"), O: T.Tensor((64, 4), "float32")):
        with T.Kernel(1, threads=128) as bx:
            a = T.alloc_shared((64, 32), "float16")
            b = T.alloc_shared((64, 32), "float16")
            acc = T.alloc_fragment((64, 64), "float32")
            m = T.alloc_fragment((64,), "float32")
            s = T.alloc_shared((64, 4), "float32")
            T.copy(A, a)
            T.copy(B, b)
            T.clear(acc)
            T.gemm(a, b, acc, transpose_B=True)
            T.reduce_max(acc, m, dim=1)
            for h, j in T.Parallel(64, 4):
                s[h, j] = m[h] * j
            T.copy(s, O)

    a, b = _ab()
    o = np.zeros((64, 4), np.float32)
    # HIP's reduction gives the row vector a layout that already fits the nest (no staging there)
    _compile(rows, target, staged=target != "hip")(a, b, o)
    ref = (a.astype(np.float64) @ b.astype(np.float64).T).max(1)[:, None] * np.arange(4)[None, :]
    np.testing.assert_allclose(o, ref, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("target", ["cpu", "cuda -arch=sm_80"])
def test_operand_fragment_read_at_an_outer_loop_offset(target):
    @T.prim_func
    def sq(X: T.Tensor((32, 64), "float16"), W: T.Tensor((32, 64), "float16"), O: T.Tensor((32, 32), "float32"),
           S: T.Tensor((32,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            x = T.alloc_fragment((32, 64), "float16")
            w = T.alloc_shared((32, 64), "float16")
            acc = T.alloc_fragment((32, 32), "float32")
            part = T.alloc_fragment((32, 4), "float32")
            tot = T.alloc_fragment((32,), "float32")
            T.copy(X, x)
            T.copy(W, w)
            T.clear(acc)
            T.gemm(x, w, acc, transpose_B=True)
            T.clear(part)
            for jj in T.serial(16):
                for i, j in T.Parallel(32, 4):
                    part[i, j] += T.cast(x[i, jj * 4 + j], "float32") * T.cast(x[i, jj * 4 + j], "float32")
            T.reduce_sum(part, tot, dim=1)
            T.copy(acc, O)
            T.copy(tot, S)

    print(f"seed {SEED}")
    rng = np.random.default_rng(SEED)
    x = rng.standard_normal((32, 64)).astype(np.float16)
    w = rng.standard_normal((32, 64)).astype(np.float16)
    o = np.zeros((32, 32), np.float32)
    s = np.zeros((32,), np.float32)
    _compile(sq, target)(x, w, o, s)
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(o, x64 @ w.astype(np.float64).T, rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(s, (x64 * x64).sum(1), rtol=1e-5)
