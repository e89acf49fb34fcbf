"""The eager forms and TVMScript names of the language issue's item 4 that TileLang programs use: `A: T.ptr`
parameters given their tensor by T.make_tensor; run-time scalar parameters with defaults and as tensor
sizes (`M: T.int32`, `A: T.Tensor((M,), ...)`); T.Ref macro parameters (the macro writes the caller's
T.alloc_var); `a: T.handle` + T.match_buffer; f.par_compile / tilelang.par_compile; f.parse_cache_key.
Each kernel runs on the CPU target and in the emulator against NumPy."""
import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import TileLangArgumentError, TileLangTypeError

SEED = 1204
WHERE = ["cpu", "emulator"]


def _opts(where):
    return {"target": "cpu"} if where == "cpu" else {"target": "cuda", "execution_backend": "emulator"}


def _rng():
    print(f"seed {SEED}")
    return np.random.default_rng(SEED)


@pytest.mark.parametrize("where", WHERE)
def test_ptr_parameters_with_make_tensor(where):
    @tilelang.jit(**_opts(where))
    def gemm_ptr(A: T.ptr, B: T.ptr, C: T.ptr, M: int, N: int, K: int, dtype: T.dtype, block: int = 32):
        A = T.make_tensor(A, (M, K), dtype)
        B = T.make_tensor(B, (K, N), dtype)
        C = T.make_tensor(C, (M, N), T.float32)
        with T.Kernel(T.ceildiv(N, block), T.ceildiv(M, block), threads=128) as (bx, by):
            A_s = T.alloc_shared((block, 32), dtype)
            B_s = T.alloc_shared((32, block), dtype)
            C_l = T.alloc_fragment((block, block), T.float32)
            T.clear(C_l)
            for k in T.Pipelined(T.ceildiv(K, 32), num_stages=2):
                T.copy(A[by * block, k * 32], A_s)
                T.copy(B[k * 32, bx * block], B_s)
                T.gemm(A_s, B_s, C_l)
            T.copy(C_l, C[by * block, bx * block])

    rng = _rng()
    M, N, K = 48, 40, 64  # ragged against the 32-wide tiles
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c = np.zeros((M, N), np.float32)
    gemm_ptr(a, b, c, M, N, K, T.float16)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-3, atol=1e-3)
    # T.ptr() stands for the tensor when compiling ahead (TileLang's par_compile configs)
    kernels = gemm_ptr.par_compile([{"A": T.ptr(), "B": T.ptr(), "C": T.ptr(), "M": M, "N": N, "K": K,
                                     "dtype": T.float16}])
    c2 = np.zeros_like(c)
    kernels[0](a, b, c2)
    np.testing.assert_array_equal(c2, c)
    with pytest.raises(TileLangArgumentError, match="dimension 0 is 40 but the kernel expects 48|expects shape"):
        gemm_ptr(a[:40], b, c, M, N, K, T.float16)


def test_ptr_parameter_without_make_tensor_is_an_error():
    @tilelang.jit(target="cpu")
    def lonely(A: T.ptr, O, n: int = 8):
        O: T.Tensor((n,), T.float32)
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(n):
                O[i] = 0.0

    with pytest.raises(TileLangTypeError, match="pointer parameter 'A' is never given a tensor"):
        lonely.compile(A=T.ptr())


@pytest.mark.parametrize("where", WHERE)
def test_scalar_defaults_and_scalar_sizes(where):
    @tilelang.jit(**_opts(where))
    def axpb(A, M: T.int32, alpha: T.float32 = 2.0, beta: T.int32 = 7):
        A: T.Tensor((M,), T.float32)
        B = T.empty((M,), T.float32)
        with T.Kernel(T.ceildiv(M, 32), threads=32) as bx:
            for i in T.Parallel(32):
                B[bx * 32 + i] = A[bx * 32 + i] * alpha + beta
        return B

    a = _rng().standard_normal(45).astype(np.float32)  # not a multiple of the block
    np.testing.assert_allclose(axpb(a, 45), a * 2.0 + 7, rtol=1e-6)
    np.testing.assert_allclose(axpb(a, 45, 0.5), a * 0.5 + 7, rtol=1e-6)
    np.testing.assert_allclose(axpb(a, 45, beta=-1), a * 2.0 - 1, rtol=1e-6)
    # one kernel for every M: the size is a run-time value bound from A and checked against the scalar
    assert len(axpb.cache) == 1
    b = _rng().standard_normal(100).astype(np.float32)
    np.testing.assert_allclose(axpb(b, 100), b * 2.0 + 7, rtol=1e-6)
    assert len(axpb.cache) == 1
    with pytest.raises(TileLangArgumentError, match="'M'.* is 30, but .*bound to 45 by A.shape"):
        axpb(a, 30)


@pytest.mark.parametrize("where", WHERE)
def test_ref_macro_parameters_write_through(where):
    @T.macro
    def accumulate(total: T.Ref, v):
        total = total + v

    @T.macro
    def count_into(n: T.Ref):
        n = 0
        for i in T.serial(5):
            n = n + i

    @T.prim_func
    def k(A: T.Tensor((4,), "int32"), O: T.Tensor((2,), "int32")):
        with T.Kernel(1, threads=1):
            s = T.alloc_var(T.int32)
            s = 100
            for i in T.serial(4):
                accumulate(s, A[i])
            c = T.alloc_var(T.int32)
            count_into(n=c)
            O[0] = s
            O[1] = c

    a = np.array([1, 2, 3, 40], np.int32)
    o = np.zeros(2, np.int32)
    opts = _opts(where)
    tilelang.compile(k, **opts)(a, o)
    assert list(o) == [146, 10]
    assert "s[0] = s[0] + A[i]" in k.script()

    with pytest.raises(ValueError, match="parameter 'n' of macro 'count_into' is a T.Ref"):
        @T.prim_func
        def bad(O: T.Tensor((1,), "int32")):
            with T.Kernel(1, threads=1):
                x = 1
                count_into(x)
    with pytest.raises(TileLangTypeError, match="T.Ref is an annotation"):
        T.Ref()


@pytest.mark.parametrize("where", WHERE)
def test_handle_and_match_buffer(where):
    @T.prim_func
    def k(a: T.handle, b: T.handle, n: T.int32):
        A = T.match_buffer(a, (n, 16), "float32")
        B = T.match_buffer(b, (n, 16), "float32")
        with T.Kernel(T.ceildiv(n, 8), threads=128) as bx:
            for i, j in T.Parallel(8, 16):
                B[bx * 8 + i, j] = A[bx * 8 + i, j] * 3.0

    a = _rng().standard_normal((21, 16)).astype(np.float32)
    b = np.zeros_like(a)
    tilelang.compile(k, **_opts(where))(a, b, 21)
    np.testing.assert_allclose(b, a * 3.0, rtol=1e-6)
    with pytest.raises(Exception, match="strides"):
        @T.prim_func
        def strided(a: T.handle):
            A = T.match_buffer(a, (4, 4), "float32", strides=(8, 1))
            with T.Kernel(1, threads=1):
                A[0, 0] = 1.0


def test_par_compile_and_cache_keys(tmp_path, monkeypatch):
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path))

    @tilelang.jit(out_idx=[-1], target="cpu")
    def scale(M, N, factor=2.0):
        @T.prim_func
        def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
            with T.Kernel(1, threads=32) as bx:
                for i, j in T.Parallel(M, N):
                    B[i, j] = A[i, j] * factor
        return main

    kernels = scale.par_compile([(16, 8), {"M": 8, "N": 4, "factor": 3.0}, (4, 4)], num_workers=2)
    assert len(kernels) == 3 and len(scale.cache) == 3
    assert scale(8, 4, factor=3.0) is kernels[1]  # the call cache holds them
    assert scale.parse_cache_key(8, 4, factor=3.0) in scale.cache
    a = _rng().standard_normal((8, 4)).astype(np.float32)
    np.testing.assert_allclose(kernels[1](a), a * 3.0, rtol=1e-6)
    # ignore_error: the failing configuration gives None (and a warning), the others compile
    with pytest.warns(UserWarning, match="configuration .* failed"):
        mixed = scale.par_compile([(4, 4), (0, 4)], ignore_error=True)
    assert mixed[0] is not None and mixed[1] is None
    with pytest.raises(Exception):
        scale.par_compile([(0, 4)])

    @tilelang.jit(target="cpu")
    def add(A, B, block: int = 32):
        M = T.const("M")
        A: T.Tensor((M,), T.float32)
        B: T.Tensor((M,), T.float32)
        with T.Kernel(T.ceildiv(M, block), threads=block) as bx:
            for i in T.Parallel(block):
                B[bx * block + i] = A[bx * block + i] + 1.0

    ks = add.par_compile([{"M": 64}, {"M": 96, "block": 16}])
    assert len(ks) == 2 and len(add.cache) == 2
    x = np.arange(96, dtype=np.float32)
    y = np.zeros_like(x)
    add(x, y, block=16)  # served by the par_compile'd kernel
    np.testing.assert_allclose(y, x + 1.0)
    assert len(add.cache) == 2
    assert add.parse_cache_key(x, y, block=16) == ((("block", 16),), (("M", 96),))

    @T.prim_func
    def ones(A: T.Tensor((8,), "float32")):
        with T.Kernel(1, threads=8) as bx:
            for i in T.Parallel(8):
                A[i] = 1.0

    @T.prim_func
    def twos(A: T.Tensor((8,), "float32")):
        with T.Kernel(1, threads=8) as bx:
            for i in T.Parallel(8):
                A[i] = 2.0

    k1, k2 = tilelang.par_compile([ones, twos], target="cpu")
    z = np.zeros(8, np.float32)
    k2(z)
    assert np.all(z == 2.0)
    k1(z)
    assert np.all(z == 1.0)
    with pytest.raises(TileLangTypeError, match="takes @T.prim_func"):
        tilelang.par_compile([add])


def test_python_annotated_locals_are_parse_time_values():
    """`dtype: str = T.bfloat16` in an eager body (TileLang's sparse-MLA backward) is a plain Python
    assignment; `x: T.float32 = 0` stays a typed kernel variable."""
    @tilelang.jit(target="cpu")
    def scale(X):
        N = T.const("N")
        dtype: str = T.float32
        factor: float = 2.0
        X: T.Tensor((N,), dtype)
        Y = T.empty((N,), dtype)
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(N):
                y: T.float32 = X[i] * factor
                Y[i] = y + 1.0
        return Y

    x = np.arange(64, dtype=np.float32)
    np.testing.assert_array_equal(scale(x), x * 2 + 1)
