"""The Python front end: parsing, parse-time evaluation, the printer and structural equality."""
import numpy as np
import pytest

import tilelang
import tilelang.language as T

import kernels

KERNELS = kernels.all_kernels()
KERNEL_IDS = [name for name, _ in KERNELS]


def roundtrip(func):
    return T.parse_source(tilelang.script(func))


def assert_same(a, b):
    assert tilelang.structural_equal(a, b), f"not equal:\n{tilelang.script(a)}\n---\n{tilelang.script(b)}"
    assert tilelang.structural_hash(a) == tilelang.structural_hash(b)


# ---- every kernel parses and survives print -> parse ---------------------------------------------
@pytest.mark.parametrize("name,func", KERNELS, ids=KERNEL_IDS)
def test_kernel_parses(name, func):
    assert isinstance(func, T.PrimFunc)
    text = tilelang.script(func)
    assert "@T.prim_func" in text
    assert "with T.Kernel(" in text


@pytest.mark.parametrize("name,func", KERNELS, ids=KERNEL_IDS)
def test_print_parse_roundtrip(name, func):
    again = roundtrip(func)
    assert_same(func, again)
    # The printer is a fixpoint: printing the re-parsed function gives the same text.
    assert tilelang.script(again) == tilelang.script(func)


def test_hash_is_deterministic():
    a = kernels.flashattn(1, 2, 128, 64, is_causal=True)
    b = kernels.flashattn(1, 2, 128, 64, is_causal=True)
    assert a is not b
    assert_same(a, b)


# ---- the demo GEMM, and printer spot checks -----------------------------------------------------------
matmul_kernel = kernels.demo_matmul_kernel()


def test_demo_gemm_printer():
    text = tilelang.script(matmul_kernel)
    assert "def matmul_kernel(" in text
    assert 'A: T.Tensor((1024, 1024), "float16")' in text
    assert "with T.Kernel(8, 8, threads=128) as (bx, by):" in text
    assert 'A_shared = T.alloc_shared((128, 32), "float16")' in text
    assert 'C_local = T.alloc_fragment((128, 128), "float32")' in text
    assert "T.fill(C_local, 0.0)" in text
    assert "for k in T.Pipelined(32, num_stages=2):" in text
    assert "T.copy(A[by * 128:by * 128 + 128, k * 32:k * 32 + 32], A_shared)" in text
    assert "T.gemm(A_shared, B_shared, C_local)" in text
    assert "T.copy(C_local, C[by * 128:by * 128 + 128, bx * 128:bx * 128 + 128])" in text


def test_demo_gemm_equals_factory():
    # kernels.matmul is the demo's kernel with its sizes as parameters.
    assert_same(matmul_kernel, kernels.matmul(1024, 1024, 1024, 128, 128, 32))


def test_corner_copies_equal_slice_copies():
    # A[i, j] as a copy operand takes its extent from the other side: same IR as the explicit slice.
    assert_same(kernels.matmul(256, 256, 256, 64, 64, 32), kernels.matmul_transposed(256, 256, 256, 64, 64, 32))


def test_corner_copy_takes_the_tile_shape_right_aligned():
    """A (64, 1) tile copied from S[i, j] is the column S[i:i + 64, j:j + 1], as in TileLang (before: the row
    S[i, j:j + 64], a silent wrong copy); a (1, 1, 8) tile at a 2-d corner drops its unit dims."""
    @T.prim_func
    def cols(S: T.Tensor((128, 8), "float32"), O: T.Tensor((64, 1), "float32"), Q: T.Tensor((1, 1, 8), "float32")):
        with T.Kernel(1, threads=64) as bx:
            c = T.alloc_shared((64, 1), "float32")
            q = T.alloc_shared((1, 1, 8), "float32")
            T.copy(S[32, 3], c)
            T.copy(S[1, 0], q)
            T.copy(c, O)
            T.copy(q, Q)

    text = tilelang.script(cols)
    assert "T.copy(S[32:96, 3:4], c)" in text, text
    assert "T.copy(S[1:2, 0:8], q)" in text, text
    s = np.arange(128 * 8, dtype=np.float32).reshape(128, 8)
    o, q = np.zeros((64, 1), np.float32), np.zeros((1, 1, 8), np.float32)
    tilelang.compile(cols, target="cpu")(s, o, q)
    np.testing.assert_array_equal(o[:, 0], s[32:96, 3])
    np.testing.assert_array_equal(q[0, 0], s[1])


def test_printer_tile_ops():
    text = tilelang.script(kernels.flashattn(1, 2, 128, 64, is_causal=False))
    assert "T.gemm(Q_shared, K_shared, acc_s, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)" in text
    assert "T.gemm(acc_s_cast, V_shared, acc_o, policy=T.GemmWarpPolicy.FullRow)" in text
    assert "T.reduce_max(acc_s, scores_max, dim=1, clear=False)" in text
    assert "T.reduce_sum(acc_s, scores_sum, dim=1)" in text
    assert "T.exp2(" in text
    assert "Q[bz:bz + 1, by:by + 1, bx * 64:bx * 64 + 64, 0:64]" in text
    text = tilelang.script(kernels.matmul_splitk(256, 256, 512, 64, 64, 32, split_k=4))
    assert "with T.Kernel(4, 4, 4, threads=128) as (bx, by, bz):" in text
    assert "T.atomic_add(C[by * 64:by * 64 + 64, bx * 64:bx * 64 + 64], C_local)" in text
    text = tilelang.script(kernels.cumsum(128, 128, 32, 32, dim=1, reverse=True, scope="fragment"))
    assert "T.cumsum(A_tile, A_tile, dim=1, reverse=True)" in text
    text = tilelang.script(kernels.matmul_transposed(256, 192, 128, 64, 64, 32, trans_A=True, trans_B=True))
    assert "T.gemm(A_shared, B_shared, C_local, transpose_A=True, transpose_B=True)" in text


def test_negative_dims_are_normalised():
    text = tilelang.script(kernels.softmax(64, 128, 8))
    assert "T.reduce_max(x, row_max, dim=1)" in text

    @T.prim_func
    def scan(A: T.Tensor((8, 16), "float32")):
        with T.Kernel(1, threads=32) as bx:
            acc = T.alloc_fragment((8, 16), "float32")
            row = T.alloc_fragment((8,), "float32")
            T.copy(A, acc)
            T.reduce_sum(acc, row)
            T.cumsum(acc, dim=-1)
            T.copy(acc, A)

    text = tilelang.script(scan)
    assert "T.reduce_sum(acc, row, dim=1)" in text
    assert "T.cumsum(acc, acc, dim=1)" in text


# ---- parse-time evaluation of Python values --------------------------------------------------------------
def test_causal_flag_changes_ir():
    causal = kernels.flashattn(1, 2, 128, 64, is_causal=True)
    plain = kernels.flashattn(1, 2, 128, 64, is_causal=False)
    assert not tilelang.structural_equal(causal, plain)
    ct, pt = tilelang.script(causal), tilelang.script(plain)
    # The Python `if is_causal:` leaves only the taken branch; the loop range follows the flag.
    assert "T.if_then_else(bx * 64 + i >= k * 64 + j" in ct
    assert "T.fill(acc_s, 0.0)" not in ct
    assert "T.if_then_else" not in pt
    assert "T.fill(acc_s, 0.0)" in pt
    assert "loop_range = T.min(2, bx + 1)" in ct
    assert "for k in T.Pipelined(loop_range, num_stages=1):" in ct
    assert "for k in T.Pipelined(2, num_stages=1):" in pt


def _python_control(flag, offsets):
    @T.prim_func
    def main(A: T.Tensor((16, 16), "float32")):
        with T.Kernel(2, threads=32) as bx:
            for s in offsets:
                A[bx, s] = 1.0
            if flag:
                A[bx, 0] = 2.0
            else:
                A[bx, 0] = 3.0
            if flag and len(offsets) > 2:
                A[bx, 15] = 4.0

    return main


def test_python_for_unrolls_and_if_is_evaluated():
    @T.prim_func
    def expected(A: T.Tensor((16, 16), "float32")):
        with T.Kernel(2, threads=32) as bx:
            A[bx, 1] = 1.0
            A[bx, 2] = 1.0
            A[bx, 4] = 1.0
            A[bx, 0] = 2.0
            A[bx, 15] = 4.0

    got = _python_control(True, [1, 2, 4])
    assert_same(got, expected)
    text = tilelang.script(got)
    assert "for " not in text and "if " not in text
    assert text.count("= 1.0") == 3

    other = _python_control(False, (3,))
    text = tilelang.script(other)
    assert "A[bx, 3] = 1.0" in text and "A[bx, 0] = 3.0" in text and "4.0" not in text


def test_python_range_and_comprehension_values():
    sizes = [2 ** i for i in range(3)]

    @T.prim_func
    def main(A: T.Tensor((16,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            for s in sizes:
                for i in range(s):
                    A[i + s] = 0.0

    text = tilelang.script(main)
    # `range` over constants is a serial kernel loop; the Python list unrolls.
    assert text.count("T.serial(") == 3
    assert tilelang.structural_equal(main, roundtrip(main))


def test_ir_if_becomes_ir():
    @T.prim_func
    def main(A: T.Tensor((16,), "float32"), B: T.Tensor((16,), "float32")):
        with T.Kernel(4, threads=32) as bx:
            if bx < 2:
                A[bx] = 1.0
            else:
                A[bx] = B[bx] if bx == 3 else 0.0
            for i in T.Parallel(4):
                if bx * 4 + i < 10:
                    B[bx * 4 + i] = A[i]

    text = tilelang.script(main)
    assert "if bx < 2:" in text
    assert "else:" in text
    assert "T.if_then_else(bx == 3, B[bx], 0.0)" in text
    assert "if bx * 4 + i < 10:" in text
    assert_same(main, roundtrip(main))


def test_alloc_var_roundtrip():
    @T.prim_func
    def main(A: T.Tensor((16,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            v = T.alloc_var("float32")
            v = 1.0
            for i in T.serial(16):
                v += A[i]
            A[0] = v

    text = tilelang.script(main)
    assert 'v = T.alloc_var("float32")' in text
    assert_same(main, roundtrip(main))


# ---- symbolic shapes ---------------------------------------------------------------------------------------
def test_dynamic_shapes_print_and_reparse():
    func = kernels.elementwise_add(block=128)
    text = tilelang.script(func)
    assert 'n = T.dynamic("n")' in text
    assert 'A: T.Tensor((n,), "float32")' in text
    assert "if idx < n:" in text
    assert_same(func, roundtrip(func))


def test_dynamic_gemm_shapes():
    m = T.dynamic("m")
    k = T.symbolic("k")

    @T.prim_func
    def main(A: T.Tensor((m, k), "float16"), B: T.Tensor((k, 64), "float16"), C: T.Tensor((m, 64), "float32")):
        with T.Kernel(T.ceildiv(m, 64), threads=128) as bx:
            A_shared = T.alloc_shared((64, 32), "float16")
            B_shared = T.alloc_shared((32, 64), "float16")
            C_local = T.alloc_fragment((64, 64), "float32")
            T.clear(C_local)
            for ko in T.Pipelined(T.ceildiv(k, 32), num_stages=2):
                T.copy(A[bx * 64, ko * 32], A_shared)
                T.copy(B[ko * 32, 0], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[bx * 64, 0])

    text = tilelang.script(main)
    assert 'm = T.dynamic("m")' in text and 'k = T.dynamic("k")' in text
    assert 'A: T.Tensor((m, k), "float16")' in text
    assert_same(main, roundtrip(main))


# ---- structural equality ---------------------------------------------------------------------------------
def test_alpha_equivalent_functions_are_equal():
    @T.prim_func
    def first(X: T.Tensor((64, 64), "float32"), Y: T.Tensor((64, 64), "float32")):
        with T.Kernel(2, threads=64) as bx:
            tile = T.alloc_fragment((32, 64), "float32")
            T.copy(X[bx * 32, 0], tile)
            for i, j in T.Parallel(32, 64):
                t = tile[i, j] * 2.0
                tile[i, j] = t + 1.0
            T.copy(tile, Y[bx * 32, 0])

    @T.prim_func
    def second(In: T.Tensor((64, 64), "float32"), Out: T.Tensor((64, 64), "float32")):
        with T.Kernel(2, threads=64) as block:
            frag = T.alloc_fragment((32, 64), "float32")
            T.copy(In[block * 32, 0], frag)
            for r, c in T.Parallel(32, 64):
                tmp = frag[r, c] * 2.0
                frag[r, c] = tmp + 1.0
            T.copy(frag, Out[block * 32, 0])

    @T.prim_func
    def different(X: T.Tensor((64, 64), "float32"), Y: T.Tensor((64, 64), "float32")):
        with T.Kernel(2, threads=64) as bx:
            tile = T.alloc_fragment((32, 64), "float32")
            T.copy(X[bx * 32, 0], tile)
            for i, j in T.Parallel(32, 64):
                t = tile[i, j] * 3.0
                tile[i, j] = t + 1.0
            T.copy(tile, Y[bx * 32, 0])

    assert_same(first, second)
    assert not tilelang.structural_equal(first, different)
    assert tilelang.structural_hash(first) != tilelang.structural_hash(different)


def test_different_kernels_are_not_equal():
    funcs = [f for _, f in KERNELS]
    hashes = {tilelang.structural_hash(f) for f in funcs}
    assert len(hashes) == len(funcs)
    assert not tilelang.structural_equal(kernels.matmul(256, 256, 256), kernels.matmul(256, 256, 512))
    assert not tilelang.structural_equal(kernels.matmul(256, 256, 256), kernels.matmul(256, 256, 256, dtype="bfloat16"))
    assert not tilelang.structural_equal(kernels.cumsum(64, 64, 32, 32), kernels.cumsum(64, 64, 32, 32, reverse=True))


# ---- errors from parsed text carry their location too ---------------------------------------------------
def test_parse_source_error_location():
    text = (
        "@T.prim_func\n"
        "def main(A: T.Tensor((16,), \"float32\")):\n"
        "    with T.Kernel(1, threads=32) as bx:\n"
        "        A[bx, 0] = 1.0\n"
    )
    with pytest.raises(tilelang.errors.TileLangTypeError) as info:
        T.parse_source(text)
    msg = str(info.value)
    assert ":4:" in msg and "has 1 dimensions but is indexed with 2 indices" in msg
    assert "A[bx, 0] = 1.0" in msg and "^" in msg
