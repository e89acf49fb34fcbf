"""T.reinterpret(dtype, value): a bit cast between scalars of the same width, on every target, checked
against NumPy's .view() on seeded random inputs with a ragged size."""
import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import TileLangTypeError

SEED = 11
N = 100  # not a multiple of the 64-wide blocks


def _kernel(src, dst):
    @T.prim_func
    def bits(A: T.Tensor((N,), src), B: T.Tensor((N,), dst), C: T.Tensor((N,), src)):
        with T.Kernel(T.ceildiv(N, 64), threads=64) as bx:
            for i in T.Parallel(64):
                B[bx * 64 + i] = T.reinterpret(dst, A[bx * 64 + i])
                C[bx * 64 + i] = T.reinterpret(src, B[bx * 64 + i])  # and back: the same bits

    return bits


CASES = [("float32", "int32"), ("float32", "uint32"), ("float16", "int16"), ("bfloat16", "uint16"),
         ("float64", "int64"), ("int8", "uint8")]


def _inputs(src, rng):
    if src.startswith(("float", "bfloat")):
        v = rng.standard_normal(N) * 100
        v[:4] = [0.0, -0.0, np.inf, -np.inf]
        import ml_dtypes
        return v.astype({"bfloat16": ml_dtypes.bfloat16}.get(src, src))
    return rng.integers(-128, 128, N).astype(src)


@pytest.mark.parametrize("src,dst", CASES)
@pytest.mark.parametrize("where", ["cpu", "emulator"])
def test_bits_match_numpy_view(src, dst, where):
    print(f"seed {SEED}")
    rng = np.random.default_rng(SEED)
    a = _inputs(src, rng)
    b = np.zeros(N, dst)
    c = np.zeros_like(a)
    if where == "cpu":
        k = tilelang.compile(_kernel(src, dst), target="cpu")
    else:
        k = tilelang.compile(_kernel(src, dst), target="cuda", execution_backend="emulator")
    k(a, b, c)
    np.testing.assert_array_equal(b, a.view(dst))
    np.testing.assert_array_equal(c.view(dst), a.view(dst))


def test_opencl_runs_it_and_other_targets_compile_it():
    rng = np.random.default_rng(SEED)
    a = _inputs("float32", rng)
    b, c = np.zeros(N, "int32"), np.zeros(N, "float32")
    tilelang.compile(_kernel("float32", "int32"), target="opencl")(a, b, c)  # real OpenCL (PoCL)
    np.testing.assert_array_equal(b, a.view("int32"))
    src = tilelang.compile(_kernel("float16", "int16"), target="cuda -arch=sm_80").get_kernel_source()  # NVRTC
    assert "tl::bit_cast<int16_t>(tl::cast<tl::half_t>(" in src
    m = tilelang.compile(_kernel("float32", "int32"), target="metal")
    from tilelang.jit import metal
    ok, diag = metal.check_source(m.get_kernel_source())
    assert ok and "as_type<int32_t>" in m.get_kernel_source(), diag
    h = tilelang.compile(_kernel("bfloat16", "uint16"), target="hip")  # hipcc builds the code object
    assert "tl::bit_cast<uint16_t>" in h.get_kernel_source()


def test_widths_must_match():
    with pytest.raises(TileLangTypeError, match=r"float32 \(32 bits\) to int16 \(16 bits\)"):
        _kernel("float32", "int16")
