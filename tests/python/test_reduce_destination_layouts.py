"""T.reduce into a destination whose layout something else fixed first (a T.Parallel loop that reads it beside
another fragment: striped over the block's threads), TileLang's KDA backward pattern (a shared tile reduced
into a row fragment). Before: TileLangLayoutError "the destination 'R' has layout striped(32, 128 threads,
vec 4), which this reduction ... cannot produce". Every thread ends the exchange with all the totals, so each
register of the destination takes the total of the element it holds."""
import numpy as np
import pytest

import tilelang
import tilelang.language as T

SEED = 1207


def reduce_then_loop(M, N, kind, src_scope, clear, threads):
    @T.prim_func
    def k(A: T.Tensor((M, N), "float32"), Init: T.Tensor((M,), "float32"), B: T.Tensor((M,), "float32")):
        with T.Kernel(1, threads=threads):
            if src_scope == "shared":
                S = T.alloc_shared((M, N), "float32")
            else:
                S = T.alloc_fragment((M, N), "float32")
            R = T.alloc_fragment((M,), "float32")
            Acc = T.alloc_fragment((M,), "float32")
            T.copy(Init, Acc)
            T.copy(A, S)
            T.copy(Init, R)
            if kind == "sum":
                T.reduce_sum(S, R, dim=1, clear=clear)
            else:
                T.reduce_max(S, R, dim=1, clear=clear)
            for i in T.Parallel(M):
                Acc[i] += R[i] * 2
            T.copy(Acc, B)

    return k


@pytest.mark.parametrize("target,backend", [("cuda", "emulator"), ("cpu", None), ("hip", "emulator"),
                                            ("opencl", None)])
@pytest.mark.parametrize("M,N,threads", [(32, 32, 128), (48, 20, 64), (32, 64, 96)])
@pytest.mark.parametrize("kind,src_scope,clear", [("sum", "shared", True), ("max", "shared", False),
                                                  ("sum", "fragment", False)])
def test_reduce_into_a_destination_a_loop_laid_out(target, backend, M, N, threads, kind, src_scope, clear):
    r = np.random.default_rng(SEED)
    print(f"seed {SEED}")
    a = r.standard_normal((M, N)).astype(np.float32)
    init = r.standard_normal(M).astype(np.float32)
    b = np.zeros(M, np.float32)
    k = tilelang.compile(reduce_then_loop(M, N, kind, src_scope, clear, threads), target=target,
                         execution_backend=backend)
    k(a, init, b)
    A, I = a.astype(np.float64), init.astype(np.float64)
    red = A.sum(1) if kind == "sum" else A.max(1)
    if not clear:
        red = red + I if kind == "sum" else np.maximum(red, I)
    np.testing.assert_allclose(b, I + 2 * red, rtol=1e-5, atol=1e-5)
