"""tilelang.carver as TileLang programs use it: driver.get_num_sms() (a CUDA device's SM count; without
one the CPU cores, with a warning), CUDA(target) / CDNA(target) records from the target's limits, and the
roller for GEMMs (MatmulTemplate(...).with_arch(arch).recommend_hints()): valid tilings, ranked, that run."""
import os
import warnings

import pytest

import tilelang
from tilelang.carver.arch import CDNA, CUDA, driver
import tilelang.language as T
from tilelang.errors import TileLangUnsupportedError


def test_get_num_sms():
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        n = driver.get_num_sms()
    if driver.has_cuda_device():
        assert n == int(tilelang._ffi.cuda_device_info(0)["sm_count"]) and n > 0
    else:
        want = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        assert n == want


@pytest.mark.skipif(driver.has_cuda_device(), reason="checks the error without a CUDA device")
def test_device_queries_without_a_device_say_so():
    with pytest.raises(TileLangUnsupportedError, match="needs a CUDA device"):
        driver.get_shared_memory_per_block()


def test_arch_records():
    c = CUDA("cuda -arch=sm_90a")
    assert c.sm_version == 90 and c.warp_size == 32 and c.smem_cap == tilelang.Target("cuda -arch=sm_90a").smem_limit
    assert CUDA("cuda -arch=sm_80").sm_version == 80
    h = CDNA("hip")
    assert h.warp_size == 64 and h.smem_cap == 65536
    with pytest.raises(ValueError, match="describes a cuda target"):
        CUDA("hip")


def _template(M, N, K, arch, **kw):
    from tilelang.carver.template import MatmulTemplate

    return MatmulTemplate(M=M, N=N, K=K, in_dtype=T.float16, out_dtype=T.float16, accum_dtype=T.float32,
                          **kw).with_arch(arch)


@pytest.mark.parametrize("shape", [(1024, 1024, 1024), (16, 4096, 4096), (8192, 8192, 8192), (100, 70, 50)])
@pytest.mark.parametrize("arch", ["cuda -arch=sm_80", "cuda -arch=sm_90a", "hip"])
def test_roller_hints_are_valid_tilings(shape, arch):
    """Every hint fits the architecture: shared memory of its stages, threads, whole warps, tiles the
    matrix unit can split; best first; as many as asked for."""
    M, N, K = shape
    a = CUDA(arch) if arch.startswith("cuda") else CDNA(arch)
    hints = _template(M, N, K, a).recommend_hints(topk=8)
    assert 1 <= len(hints) <= 8
    scores = [h.score for h in hints]
    assert scores == sorted(scores)
    seen = set()
    for h in hints:
        (bm, bn), (wm, wn), (bk,) = h.block, h.warp, h.rstep
        assert bm % wm == 0 and bn % wn == 0 and wm % 16 == 0 and wn % 16 == 0 and bk % 16 == 0
        threads = (bm // wm) * (bn // wn) * a.warp_size
        assert h.threads == threads and threads <= a.max_threads
        assert h.pipeline_stage * (bm + bn) * bk * 2 <= a.smem_cap
        assert h.pipeline_stage <= max(1, -(-K // bk))
        assert bm <= max(16, 1 << (M - 1).bit_length()) and bn <= max(16, 1 << (N - 1).bit_length())
        key = (bm, bn, bk, wm, wn)
        assert key not in seen
        seen.add(key)


def test_roller_adapts_to_the_problem():
    """A skinny GEMM gets a skinny block (no 8x padding of M=16); a large square one gets large tiles, a
    pipeline and rasterisation for L2 reuse."""
    from tilelang.carver.roller.rasterization import NoRasterization, Rasterization2DRow

    sm80 = CUDA("cuda -arch=sm_80")
    skinny = _template(16, 4096, 4096, sm80).recommend_hints(topk=3)
    assert all(h.block[0] == 16 for h in skinny)
    big = _template(8192, 8192, 8192, sm80).recommend_hints(topk=3)[0]
    assert big.block[0] * big.block[1] >= 128 * 128 and big.pipeline_stage >= 2
    assert isinstance(big.rasterization_plan, Rasterization2DRow) and big.rasterization_plan.panel_width > 1
    small = _template(256, 256, 256, sm80).recommend_hints(topk=1)[0]
    assert isinstance(small.rasterization_plan, NoRasterization)
    with pytest.raises(ValueError, match="panel width"):
        NoRasterization().panel_width


def test_roller_hint_runs_as_a_tilelang_autotune_config():
    """The pattern of TileLang's GEMM autotune example: hints turned into configs; the first one compiles
    and matches NumPy on the CPU target (ragged sizes), and equivalent_function() computes the same GEMM."""
    import numpy as np
    from tilelang.carver.roller.rasterization import NoRasterization

    M, N, K = 200, 136, 72
    seed = 20261204
    print(f"seed {seed}")
    rng = np.random.default_rng(seed)
    hint = _template(M, N, K, CUDA("cuda -arch=sm_80")).recommend_hints(topk=4)[0]
    bm, bn = hint.block
    bk = hint.rstep[0]
    threads = (bm // hint.warp[0]) * (bn // hint.warp[1]) * 32
    raster = hint.rasterization_plan is not NoRasterization

    @T.prim_func
    def gemm(A: T.Tensor((M, K), "float16"), B: T.Tensor((N, K), "float16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=threads) as (bx, by):
            A_s = T.alloc_shared((bm, bk), "float16")
            B_s = T.alloc_shared((bn, bk), "float16")
            C_l = T.alloc_fragment((bm, bn), "float32")
            T.use_swizzle(panel_size=10, enable=raster)
            T.clear(C_l)
            for k in T.Pipelined(T.ceildiv(K, bk), num_stages=hint.pipeline_stage):
                T.copy(A[by * bm, k * bk], A_s)
                T.copy(B[bx * bn, k * bk], B_s)
                T.gemm(A_s, B_s, C_l, transpose_B=True)
            T.copy(C_l, C[by * bm, bx * bn])

    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((N, K)).astype(np.float16)
    c = np.zeros((M, N), np.float32)
    tilelang.compile(gemm, target="cpu")(a, b, c)
    ref = a.astype(np.float64) @ b.astype(np.float64).T
    np.testing.assert_allclose(c, ref, rtol=1e-3, atol=1e-3)

    eq = _template(M, N, K, CUDA("cuda -arch=sm_80"), with_bias=True).equivalent_function()
    bias = rng.standard_normal(N).astype(np.float16)
    out = np.zeros((M, N), np.float16)
    tilelang.compile(eq, target="cpu")(a, b, bias, out)
    np.testing.assert_allclose(out.astype(np.float64), ref + bias.astype(np.float64), rtol=2e-2, atol=2e-2)


def test_roller_names_beyond_the_gemm_are_refused():
    from tilelang.carver.template import FlashAttentionTemplate, GEMVTemplate, MatmulTemplate

    with pytest.raises(TileLangUnsupportedError, match="GEMVTemplate"):
        GEMVTemplate(N=4, K=4)
    with pytest.raises(TileLangUnsupportedError, match="FlashAttentionTemplate"):
        FlashAttentionTemplate()
    with pytest.raises(TileLangUnsupportedError, match="TensorCorePolicy"):
        from tilelang.carver.roller import TensorCorePolicy  # noqa: F401
    import tilelang.carver as carver

    with pytest.raises(TileLangUnsupportedError, match="carver.utils"):
        carver.utils  # noqa: B018
    with pytest.raises(Exception, match="with_arch"):
        MatmulTemplate(M=16, N=16, K=16).recommend_hints()
    with pytest.raises(Exception, match="positive integer M"):
        MatmulTemplate(M=0, N=16, K=16)
