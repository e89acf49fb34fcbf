"""A function whose body launches several T.Kernel scopes one after another (TileLang's fused-MoE example
computes its up projection in one kernel and its down projection in the next). On the CPU target the blocks
of each kernel run in order in one library call; on a GPU target each kernel is built as a kernel of its own
and they are launched in order with the same arguments. Before: the GPU lowerings stopped with an internal
error (only the first kernel's fragments got layouts)."""
import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import TileLangUnsupportedError

SEED = 3141


def _two_step(N=80):
    @T.prim_func
    def two_step(A: T.Tensor((N, 64), "float16"), W: T.Tensor((64, 64), "float16"), H: T.Tensor((N, 64), "float16"),
                 O: T.Tensor((N, 64), "float32")):
        # first kernel: H = relu(A @ W^T) (a gemm into a fragment)
        with T.Kernel(T.ceildiv(N, 32), threads=128) as bx:
            A_s = T.alloc_shared((32, 64), "float16")
            W_s = T.alloc_shared((64, 64), "float16")
            acc = T.alloc_fragment((32, 64), "float32")
            T.copy(A[bx * 32, 0], A_s)
            T.copy(W, W_s)
            T.gemm(A_s, W_s, acc, transpose_B=True, clear_accum=True)
            for i, j in T.Parallel(32, 64):
                acc[i, j] = T.max(acc[i, j], 0.0)
            T.copy(acc, H[bx * 32, 0])
        # second kernel, another grid and block: O = H @ W (H read into registers as the gemm's A operand)
        with T.Kernel(T.ceildiv(N, 16), threads=64) as bx:
            H_f = T.alloc_fragment((16, 64), "float16")
            W_s = T.alloc_shared((64, 64), "float16")
            out = T.alloc_fragment((16, 64), "float32")
            T.copy(H[bx * 16, 0], H_f)
            T.copy(W, W_s)
            T.clear(out)
            T.gemm(H_f, W_s, out)
            T.copy(out, O[bx * 16, 0])

    return two_step


@pytest.mark.parametrize("where", ["cpu", "cuda", "cuda -arch=sm_90a", "hip", "metal", "opencl"])
def test_two_kernels_in_one_function(where):
    N = 80  # not a multiple of either kernel's rows
    f = _two_step(N)
    if where in ("cpu", "opencl"):
        opts = {"target": where}
    else:
        opts = {"target": where, "execution_backend": "emulator"}
    print(f"seed {SEED}")
    rng = np.random.default_rng(SEED)
    a = (rng.standard_normal((N, 64)) / 4).astype(np.float16)
    w = (rng.standard_normal((64, 64)) / 4).astype(np.float16)
    h = np.zeros((N, 64), np.float16)
    o = np.zeros((N, 64), np.float32)
    kernel = tilelang.compile(f, **opts)
    kernel(a, w, h, o)
    h_ref = np.maximum(a.astype(np.float64) @ w.astype(np.float64).T, 0)
    np.testing.assert_allclose(h.astype(np.float64), h_ref, rtol=1e-2, atol=1e-2)
    o_ref = h.astype(np.float64) @ w.astype(np.float64)  # from the fp16 H the first kernel stored
    np.testing.assert_allclose(o, o_ref, rtol=1e-3, atol=1e-3)
    if where != "cpu":
        src = kernel.get_kernel_source()
        assert "two_step_kernel0" in src and "two_step_kernel1" in src


def test_split_keeps_parameters_and_order():
    parts = tilelang._ffi.split_kernels(_two_step())
    assert [p.name for p in parts] == ["two_step_kernel0", "two_step_kernel1"]
    for p in parts:
        assert [v.name for v, _ in p.params] == ["A", "W", "H", "O"]
        assert tilelang.script(p).count("T.Kernel(") == 1
    single = tilelang._ffi.split_kernels(parts[0])
    assert len(single) == 1 and single[0].name == "two_step_kernel0"


def test_out_idx_outputs_are_shared_by_the_kernels():
    @T.prim_func
    def f(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32"), C: T.Tensor((64,), "float32")):
        with T.Kernel(2, threads=32) as bx:
            for i in T.Parallel(32):
                B[bx * 32 + i] = A[bx * 32 + i] + 1.0
        with T.Kernel(4, threads=16) as bx:
            for i in T.Parallel(16):
                C[bx * 16 + i] = B[bx * 16 + i] * 2.0

    a = np.arange(64, dtype=np.float32)
    for opts in ({"target": "cpu"}, {"target": "cuda", "execution_backend": "emulator"}):
        b, c = tilelang.compile(f, out_idx=[1, 2], **opts)(a)
        np.testing.assert_array_equal(b, a + 1)
        np.testing.assert_array_equal(c, (a + 1) * 2)
