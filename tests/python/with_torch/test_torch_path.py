"""Kernels called with PyTorch tensors, as every TileLang example calls them: CPU tensors on the CPU
target and through the CUDA emulator, outputs allocated as torch tensors, every dtype, views, wrong
tensors refused, the eager style, the profiler with a torch reference and tilelang.testing's helpers.
Compared against NumPy in float64 on seeded inputs (the seed is printed)."""
import numpy as np
import pytest
import torch

import tilelang
import tilelang.language as T
import tilelang.testing

import kernels as K_  # tests/python (its conftest puts the folder on the path)
from tilelang.errors import TileLangArgumentError

SEED = 20261202


def gen():
    print(f"seed {SEED}")
    g = torch.Generator().manual_seed(SEED)
    return g


def f64(t):
    return t.detach().to(torch.float64).numpy()


def matmul(M, N, K):
    """The reference GEMM (tests/python/kernels.py) at 32-wide tiles, fp16 in, fp32 out."""
    return K_.matmul(M, N, K, block_M=32, block_N=32, block_K=32, dtype="float16", out_dtype="float32")


def copy_kernel(n, dtype):
    @T.prim_func
    def main(A: T.Tensor((n,), dtype), B: T.Tensor((n,), dtype)):
        with T.Kernel(T.ceildiv(n, 64), threads=64) as bx:
            for i in T.Parallel(64):
                if bx * 64 + i < n:
                    B[bx * 64 + i] = A[bx * 64 + i]

    return main


@pytest.mark.parametrize("target,backend", [("cpu", None), ("cuda -arch=sm_80", "emulator")])
def test_gemm_on_torch_tensors_allocates_a_torch_output(target, backend):
    M, N, K = 72, 40, 56  # ragged: none a multiple of the 32-wide tiles
    kernel = tilelang.compile(matmul(M, N, K), out_idx=[2], target=target, execution_backend=backend)
    g = gen()
    a = torch.randn(M, K, generator=g).to(torch.float16)
    b = torch.randn(K, N, generator=g).to(torch.float16)
    c = kernel(a, b)
    assert isinstance(c, torch.Tensor) and c.dtype == torch.float32 and c.device.type == "cpu"
    assert tuple(c.shape) == (M, N)
    np.testing.assert_allclose(f64(c), f64(a) @ f64(b), rtol=1e-3, atol=1e-3)


def test_gemm_writes_into_a_torch_output_passed_in():
    M = N = K = 64
    kernel = tilelang.compile(matmul(M, N, K), target="cpu")
    g = gen()
    a = torch.randn(M, K, generator=g).half()
    b = torch.randn(K, N, generator=g).half()
    c = torch.full((M, N), float("nan"))
    assert kernel(a, b, c) is None
    tilelang.testing.torch_assert_close(c, (a.double() @ b.double()).float(), rtol=1e-3, atol=1e-3,
                                        max_mismatched_ratio=0)


_DTYPES = ["float16", "bfloat16", "float32", "float64", "float8_e4m3fn", "float8_e5m2", "int8", "uint8", "int16",
           "int32", "int64", "bool"]


@pytest.mark.parametrize("dtype", _DTYPES)
def test_every_dtype_crosses_bit_exactly(dtype):
    n = 200  # ragged against the 64-wide blocks
    kernel = tilelang.compile(copy_kernel(n, dtype), out_idx=[1], target="cpu")
    g = gen()
    tdt = getattr(torch, dtype)
    if dtype == "bool":
        a = torch.randint(0, 2, (n,), generator=g).bool()
    elif tdt.is_floating_point:
        a = (torch.randn(n, generator=g) * 4).to(tdt)
    else:
        info = torch.iinfo(tdt)
        a = torch.randint(max(info.min, -2**31), min(info.max, 2**31 - 1), (n,), generator=g, dtype=torch.int64).to(tdt)
    b = kernel(a)
    assert b.dtype == tdt and b.shape == a.shape
    if tdt.is_floating_point and tdt.itemsize <= 8:
        bits = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[tdt.itemsize]
        assert torch.equal(a.view(bits), b.view(bits))
    else:
        assert torch.equal(a, b)


def test_a_row_slice_with_a_storage_offset_reads_the_right_rows():
    M = N = K = 32
    kernel = tilelang.compile(matmul(M, N, K), out_idx=[2], target="cpu")
    g = gen()
    big = torch.randn(M + 5, K, generator=g).half()
    a = big[5:]  # a contiguous view that starts 5 rows into its storage
    assert a.storage_offset() == 5 * K and a.is_contiguous()
    b = torch.randn(K, N, generator=g).half()
    np.testing.assert_allclose(f64(kernel(a, b)), f64(a) @ f64(b), rtol=1e-3, atol=1e-3)


def test_non_contiguous_views_behave_as_the_same_numpy_views():
    """A transposed or column-sliced torch view gets the same treatment as the NumPy view with the same
    strides: the same answer, or the same refusal."""
    M = N = K = 32
    kernel = tilelang.compile(matmul(M, N, K), out_idx=[2], target="cpu")
    g = gen()
    b = torch.randn(K, N, generator=g).half()
    for view in (lambda x: x.transpose(1, 0), lambda x: x[:, 3:3 + K]):
        base = torch.randn(K + 3, K + 3, generator=g).half()
        a_t = view(base)[:M, :K]
        a_np = view(base.numpy())[:M, :K]
        assert a_t.stride() == tuple(s // 2 for s in a_np.strides)
        outcomes = []
        for a, bb in ((a_t, b), (a_np, b.numpy())):
            try:
                outcomes.append(("ok", f64(torch.as_tensor(kernel(a, bb)))))
            except TileLangArgumentError as e:
                outcomes.append(("error", str(e)))
        assert outcomes[0][0] == outcomes[1][0], outcomes
        if outcomes[0][0] == "ok":
            np.testing.assert_allclose(outcomes[0][1], f64(a_t) @ f64(b), rtol=1e-3, atol=1e-3)
            np.testing.assert_array_equal(outcomes[0][1], outcomes[1][1])
        else:
            assert outcomes[0][1] == outcomes[1][1]


def test_wrong_torch_tensors_are_refused_by_name():
    kernel = tilelang.compile(matmul(64, 64, 64), out_idx=[2], target="cpu")
    a = torch.zeros(64, 64, dtype=torch.float16)
    with pytest.raises(TileLangArgumentError, match=r"'A'.*float32|float32.*'A'"):
        kernel(a.float(), a)
    with pytest.raises(TileLangArgumentError, match="'B'"):
        kernel(a, torch.zeros(64, 32, dtype=torch.float16))
    with pytest.raises(TileLangArgumentError, match="meta"):
        kernel(torch.empty(64, 64, dtype=torch.float16, device="meta"), a)
    with pytest.raises(TileLangArgumentError, match="to_dense"):
        kernel(a.to_sparse(), a)


def test_an_empty_torch_tensor_is_accepted():
    kernel = tilelang.compile(copy_kernel(T.dynamic("n"), "float32"), target="cpu")
    a = torch.empty(0)
    b = torch.empty(0)
    kernel(a, b)  # nothing to do; must neither fault nor refuse the zero-size layout
    a = torch.arange(70, dtype=torch.float32)
    b = torch.zeros(70)
    kernel(a, b)
    assert torch.equal(a, b)


def test_torch_dtypes_in_annotations():
    n = 96

    @T.prim_func
    def scale(A: T.Tensor((n,), torch.float16), B: T.Tensor((n,), torch.float32)):
        with T.Kernel(T.ceildiv(n, 32), threads=32) as bx:
            for i in T.Parallel(32):
                B[bx * 32 + i] = T.Cast("float32", A[bx * 32 + i]) * 2.0

    kernel = tilelang.compile(scale, out_idx=[1], target="cpu")
    a = torch.randn(n, generator=gen()).half()
    np.testing.assert_array_equal(f64(kernel(a)), f64(a) * 2)


def test_eager_kernel_on_torch_tensors():
    @tilelang.jit(target="cpu")
    def add_one(A, dtype=T.float32):
        n = T.const("n")
        A: T.Tensor((n,), dtype)
        B = T.empty((n,), dtype)
        with T.Kernel(T.ceildiv(n, 64), threads=64) as bx:
            for i in T.Parallel(64):
                if bx * 64 + i < n:
                    B[bx * 64 + i] = A[bx * 64 + i] + 1.0
        return B

    a = torch.randn(130, generator=gen())
    b = add_one(a)
    assert isinstance(b, torch.Tensor) and b.dtype == torch.float32
    np.testing.assert_array_equal(f64(b), f64(a + 1.0))  # rounded to float32 as the kernel does


def test_profiler_checks_against_a_reference_written_with_torch():
    """TileLang's examples write their reference programs with torch functions."""
    M = N = K = 64
    kernel = tilelang.compile(matmul(M, N, K), out_idx=[2], target="cpu")
    profiler = kernel.get_profiler(tensor_supply_type=tilelang.TensorSupplyType.Normal)

    def ref_program(A, B):
        return torch.matmul(A.float(), B.float())

    profiler.assert_allclose(ref_program, atol=1e-2, rtol=1e-2)
    with pytest.raises(AssertionError, match="differ"):
        profiler.assert_allclose(lambda A, B: torch.matmul(A.float(), B.float()) + 1.0, atol=1e-2, rtol=1e-2)
    assert profiler.do_bench(n_warmup=1, n_repeat=3) > 0


def test_testing_helpers_on_torch_tensors():
    tilelang.testing.set_random_seed(7)
    x = torch.randn(1000)
    tilelang.testing.set_random_seed(7)
    assert torch.equal(x, torch.randn(1000))
    y = x.clone()
    y[0] += 1.0  # 1 of 1000 elements: within max_mismatched_ratio=0.001
    tilelang.testing.torch_assert_close(x, y, atol=1e-3, rtol=0, max_mismatched_ratio=0.001)
    y[1] += 1.0
    with pytest.raises(AssertionError, match="2 of 1000"):
        tilelang.testing.torch_assert_close(x, y, atol=1e-3, rtol=0, max_mismatched_ratio=0.001)
    tilelang.testing.assert_allclose(x.half(), x.half().float(), rtol=0, atol=0)


def test_torch_dtype_table_and_dtype_class_of_the_dtypes_module():
    """TileLang's helper modules (gemm_sp's sparse_utils) import these two names from tilelang.language.dtypes."""
    from tilelang.language.dtypes import _TORCH_DTYPE_TO_STR, dtype

    assert _TORCH_DTYPE_TO_STR[torch.float16] == "float16" and _TORCH_DTYPE_TO_STR[torch.bfloat16] == "bfloat16"
    assert _TORCH_DTYPE_TO_STR[torch.int8] == "int8" and _TORCH_DTYPE_TO_STR[torch.bool] == "bool"
    assert dtype(_TORCH_DTYPE_TO_STR[torch.float32]) == T.float32 and dtype is T.dtype


def test_strided_torch_views_are_copied_around_the_launch():
    """T.StridedTensor with a torch view (tests/python/compat/test_strided_tensor.py has the NumPy forms)."""
    from tilelang.errors import TileLangPerformanceWarning

    stride = T.dynamic("stride")

    @T.prim_func
    def add1(A: T.StridedTensor((4, 8), (stride, 1), "float32")):
        with T.Kernel(1, threads=32) as bx:
            for i, j in T.Parallel(4, 8):
                A[i, j] = A[i, j] + 1.0

    base = torch.zeros((4, 16), dtype=torch.float32)
    k = tilelang.compile(add1, target="cpu")
    with pytest.warns(TileLangPerformanceWarning, match="copied into a contiguous tensor"):
        k(base[:, 4:12])
    assert torch.equal(base[:, 4:12], torch.ones((4, 8))) and not base[:, :4].any() and not base[:, 12:].any()


def test_packed_fp4_tensors_are_unpacked_for_the_launch():
    """torch's float4_e2m1fn_x2 holds two fp4 values a byte (the first in the low nibble); a T.float4_e2m1fn
    tensor [8] takes such a tensor [4] as TileLang's callers pass it (unpacked for the launch on the CPU)."""
    @T.prim_func
    def f(Q: T.Tensor((8,), "float4_e2m1fn"), Y: T.Tensor((8,), "float32")):
        with T.Kernel(1, threads=8) as bx:
            for i in T.Parallel(8):
                Y[i] = T.cast(Q[i], "float32")

    k = tilelang.compile(f, target="cpu")
    codes = [1, 2, 3, 15, 4, 9, 7, 0]  # 0.5, 1, 1.5, -6, 2, -0.5, 6, 0
    packed = torch.tensor([codes[2 * i] | (codes[2 * i + 1] << 4) for i in range(4)], dtype=torch.uint8)
    y = torch.zeros(8)
    k(packed.view(torch.float4_e2m1fn_x2), y)
    assert y.tolist() == [0.5, 1.0, 1.5, -6.0, 2.0, -0.5, 6.0, 0.0]
