"""Python forms and T.* names TileLang programs use (the language issue, item 2): chained assignment,
comprehensions evaluated while parsing, T.Kernel with no grid, T.get_block_binding, T.thread_binding as a
value, T.Layout over a buffer's own shape, T.SharedBuffer / T.FragmentBuffer macro annotations (checked
at the call), T.Serial. Each runs on the CPU target and in the emulator against NumPy."""
import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import TileLangSyntaxError, TileLangTypeError

SEED = 4711
WHERE = ["cpu", "emulator"]


def _compile(f, where):
    if where == "emulator":
        return tilelang.compile(f, target="cuda", execution_backend="emulator")
    return tilelang.compile(f, target=where)


def _rng():
    print(f"seed {SEED}")
    return np.random.default_rng(SEED)


@pytest.mark.parametrize("where", WHERE)
def test_chained_assignment_and_comprehensions(where):
    sizes = [1, 2, 3]
    BK = BV = 32  # noqa: F841 -- at module level too

    @T.prim_func
    def k(A: T.Tensor((4, 32), "float32"), B: T.Tensor((4, 32), "float32")):
        with T.Kernel(1, threads=128) as bx:
            x = y = 2  # parse-time values
            s = sum(v * v for v in sizes if v > 1)  # 4 + 9
            for i, j in T.Parallel(4, 32):
                u = w = A[i, j] * 2.0  # one IR value, two names
                B[i, j] = u + w + x + y + s + sum([A[i, j] for _ in range(2)])

    a = _rng().standard_normal((4, 32)).astype(np.float32)
    b = np.zeros_like(a)
    _compile(k, where)(a, b)
    np.testing.assert_allclose(b, 4 * a.astype(np.float64) + 17 + 2 * a, rtol=1e-6)


def test_a_comprehension_over_a_kernel_value_is_refused_at_its_line():
    with pytest.raises(TileLangSyntaxError, match="comprehension inside a T.prim_func runs while the program is "
                                                  "parsed") as e:
        @T.prim_func
        def k(A: T.Tensor((4,), "int32")):
            with T.Kernel(1, threads=4) as bx:
                A[0] = sum(v for v in A[0])
    assert "test_language_forms.py:" in str(e.value)


@pytest.mark.parametrize("where", WHERE)
def test_kernel_without_a_grid_and_block_and_thread_bindings(where):
    @T.prim_func
    def one(A: T.Tensor((128,), "float32")):
        with T.Kernel(threads=128):
            for i in T.Parallel(128):
                A[i] = A[i] + 1.0

    @T.prim_func
    def rows(A: T.Tensor((3, 5, 64), "float32")):
        with T.Kernel(5, 3, threads=64) as (bx, by):
            b0, b1 = T.get_block_binding(0), T.get_block_binding(1)
            tx = T.thread_binding(0, 64, thread="threadIdx.x")
            A[b1, b0, tx] = A[b1, b0, tx] + b1 * 100 + b0 * 10 + tx * 0.5

    a = np.zeros(128, np.float32)
    _compile(one, where)(a)
    np.testing.assert_array_equal(a, 1)
    r = np.zeros((3, 5, 64), np.float32)
    _compile(rows, where)(r)
    want = (np.arange(3)[:, None, None] * 100 + np.arange(5)[None, :, None] * 10 + np.arange(64) * 0.5)
    np.testing.assert_array_equal(r, want.astype(np.float32))
    with pytest.raises(TileLangTypeError, match=r"T.get_block_binding\(2\): the kernel has 2 grid dimension"):
        @T.prim_func
        def bad(A: T.Tensor((4,), "int32")):
            with T.Kernel(2, 2, threads=4) as (bx, by):
                A[0] = T.get_block_binding(2)


def test_layout_over_a_buffers_own_shape():
    @T.prim_func
    def k(A: T.Tensor((64, 64), "float32"), B: T.Tensor((64, 64), "float32")):
        with T.Kernel(1, threads=128) as bx:
            S = T.alloc_shared((64, 64), "float32")
            T.annotate_layout({S: T.Layout(S.shape, lambda i, j: [j, i])})  # shape as IR values
            T.copy(A, S)
            T.copy(S, B)

    a = _rng().standard_normal((64, 64)).astype(np.float32)
    b = np.zeros_like(a)
    kern = tilelang.compile(k, target="cuda", execution_backend="emulator")
    kern(a, b)
    np.testing.assert_array_equal(b, a)


@pytest.mark.parametrize("where", WHERE)
def test_shared_and_fragment_buffer_annotations_are_checked(where):
    @T.macro
    def double(S: T.SharedBuffer((64,), "float32"), F: T.FragmentBuffer([64], "float32")):
        for i in T.Parallel(64):
            F[i] = S[i] * 2.0

    @T.prim_func
    def k(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            S = T.alloc_shared((64,), "float32")
            F = T.alloc_fragment((64,), "float32")
            T.copy(A, S)
            double(S, F)
            for _ in T.Serial(1):
                T.copy(F, B)

    a = _rng().standard_normal(64).astype(np.float32)
    b = np.zeros_like(a)
    _compile(k, where)(a, b)
    np.testing.assert_array_equal(b, 2 * a)
    with pytest.raises(TileLangTypeError, match=r"parameter 'S' is annotated T.SharedBuffer\(\(64,\), 'float32'\), "
                                                r"but the buffer 'F' passed to it is in local.fragment memory"):
        @T.prim_func
        def bad(A: T.Tensor((64,), "float32")):
            with T.Kernel(1, threads=64) as bx:
                F = T.alloc_fragment((64,), "float32")
                double(F, F)
    with pytest.raises(TileLangTypeError, match=r"has shape \(32,\), not \(64,\)"):
        @T.prim_func
        def bad2(A: T.Tensor((64,), "float32")):
            with T.Kernel(1, threads=64) as bx:
                S = T.alloc_shared((32,), "float32")
                F = T.alloc_fragment((64,), "float32")
                double(S, F)


def _restarted_gemm(M, N, K, bk=32):
    """Two passes of a K loop whose gemm clears the accumulator on each pass's first step, with the
    condition a run-time expression (TileLang's FlashMLA writes clear_accum=(j == 0))."""

    @T.prim_func
    def k(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=128):
            a = T.alloc_shared((M, bk), "float16")
            b = T.alloc_shared((bk, N), "float16")
            acc = T.alloc_fragment((M, N), "float32")
            T.fill(acc, 100.0)  # must not survive: the first step of each pass clears it
            for _ in T.serial(2):
                for t in T.Pipelined(T.ceildiv(K, bk), num_stages=2):
                    T.copy(A[0, t * bk], a)
                    T.copy(B[t * bk, 0], b)
                    T.gemm(a, b, acc, clear_accum=(t == 0))
            T.copy(acc, C)

    return k


@pytest.mark.parametrize("target", ["cpu", "cuda -arch=sm_80", "cuda -arch=sm_90a"])
def test_gemm_clear_accum_as_a_run_time_condition(target):
    """Before: `clear_accum=(t == 0)` was a TileLangTypeError ("has no value while the program is parsed").
    Expected: C is cleared where the condition holds, then accumulated into."""
    M, N, K = 64, 64, 96
    r = _rng()
    a = r.standard_normal((M, K)).astype(np.float16)
    b = r.standard_normal((K, N)).astype(np.float16)
    k = tilelang.compile(_restarted_gemm(M, N, K), target=target,
                         execution_backend=None if target == "cpu" else "emulator")
    c = np.zeros((M, N), np.float32)
    k(a, b, c)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-3, atol=1e-3)


def test_gemm_clear_accum_must_be_boolean():
    with pytest.raises(TileLangTypeError, match=r"test_language_forms.py:\d+:\d+: T.gemm clear_accum must be a bool"):
        @T.prim_func
        def k(A: T.Tensor((64, 64), "float16"), C: T.Tensor((64, 64), "float32")):
            with T.Kernel(2, threads=128) as bx:
                a = T.alloc_shared((64, 64), "float16")
                acc = T.alloc_fragment((64, 64), "float32")
                T.copy(A, a)
                T.gemm(a, a, acc, clear_accum=bx + 1)
                T.copy(acc, C)


batch, seq_len, width = T.dynamic("batch, seq_len, width")


@pytest.mark.parametrize("where", WHERE)
def test_dynamic_with_several_names(where):
    """`batch, seq_len, width = T.dynamic("batch, seq_len, width")` (TileLang's sparse-MLA style): one
    size per name, each bound by the call."""
    assert [str(v) for v in (batch, seq_len, width)] == ["batch", "seq_len", "width"]

    @T.prim_func
    def k(X: T.Tensor((batch, seq_len, width), "float32"), Y: T.Tensor((batch, seq_len, width), "float32")):
        with T.Kernel(T.ceildiv(width, 32), seq_len, batch, threads=32) as (bx, s, bb):
            for i in T.Parallel(32):
                if bx * 32 + i < width:
                    Y[bb, s, bx * 32 + i] = X[bb, s, bx * 32 + i] * 2.0 + 1.0

    kk = _compile(k, where)
    x = _rng().standard_normal((2, 3, 45)).astype(np.float32)
    y = np.zeros_like(x)
    kk(x, y)
    np.testing.assert_array_equal(y, x * 2.0 + 1.0)
    with pytest.raises(TileLangSyntaxError, match="identifier"):
        T.dynamic("a, 2b")


@pytest.mark.parametrize("where", WHERE)
def test_slices_bounded_by_kernel_lets_have_constant_extents(where):
    """`H0 = ...; H1 = H0 + 64; T.copy(acc, O[b, H0:H1, :])` (TileLang's sparse-MLA style). Before: on the
    CUDA target "the extent of a T.Parallel loop must be a compile-time constant" (H1 - H0 of two let
    variables did not simplify). Expected: the extent is 64, and the copy lands at the rows H0 names."""
    rows = T.dynamic("rows")

    @T.prim_func
    def k(X: T.Tensor((rows, 128, 32), "float32"), O: T.Tensor((rows, 128, 32), "float32")):
        with T.Kernel(2, rows, threads=128) as (bx, by):
            acc = T.alloc_fragment((64, 32), "float32")
            H0 = (bx % 2) * 64
            H1 = H0 + 64
            T.copy(X[by, H0:H1, :], acc)
            for i, j in T.Parallel(64, 32):
                acc[i, j] = acc[i, j] * 3.0
            T.copy(acc, O[by, H0:H1, :])

    x = _rng().standard_normal((3, 128, 32)).astype(np.float32)
    o = np.zeros_like(x)
    _compile(k, where)(x, o)
    np.testing.assert_array_equal(o, x * 3.0)


def test_bool_fragments_run_in_the_emulator():
    """Before: "emulator: buffer dtype bool" for a bool fragment (TileLang's sparse attention masks).
    Expected: a byte per element, as in the generated code."""

    @T.prim_func
    def k(Idx: T.Tensor((64,), "int32"), X: T.Tensor((64,), "float32"), Y: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=64):
            mask = T.alloc_fragment((64,), "bool")
            for i in T.Parallel(64):
                mask[i] = Idx[i] <= 20
            for i in T.Parallel(64):
                Y[i] = T.if_then_else(mask[i], X[i], -1.0)

    r = _rng()
    idx = r.integers(0, 40, 64).astype(np.int32)
    x = r.standard_normal(64).astype(np.float32)
    y = np.zeros_like(x)
    tilelang.compile(k, target="cuda", execution_backend="emulator")(idx, x, y)
    np.testing.assert_array_equal(y, np.where(idx <= 20, x, np.float32(-1.0)))


@pytest.mark.parametrize("where", WHERE)
def test_index_to_coordinates_linear_index_and_atomic_addx4(where):
    """T.index_to_coordinates / T.linear_index (TileLang's bitnet example) and T.atomic_addx4 (its sparse
    MLA backward: four consecutive elements, each atomically). Before: AttributeError for all three."""
    assert T.index_to_coordinates(23, (4, 6)) == [3, 5] and T.linear_index(3, 5, (4, 6)) == 23

    @T.prim_func
    def k(X: T.Tensor((8, 16), "float32"), Acc: T.Tensor((16,), "float32"), Flat: T.Tensor((128,), "float32")):
        with T.Kernel(1, threads=32):
            for t in T.Parallel(32):
                i, j = T.index_to_coordinates(t * 4, (8, 16))
                T.atomic_addx4(Acc[j], X[i, j])
                for v in T.serial(4):
                    Flat[T.linear_index(i, j + v, (8, 16))] = X[i, j + v] * 2.0

    x = _rng().standard_normal((8, 16)).astype(np.float32)
    acc = np.zeros(16, np.float32)
    flat = np.zeros(128, np.float32)
    _compile(k, where)(x, acc, flat)
    np.testing.assert_allclose(acc, x.astype(np.float64).sum(axis=0), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(flat, (x * 2.0).reshape(-1))


def test_evaluate_makes_a_statement_of_an_expression():
    @T.prim_func
    def k(A: T.Tensor((32,), "float32")):
        with T.Kernel(1, threads=32):
            for i in T.Parallel(32):
                T.evaluate(T.call_intrin("void", "tl.syncthreads"))
                A[i] = 1.0

    assert "T.evaluate" in k.script() or "syncthreads" in k.script()
    with pytest.raises(TileLangTypeError, match="T.evaluate takes a kernel expression"):
        T.evaluate(3)


def test_dtypes_are_strings_as_in_tilelang():
    """TileLang's dequantising GEMMs take a dtype's width from its name:
    `int("".join(c for c in T.int8 if c.isdigit()))`."""
    storage = T.int8
    assert int("".join(c for c in storage if c.isdigit())) == 8
    assert "".join(c for c in T.uint8 if not c.isdigit()) == "uint"
    assert "int" in T.int8 and "float" not in T.int8 and len(T.bfloat16) == 8
    assert T.float16.startswith("float") and T.float16.replace("16", "32") == "float32"
    assert T.float16[:5] == "float" and "x" + T.int8 == "xint8" and T.int8 + "_t" == "int8_t"
    with pytest.raises(AttributeError):
        T.float16.no_such_method  # noqa: B018


@pytest.mark.parametrize("where", WHERE)
def test_alloc_buffer_before_the_kernel_is_a_global_workspace(where):
    """TVM's `T.alloc_buffer(shape, dtype)` before `with T.Kernel` (TileLang's split-K dequant GEMM keeps its
    partial sums there): a global workspace, as T.alloc_global. Before: "T.alloc_shared must be called inside
    a `with T.Kernel(...)` block"."""
    @T.prim_func
    def k(A: T.Tensor((4, 32), "float32"), B: T.Tensor((32,), "float32")):
        W = T.alloc_buffer([4, 32], "float32")
        with T.Kernel(4, threads=32) as bx:
            for j in T.Parallel(32):
                W[bx, j] = A[bx, j] * 2.0
        with T.Kernel(1, threads=32) as bx:
            for j in T.Parallel(32):
                B[j] = W[0, j] + W[1, j] + W[2, j] + W[3, j]

    a = _rng().standard_normal((4, 32)).astype(np.float32)
    b = np.zeros(32, np.float32)
    _compile(k, where)(a, b)
    np.testing.assert_allclose(b, (a * 2.0).sum(axis=0), rtol=1e-5)


def test_tvm_short_dtype_spellings():
    """`T.dtype("uint")` (TileLang's LOP3 dequant helpers build their source format so) is uint32, as in TVM."""
    assert T.dtype("uint") == T.uint32 and T.dtype("int") == T.int32 and T.dtype("bf16") == T.bfloat16
    with pytest.raises(TileLangTypeError, match="unknown data type 'uint7'"):
        T.dtype("uint7")


@pytest.mark.parametrize("where", WHERE)
def test_python_max_and_min_of_kernel_expressions(where):
    """`max(0, n - 3)` of a T.dynamic size (TileLang's seesaw sparse MLA sizes its grid so): Python's max / min
    of kernel expressions are T.max / T.min. Before: "the kernel expression `n - 3 > 0` has no value while the
    program is parsed"."""
    n = T.dynamic("n")

    @T.prim_func
    def k(X: T.Tensor((n,), "float32"), Y: T.Tensor((n,), "float32")):
        with T.Kernel(max(1, n - 3), threads=32) as bx:  # one block per element but the last 3, at least one
            for i in T.Parallel(32):
                if i == 0:
                    Y[bx] = X[min(bx + 1, n - 1, 1000)] + max(bx, 2, 0)

    kk = _compile(k, where)
    for size in (2, 9):
        x = _rng().standard_normal(size).astype(np.float32)
        y = np.zeros_like(x)
        kk(x, y)
        blocks = max(1, size - 3)
        want = np.zeros_like(x)
        for b in range(blocks):
            want[b] = x[min(b + 1, size - 1, 1000)] + max(b, 2, 0)
        np.testing.assert_allclose(y, want, rtol=1e-6)


@pytest.mark.parametrize("target,backend", [("cpu", None), ("cuda", "emulator")])
def test_alloc_fragment_with_a_shared_scope_is_a_shared_tile(target, backend):
    """T.alloc_fragment(shape, dtype, scope="shared") (TileLang's cumsum example): the scope is the storage, as in
    TileLang. Before: "T.alloc_fragment: unknown or unsupported scope 'shared'"."""
    import numpy as np

    @T.prim_func
    def k(A: T.Tensor((32, 48), "float32"), B: T.Tensor((32, 48), "float32")):
        with T.Kernel(1, threads=128):
            S = T.alloc_fragment((32, 48), "float32", scope="shared")
            T.copy(A, S)
            T.cumsum(S, dim=1)
            T.copy(S, B)

    assert "shared" in str(k)
    a = np.random.default_rng(7).standard_normal((32, 48)).astype(np.float32)
    b = np.zeros_like(a)
    tilelang.compile(k, target=target, execution_backend=backend)(a, b)
    np.testing.assert_allclose(b, np.cumsum(a.astype(np.float64), axis=1), rtol=1e-5, atol=1e-5)
