"""T.ptr parameters and T.make_tensor, as TileLang's pointer-parameter GEMM test writes them: the tensor
behind each pointer gets its shape from scalar parameters; the call checks that the scalars passed equal
the tensors' sizes. CPU target and CUDA emulator against NumPy in float64, ragged sizes."""
import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import TileLangArgumentError, TileLangTypeError, TileLangUnsupportedError

SEED = 1205


def matmul_ptr(block_M=32, block_N=32, block_K=32, dtype="float16", accum_dtype="float32"):
    @T.prim_func
    def main(a_ptr: T.ptr, b_ptr: T.ptr, c_ptr: T.ptr, m: T.int32, n: T.int32, k: T.int32):
        A = T.make_tensor(a_ptr, (m, k), dtype)
        B = T.make_tensor(b_ptr, (k, n), dtype)
        C = T.make_tensor(c_ptr, (m, n), accum_dtype)
        with T.Kernel(T.ceildiv(n, block_N), T.ceildiv(m, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.clear(C_local)
            for ko in T.Pipelined(T.ceildiv(k, block_K), num_stages=2):
                T.copy(A[by * block_M, ko * block_K], A_shared)
                T.copy(B[ko * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main


@pytest.mark.parametrize("where", ["cpu", "emulator"])
def test_pointer_parameter_gemm(where):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", tilelang.errors.TileLangPerformanceWarning)  # symbolic row lengths
        if where == "cpu":
            k = tilelang.compile(matmul_ptr(), target="cpu")
        else:
            k = tilelang.compile(matmul_ptr(), target="cuda", execution_backend="emulator")
    rng = np.random.default_rng(SEED)
    print(f"seed {SEED}")
    for M, N, K in [(70, 50, 40), (32, 64, 96)]:
        a = rng.standard_normal((M, K)).astype("float16")
        b = rng.standard_normal((K, N)).astype("float16")
        c = np.zeros((M, N), "float32")
        k(a, b, c, M, N, K)
        np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-3, atol=1e-3)


def test_a_scalar_that_disagrees_with_the_tensor_is_refused():
    k = tilelang.compile(matmul_ptr(), target="cpu")
    a, b, c = np.zeros((64, 32), "float16"), np.zeros((32, 48), "float16"), np.zeros((64, 48), "float32")
    with pytest.raises(TileLangArgumentError, match=r"\('m'\) of kernel 'main' is 100, but it is the size 'm' of a tensor's "
                                                   r"shape, bound to 64 by A.shape\[0\]"):
        k(a, b, c, 100, 48, 32)
    k(a, b, c, 64, 48, 32)  # consistent: runs


def test_errors():
    with pytest.raises(TileLangTypeError, match="pointer parameter 'b_ptr' is never given a tensor"):
        @T.prim_func
        def f(a_ptr: T.ptr, b_ptr: T.ptr, n: T.int32):
            A = T.make_tensor(a_ptr, (n,), "float32")
            with T.Kernel(1, threads=32) as bx:
                A[0] = 1.0

    with pytest.raises(TileLangUnsupportedError, match="a second T.make_tensor of 'a_ptr'"):
        @T.prim_func
        def g(a_ptr: T.ptr, n: T.int32):
            A = T.make_tensor(a_ptr, (n,), "float32")
            A2 = T.make_tensor(a_ptr, (n,), "float32")
            with T.Kernel(1, threads=32) as bx:
                A[0] = A2[0]
