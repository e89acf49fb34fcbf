"""`break` and `continue` in kernel loops (issue 12): T.serial, T.unroll, parse-time range loops, run-time
`while` loops and `while True:` ... `break`, nested loops (an inner break leaves only the inner loop), loops
whose body holds tile ops and shared-memory barriers. The front end lowers them to T.alloc_var flags
(python/tilelang/language/loop_exits.py), so every backend runs the same IR: each program is run on the CPU
target, in the CUDA emulator (race checks on) and through OpenCL on PoCL against NumPy, and compiled by NVRTC."""
import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import TileLangSyntaxError

SEED = 1212
WHERE = ["cpu", "emulator", "opencl"]


def _compile(f, where):
    if where == "emulator":
        return tilelang.compile(f, target="cuda", execution_backend="emulator")
    return tilelang.compile(f, target=where)


def _data(shape):
    print(f"seed {SEED}")
    return np.random.default_rng(SEED).standard_normal(shape).astype("float32")


def first_above_break(M, N, thresh=1.0):
    @T.prim_func
    def k(A: T.Tensor((M, N), "float32"), B: T.Tensor((M,), "int32")):
        with T.Kernel(M, threads=32) as bx:
            hit = T.alloc_var("int32", init=N)
            for j in T.serial(N):
                if A[bx, j] > thresh:
                    hit = j
                    break
                hit = hit  # a statement after the break's `if`: skipped once the loop broke
            B[bx] = hit

    return k


def positive_sum_continue(M, N):
    """Sum of the positive elements of each row, and how many negative ones were skipped."""

    @T.prim_func
    def k(A: T.Tensor((M, N), "float32"), S: T.Tensor((M,), "float32"), C: T.Tensor((M,), "int32")):
        with T.Kernel(M, threads=32) as bx:
            s = T.alloc_var("float32", init=0.0)
            skipped = T.alloc_var("int32", init=0)
            for j in T.serial(N):
                if A[bx, j] < 0:
                    skipped = skipped + 1
                    continue
                s = s + A[bx, j]
            S[bx] = s
            C[bx] = skipped

    return k


def while_true_break(M, N, thresh=1.0):
    """`while True:` left by `break`; a `continue` in a run-time while."""

    @T.prim_func
    def k(A: T.Tensor((M, N), "float32"), B: T.Tensor((M,), "int32"), P: T.Tensor((M,), "int32")):
        with T.Kernel(M, threads=32) as bx:
            j = T.alloc_var("int32", init=0)
            while True:
                if j >= N:
                    break
                if A[bx, j] > thresh:
                    break
                j = j + 1
            B[bx] = j
            i = T.alloc_var("int32", init=0)
            pos = T.alloc_var("int32", init=0)
            while i < N:
                i = i + 1
                if A[bx, i - 1] <= 0:
                    continue
                pos = pos + 1
            P[bx] = pos

    return k


def nested_and_unrolled(M, N):
    """Per row: for each window of 4 columns, the offset of its first negative element (4 if none), by an
    inner break that leaves only the inner loop; then a parse-time range loop (unrolled) with a run-time
    break: the first of the first 8 columns above 0.5 (8 if none)."""

    @T.prim_func
    def k(A: T.Tensor((M, N), "float32"), W: T.Tensor((M, N // 4), "int32"), F: T.Tensor((M,), "int32")):
        with T.Kernel(M, threads=32) as bx:
            off = T.alloc_var("int32", init=0)
            for w in T.serial(N // 4):
                off = 4
                for t in T.unroll(4):
                    if A[bx, w * 4 + t] < 0:
                        off = t
                        break
                W[bx, w] = off
            first = T.alloc_var("int32", init=8)
            for j in range(8):
                if A[bx, j] > 0.5:
                    first = j
                    break
            F[bx] = first

    return k


def smoothing_until(n=64):
    """Rounds of S[i] <- S[i] + S[(i + 1) % n] / 2 on a shared tile, at most `limit[0]` of them, stopping
    early (break) once S[0] passes `stop[0]`; the loop body holds T.Parallel, T.copy and their barriers."""

    @T.prim_func
    def k(A: T.Tensor((n,), "float32"), limit: T.Tensor((1,), "int32"), stop: T.Tensor((1,), "float32"),
          B: T.Tensor((n,), "float32"), R: T.Tensor((1,), "int32")):
        with T.Kernel(1, threads=64) as bx:
            S = T.alloc_shared((n,), "float32")
            S2 = T.alloc_shared((n,), "float32")
            rounds = T.alloc_var("int32", init=0)
            T.copy(A, S)
            for it in T.serial(16):
                if it >= limit[0]:
                    break
                if S[0] > stop[0]:
                    break
                for i in T.Parallel(n):
                    S2[i] = S[i] + S[(i + 1) % n] * 0.5
                T.copy(S2, S)
                rounds = rounds + 1
            T.copy(S, B)
            R[0] = rounds

    return k


@pytest.mark.parametrize("where", WHERE)
def test_break_in_serial_loop(where):
    M, N = 37, 53
    a = _data((M, N))
    a[3, :] = 0.0  # no hit: the loop runs to the end
    b = np.full(M, -1, "int32")
    _compile(first_above_break(M, N), where)(a, b)
    want = np.array([np.nonzero(r > 1.0)[0][0] if (r > 1.0).any() else N for r in a], "int32")
    np.testing.assert_array_equal(b, want)


@pytest.mark.parametrize("where", WHERE)
def test_continue_in_serial_loop(where):
    M, N = 29, 41
    a = _data((M, N))
    s = np.zeros(M, "float32")
    c = np.full(M, -1, "int32")
    _compile(positive_sum_continue(M, N), where)(a, s, c)
    a64 = a.astype(np.float64)
    np.testing.assert_allclose(s, np.where(a64 > 0, a64, 0).sum(1), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(c, (a < 0).sum(1))


@pytest.mark.parametrize("where", WHERE)
def test_while_true_break_and_while_continue(where):
    M, N = 23, 31
    a = _data((M, N))
    a[5, :] = -1.0
    b = np.full(M, -1, "int32")
    p = np.full(M, -1, "int32")
    _compile(while_true_break(M, N), where)(a, b, p)
    want = np.array([np.nonzero(r > 1.0)[0][0] if (r > 1.0).any() else N for r in a], "int32")
    np.testing.assert_array_equal(b, want)
    np.testing.assert_array_equal(p, (a > 0).sum(1))


@pytest.mark.parametrize("where", WHERE)
def test_nested_break_and_unrolled_loops(where):
    M, N = 19, 36
    a = _data((M, N))
    w = np.full((M, N // 4), -1, "int32")
    f = np.full(M, -1, "int32")
    _compile(nested_and_unrolled(M, N), where)(a, w, f)
    win = a.reshape(M, N // 4, 4) < 0
    np.testing.assert_array_equal(w, np.where(win.any(2), win.argmax(2), 4))
    head = a[:, :8] > 0.5
    np.testing.assert_array_equal(f, np.where(head.any(1), head.argmax(1), 8))


@pytest.mark.parametrize("where", WHERE)
@pytest.mark.parametrize("limit,stop", [(0, 100.0), (5, 100.0), (16, 100.0), (16, 3.0)])
def test_break_out_of_a_loop_with_tile_ops(where, limit, stop):
    n = 64
    a = np.abs(_data(n))
    b = np.zeros(n, "float32")
    r = np.full(1, -1, "int32")
    _compile(smoothing_until(n), where)(a, np.array([limit], "int32"), np.array([stop], "float32"), b, r)
    s = a.astype(np.float64)
    rounds = 0
    for it in range(16):
        if it >= limit or s[0] > stop:
            break
        s = s + np.roll(s, -1) * 0.5
        rounds += 1
    assert r[0] == rounds
    np.testing.assert_allclose(b, s, rtol=1e-5)


def break_in_parallel_rows(M, N):
    """A T.serial loop with a break inside T.Parallel: each row's element loop leaves on its own."""

    @T.prim_func
    def k(A: T.Tensor((M, N), "float32"), B: T.Tensor((M,), "int32")):
        with T.Kernel(1, threads=64) as bx:
            for i in T.Parallel(M):
                B[i] = N
                for j in T.serial(N):
                    if A[i, j] > 1.0:
                        B[i] = j
                        break

    return k


@pytest.mark.parametrize("where", WHERE)
def test_break_in_a_serial_loop_inside_parallel(where):
    M, N = 40, 24
    a = _data((M, N))
    b = np.full(M, -1, "int32")
    _compile(break_in_parallel_rows(M, N), where)(a, b)
    want = np.array([np.nonzero(r > 1.0)[0][0] if (r > 1.0).any() else N for r in a], "int32")
    np.testing.assert_array_equal(b, want)


@pytest.mark.parametrize("make", [first_above_break, break_in_parallel_rows, positive_sum_continue, while_true_break, nested_and_unrolled])
def test_nvrtc_compiles_break_and_continue(make):
    k = tilelang.compile(make(16, 32), target="cuda -arch=sm_80")
    assert "loop_break" in k.get_kernel_source() or "loop_continue" in k.get_kernel_source()
    assert ".entry" in k.get_ptx()


def test_flags_in_the_printed_ir():
    text = first_above_break(4, 8).script()
    assert "loop_break" in text and "T.alloc_var" in text, text


def test_break_in_parallel_is_an_error():
    with pytest.raises(TileLangSyntaxError, match=r"`break` inside a T.Parallel loop is not supported") as e:
        @T.prim_func
        def bad(A: T.Tensor((64,), "float32")):
            with T.Kernel(1, threads=64) as bx:
                for i in T.Parallel(64):
                    if A[i] > 0:
                        break
                    A[i] = 0.0
    assert "test_break_continue.py:" in str(e.value)

