"""Scalar reads and writes of small fragments outside T.Parallel (online-softmax running values,
block-sparse masks), as TileLang kernels write them: such a fragment is whole in every thread
(replicated), and scalar code runs the same in every thread. Emulator and CPU against NumPy."""
import numpy as np
import pytest

import tilelang
import tilelang.language as T

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
