"""T.alloc_global: global memory shared by the blocks of one launch (a workspace). The compiler makes it a
hidden trailing parameter (HoistWorkspaces); every call allocates it zero-filled and does not return it.
Run on the CPU target, in the CUDA emulator and through OpenCL on PoCL against NumPy, ragged sizes."""
import numpy as np
import pytest

import tilelang
import tilelang.language as T

SEED = 1202


def scratch_roundtrip(N):
    """One block writes A * 2 into a workspace sized by the symbolic N, then reads it back."""
    n = T.dynamic("n")

    @T.prim_func
    def k(A: T.Tensor((n,), "float32"), B: T.Tensor((n,), "float32")):
        with T.Kernel(T.ceildiv(n, 64), threads=64) as bx:
            W = T.alloc_global((n,), "float32")
            for i in T.Parallel(64):
                if bx * 64 + i < n:
                    W[bx * 64 + i] = A[bx * 64 + i] * 2.0
            for i in T.Parallel(64):
                if bx * 64 + i < n:
                    B[bx * 64 + i] = W[bx * 64 + i] + 1.0

    return k


def _compile(f, where, **kw):
    if where == "emulator":
        return tilelang.compile(f, target="cuda", execution_backend="emulator", **kw)
    return tilelang.compile(f, target=where, **kw)


@pytest.mark.parametrize("where", ["cpu", "emulator", "opencl"])
def test_workspace_sized_by_a_symbolic_size(where):
    k = _compile(scratch_roundtrip(100), where)
    for n in (100, 37):  # ragged against the 64-wide blocks; a new size allocates a new workspace
        print(f"seed {SEED}")
        a = np.random.default_rng(SEED + n).standard_normal(n).astype("float32")
        b = np.zeros(n, "float32")
        assert k(a, b) is None  # the workspace is not returned
        np.testing.assert_allclose(b, a.astype(np.float64) * 2 + 1, rtol=1e-6)


@pytest.mark.parametrize("where", ["cpu", "emulator"])
def test_workspace_starts_zeroed_on_every_call(where):
    """An accumulator in a workspace: a second call must not see the first call's sums."""
    M, N = 5, 70

    @T.prim_func
    def k(A: T.Tensor((M, N), "float32"), out: T.Tensor((M,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            W = T.alloc_global((M,), "float32")
            for i in T.Parallel(M):
                for j in T.serial(N):
                    W[i] = W[i] + A[i, j]  # relies on the workspace starting at zero
            for i in T.Parallel(M):
                out[i] = W[i]

    kern = _compile(k, where)
    a = np.random.default_rng(SEED).standard_normal((M, N)).astype("float32")
    for _ in range(2):
        out = np.zeros(M, "float32")
        kern(a, out)
        np.testing.assert_allclose(out, a.astype(np.float64).sum(1), rtol=1e-5, atol=1e-5)


def test_workspace_with_out_idx_and_printing():
    @T.prim_func
    def k(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            W = T.alloc_global((64,), "float32")
            for i in T.Parallel(64):
                W[i] = A[i] + 1.0
            for i in T.Parallel(64):
                B[i] = W[63 - i]

    text = k.script()
    assert 'W = T.alloc_global((64,), "float32")' in text, text
    assert tilelang.structural_equal(T.parse_source(text), k)
    kern = tilelang.compile(k, out_idx=[1], target="cpu")
    a = np.arange(64, dtype="float32")
    b = kern(a)
    np.testing.assert_array_equal(b, (a + 1)[::-1])
    assert len(kern.func.params) == 2  # the user's signature is unchanged
    prof = kern.get_profiler()
    prof.assert_allclose(lambda x: (x + 1)[::-1])  # the profiler supplies only the user's inputs
