"""One value semantics on every backend (docs/semantics.md): a float16 x float16 product is a float16
(rounded) before it is added into a float32 accumulator, as TileLang types it. The CPU target and the
OpenCL lowering used to keep the exact product while the emulator rounded it (68.0176 vs 68.0188 on a
64-term dot). Checked on the CPU target, OpenCL (PoCL) and the CUDA, HIP and Metal lowerings in the
emulator, against NumPy's float16 arithmetic, on seeded random inputs."""
import numpy as np
import pytest

import tilelang
import tilelang.language as T

SEED = 2026
N = 200  # ragged against the 128-thread block
WHERE = ["cpu", "opencl", "cuda", "hip", "metal"]


def _compile(f, where):
    if where in ("cpu", "opencl"):
        return tilelang.compile(f, target=where)
    return tilelang.compile(f, target=where, execution_backend="emulator")


@T.prim_func
def fma_half(A: T.Tensor((N,), "float16"), B: T.Tensor((N,), "float16"), C: T.Tensor((N,), "float32")):
    with T.Kernel(T.ceildiv(N, 128), threads=128) as bx:
        for i in T.Parallel(128):
            C[bx * 128 + i] = C[bx * 128 + i] + A[bx * 128 + i] * B[bx * 128 + i]


@T.prim_func
def dot64(A: T.Tensor((64,), "float16"), B: T.Tensor((64,), "float16"), C: T.Tensor((1,), "float32")):
    with T.Kernel(1, threads=1) as bx:
        acc = T.alloc_var("float32")
        acc = 0.0
        for k in T.serial(64):
            acc = acc + A[k] * B[k]
        C[0] = acc


@pytest.mark.parametrize("where", WHERE)
def test_half_product_is_rounded_before_a_float_add(where):
    print(f"seed {SEED}")
    rng = np.random.default_rng(SEED)
    a = (rng.standard_normal(N) * 3).astype(np.float16)
    b = (rng.standard_normal(N) * 3).astype(np.float16)
    c = rng.standard_normal(N).astype(np.float32)
    want = c + (a * b).astype(np.float32)  # NumPy: the fp16 product rounds to fp16, the add is fp32
    got = c.copy()
    _compile(fma_half, where)(a, b, got)
    np.testing.assert_array_equal(got, want)
    assert not np.array_equal(want, c + a.astype(np.float32) * b.astype(np.float32)), "inputs must tell them apart"


@pytest.mark.parametrize("where", ["cpu", "opencl", "cuda"])
def test_64_term_dot_agrees_everywhere(where):
    rng = np.random.default_rng(SEED + 1)
    a = rng.standard_normal(64).astype(np.float16)
    b = rng.standard_normal(64).astype(np.float16)
    want = np.float32(0)
    for x, y in zip(a, b):
        want = np.float32(want + np.float32(x * y))
    c = np.zeros(1, np.float32)
    _compile(dot64, where)(a, b, c)
    assert c[0] == want, (c[0], want)


@pytest.mark.parametrize("where", ["cpu", "emulator", "opencl"])
def test_select_of_a_float_literal_and_an_int_literal_is_float(where):
    """`T.if_then_else(c, -T.infinity("float32"), 0)` is a float select (TVM promotes the int literal, as
    TileLang's attention-sink examples rely on). Before: the select took the int literal's type and the
    -inf saturated to INT32_MIN (-2147483648.0)."""
    import tilelang
    import tilelang.language as T

    @T.prim_func
    def k(X: T.Tensor((4,), "float32"), A: T.Tensor((4,), "float32"), B: T.Tensor((4,), "float32"),
          C: T.Tensor((4,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(4):
                A[i] = T.if_then_else(X[i] > 0, -T.infinity("float32"), 0)
                B[i] = T.if_then_else(X[i] > 0, 0, 1.5)
                C[i] = T.if_then_else(X[i] > 0, X[i] * 2.0, 0)

    x = np.array([1, -1, 2, -2], np.float32)
    a, b, c = (np.zeros(4, np.float32) for _ in range(3))
    opts = {"target": "cuda", "execution_backend": "emulator"} if where == "emulator" else {"target": where}
    tilelang.compile(k, **opts)(x, a, b, c)
    np.testing.assert_array_equal(a, np.where(x > 0, -np.inf, 0).astype(np.float32))
    np.testing.assert_array_equal(b, np.where(x > 0, 0, 1.5).astype(np.float32))
    np.testing.assert_array_equal(c, np.where(x > 0, x * 2, 0).astype(np.float32))
