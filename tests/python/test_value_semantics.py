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
