"""T.alloc_var(dtype, init=expr) with an expression (a let of the body, a loop variable, an atomic load): the value is
computed and stored where the call stands, as in TileLang (TileLang's stream-K GEMM declares
`current_iter = T.alloc_var(T.int32, init=last_iter)` with last_iter a let of the kernel body). Before: the init was
evaluated at the kernel's start, where the let is not bound ("unbound variable") and a loop's re-declaration did not
re-initialise. A constant init is the variable's value from the kernel's start, as before."""
import numpy as np
import pytest

import tilelang
import tilelang.language as T


def kernel(n=64, block=32):
    @T.prim_func
    def k(A: T.Tensor((n,), "int32"), B: T.Tensor((n,), "int32"), C: T.Tensor((n,), "int32")):
        with T.Kernel(T.ceildiv(n, block), threads=block) as b:
            tx = T.get_thread_binding()
            i = b * block + tx
            base = A[i] * 2  # a let of the body
            last = T.alloc_var("int32", init=7)  # a constant: from the kernel's start
            for j in T.serial(3):
                acc = T.alloc_var("int32", init=base + j)  # re-initialised at each iteration
                acc += 1
                last = acc
            B[i] = last
            seen = T.alloc_var("int32", init=T.atomic_load(A[i], "acquire"))
            C[i] = seen + 1

    return k


@pytest.mark.parametrize("target,backend", [("cpu", None), ("cuda", "emulator"), ("hip", "emulator")])
def test_an_expression_init_is_stored_where_the_call_stands(target, backend):
    seed = 20261207
    print("seed", seed)
    a = np.random.default_rng(seed).integers(-100, 100, 64).astype(np.int32)
    b = np.zeros(64, np.int32)
    c = np.zeros(64, np.int32)
    tilelang.compile(kernel(), target=target, execution_backend=backend)(a, b, c)
    np.testing.assert_array_equal(b, 2 * a + 2 + 1)  # the last iteration: base + 2, plus one
    np.testing.assert_array_equal(c, a + 1)
