"""The Blackwell CUDA targets (issue 34, item 1) without a GPU: `cuda -arch=sm_100a`, `sm_103a`, `sm_110a` (the
tcgen05 family) and `sm_120a` / `sm_121a` (consumer Blackwell) parse with their shared-memory limits, and kernels
written for sm_90a keep working there: TMA copies on mbarriers (sm_90+); T.gemm on tcgen05 into tensor memory on
the tcgen05 family where its accumulator lives across a loop (else mma.sync, with a warning saying why), on
mma.sync on consumer Blackwell (wgmma exists on sm_90a only).
NVRTC compiles each kernel for the arch, the SASS is checked (HMMA, UTMALDG), and the emulator runs the lowered
kernels against float64 NumPy on seeded random inputs at ragged sizes."""
import os
import re
import warnings

import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import TileLangError, TileLangPerformanceWarning
from tilelang.tools.sass import find_cuobjdump

import kernels

TCGEN05 = ["sm_100a", "sm_103a", "sm_110a"]
CONSUMER = ["sm_120a", "sm_121a"]
ARCHS = TCGEN05 + CONSUMER


def _rng():
    seed = int(os.environ.get("TL_TEST_SEED") or np.random.SeedSequence().entropy % 2**32)
    print("seed", seed)
    return np.random.default_rng(seed)


def _compile(func, arch, **kw):
    """Compiles for `arch`, returning the kernel and the performance warnings it gave."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        k = tilelang.compile(func, target=f"cuda -arch={arch}", **kw)
    return k, [str(x.message) for x in w if issubclass(x.category, TileLangPerformanceWarning)]


def _sass(k):
    assert find_cuobjdump() is not None, ("no cuobjdump/nvdisasm for the SASS check (scripts/setup.sh installs them: "
                                          "pip install nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm)")
    return k.get_sass()


@pytest.mark.parametrize("arch", ARCHS)
def test_reference_gemm_assembles_for_the_arch(arch):
    """TMA copies everywhere; the gemm on tcgen05 into tensor memory on the tcgen05 family (GemmToTcgen05CUDA),
    on mma.sync on consumer Blackwell."""
    k, perf = _compile(kernels.matmul(512, 512, 512, 128, 128, 32, num_stages=3, threads=128), arch)
    ptx = k.get_ptx()
    assert f".target {arch}" in ptx
    assert "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes" in ptx
    assert "wgmma" not in ptx
    copies = [c for c in k.choices if ": T.copy " in c and " -> " in c and "tmem" not in c]
    assert len(copies) == 2 and all(": TMA (" in c for c in copies), k.choices
    assert not perf, perf
    res = k.get_resource_usage()
    assert res["spill_stores"] == 0 and res["spill_loads"] == 0, res
    sass = _sass(k)
    assert "UTMALDG" in sass, "no TMA load in the SASS"
    assert "SM" + arch[3:6] in sass.upper().replace("_", ""), "the cubin is not for " + arch
    if arch in TCGEN05:
        assert "tcgen05.mma.cta_group::1.kind::f16" in ptx and "mma.sync" not in ptx
        assert re.search(r"\bUTCHMMA\b", sass), "no tcgen05 MMA in the SASS"
        assert any("T.gemm: tcgen05.mma into tensor memory" in c for c in k.choices), k.choices
    else:
        assert "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32" in ptx and "tcgen05" not in ptx
        assert re.search(r"\bHMMA\.16816\.F32\b", sass), "no HMMA in the SASS"


def test_gemms_tcgen05_cannot_take_stay_on_mma_sync_and_say_why():
    k, perf = _compile(kernels.matmul(256, 256, 256, 32, 64, 32, num_stages=2, threads=128), "sm_100a")
    assert "mma.sync" in k.get_ptx() and "tcgen05" not in k.get_ptx()
    assert any("not tcgen05.mma: the accumulator has 32 rows, tcgen05.mma here takes 128 or 64" in m for m in perf), perf
    # (64 rows: the M = 64 MMA, layout F)
    k, perf = _compile(kernels.matmul(256, 256, 256, 64, 64, 32, num_stages=2, threads=128), "sm_100a")
    assert "tcgen05.mma" in k.get_ptx() and "tcgen05.ld.sync.aligned.16x32bx2" in k.get_ptx() and not perf, perf
    # tl.disable_tcgen05 keeps mma.sync, silently (the user asked)
    k, perf = _compile(kernels.matmul(256, 256, 256, 128, 128, 32), "sm_100a", pass_configs={"tl.disable_tcgen05": True})
    assert "mma.sync" in k.get_ptx() and "tcgen05" not in k.get_ptx() and not perf, perf


@pytest.mark.parametrize("arch", ["sm_100a", "sm_120a"])
@pytest.mark.parametrize("M,N,K", [(72, 40, 56), (128, 96, 160)])
def test_reference_gemm_in_the_emulator(arch, M, N, K):
    rng = _rng()
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c = np.zeros((M, N), np.float16)
    k, _ = _compile(kernels.matmul(M, N, K, 128, 128, 32, num_stages=2, threads=128), arch,
                    execution_backend="emulator")
    assert any("tcgen05.mma into tensor memory" in ch for ch in k.choices) == (arch in TCGEN05), k.choices
    k(a, b, c)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(c.astype(np.float64), ref, rtol=2e-2, atol=2e-2 * np.sqrt(K))


@pytest.mark.parametrize("arch", ["sm_100a", "sm_121a"])
def test_flash_attention_forward_in_the_emulator(arch):
    rng = _rng()
    B, H, S, D = 1, 2, 128, 64  # [batch, heads, seq, dim]; seq a multiple of the 64-row blocks
    q, kk, v = (rng.standard_normal((B, H, S, D)).astype(np.float16) for _ in range(3))
    o = np.zeros_like(q)
    k, _ = _compile(kernels.flashattn(B, H, S, D, is_causal=True, num_stages=2), arch, execution_backend="emulator")
    src = k.get_kernel_source()
    assert "tl::mma_m16n8k16" in src and "wgmma" not in src
    k(q, kk, v, o)
    qd, kd, vd = (x.astype(np.float64) for x in (q, kk, v))
    s = qd @ kd.transpose(0, 1, 3, 2) / np.sqrt(D)
    s = np.where(np.tril(np.ones((S, S), bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    ref = (p / p.sum(-1, keepdims=True)) @ vd
    np.testing.assert_allclose(o.astype(np.float64), ref, rtol=0, atol=2e-2)


def _smem_kernel(kb):
    @T.prim_func
    def big(A: T.Tensor((kb * 256,), "float32"), B: T.Tensor((kb * 256,), "float32")):
        with T.Kernel(1, threads=128):
            S = T.alloc_shared((kb * 256,), "float32")
            T.copy(A, S)
            T.copy(S, B)
    return big


def test_shared_memory_limits():
    """227 KB per block on the tcgen05 family (as on sm_90), 99 KB on consumer Blackwell (as on sm_86 / sm_89)."""
    for arch in TCGEN05:
        tilelang.compile(_smem_kernel(200), target=f"cuda -arch={arch}")  # 200 KB fits
    for arch in CONSUMER:
        with pytest.raises(TileLangError, match="101376-byte limit"):
            tilelang.compile(_smem_kernel(200), target=f"cuda -arch={arch}")
        tilelang.compile(_smem_kernel(96), target=f"cuda -arch={arch}")
    with pytest.raises(TileLangError, match="232448-byte limit"):
        tilelang.compile(_smem_kernel(230), target="cuda -arch=sm_100a")


def test_wgmma_only_forms_are_refused_with_the_arch_named():
    @T.prim_func
    def g(A: T.Tensor((64, 64), "float16"), B: T.Tensor((64, 64), "float16"), C: T.Tensor((64, 64), "float32")):
        with T.Kernel(1, threads=128):
            As = T.alloc_shared((64, 64), "float16")
            Bs = T.alloc_shared((64, 64), "float16")
            Cl = T.alloc_fragment((64, 64), "float32")
            T.copy(A, As)
            T.copy(B, Bs)
            T.wgmma_gemm(As, Bs, Cl, clear_accum=True)
            T.copy(Cl, C)

    with pytest.raises(TileLangError, match="sm_100a"):
        tilelang.compile(g, target="cuda -arch=sm_100a")


def test_unknown_architectures_are_refused_with_the_supported_list():
    with pytest.raises(TileLangError, match=r"sm_99 is not supported .*sm_100 / sm_100a.*sm_121 / sm_121a"):
        tilelang.compile(_smem_kernel(1), target="cuda -arch=sm_99")


def test_set_max_nreg_on_the_blackwell_a_targets():
    """ptxas takes setmaxnreg on sm_90a and the Blackwell 'a' targets; the plain sm_100 refuses it."""
    from test_hopper import _nreg_kernel

    for arch in ("sm_100a", "sm_120a"):
        assert "setmaxnreg.inc.sync.aligned.u32 240" in tilelang.compile(_nreg_kernel(240, 1),
                                                                         target=f"cuda -arch={arch}").get_ptx()
    with pytest.raises(TileLangError, match="setmaxnreg"):
        tilelang.compile(_nreg_kernel(240, 1), target="cuda -arch=sm_100")
