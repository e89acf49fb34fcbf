"""Helper modules TileLang programs import: tilelang.utils.tensor (get_tensor_supply, TensorSupplyType,
torch_assert_close) and tilelang.language.fp8 (determine_fp8_type)."""
import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang.language.fp8 import determine_fp8_type
from tilelang.profiler.supply import ParamSpec
from tilelang.utils.tensor import TensorSupplyType, get_tensor_supply, torch_assert_close


def test_get_tensor_supply():
    p = ParamSpec(0, "A", "float16", (3, 5))
    t = np.asarray(get_tensor_supply(TensorSupplyType.One)(p))
    assert t.shape == (3, 5) and t.dtype == np.float16 and (t == 1).all()
    i = np.asarray(get_tensor_supply(TensorSupplyType.Integer)(ParamSpec(1, "B", "int8", (64,))))
    assert i.dtype == np.int8 and i.min() >= -2 and i.max() <= 2
    with pytest.raises(ValueError, match="constant shape"):
        get_tensor_supply()(ParamSpec(2, "C", "float32", (T.dynamic("m"),)))


def test_torch_assert_close_is_tilelang_testing():
    import tilelang.testing

    assert torch_assert_close is tilelang.testing.torch_assert_close


def test_determine_fp8_type():
    assert determine_fp8_type() == T.float8_e4m3fn and determine_fp8_type("e5m2") == T.float8_e5m2
    with pytest.raises(ValueError, match="e4m3"):
        determine_fp8_type("e3m4")


def test_analyzer_counts_gemm_flops_and_global_bytes():
    """tilelang.tools.Analyzer (TileLang's analyze examples): 2*M*N*K FLOPs from the T.gemm calls over the
    grid and the K loop, the global bytes of the T.copy calls, and the time at the architecture's peak (the
    larger of compute and memory time)."""
    from tilelang.carver.arch import CUDA
    from tilelang.tools import Analyzer

    M, N, K = 512, 256, 384

    @T.prim_func
    def gemm(A: T.Tensor((M, K), "float16"), B: T.Tensor((N, K), "float16"), C: T.Tensor((M, N), "float16")):
        with T.Kernel(N // 128, M // 64, threads=128) as (bx, by):
            A_s = T.alloc_shared((64, 32), "float16")
            B_s = T.alloc_shared((128, 32), "float16")
            C_l = T.alloc_fragment((64, 128), "float32")
            T.clear(C_l)
            for k in T.Pipelined(K // 32, num_stages=3):
                T.copy(A[by * 64, k * 32], A_s)
                T.copy(B[bx * 128, k * 32], B_s)
                T.gemm(A_s, B_s, C_l, transpose_B=True)
            T.copy(C_l, C[by * 64, bx * 128])

    r = Analyzer.analysis(gemm, CUDA("cuda -arch=sm_80"))
    assert r.total_flops == 2 * M * N * K
    blocks, ksteps = (N // 128) * (M // 64), K // 32
    assert r.total_global_bytes == blocks * (ksteps * (64 * 32 + 128 * 32) * 2 + 64 * 128 * 2)
    assert r.estimated_time == pytest.approx(max(r.total_flops / 312e12, r.total_global_bytes / 2.0e12))
    assert r.expected_tflops <= 312.0 + 1e-9
    with pytest.raises(tilelang.errors.TileLangTypeError, match="takes a @T.prim_func"):
        Analyzer.analysis(lambda: 0, CUDA("cuda"))


def test_simplify_prim_func_decorator():
    from tilelang.transform import apply_simplify, simplify_prim_func

    @simplify_prim_func
    def factory(n):
        @T.prim_func
        def k(A: T.Tensor((n,), "float32")):
            with T.Kernel(1, threads=32) as bx:
                for i in T.Parallel(n):
                    A[i] = A[i] * (2 + 0) + (i * 4) // 4 - i

        return k

    text = tilelang.script(factory(64))
    assert "A[i] * 2" in text and "// 4" not in text  # folded by the simplifier
    assert tilelang.script(apply_simplify(factory(64))) == text
    with pytest.warns(UserWarning, match="inline_let=True\) has no effect"):
        apply_simplify(factory(64), inline_let=True)


@pytest.mark.parametrize("where", ["cpu", "emulator"])
def test_iket_markers_load_and_the_kernel_runs_without_them(where):
    """tilelang.tools.cuda.iket (TileLang's intra-kernel event tracing, its iket/ examples): `with T.Kernel(...)
    as bx, iket.range(...)`, iket.mark / iket.payload in the body. No events are emitted here: the names
    load, the events are listed, a warning says no trace is written, and the kernel computes the same."""
    from tilelang.tools.cuda import iket

    iket.reset()
    n, threads = 300, 128

    @T.prim_func
    def add(A: T.Tensor((n,), "float32"), B: T.Tensor((n,), "float32"), C: T.Tensor((n,), "float32")):
        with T.Kernel(T.ceildiv(n, threads), threads=threads) as bx, iket.range("kernel_total"):
            iket.mark("block_enter", payload=iket.payload(bx, dtype="int32"))
            for i in T.Parallel(threads):
                idx = bx * threads + i
                if idx < n:
                    C[idx] = A[idx] + B[idx]

    assert [e["name"] for e in iket.event_table()] == ["kernel_total", "block_enter"]
    a = np.arange(n, dtype=np.float32)
    c = np.zeros(n, np.float32)
    opts = {"target": "cpu"} if where == "cpu" else {"target": "cuda", "execution_backend": "emulator"}
    tilelang.compile(add, **opts)(a, a, c)
    np.testing.assert_array_equal(c, 2 * a)
    with iket.session(output_dir="/nonexistent/iket"):
        assert str(iket.output_dir()) == "/nonexistent/iket" and iket.trace_files() == []
    assert not iket.runtime_payloads_enabled()
    with pytest.raises(tilelang.errors.TileLangUnsupportedError, match="IKET profiler CLI"):
        iket.cli.main  # noqa: B018


def test_contrib_nvcc_compute_version():
    """tilelang.contrib.nvcc.get_target_compute_version, as TileLang programs call it to pick a code path: from a
    target's arch; without a target and without a CUDA device, an error rather than a guess."""
    from tilelang.carver.arch import driver
    from tilelang.contrib import nvcc
    from tilelang.errors import TileLangUnsupportedError

    assert nvcc.get_target_compute_version("cuda -arch=sm_90a") == "9.0"
    assert nvcc.get_target_compute_version({"kind": "cuda", "arch": "sm_86"}) == "8.6"
    assert nvcc.get_target_compute_version("cuda -arch=sm_120a") == "12.0"
    assert nvcc.get_target_arch("9.0") == "90" and nvcc.parse_compute_version("8.9") == (8, 9)
    assert nvcc.have_tensorcore("7.0") and not nvcc.have_tensorcore("6.1")
    if not driver.has_cuda_device():
        with pytest.raises(TileLangUnsupportedError, match="no CUDA device is present"):
            nvcc.get_target_compute_version()
