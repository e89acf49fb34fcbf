"""TileLang's eager @tilelang.jit style: the decorated function's body is the kernel. Sizes come from
T.const and the arguments' shapes, outputs from T.empty; calling compiles once per (constants, sizes)
and runs. Checked against NumPy in float64 on the CPU target and the CUDA emulator, at ragged sizes."""
import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import TileLangArgumentError, TileLangResourceError, TileLangSyntaxError, TileLangTypeError

SEED = 20261130


def rng():
    print(f"seed {SEED}")
    return np.random.default_rng(SEED)


def make_gemm(**jit_options):
    """The reference GEMM in TileLang's eager style (written here, not taken from TileLang)."""

    @tilelang.jit(**jit_options)
    def gemm(A, B, block_M=32, block_N=32, block_K=32, dtype=T.float16, accum_dtype=T.float32):
        M, N, K = T.const("M, N, K")
        A: T.Tensor((M, K), dtype)
        B: T.Tensor((K, N), dtype)
        C = T.empty((M, N), accum_dtype)
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_s = T.alloc_shared((block_M, block_K), dtype)
            B_s = T.alloc_shared((block_K, block_N), dtype)
            C_f = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.clear(C_f)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                T.copy(A[by * block_M, k * block_K], A_s)
                T.copy(B[k * block_K, bx * block_N], B_s)
                T.gemm(A_s, B_s, C_f)
            T.copy(C_f, C[by * block_M, bx * block_N])
        return C

    return gemm


def _operands(r, M, N, K, dtype=np.float16):
    return r.standard_normal((M, K)).astype(dtype), r.standard_normal((K, N)).astype(dtype)


def _ref(a, b):
    return a.astype(np.float64) @ b.astype(np.float64)


def test_eager_gemm_cpu_ragged_compiles_once_per_signature():
    gemm = make_gemm(target="cpu")
    r = rng()
    a, b = _operands(r, 100, 72, 48)  # none a multiple of the 32-wide tiles
    c = gemm(a, b)
    assert c.shape == (100, 72) and c.dtype == np.float32
    np.testing.assert_allclose(c, _ref(a, b), rtol=1e-3, atol=1e-3)
    assert len(gemm.cache) == 1
    kernel = gemm.compile(M=100, N=72, K=48)  # the same specialisation: from the cache, not rebuilt
    assert len(gemm.cache) == 1
    a2, b2 = _operands(r, 100, 72, 48)
    np.testing.assert_allclose(gemm(a2, b2), _ref(a2, b2), rtol=1e-3, atol=1e-3)
    assert len(gemm.cache) == 1
    np.testing.assert_allclose(kernel(a2, b2), _ref(a2, b2), rtol=1e-3, atol=1e-3)  # the kernel returns C
    # new sizes, new constants: new kernels
    a3, b3 = _operands(r, 33, 40, 17)
    np.testing.assert_allclose(gemm(a3, b3), _ref(a3, b3), rtol=1e-3, atol=1e-3)
    assert len(gemm.cache) == 2
    np.testing.assert_allclose(gemm(a3, b3, block_M=16), _ref(a3, b3), rtol=1e-3, atol=1e-3)
    assert len(gemm.cache) == 3
    # the specialised function is ordinary IR with the sizes folded in
    text = gemm.get_tir(a3, b3).script()
    assert 'A: T.Tensor((33, 17), "float16")' in text and 'C: T.Tensor((33, 40), "float32")' in text


def test_eager_gemm_emulator_ragged():
    gemm = make_gemm(target="cuda", execution_backend="emulator")
    a, b = _operands(rng(), 40, 48, 32)
    np.testing.assert_allclose(gemm(a, b), _ref(a, b), rtol=1e-3, atol=1e-3)


def test_eager_errors_name_the_parameter():
    gemm = make_gemm(target="cpu")
    r = rng()
    a, _ = _operands(r, 40, 24, 32)
    bad_b = r.standard_normal((31, 24)).astype(np.float16)  # K is 32 from A.shape[1]
    with pytest.raises(TileLangArgumentError, match=r"'B'.*dimension 0 is 31.*K was bound to 32 by A.shape\[1\]"):
        gemm(a, bad_b)
    with pytest.raises(TileLangArgumentError, match="missing the tensor argument 'B'"):
        gemm(a)
    with pytest.raises(TileLangArgumentError, match="no value for T.const 'N'"):
        gemm.compile(M=40, K=32)
    with pytest.raises(TileLangArgumentError, match="'block_M' is a compile-time constant"):
        gemm(a, bad_b, a)
    with pytest.raises(TileLangTypeError, match="eager kernel"):
        tilelang.jit(out_idx=[-1])(_eager_add)


def _eager_add(X, Y):
    n = T.const("n")
    X: T.Tensor((n,), T.float32)
    Y: T.Tensor((n,), T.float32)
    Z = T.empty((n,), T.float32)
    with T.Kernel(T.ceildiv(n, 64), threads=64) as bx:
        for i in T.Parallel(64):
            if bx * 64 + i < n:
                Z[bx * 64 + i] = X[bx * 64 + i] + Y[bx * 64 + i]
    return Z


m = T.dynamic("m")


@tilelang.jit(target="cpu")
def axpy_and_diff(X: T.Tensor((m,), T.float32), Y: T.Tensor((m,), T.float32), alpha: T.float32, block=64):
    """Signature annotations, a T.dynamic size, a run-time scalar and two outputs returned as a tuple."""
    S = T.empty((m,), T.float32)
    D = T.empty((m,), T.float32)
    with T.Kernel(T.ceildiv(m, block), threads=block) as bx:
        for i in T.Parallel(block):
            idx = bx * block + i
            if idx < m:
                S[idx] = alpha * X[idx] + Y[idx]
                D[idx] = X[idx] - Y[idx]
    return S, D


def test_signature_annotations_dynamic_size_scalar_and_tuple():
    r = rng()
    for n in (1, 97, 300):
        x = r.standard_normal(n).astype(np.float32)
        y = r.standard_normal(n).astype(np.float32)
        s, d = axpy_and_diff(x, y, 1.5)
        np.testing.assert_allclose(s, 1.5 * x.astype(np.float64) + y, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(d, x.astype(np.float64) - y, rtol=1e-6, atol=1e-6)
    assert len(axpy_and_diff.cache) == 1  # m stays symbolic: one kernel for every length


def test_eager_statement_errors_point_at_the_source():
    @tilelang.jit(target="cpu")
    def forgot_return(X):
        n = T.const("n")
        X: T.Tensor((n,), T.float32)
        Z = T.empty((n,), T.float32)
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(32):
                if i < n:
                    Z[i] = X[i]

    with pytest.raises(TileLangSyntaxError, match="'Z' from T.empty is never returned"):
        forgot_return(np.zeros(8, np.float32))

    @tilelang.jit(target="cpu")
    def unused_size(X):
        n, k = T.const("n, k")
        X: T.Tensor((n,), T.float32)
        Z = T.empty((n,), T.float32)
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(32):
                if i < n:
                    Z[i] = X[i] * k
        return Z

    with pytest.raises(TileLangArgumentError, match=r"test_eager_jit.py:\d+:\d+: no value for T.const 'k'"):
        unused_size(np.zeros(8, np.float32))
    # given by keyword, it is a compile-time size like the others
    x = np.arange(8, dtype=np.float32)
    np.testing.assert_allclose(unused_size(x, k=3), 3 * x)


def test_factory_style_still_returns_a_kernel():
    @tilelang.jit(out_idx=[-1], target="cpu")
    def factory(n, block=64):
        @T.prim_func
        def add(X: T.Tensor((n,), T.float32), Y: T.Tensor((n,), T.float32), Z: T.Tensor((n,), T.float32)):
            with T.Kernel(T.ceildiv(n, block), threads=block) as bx:
                for i in T.Parallel(block):
                    if bx * block + i < n:
                        Z[bx * block + i] = X[bx * block + i] + Y[bx * block + i]

        return add

    k = factory(50)
    x = np.arange(50, dtype=np.float32)
    np.testing.assert_allclose(k(x, x), 2 * x)


def test_autotune_above_an_eager_kernel():
    @tilelang.autotune(configs=[{"block": 32}, {"block": 64}], warmup=1, rep=3, verbose=False, use_cache=False,
                       ref_prog=lambda x, y: x.astype(np.float64) + y)
    @tilelang.jit(target="cpu")
    def add(X, Y, block=128):
        n = T.const("n")
        X: T.Tensor((n,), T.float32)
        Y: T.Tensor((n,), T.float32)
        Z = T.empty((n,), T.float32)
        with T.Kernel(T.ceildiv(n, block), threads=block) as bx:
            for i in T.Parallel(block):
                if bx * block + i < n:
                    Z[bx * block + i] = X[bx * block + i] + Y[bx * block + i]
        return Z

    r = rng()
    x = r.standard_normal(1000).astype(np.float32)
    y = r.standard_normal(1000).astype(np.float32)
    z = add(x, y)  # tunes over the configs on these shapes, then runs the best on x, y
    np.testing.assert_allclose(z, x.astype(np.float64) + y, rtol=1e-6)
    tuner = add.tuner
    (result,) = tuner.memory.values()
    assert result.config in ({"block": 32}, {"block": 64}) and len(result.results) == 2
    z2 = add(x, y, block=16)  # every tuned parameter given: that configuration, no tuning
    np.testing.assert_allclose(z2, x.astype(np.float64) + y, rtol=1e-6)
    assert len(tuner.memory) == 2


def test_annotate_pass_configs_in_an_eager_body():
    @tilelang.jit(target="cuda", execution_backend="emulator")
    def copy_through_shared(X):
        n = T.const("n")
        X: T.Tensor((n,), T.float32)
        Y = T.empty((n,), T.float32)
        T.annotate_pass_configs({tilelang.PassConfigKey.TL_EMIT_LINE_DIRECTIVES: True})
        with T.Kernel(T.ceildiv(n, 64), threads=64) as bx:
            S = T.alloc_shared((64,), T.float32)
            T.copy(X[bx * 64], S)
            T.copy(S, Y[bx * 64])
        return Y

    x = rng().standard_normal(100).astype(np.float32)
    with pytest.warns(UserWarning, match="tl.emit_line_directives' is accepted but not implemented"):
        y = copy_through_shared(x)
    np.testing.assert_array_equal(y, x)


@tilelang.jit(target="cpu")
def scale_rows(X, s: T.float32):
    m = T.dynamic("m")  # declared in the body: stays symbolic, one kernel for every row count
    X: T.Tensor((m, 3), T.float32)
    Y = T.empty((m, 3), T.float32)
    with T.Kernel(T.ceildiv(m, 32), threads=32) as bx:
        for i, j in T.Parallel(32, 3):
            if bx * 32 + i < m:
                Y[bx * 32 + i, j] = X[bx * 32 + i, j] * s
    return Y


def test_an_output_too_large_to_allocate_names_its_t_empty():
    # issue 39: NumPy's MemoryError escaped from the call instead of an error at the T.empty
    @tilelang.jit(target="cpu")
    def huge(X):
        n = T.const("n")
        X: T.Tensor((n,), T.float32)
        Z = T.empty((n, 2**50), T.float32)
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(32):
                if i < n:
                    Z[i, 0] = X[i]
        return Z

    line = next(i for i, text in enumerate(open(__file__).read().splitlines(), 1) if "T.empty((n, 2**50)" in text)
    with pytest.raises(TileLangResourceError, match=rf"test_eager_jit.py:{line}:\d+: T.empty: kernel 'huge': cannot "
                                                    r"allocate its output 'Z' of shape \(8, 1125899906842624\) "
                                                    r"float32 \(36028797018963968 bytes\)"):
        huge(np.zeros(8, np.float32))


def test_dynamic_size_declared_in_the_body():
    r = rng()
    for n in (5, 77):
        x = r.standard_normal((n, 3)).astype(np.float32)
        np.testing.assert_allclose(scale_rows(x, -0.5), -0.5 * x.astype(np.float64), rtol=1e-6)
    assert len(scale_rows.cache) == 1


def make_softmax(**jit_options):
    @tilelang.jit(**jit_options)
    def softmax(X, block_M=8, dtype=T.float32):
        M, N = T.const("M N")
        X: T.Tensor[[M, N], dtype]
        Y = T.empty([M, N], dtype)
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bm:
            x = T.alloc_fragment((block_M, N), dtype)
            row_max = T.alloc_fragment((block_M,), dtype)
            row_sum = T.alloc_fragment((block_M,), dtype)
            T.copy(X[bm * block_M, 0], x)
            T.reduce_max(x, row_max, dim=1)
            for i, j in T.Parallel(block_M, N):
                x[i, j] = T.exp(x[i, j] - row_max[i])
            T.reduce_sum(x, row_sum, dim=1)
            for i, j in T.Parallel(block_M, N):
                x[i, j] = x[i, j] / row_sum[i]
            T.copy(x, Y[bm * block_M, 0])
        return Y

    return softmax


@pytest.mark.parametrize("options", [{"target": "cpu"}, {"target": "cuda", "execution_backend": "emulator"}],
                         ids=["cpu", "emulator"])
def test_eager_softmax_ragged_rows(options):
    x = rng().standard_normal((21, 64)).astype(np.float32)  # 21 rows: the last 8-row tile is partial
    y = make_softmax(**options)(x)
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)


def test_jit_on_a_prim_func():
    @T.prim_func
    def double(X: T.Tensor((40,), T.float32), Y: T.Tensor((40,), T.float32)):
        with T.Kernel(1, threads=64) as bx:
            for i in T.Parallel(64):
                if i < 40:
                    Y[i] = X[i] * 2.0

    jitted = tilelang.jit(out_idx=[-1], target="cpu")(double)
    kernel = jitted()
    assert jitted() is kernel
    x = np.arange(40, dtype=np.float32)
    np.testing.assert_allclose(kernel(x), 2.0 * x)
    with pytest.raises(TileLangArgumentError, match="call it with no arguments"):
        jitted(x)


def test_a_name_error_gets_no_note_about_open_sizes():
    """An undefined name in an eager kernel is reported as such; the note about T.const sizes no tensor gave a value
    to is kept for errors that name one of them. Before: every error got the note (TileLang's NSA backward example,
    whose kernel reads a name defined only under __main__, was reported with a misleading note)."""
    import numpy as np
    from tilelang.errors import TileLangSyntaxError

    @tilelang.jit
    def late(A, block):
        M = T.const("M")
        B = T.empty((M,), "float32")
        with T.Kernel(T.ceildiv(M, block), threads=block) as bx:
            for i in T.Parallel(block):
                B[bx * block + i] = 2.0 * undefined_thing  # noqa: F821
        A: T.Tensor((M,), "float32")
        return B

    with pytest.raises(TileLangSyntaxError, match="name 'undefined_thing' is not defined") as e:
        late(np.zeros(64, np.float32), 32)
    assert "from T.const had no value yet" not in str(e.value)
