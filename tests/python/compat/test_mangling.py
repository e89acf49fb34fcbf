"""C/C++/CUDA keywords and reserved identifiers as buffer and variable names (`dO` lower-cased is `do`,
as in backward kernels): the generated C++ and CUDA rename them, so the kernel compiles (host compiler;
NVRTC for sm_80) and computes the right numbers on the CPU and in the emulator."""
import re

import numpy as np

import tilelang
import tilelang.language as T

SEED = 11
N = 72  # not a multiple of the 32-wide tile


def keyword_kernel():
    @T.prim_func
    def struct(do: T.Tensor((N,), T.float32), new: T.Tensor((N,), T.float32), int64_t: T.Tensor((N,), T.float32)):
        with T.Kernel(T.ceildiv(N, 32), threads=32) as threadIdx:
            half = T.alloc_shared((32,), T.float32)
            float4 = T.alloc_fragment((32,), T.float32)
            __shared__ = T.alloc_fragment((32,), T.float32)
            T.copy(do[threadIdx * 32], half)
            T.copy(new[threadIdx * 32], float4)
            for int in T.Parallel(32):
                __shared__[int] = half[int] * 2.0 + float4[int]
            T.copy(__shared__, int64_t[threadIdx * 32])

    return struct


def _inputs():
    r = np.random.default_rng(SEED)
    print(f"seed {SEED}")
    return r.standard_normal(N).astype(np.float32), r.standard_normal(N).astype(np.float32)


def _declares(src, name):
    """`name` used as a variable: declared, indexed or assigned (a cast like `(int64_t)(x)` is fine)."""
    return re.search(rf"(?<![\w]){re.escape(name)}(\[| = )", src) is not None


def test_keywords_as_names_cpu():
    k = tilelang.compile(keyword_kernel(), target="cpu")
    src = k.get_kernel_source()
    for bad in ("do", "new", "half", "float4", "__shared__", "int64_t"):
        assert not _declares(src, bad), f"'{bad}' is used as a name in the generated C++"
    a, b = _inputs()
    out = np.zeros(N, np.float32)
    k(a, b, out)
    np.testing.assert_allclose(out, 2 * a.astype(np.float64) + b, rtol=1e-6)


def test_keywords_as_names_cuda_nvrtc_and_emulator():
    k = tilelang.compile(keyword_kernel(), target="cuda -arch=sm_80")  # NVRTC compiles it
    src = k.get_kernel_source()
    for bad in ("do", "new", "half", "float4", "__shared__", "int64_t", "threadIdx"):
        assert not _declares(src, bad), f"'{bad}' is used as a name in the generated CUDA"
    assert ".entry" in k.get_ptx() or ".visible" in k.get_ptx()
    e = tilelang.compile(keyword_kernel(), target="cuda -arch=sm_80", execution_backend="emulator")
    a, b = _inputs()
    out = np.zeros(N, np.float32)
    e(a, b, out)
    np.testing.assert_allclose(out, 2 * a.astype(np.float64) + b, rtol=1e-6)
