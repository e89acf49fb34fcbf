"""tilelang.lower / tilelang.engine.lower (TileLang's lowering entry: source and lowered IR without loading
anything) and tilelang.engine.callback (importable; registering a rewrite of the generated code is refused,
never ignored)."""
import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import TileLangTypeError, TileLangUnsupportedError


def _kernel():
    @T.prim_func
    def scale(A: T.Tensor((256,), "float32"), B: T.Tensor((256,), "float32"), n: T.int32):
        with T.Kernel(2, threads=128) as bx:
            for i in T.Parallel(128):
                B[bx * 128 + i] = A[bx * 128 + i] * n

    return scale


def test_lower_gives_source_ir_and_params():
    from tilelang.engine import CompiledArtifact, lower

    f = _kernel()
    art = tilelang.lower(f, target="cuda -arch=sm_80")
    assert isinstance(art, CompiledArtifact) and lower is tilelang.lower
    assert "__global__" in art.kernel_source and "threadIdx.x" in art.kernel_source
    assert art.binary is None and art.host_mod is None and art.rt_mod is None
    assert [(p.name, p.dtype, p.shape) for p in art.params] == [("A", "float32", (256,)), ("B", "float32", (256,)),
                                                                ("n", "int32", None)]
    assert str(art.target) == "cuda -arch=sm_80"
    # the lowered function is thread-level IR: no tile op left, the thread index present
    text = tilelang.script(art.device_mod)
    assert "T.Parallel" not in text and "tl.thread_idx" in text
    # every target; the CPU one with its binary when asked
    for target in ("hip", "metal", "opencl", "cpu"):
        assert tilelang.lower(f, target=target).kernel_source
    cpu = tilelang.lower(f, target="cpu", enable_device_compile=True)
    assert cpu.binary and cpu.binary[:4] == b"\x7fELF"
    # the same source as the kernel that tilelang.compile builds
    assert tilelang.lower(f, target="cpu").kernel_source == tilelang.compile(f, target="cpu").get_kernel_source()


def test_lower_refuses_what_it_cannot_take():
    @tilelang.jit(target="cpu")
    def eager(A):
        A: T.Tensor((8,), T.float32)
        with T.Kernel(1, threads=8) as bx:
            for i in T.Parallel(8):
                A[i] = 0.0

    with pytest.raises(TileLangTypeError, match="get_tir"):
        tilelang.lower(eager)
    with pytest.warns(UserWarning, match="no host code is generated"):
        tilelang.lower(_kernel(), target="cpu", enable_host_codegen=True)


def test_postproc_callbacks_import_and_refuse():
    from tilelang.engine.callback import (register_c_postproc, register_cuda_postproc,  # noqa: F401
                                          register_cuda_postproc_callback, register_hip_postproc_callback)

    with pytest.raises(TileLangUnsupportedError, match="T.import_source"):
        @register_cuda_postproc_callback
        def rewrite(code, target):
            return code
    with pytest.raises(TileLangUnsupportedError, match="HIP"):
        register_hip_postproc_callback(override=False)(lambda code, target: code)
    with pytest.raises(TileLangUnsupportedError):
        register_cuda_postproc(lambda code, target: code)
    # nothing was registered: compiling still gives the compiler's own source
    a = np.ones(256, np.float32)
    b = np.zeros(256, np.float32)
    tilelang.compile(_kernel(), target="cpu")(a, b, 3)
    assert np.all(b == 3.0)
