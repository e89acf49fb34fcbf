"""T.import_source and T.call_extern (the language issue's missing names; TileLang's dequantising GEMMs call
their C helpers with them): the user's CUDA C++ goes before the kernel once, T.call_extern calls it with
values and T.access_ptr addresses, in TileLang's argument order and TVM's; NVRTC builds it and the PTX has the
helper's instruction. The emulator, the CPU target and the other GPU targets cannot run user CUDA code and
refuse it at the line. Before: TileLangUnsupportedError / AttributeError."""
import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import TileLangUnsupportedError

HELPER = r"""
__device__ __forceinline__ void scale_two(const float* src, float* dst, float s) {
  dst[0] = src[0] * s;
  dst[1] = __fsqrt_rn(src[1]);
}
__device__ __forceinline__ float twice(float x) { return 2.0f * x; }
"""


def kernel(tvm_order=False):
    @T.prim_func
    def k(A: T.Tensor((128, 2), "float32"), B: T.Tensor((128, 2), "float32")):
        with T.Kernel(1, threads=128) as bx:
            T.import_source(HELPER)
            T.import_source(HELPER)  # the same source twice is added once
            tx = T.get_thread_binding()
            src = T.alloc_local((2,), "float32")
            dst = T.alloc_local((2,), "float32")
            src[0] = A[tx, 0]
            src[1] = A[tx, 1]
            if tvm_order:
                T.call_extern("void", "scale_two", T.access_ptr(src[0], "r"), T.access_ptr(dst[0], "w"), 3.0)
            else:
                T.call_extern("scale_two", T.access_ptr(src[0], "r"), T.access_ptr(dst[0], "w"), 3.0)
            B[tx, 0] = T.call_extern("twice", dst[0], dtype="float32")
            B[tx, 1] = dst[1]

    return k


@pytest.mark.parametrize("tvm_order", [False, True])
def test_imported_cuda_code_is_compiled_and_called(tvm_order):
    k = tilelang.compile(kernel(tvm_order), target="cuda -arch=sm_80")
    src = k.get_kernel_source()
    assert src.count("void scale_two(") == 1 and src.index("scale_two(const") < src.index("__global__")
    assert "scale_two((&src[0]), (&dst[0]), 3.0f)" in src and "twice(dst[0])" in src
    assert "sqrt.rn.f32" in k.get_ptx()


@pytest.mark.parametrize("target,backend", [("cpu", None), ("hip", None), ("metal", None), ("opencl", None),
                                            ("cuda", "emulator")])
def test_targets_that_cannot_run_user_cuda_code_refuse_it(target, backend):
    with pytest.raises(TileLangUnsupportedError, match="user CUDA C\\+\\+") as e:
        k = tilelang.compile(kernel(), target=target, execution_backend=backend)
        import numpy as np
        a = np.ones((128, 2), np.float32)
        k(a, np.zeros_like(a))
    if backend is None:
        assert "test_extern.py" in str(e.value)
