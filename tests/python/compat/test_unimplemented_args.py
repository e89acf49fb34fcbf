"""Arguments TileLang accepts that this compiler does not implement are never ignored in silence:
scheduling hints (they cannot change results) warn with TileLangPerformanceWarning at the user's line and
the kernel still computes the right thing; arguments that would change what the program means are a
TileLangUnsupportedError naming them."""
import os

import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import TileLangPerformanceWarning, TileLangUnsupportedError

HERE = os.path.basename(__file__)


def _scaled_copy(N, hint):
    """B = 2 * A over 64-element tiles, with one TileLang hint given (which one: `hint`)."""

    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, 64), threads=64, is_cpu=(hint == "is_cpu")) as bx:
            s = T.alloc_shared((64,), "float32")
            f = T.alloc_fragment((64,), "float32")
            if hint == "copy":
                T.copy(A[bx * 64], s, coalesced_width=4, eviction_policy="evict_first")
            else:
                T.copy(A[bx * 64], s)
            for k in T.Pipelined(1, num_stages=1, order=[0] if hint == "pipelined" else None):
                if hint == "parallel":
                    for i in T.Parallel(64, coalesced_width=4):
                        f[i] = s[i] * 2.0
                else:
                    for i in T.Parallel(64):
                        f[i] = s[i] * 2.0
            for j in T.unroll(1, explicit=(hint == "unroll")):
                T.copy(f, B[bx * 64])

    return main


@pytest.mark.parametrize("hint,names", [
    ("copy", "T.copy(coalesced_width=, eviction_policy=...)"),
    ("parallel", "T.Parallel(coalesced_width=...)"),
    ("pipelined", "T.Pipelined(order=...)"),
    ("unroll", "T.unroll(explicit=...)"),
    ("is_cpu", "T.Kernel(is_cpu=...)"),
])
@pytest.mark.parametrize("target", ["cpu", "cuda"])
def test_scheduling_hints_warn_at_their_line_and_results_stay_right(hint, names, target):
    seed = 20261201
    print("seed", seed)
    N = 200  # ragged: not a multiple of the 64-element tile
    with pytest.warns(TileLangPerformanceWarning) as rec:
        func = _scaled_copy(N, hint)
    msgs = [str(w.message) for w in rec]
    assert any(names in m and "accepted but not implemented" in m and f"{HERE}:" in m for m in msgs), msgs
    a = np.random.default_rng(seed).standard_normal(N).astype(np.float32)
    b = np.full(N, np.nan, np.float32)
    tilelang.compile(func, target=target, execution_backend="emulator" if target == "cuda" else None)(a, b)
    np.testing.assert_array_equal(b.astype(np.float64), 2.0 * a.astype(np.float64))


def test_no_hint_no_warning(recwarn):
    _scaled_copy(128, None)
    assert not [w for w in recwarn if issubclass(w.category, TileLangPerformanceWarning)]


@pytest.mark.parametrize("kwargs,match", [
    ({"return_prev": True}, r"return_prev=True\) is not supported: T.atomic_max is a statement"),
])
def test_atomic_arguments_that_change_meaning_are_rejected(kwargs, match):
    """(T.atomic_add(..., return_prev=True) is implemented: compat/test_atomic_return_prev.py.)"""
    with pytest.raises(TileLangUnsupportedError, match=match) as e:
        @T.prim_func
        def main(C: T.Tensor((4,), "float32")):
            with T.Kernel(1, threads=32) as bx:
                T.atomic_max(C[0], 1.0, **kwargs)
    assert f"{HERE}:" in str(e.value)


def test_relaxed_atomic_is_accepted():
    @T.prim_func
    def main(C: T.Tensor((4,), "float32")):
        with T.Kernel(3, threads=32) as bx:
            T.atomic_add(C[bx], 1.5, memory_order="relaxed")

    c = np.zeros(4, np.float32)
    tilelang.compile(main, target="cpu")(c)
    np.testing.assert_array_equal(c, [1.5, 1.5, 1.5, 0.0])


def test_kernel_prelude_is_rejected():
    with pytest.raises(TileLangUnsupportedError, match=r"prelude=...\): source text injected") as e:
        @T.prim_func
        def main(C: T.Tensor((4,), "float32")):
            with T.Kernel(1, threads=32, prelude="#include <foo.h>") as bx:
                C[0] = 1.0
    assert f"{HERE}:" in str(e.value)


def test_macro_options():
    """Macros are hygienic here; hygienic=False warns (names resolve where the macro is defined) and an
    unknown option is an error."""
    @T.macro(hygienic=True)
    def double(x):
        x[0] = x[0] * 2.0

    with pytest.warns(UserWarning, match=r"hygienic=False\) is accepted but not implemented"):
        @T.macro(hygienic=False)
        def triple(x):
            x[0] = x[0] * 3.0

    with pytest.raises(tilelang.errors.TileLangTypeError, match="unexpected options"):
        T.macro(inline=True)

    @T.prim_func
    def main(C: T.Tensor((1,), "float32")):
        with T.Kernel(1, threads=1) as bx:
            double(C)
            triple(C)

    c = np.ones(1, np.float32)
    tilelang.compile(main, target="cpu")(c)
    assert c[0] == 6.0


def test_t_macro_stays_the_decorator_after_a_macro_expanded():
    """Expanding a macro imports the expander's module; it must not replace T.macro (it once shadowed it,
    so a second @T.macro in the same process failed with "'module' object is not callable")."""
    @T.macro
    def inc(x):
        x[0] = x[0] + 1.0

    @T.prim_func
    def main(C: T.Tensor((1,), "float32")):
        with T.Kernel(1, threads=1) as bx:
            inc(C)

    assert callable(T.macro)

    @T.macro
    def dec(x):
        x[0] = x[0] - 1.0

    c = np.ones(1, np.float32)
    tilelang.compile(main, target="cpu")(c)
    assert c[0] == 2.0 and callable(T.macro)
