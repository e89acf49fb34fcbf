"""`while` on a run-time condition (an IR while loop, its condition evaluated before every iteration), as
TileLang programs write it: loop state in T.alloc_var, conditions reading global memory, shared tiles
updated inside the loop (barriers inside and around it). Run on the CPU target, in the CUDA emulator
(race checks on) and through OpenCL on PoCL against NumPy; compiled by NVRTC for CUDA."""
import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import TileLangSyntaxError, TileLangTypeError

SEED = 1201


def first_above(M, N, thresh=1.5):
    """Per row: the index of the first element above `thresh` (N when there is none)."""

    @T.prim_func
    def k(A: T.Tensor((M, N), "float32"), B: T.Tensor((M,), "int32")):
        with T.Kernel(M, threads=32) as bx:
            j = T.alloc_var("int32", init=0)
            while j < N and A[bx, T.min(j, N - 1)] <= thresh:
                j = j + 1
            B[bx] = j

    return k


def smoothing(n=64):
    """steps[0] rounds (a run-time count) of S[i] <- S[i] + S[(i + 1) % n] on a shared tile."""

    @T.prim_func
    def k(A: T.Tensor((n,), "float32"), steps: T.Tensor((1,), "int32"), B: T.Tensor((n,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            S = T.alloc_shared((n,), "float32")
            S2 = T.alloc_shared((n,), "float32")
            it = T.alloc_var("int32", init=0)
            T.copy(A, S)
            while it < steps[0]:
                for i in T.Parallel(n):
                    S2[i] = S[i] + S[(i + 1) % n] * 0.5
                T.copy(S2, S)
                it = it + 1
            T.copy(S, B)

    return k


def _reference_first_above(a, thresh=1.5):
    out = []
    for row in a:
        hits = np.nonzero(row > thresh)[0]
        out.append(hits[0] if hits.size else a.shape[1])
    return np.array(out, "int32")


def _compile(f, where):
    if where == "emulator":
        return tilelang.compile(f, target="cuda", execution_backend="emulator")
    return tilelang.compile(f, target=where)


@pytest.mark.parametrize("where", ["cpu", "emulator", "opencl"])
def test_first_above_threshold(where):
    M, N = 37, 53
    print(f"seed {SEED}")
    a = np.random.default_rng(SEED).standard_normal((M, N)).astype("float32")
    a[3, :] = 0.0  # a row with no hit: the loop stops at N
    b = np.full(M, -1, "int32")
    _compile(first_above(M, N), where)(a, b)
    np.testing.assert_array_equal(b, _reference_first_above(a))


@pytest.mark.parametrize("where", ["cpu", "emulator", "opencl"])
@pytest.mark.parametrize("steps", [0, 1, 5])
def test_shared_tile_updated_in_a_runtime_loop(where, steps):
    n = 64
    print(f"seed {SEED}")
    a = np.random.default_rng(SEED).standard_normal(n).astype("float32")
    b = np.zeros(n, "float32")
    _compile(smoothing(n), where)(a, np.array([steps], "int32"), b)
    want = a.astype(np.float64)
    for _ in range(steps):
        want = want + np.roll(want, -1) * 0.5
    np.testing.assert_allclose(b, want, rtol=1e-5, atol=1e-5)


def test_cuda_source_has_the_loop_and_barriers_and_compiles():
    k = tilelang.compile(smoothing(), target="cuda -arch=sm_80")
    src = k.get_kernel_source()
    assert "while (" in src, src
    body = src[src.index("while ("):]
    assert body.count("__syncthreads()") >= 2, src  # S2 written then read; S written then read next round
    assert ".entry" in k.get_ptx()  # NVRTC compiled it


def test_barriers_are_needed_in_the_loop():
    # Without barriers the emulator sees the race between rounds.
    k = tilelang.compile(smoothing(), target="cuda", execution_backend="emulator",
                         pass_configs={"tl.disable_barrier_insertion": True})
    a = np.ones(64, "float32")
    with pytest.raises(tilelang.errors.TileLangEmulationError, match="race"):
        k(a, np.array([3], "int32"), np.zeros(64, "float32"))


def test_printed_and_reparsed():
    f = first_above(8, 16)
    text = f.script()
    assert "while " in text, text
    again = T.parse_source(text)
    assert tilelang.structural_equal(again, f), tilelang.script(again)


def test_a_condition_on_a_rebound_python_name_is_an_error():
    with pytest.raises(TileLangSyntaxError, match=r"rebinds as a Python name.*T.alloc_var") as info:
        @T.prim_func
        def k(A: T.Tensor((16,), "float32")):
            with T.Kernel(1, threads=32) as bx:
                j = A[0] * 0  # a Python name bound to an expression
                while j < 4.0:
                    j = j + 1.0
                A[1] = j

    assert "test_while.py:" in str(info.value)


def test_a_non_bool_condition_is_an_error():
    with pytest.raises(TileLangTypeError, match="while. condition must be a comparison"):
        @T.prim_func
        def k(A: T.Tensor((16,), "int32")):
            with T.Kernel(1, threads=32) as bx:
                while A[0]:
                    A[0] = A[0] - 1


def test_metal_and_hip_sources_compile():
    from tilelang.jit import metal

    m = tilelang.compile(smoothing(), target="metal").get_kernel_source()
    assert "while (" in m
    ok, diagnostics = metal.check_source(m)
    assert ok, diagnostics
    h = tilelang.compile(smoothing(), target="hip")
    assert "while (" in h.get_kernel_source() and "s_cbranch" in h.get_assembly()  # one wave: no s_barrier needed
