"""Hopper (sm_90a) without a GPU: T.gemm on wgmma.mma_async, compiled through NVRTC with the PTX and
ptxas' resource report checked, and run in the emulator (whose wgmma reads shared memory through the
descriptors, canonical layouts and swizzle of the PTX ISA, not through the compiler's layout code)
against a float64 NumPy reference on seeded random inputs, ragged sizes included."""
import os
import re

import ml_dtypes
import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import TileLangEmulationError, TileLangPerformanceWarning

import kernels


SM90A = {"kind": "cuda", "arch": "sm_90a"}
NP = {"float16": np.float16, "bfloat16": ml_dtypes.bfloat16}
AB = {"float16": "f16", "bfloat16": "bf16"}


def _rng():
    seed = int(os.environ.get("TL_TEST_SEED") or np.random.SeedSequence().entropy % 2**32)
    print("seed", seed)
    return np.random.default_rng(seed)


def _emu(func):
    return tilelang.compile(func, target=SM90A, execution_backend="emulator")


def _f64(x):
    return np.asarray(x).astype(np.float64)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_reference_gemm_compiles_to_wgmma(dtype):
    """The demo's kernel (128x128x32 tiles, 128 threads) on sm_90a: wgmma with the fence / commit /
    wait protocol, no mma.sync, and no spills or local memory."""
    k = tilelang.compile(kernels.matmul(1024, 1024, 1024, dtype=dtype), target=SM90A)
    ptx = k.get_ptx()
    ab = AB[dtype]
    assert re.search(r"^\.target\s+sm_90a", ptx, re.M)
    assert f"wgmma.mma_async.sync.aligned.m64n128k16.f32.{ab}.{ab}" in ptx
    for instr in ("wgmma.fence.sync.aligned", "wgmma.commit_group.sync.aligned", "wgmma.wait_group.sync.aligned"):
        assert instr in ptx, instr
    assert "mma.sync" not in ptx and "ldmatrix" not in ptx
    res = k.get_resource_usage()
    assert res["spill_stores"] == 0 and res["spill_loads"] == 0 and res["stack_bytes"] == 0, res
    assert any("wgmma.mma_async m64n128k16" in c and "warp groups 1x1" in c for c in k.choices), k.choices
    assert not k.warnings
    copies = [c for c in k.choices if ": T.copy " in c and "_shared" in c]
    assert len(copies) == 2 and all(": TMA (" in c for c in copies), k.choices  # tests/python/test_tma.py
    assert "wgmma_C(128x128, warp groups 1x1)" in k.layouts.values()
    # the 1 KB alignment the swizzle atoms need
    assert "__align__(1024)" in k.get_kernel_source()


def test_wgmma_main_loop_builds_no_descriptor():
    """Issue 32, before: every iteration rebuilt both matrix descriptors from the operand address (and ran
    a fence.proxy.async for TMA operands). Expected: each descriptor is its tile's base descriptor (built
    from element 0, loop-invariant) plus the stage and k-step offset in 16-byte units: one add, in the
    uniform datapath where the gemm is one warp group along M and N (the reference GEMM) and on the low
    word where the offset depends on the warp group (two warp groups along M); the consumer loop is
    unrolled by twice its stages so stage and phase are constants in each copy (ptxas: 21 SASS per
    k-iteration, benchmarks/bench_cuda_sass.py)."""
    src = tilelang.compile(kernels.matmul(1024, 1024, 1024), target=SM90A).get_kernel_source()
    loop = src[src.index("for (int32_t k = 0"):src.index("tl::wgmma_wait<0>();")]
    descs = re.findall(r"\(tl::wgmma_desc[_a-z]*\(tl::wgmma_desc\(\(smem_s \+ \(uint32_t\)\(0\) \* 2u[^,]*, \d+, \d+, \d\)", loop)
    assert len(descs) == 2 and all(d.startswith("(tl::wgmma_desc_add(") for d in descs), loop
    assert "fence_proxy_async" not in src and "tl::wgmma_desc(" not in loop.replace("tl::wgmma_desc((smem_s + (uint32_t)(0)", "")
    assert "#pragma unroll 4\n      for (int32_t k = 0" in src
    # 4096^3 with 128x256x64 tiles: 2 consumer warp groups split M, so A's offset depends on the warp group
    big = kernels.matmul(4096, 4096, 4096, block_M=128, block_N=256, block_K=64, num_stages=3, threads=256)
    src = tilelang.compile(big, target=SM90A).get_kernel_source()
    assert "tl::wgmma_desc_add_lo(" in src and "tl::wgmma_desc_add(" in src


@pytest.mark.parametrize("arch", ["sm_80", "sm_89", "sm_90"])
def test_other_archs_keep_mma_sync(arch):
    """wgmma needs sm_90a; sm_80..sm_90 keep ldmatrix + mma.sync."""
    k = tilelang.compile(kernels.matmul(256, 256, 256), target=f"cuda -arch={arch}")
    ptx = k.get_ptx()
    assert "mma.sync.aligned.m16n8k16" in ptx and "wgmma" not in ptx


def test_gemm_that_cannot_use_wgmma_is_reported():
    """A 64-thread block is not a warp group: mma.sync, with a warning naming the line and reason."""
    with pytest.warns(TileLangPerformanceWarning, match="not wgmma"):
        k = tilelang.compile(kernels.matmul(256, 256, 256, block_M=64, block_N=64, threads=64), target=SM90A)
    assert "mma.sync.aligned.m16n8k16" in k.get_ptx() and "wgmma" not in k.get_ptx()
    assert any("kernels.py" in w and "not wgmma" in w and "warp group" in w for w in k.warnings), k.warnings


@pytest.mark.parametrize("key", ["tl.disable_wgmma", tilelang.PassConfigKey.TL_DISABLE_WGMMA])
def test_disable_wgmma_keeps_mma_sync_on_sm90a(key):
    """TileLang's TL_DISABLE_WGMMA is honoured: the sm_90a gemm uses ldmatrix + mma.sync, silently (the user
    asked for it), and still matches NumPy in the emulator; T.wgmma_gemm then cannot be served."""
    k = tilelang.compile(kernels.matmul(256, 256, 256), target=SM90A, pass_configs={key: True})
    assert "mma.sync.aligned.m16n8k16" in k.get_ptx() and "wgmma" not in k.get_ptx()
    assert not k.warnings and not any("wgmma" in c for c in k.choices), (k.warnings, k.choices)
    on = tilelang.compile(kernels.matmul(256, 256, 256), target=SM90A, pass_configs={key: False})
    assert "wgmma.mma_async" in on.get_ptx()
    rng = _rng()
    M, N, K = 136, 72, 80
    a, b = rng.standard_normal((M, K)).astype(np.float16), rng.standard_normal((K, N)).astype(np.float16)
    c = np.full((M, N), np.nan, np.float16)
    tilelang.compile(kernels.matmul(M, N, K, block_M=64, block_N=64), target=SM90A, execution_backend="emulator",
                     pass_configs={key: True})(a, b, c)
    np.testing.assert_allclose(c.astype(np.float64), _f64(a) @ _f64(b), atol=3e-2, rtol=1e-2)
    with pytest.raises(tilelang.errors.TileLangUnsupportedError, match="tl.disable_wgmma is set"):
        tilelang.compile(_one_tile_gemm(64, 64, 64, 0, explicit=True), target=SM90A, pass_configs={key: True})


# (block_M, block_N, block_K, threads, trans_A, trans_B, policy): every swizzle mode (32B / 64B /
# 128B, panels of 128 bytes), K- and MN-major operands, several m64 instructions per warp group, two
# warp groups along M or along N.
CONFIGS = {
    "ref_128x128x32": (128, 128, 32, 128, False, False, T.GemmWarpPolicy.Square),
    "k16_sw32": (64, 64, 16, 128, False, False, T.GemmWarpPolicy.Square),
    "k64_sw128": (64, 128, 64, 128, False, False, T.GemmWarpPolicy.Square),
    "transA_transB": (128, 64, 32, 128, True, True, T.GemmWarpPolicy.Square),
    "transB_n256": (64, 256, 32, 128, False, True, T.GemmWarpPolicy.Square),
    "two_groups_along_M": (128, 128, 32, 256, False, False, T.GemmWarpPolicy.Square),
    "two_groups_along_N": (64, 128, 32, 256, False, False, T.GemmWarpPolicy.FullCol),
}


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_wgmma_gemm_matches_numpy_in_the_emulator(name, dtype):
    bm, bn, bk, threads, ta, tb, policy = CONFIGS[name]
    M, N, K = bm + 72, bn + 8, 3 * bk + 16  # ragged: not multiples of the tile
    rng = _rng()
    func = kernels.matmul_transposed(M, N, K, bm, bn, bk, trans_A=ta, trans_B=tb, dtype=dtype, out_dtype="float32",
                                     threads=threads, policy=policy)
    k = _emu(func)
    assert any("wgmma.mma_async" in c for c in k.choices), k.choices
    a = rng.standard_normal((K, M) if ta else (M, K)).astype(NP[dtype])
    b = rng.standard_normal((N, K) if tb else (K, N)).astype(NP[dtype])
    c = np.full((M, N), np.nan, np.float32)
    k(a, b, c)
    A, B = _f64(a), _f64(b)
    ref = (A.T if ta else A) @ (B.T if tb else B)
    np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-4)
    # the same kernel compiles to wgmma for the GPU, with no spills
    g = tilelang.compile(func, target=SM90A)
    assert "wgmma.mma_async" in g.get_ptx()
    res = g.get_resource_usage()
    assert res["spill_stores"] == 0 and res["stack_bytes"] == 0, res


def _row_reduce_kernel(M, N, K, bm, bn, bk, threads, policy, dtype):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), "float32"),
             R: T.Tensor((M,), "float32")):
        with T.Kernel(T.ceildiv(M, bm), threads=threads) as bx:
            A_s = T.alloc_shared((bm, bk), dtype)
            B_s = T.alloc_shared((bk, bn), dtype)
            acc = T.alloc_fragment((bm, bn), "float32")
            rmax = T.alloc_fragment((bm,), "float32")
            T.clear(acc)
            for k in T.Pipelined(T.ceildiv(K, bk), num_stages=2):
                T.copy(A[bx * bm, k * bk], A_s)
                T.copy(B[k * bk, 0], B_s)
                T.gemm(A_s, B_s, acc, policy=policy)
            T.reduce_max(acc, rmax, dim=1)
            for i, j in T.Parallel(bm, bn):
                acc[i, j] = T.exp(acc[i, j] - rmax[i])
            T.copy(acc, C[bx * bm, 0])
            for i in T.Parallel(bm):
                R[bx * bm + i] = rmax[i]

    return main


@pytest.mark.parametrize("threads,policy", [(128, T.GemmWarpPolicy.Square), (256, T.GemmWarpPolicy.FullCol)],
                         ids=["one_group", "two_groups_along_N"])
def test_epilogue_and_reduction_over_the_wgmma_accumulator(threads, policy):
    """A row max over the accumulator and an element-wise epilogue using it (the softmax pattern of
    attention): the accumulator layout from the ISA figure drives the reduction and the T.Parallel nest,
    across warp groups too."""
    M, N, K, bm, bn, bk = 200, 64, 48, 128, 64, 16
    rng = _rng()
    k = _emu(_row_reduce_kernel(M, N, K, bm, bn, bk, threads, policy, "float16"))
    a = (rng.standard_normal((M, K)) * 0.25).astype(np.float16)
    b = (rng.standard_normal((K, N)) * 0.25).astype(np.float16)
    c = np.full((M, N), np.nan, np.float32)
    r = np.full((M,), np.nan, np.float32)
    k(a, b, c, r)
    s = _f64(a) @ _f64(b)
    ref_r = s.max(axis=1)
    np.testing.assert_allclose(r, ref_r, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(c, np.exp(s - ref_r[:, None]), rtol=1e-5, atol=1e-5)


# ---- the explicit API: wg_wait, T.wait_wgmma, T.wgmma_gemm; what the emulator reports ---------------

def _one_tile_gemm(M, N, K, wait, overwrite=False, explicit=False, read=True, threads=128):
    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=threads) as bx:
            A_s = T.alloc_shared((M, K), "float16")
            B_s = T.alloc_shared((K, N), "float16")
            acc = T.alloc_fragment((M, N), "float32")
            T.copy(A, A_s)
            T.copy(B, B_s)
            T.clear(acc)
            if explicit:
                T.wgmma_gemm(A_s, B_s, acc, wg_wait=-1)
            else:
                T.gemm(A_s, B_s, acc, wg_wait=-1)
            if overwrite:
                T.fill(A_s, 0)
            if wait:
                T.wait_wgmma(0)
            if read:
                T.copy(acc, C)

    return main


@pytest.mark.parametrize("target,explicit", [(SM90A, False), (SM90A, True), ("cpu", False)],
                         ids=["sm_90a-gemm", "sm_90a-wgmma_gemm", "cpu-gemm"])
def test_gemm_without_wait_then_wait_wgmma(target, explicit):
    """T.gemm(..., wg_wait=-1) leaves the wgmma in flight; T.wait_wgmma(0) completes it before the
    accumulator is read (on the CPU both are synchronous)."""
    rng = _rng()
    func = _one_tile_gemm(64, 64, 32, wait=True, explicit=explicit)
    if target == "cpu":
        k = tilelang.compile(func, target="cpu")
    else:
        k = _emu(func)
        src = tilelang.compile(func, target=SM90A).get_kernel_source()
        assert src.count("tl::wgmma_wait<0>()") == 1 and "tl::wgmma_commit()" in src
    a, b = rng.standard_normal((64, 32)).astype(np.float16), rng.standard_normal((32, 64)).astype(np.float16)
    c = np.full((64, 64), np.nan, np.float32)
    k(a, b, c)
    np.testing.assert_allclose(c, _f64(a) @ _f64(b), rtol=1e-5, atol=1e-4)


def test_wait_wgmma_emits_nothing_where_the_gemm_is_mma_sync():
    """issue 39: in a 64-thread block (not a whole warp group) the gemm falls back to mma.sync, yet
    T.wait_wgmma still emitted wgmma.wait_group, which half a warp group then ran. Where no wgmma is issued
    it emits nothing (docs/hopper.md); the numbers still match."""
    import warnings

    func = _one_tile_gemm(64, 64, 32, wait=True, threads=64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TileLangPerformanceWarning)  # "uses mma.sync, not wgmma: ..."
        k = tilelang.compile(func, target=SM90A)
        emu = _emu(func)
    src, ptx = k.get_kernel_source(), k.get_ptx()
    assert "mma.sync" in ptx, ptx
    assert "wgmma" not in src and "wgmma" not in ptx, src
    rng = _rng()
    a, b = rng.standard_normal((64, 32)).astype(np.float16), rng.standard_normal((32, 64)).astype(np.float16)
    c = np.full((64, 64), np.nan, np.float32)
    emu(a, b, c)
    np.testing.assert_allclose(c, _f64(a) @ _f64(b), rtol=1e-5, atol=1e-4)


def test_reading_the_accumulator_before_the_wait_is_reported():
    k = _emu(_one_tile_gemm(64, 64, 32, wait=False))
    a, b = np.ones((64, 32), np.float16), np.ones((32, 64), np.float16)
    with pytest.raises(TileLangEmulationError) as e:
        k(a, b, np.zeros((64, 64), np.float32))
    msg = next(m for kind, m in e.value.reports if kind == "wgmma_pending")
    assert "'acc'" in msg and "is read while a wgmma" in msg and "test_hopper.py" in msg


def test_a_wgmma_never_waited_for_is_reported():
    k = _emu(_one_tile_gemm(64, 64, 32, wait=False, read=False))
    with pytest.raises(TileLangEmulationError) as e:
        k(np.ones((64, 32), np.float16), np.ones((32, 64), np.float16), np.zeros((64, 64), np.float32))
    assert [kind for kind, _ in e.value.reports] == ["wgmma_not_waited"], e.value.reports


def test_overwriting_an_operand_before_the_wait_is_reported():
    k = _emu(_one_tile_gemm(64, 64, 32, wait=True, overwrite=True))
    a, b = np.ones((64, 32), np.float16), np.ones((32, 64), np.float16)
    with pytest.raises(TileLangEmulationError) as e:
        k(a, b, np.zeros((64, 64), np.float32))
    assert any(kind == "wgmma_operand_overwritten" and "test_hopper.py" in m for kind, m in e.value.reports), \
        e.value.reports


def test_wgmma_gemm_that_cannot_use_wgmma_is_an_error():
    from tilelang.errors import TileLangUnsupportedError

    with pytest.raises(TileLangUnsupportedError, match=r"T.wgmma_gemm cannot use wgmma on sm_80.*needs sm_90a"):
        tilelang.compile(_one_tile_gemm(64, 64, 32, wait=True, explicit=True), target="cuda -arch=sm_80")


def test_wg_wait_and_wait_wgmma_print_and_reparse():
    from tilelang import _ffi

    f = _one_tile_gemm(64, 64, 32, wait=True, explicit=True)
    text = _ffi.print_func(f)
    assert "T.wgmma_gemm(A_s, B_s, acc, wg_wait=-1)" in text and "T.wait_wgmma(0)" in text, text
    assert _ffi.structural_equal(f, T.parse_source(text))


@pytest.mark.parametrize("causal,D", [(False, 64), (True, 64), (True, 128)], ids=["full-d64", "causal-d64", "causal-d128"])
def test_flashattention_forward_on_sm90a(causal, D):
    """Q K^T on wgmma with both operands in shared memory, P V on wgmma with P in registers (the
    accumulator of the first, cast, is the A fragment of the second); the wgmma accumulator feeds the
    row max / sum through layout inference. No spills or local memory; emulator vs NumPy. Before (issue 32):
    at TileLang's num_stages=1 the K/V copies stayed in the loop (issue, wait, a barrier); expected: a
    1-stage TMA pipeline warp-specialised as TileLang does (a producer warp group issues iteration k+1's
    copies once the consumers released the stage)."""
    rng = _rng()
    B, H, S = 1, 1, 128
    func = kernels.flashattn(B, H, S, D, causal)
    g = tilelang.compile(func, target=SM90A)
    ptx = g.get_ptx()
    assert "mma.sync" not in ptx and not g.warnings
    assert re.search(r"wgmma.mma_async.sync.aligned.m64n\d+k16.f32.f16.f16\s+\{[^}]*\},\s*\{", ptx), \
        "no wgmma with A in registers"
    res = g.get_resource_usage()
    assert res["spill_stores"] == 0 and res["stack_bytes"] == 0, res
    k = _emu(func)
    assert any("wgmma.mma_async m64n64k16" in c and "A K-major" in c for c in k.choices), k.choices
    assert any(f"wgmma.mma_async m64n{D}k16" in c and "A in registers" in c for c in k.choices), k.choices
    assert any("1-stage TMA pipeline (2 copies" in c for c in k.choices), k.choices
    assert any("warp-specialized: producer wg 1" in c for c in k.choices), k.choices
    q, kk, v = (rng.standard_normal((B, H, S, D)).astype(np.float16) for _ in range(3))
    o = np.zeros_like(q)
    k(q, kk, v, o)
    s = _f64(q) @ _f64(kk).transpose(0, 1, 3, 2) / np.sqrt(D)
    if causal:
        s = np.where(np.tril(np.ones((S, S), bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    np.testing.assert_allclose(_f64(o), p @ _f64(v), atol=2e-2)  # P is rounded to fp16 before P @ V


def test_gpu_check_hopper_cases_compile_for_sm90a():
    """The sm_90a cases scripts/gpu_check.py runs on a Hopper GPU (its offline half): each compiles to
    wgmma with no spills or local memory, the 128x256x64 3- and 4-stage GEMMs of the issue included, and
    the small emulator-side variants run in the emulator against NumPy."""
    import sys

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                    "scripts"))
    import gpu_check_hopper as hopper

    funcs = [hopper.gemm(n) for n in hopper.GEMMS]
    funcs += [kernels.matmul(s, s, s, bm, bn, bk, dtype=dt, num_stages=st, threads=th)
              for _, s, dt, bm, bn, bk, th, st in hopper.TIMED]
    for f in funcs:
        k = tilelang.compile(f, target=hopper.SM90A)
        assert "wgmma.mma_async" in k.get_ptx()
        assert all(p in k.get_ptx() for p in hopper.TMA_PTX) and not k.warnings, k.warnings
        res = k.get_resource_usage()
        assert res["spill_stores"] == 0 and res["spill_loads"] == 0 and res["stack_bytes"] == 0, res
    rng = _rng()
    name = "2 warp groups along N"
    size = hopper.small_size(name)
    sa, sb, sc = hopper.operand_shapes(name, size)
    a, b = rng.standard_normal(sa).astype(np.float16), rng.standard_normal(sb).astype(np.float16)
    c = np.full(sc, np.nan, np.float32)
    _emu(hopper.gemm(name, "float16", size))(a, b, c)
    np.testing.assert_allclose(c, _f64(a) @ _f64(b), rtol=1e-5, atol=1e-4)


# ---- mbarriers: T.alloc_barrier, T.mbarrier_arrive / T.barrier_arrive, T.mbarrier_wait_parity /
# T.barrier_wait, T.mbarrier_expect_tx, T.fence_proxy_async ------------------------------------------------

def _barrier_kernel(wait_bar=0, parity=0, arrive=True, aliases=False, extra_arrive=False):
    arrive_fn = T.barrier_arrive if aliases else T.mbarrier_arrive
    wait_fn = T.barrier_wait if aliases else T.mbarrier_wait_parity

    @T.prim_func
    def main(A: T.Tensor((200,), "float32"), B: T.Tensor((200,), "float32")):
        with T.Kernel(T.ceildiv(200, 128), threads=128) as bx:
            bars = T.alloc_barrier([128, 128])
            S = T.alloc_shared((128,), "float32")
            for i in T.Parallel(128):
                S[i] = A[bx * 128 + i]
            T.fence_proxy_async()
            if arrive:
                arrive_fn(bars[0])
            if extra_arrive:
                arrive_fn(bars[0])
            wait_fn(bars[wait_bar], parity)
            for i in T.Parallel(128):
                B[bx * 128 + i] = S[127 - i] * 2.0

    return main


@pytest.mark.parametrize("aliases", [False, True], ids=["mbarrier_names", "barrier_names"])
def test_mbarrier_arrive_and_wait(aliases):
    """Every thread arrives on a 128-count barrier and waits for phase 0: the PTX has the mbarrier
    instructions, the shared-memory table lists the barriers, the emulator agrees with NumPy."""
    f = _barrier_kernel(aliases=aliases)
    k = tilelang.compile(f, target=SM90A)
    ptx = k.get_ptx()
    for instr in ("mbarrier.init.shared::cta.b64", "mbarrier.arrive.shared::cta.b64", "mbarrier.try_wait.parity",
                  "fence.proxy.async.shared::cta"):
        assert instr in ptx, instr
    assert re.search(r"^bars\s+2\s+uint64\s+1\s+16\s", k.get_shared_memory_report(), re.M), \
        k.get_shared_memory_report()
    rng = _rng()
    a = rng.standard_normal(200).astype(np.float32)
    b = np.full(200, np.nan, np.float32)
    _emu(f)(a, b)
    ref = np.concatenate([a[:128][::-1], np.concatenate([a[128:], np.zeros(56, np.float32)])[::-1][:72]]) * 2
    np.testing.assert_array_equal(b, ref)


@pytest.mark.parametrize("case,expect", [
    (dict(wait_bar=1), r"'bars'\[1\] for phase parity 0 can never complete: 128 of 128 arrivals"),
    (dict(parity=1), r"'bars'\[0\] for phase parity 1 can never complete"),
    (dict(arrive=False), r"'bars'\[0\] for phase parity 0 can never complete"),
])
def test_a_wait_that_can_never_complete_is_a_deadlock(case, expect):
    k = _emu(_barrier_kernel(**case))
    with pytest.raises(TileLangEmulationError) as e:
        k(np.zeros(200, np.float32), np.zeros(200, np.float32))
    kind, msg = e.value.reports[0]
    assert kind == "deadlock" and re.search(expect, msg) and "test_hopper.py" in msg and "wait_fn(" in msg, msg


def test_phases_advance_with_each_full_set_of_arrivals():
    """Two rounds of 128 arrivals complete phases 0 and 1: a wait for parity 1 passes, a wait for
    parity 0 then waits for phase 2, which never completes."""
    a = np.arange(200, dtype=np.float32)
    b = np.zeros(200, np.float32)
    _emu(_barrier_kernel(extra_arrive=True, parity=1))(a, b)
    assert b[0] == 2 * 127
    with pytest.raises(TileLangEmulationError) as e:
        _emu(_barrier_kernel(extra_arrive=True, parity=0))(a, b)
    assert e.value.reports[0][0] == "deadlock", e.value.reports


@pytest.mark.parametrize("target,what", [("cuda -arch=sm_80", "the target is sm_80"), ("cpu", "not for the CPU")])
def test_mbarriers_need_hopper(target, what):
    from tilelang.errors import TileLangUnsupportedError

    with pytest.raises(TileLangUnsupportedError, match=what) as e:
        tilelang.compile(_barrier_kernel(), target=target)
    assert "test_hopper.py" in str(e.value)


def test_barrier_api_prints_and_reparses():
    from tilelang import _ffi

    f = _barrier_kernel()
    text = _ffi.print_func(f)
    assert '"tl.mbarrier_init", bars[1], 128' in text and '"tl.mbarrier_wait_parity", bars[0], 0' in text, text
    assert _ffi.structural_equal(f, T.parse_source(text))


@pytest.mark.parametrize("bad", [0, [128, 1 << 20]])
def test_bad_arrive_counts_are_rejected(bad):
    from tilelang.errors import TileLangTypeError

    with pytest.raises(TileLangTypeError, match="arrive counts"):
        @T.prim_func
        def main(A: T.Tensor((16,), "float32")):
            with T.Kernel(1, threads=128) as bx:
                bars = T.alloc_barrier(bad)  # noqa: F841


def test_wgmma_reading_unfenced_generic_writes_is_reported():
    """The generic-to-async proxy rule: the lowering puts fence.proxy.async before the wgmma where the
    operands were written by cp.async / st.shared, not where only TMA wrote them; without it (a test
    hook) the emulator reports the wgmma's read of the unfenced writes."""
    f = kernels.matmul(128, 128, 64, out_dtype="float32")
    # before: a fence before every wgmma; expected: none with TMA operands, one with cp.async operands
    src = tilelang.compile(f, target=SM90A).get_kernel_source()
    assert "tl::fence_proxy_async()" not in src and "tl::tma_load(" in src
    src = tilelang.compile(f, target=SM90A, pass_configs={"tl.disable_tma_lower": True}).get_kernel_source()
    assert src.index("tl::fence_proxy_async()") < src.index("tl::wgmma_fence()") < src.index("wgmma.mma_async")
    # cp.async, not TMA: TMA writes through the async proxy, which wgmma reads without a fence (test_tma.py)
    k = tilelang.compile(f, target=SM90A, execution_backend="emulator",
                         pass_configs={"tl.test_skip_fence_proxy_async": True, "tl.disable_tma_lower": True})
    a, b = np.ones((128, 64), np.float16), np.ones((64, 128), np.float16)
    with pytest.raises(TileLangEmulationError) as e:
        k(a, b, np.zeros((128, 128), np.float32))
    # with TMA the operands come through the async proxy: no fence is needed and none is reported
    k = tilelang.compile(f, target=SM90A, execution_backend="emulator",
                         pass_configs={"tl.test_skip_fence_proxy_async": True})
    c = np.zeros((128, 128), np.float32)
    k(a, b, c)
    np.testing.assert_array_equal(c, np.full((128, 128), 64, np.float32))
    with pytest.raises(TileLangEmulationError) as e:
        k = tilelang.compile(f, target=SM90A, execution_backend="emulator",
                             pass_configs={"tl.test_skip_fence_proxy_async": True, "tl.disable_tma_lower": True})
        k(a, b, np.zeros((128, 128), np.float32))
    kind, msg = e.value.reports[0]
    assert kind == "async_proxy" and "(generic proxy)" in msg and "no fence.proxy.async" in msg, msg
    assert "kernels.py" in msg


def _thread_written_operand_gemm(M, N, K):
    """C = (A * 2) @ B on sm_90a: A_shared is written by the block's threads (generic proxy), B_shared by TMA."""
    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=128) as bx:
            A_s = T.alloc_shared((M, K), "float16")
            B_s = T.alloc_shared((K, N), "float16")
            C_l = T.alloc_fragment((M, N), "float32")
            T.clear(C_l)
            for i, j in T.Parallel(M, K):
                A_s[i, j] = A[i, j] * T.float16(2)
            T.copy(B, B_s)
            T.gemm(A_s, B_s, C_l)
            T.copy(C_l, C)
    return main


def test_fence_stays_where_threads_write_a_wgmma_operand():
    """before: every wgmma got a fence.proxy.async; expected: the fence stays where one operand is written by
    threads (st.shared) even though the other comes by TMA, and the emulator reports nothing."""
    f = _thread_written_operand_gemm(64, 64, 64)
    k = tilelang.compile(f, target=SM90A)
    src = k.get_kernel_source()
    assert "wgmma.mma_async" in src and "tl::tma_load(" in src
    assert src.index("tl::fence_proxy_async()") < src.index("wgmma.mma_async")
    seed = 32
    rng = np.random.default_rng(seed)
    print("seed", seed)
    a = rng.standard_normal((64, 64)).astype(np.float16)
    b = rng.standard_normal((64, 64)).astype(np.float16)
    c = np.zeros((64, 64), np.float32)
    tilelang.compile(f, target=SM90A, execution_backend="emulator")(a, b, c)
    ref = (a.astype(np.float64) * 2) @ b.astype(np.float64)
    np.testing.assert_allclose(c, ref, rtol=1e-2, atol=1e-2)
    # without the fence (the test hook) the emulator sees the unfenced thread writes
    k = tilelang.compile(f, target=SM90A, execution_backend="emulator",
                         pass_configs={"tl.test_skip_fence_proxy_async": True})
    with pytest.raises(TileLangEmulationError) as e:
        k(a, b, c)
    assert e.value.reports[0][0] == "async_proxy" and "'A_s'" in e.value.reports[0][1]


def _nreg_kernel(n, inc):
    @T.prim_func
    def main(A: T.Tensor((256,), "float32"), B: T.Tensor((256,), "float32")):
        with T.Kernel(1, threads=256) as bx:
            T.disable_warp_group_reg_alloc()
            T.set_max_nreg(n, inc)
            for i in T.Parallel(256):
                B[i] = A[i] + 1.0

    return main


def test_set_max_nreg():
    """setmaxnreg.inc / .dec in the PTX (sm_90a); the emulator runs the kernel; other targets reject it."""
    from tilelang.errors import TileLangTypeError, TileLangUnsupportedError

    for n, inc, instr in [(240, 1, "setmaxnreg.inc.sync.aligned.u32 240"), (40, 0, "setmaxnreg.dec.sync.aligned.u32 40")]:
        assert instr in tilelang.compile(_nreg_kernel(n, inc), target=SM90A).get_ptx()
    a, b = np.arange(256, dtype=np.float32), np.zeros(256, np.float32)
    _emu(_nreg_kernel(240, 1))(a, b)
    np.testing.assert_array_equal(b, a + 1)
    with pytest.raises(TileLangUnsupportedError, match="needs sm_90a"):
        tilelang.compile(_nreg_kernel(240, 1), target="cuda -arch=sm_90")
    with pytest.raises(TileLangTypeError, match="multiple of 8"):
        _nreg_kernel(100, 1)


def test_shared_memory_on_sm90a_limit_and_alignment():
    """Over 227 KB on sm_90a is a compile error whose table names the buffers; tiles of 1 KB or more sit
    on 1 KB boundaries (the swizzle atoms) next to small buffers (here a reduction's scratch)."""
    from tilelang.errors import TileLangResourceError

    with pytest.raises(TileLangResourceError) as e:
        tilelang.compile(kernels.matmul(4096, 4096, 4096, 128, 256, 64, num_stages=5, threads=256), target=SM90A)
    msg = str(e.value)
    assert "limit of sm_90a" in msg and "232448" in msg and "A_shared" in msg and "B_shared" in msg, msg

    @T.prim_func
    def two_tiles(A: T.Tensor((40, 32), "float16"), B: T.Tensor((40, 32), "float16")):
        with T.Kernel(1, threads=128) as bx:
            bars = T.alloc_barrier(128)
            S1 = T.alloc_shared((40, 32), "float16")  # 2560 bytes
            S2 = T.alloc_shared((40, 32), "float16")
            T.copy(A, S1)
            T.copy(A, S2)
            T.mbarrier_arrive(bars[0])
            T.mbarrier_wait_parity(bars[0], 0)
            for i, j in T.Parallel(40, 32):
                B[i, j] = S1[i, j] + S2[i, j]

    k = tilelang.compile(two_tiles, target=SM90A)
    rep = k.get_shared_memory_report()
    offs = {r.split()[0]: int(r.split()[-1]) for r in rep.splitlines()[1:] if r and not r.startswith("total")}
    # S2 after 512 bytes of padding; the barrier fits in the gap
    assert sorted([offs["S1"], offs["S2"]]) == [0, 3072] and 2560 <= offs["bars"] <= 3072 - 16, rep
    a = np.arange(40 * 32).reshape(40, 32).astype(np.float16)
    b = np.zeros_like(a)
    _emu(two_tiles)(a, b)
    np.testing.assert_array_equal(b, a + a)


@pytest.mark.parametrize("name", ["gemm", "flashattn", "barriers", "async_gemm"])
def test_sm90a_ir_after_every_pass_reparses(name):
    """The thread-level IR with wgmma descriptors, wgmma (shared and register A), fences, waits and
    mbarriers prints and re-parses to a structurally equal function after every pass."""
    from tilelang import _ffi

    func = {"gemm": lambda: kernels.matmul(256, 256, 128),
            "flashattn": lambda: kernels.flashattn(1, 1, 128, 64, True),
            "barriers": lambda: _barrier_kernel(),
            "async_gemm": lambda: _one_tile_gemm(64, 64, 32, wait=True)}[name]()
    for pass_name, f in _ffi.lower_trace_funcs(func, "cuda -arch=sm_90a"):
        text = _ffi.print_func(f)
        g = T.parse_source(text)
        assert _ffi.structural_equal(f, g), f"{name}: the IR after {pass_name} does not re-parse equal:\n{text}"


def _hand_specialised(keywords):
    """Warp group 1 arrives with a 0-byte transaction on the barrier and gives up registers; warp group 0
    raises its budget, waits, then reads what warp group 1 wrote: TileLang's explicit names, positional or
    with TileLang's keywords."""
    @T.prim_func
    def main(A: T.Tensor((128,), "float32"), B: T.Tensor((128,), "float32")):
        with T.Kernel(1, threads=256) as bx:
            T.no_set_max_nreg()  # no automatic reallocation: the kernel does it itself
            bars = T.alloc_barrier([128])
            S = T.alloc_shared((128,), "float32")
            tid = T.get_thread_binding()
            if tid >= 128:
                T.annotate_producer_reg_dealloc()
                S[tid - 128] = A[tid - 128] * 3.0
                if keywords:
                    T.mbarrier_arrive_expect_tx(mbarrier=bars[0], tx=0)
                else:
                    T.mbarrier_arrive_expect_tx(bars[0], 0)
            else:
                T.annotate_consumer_reg_alloc(232)
                if keywords:
                    T.mbarrier_wait_parity(mbarrier=bars[0], parity=0)
                else:
                    T.barrier_wait(bars[0], 0)
                B[tid] = S[127 - tid]

    return main


@pytest.mark.parametrize("keywords", [False, True])
def test_tilelang_hand_specialisation_names(keywords):
    """Before: T.mbarrier_arrive_expect_tx, T.annotate_producer_reg_dealloc, T.annotate_consumer_reg_alloc
    and T.no_set_max_nreg did not exist and T.mbarrier_*(mbarrier=...) was a TypeError. Expected:
    mbarrier.arrive.expect_tx and setmaxnreg.dec 24 / .inc 232 in the PTX, and NumPy's numbers in the
    emulator."""
    f = _hand_specialised(keywords)
    ptx = tilelang.compile(f, target=SM90A).get_ptx()
    for instr in ("mbarrier.arrive.expect_tx.shared::cta.b64", "setmaxnreg.dec.sync.aligned.u32 24",
                  "setmaxnreg.inc.sync.aligned.u32 232"):
        assert instr in ptx, instr
    a, b = np.arange(128, dtype=np.float32), np.zeros(128, np.float32)
    _emu(f)(a, b)
    np.testing.assert_array_equal(b, a[::-1] * 3)


def test_a_copy_smaller_than_the_block_does_not_serialise_the_wgmma_of_its_loop():
    """FlashAttention backward loads 64 floats of LSE / Delta per iteration: 16 threads of the first warp issue
    the cp.async. Before: `if (tx < 16) cp.async`, a branch part of a warp takes, and ptxas serialised every
    wgmma of the kernel ("(C7520) Potential Performance Loss: wgmma.mma_async instructions are serialized due to
    program dependence on compiler-inserted WG.AR in divergent path"; zoo backward d64 at 589 SASS per
    iteration on sm_90a). Expected: one predicated cp.async (no branch), no such ptxas report, and the
    ptxas reports that do come are warnings (not only in the build log)."""
    import sys
    import warnings
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
    from examples.zoo import flash_attention, mla
    from tilelang.jit import clear_compile_memo
    clear_compile_memo()  # the warnings come with a compile, not with a kernel this process already holds
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        k = tilelang.compile(flash_attention.backward(1, 2, 1, 256, 64, False), target=SM90A)
    assert "tl::cp_async_if<16>(" in k.get_kernel_source()
    ptxas = [str(x.message) for x in w if "ptxas" in str(x.message)]
    assert not any("C7520" in m for m in ptxas), ptxas
    # An advisory ptxas does give (MLA decode: warpgroup.arrive injected) reaches the user as a warning.
    with pytest.warns(tilelang.errors.TileLangPerformanceWarning, match=r"ptxas \(the CUDA assembler\) reports \(C75"):
        tilelang.compile(mla.mla_decode(2, 64, 4, 64), target=SM90A)


def test_a_short_warp_specialised_loop_is_not_unrolled_whole():
    """The consumer loop of a warp-specialised GEMM carries an unroll hint of twice its stages (stage and phase
    become constants). With K = 112 in 32-wide steps the loop has 4 iterations, and an unroll of 4 unrolled it
    whole; ptxas then serialised every wgmma ("(C7520) ... wgmma.mma_async instructions are serialized ..."),
    which the compile now reports as a warning. Expected: the loop unrolled by 2, and no such report."""
    import warnings
    from tilelang.jit import clear_compile_memo
    clear_compile_memo()
    func = kernels.matmul_transposed(200, 136, 112, 128, 128, 32, dtype="float16", out_dtype="float32", threads=128)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        k = tilelang.compile(func, target=SM90A)
    assert any("warp-specialized" in c for c in k.choices), k.choices
    assert "#pragma unroll 2\n" in k.get_kernel_source() and "#pragma unroll 4\n" not in k.get_kernel_source()
    assert not any("C7520" in str(x.message) for x in w), [str(x.message) for x in w]


def _role_nreg_kernel(group_wide, consumer_nreg=40):
    """Warp roles inside the first warp group (a producer warp, a consumer warp, two idle warps), the emulator
    running a fiber per warp. setmaxnreg is warp-group-collective and .aligned: the four warps must run the same
    instruction. group_wide: one T.set_max_nreg for the whole group before its warps branch; else one in each
    warp's branch (three different instructions: undefined in the PTX ISA, which the compiler turns into one
    before the branches where they agree; with consumer_nreg != 40 they do not)."""

    @T.prim_func
    def main(A: T.Tensor((32,), "float32"), B: T.Tensor((32,), "float32")):
        with T.Kernel(1, threads=256):
            T.disable_warp_group_reg_alloc()
            bar = T.alloc_barrier([32])
            S = T.alloc_shared((32,), "float32")
            tx = T.get_thread_binding()
            if tx < 128:
                if group_wide:
                    T.set_max_nreg(40, 0)
                if tx < 32:
                    if not group_wide:
                        T.set_max_nreg(40, 0)
                    S[tx] = A[tx]
                    T.mbarrier_arrive(bar)
                elif tx < 64:
                    if not group_wide:
                        T.set_max_nreg(consumer_nreg, 0)
                    T.mbarrier_wait_parity(bar, 0)
                    B[tx - 32] = S[tx - 32] + 1.0
                else:
                    if not group_wide:
                        T.set_max_nreg(40, 0)
            else:
                T.set_max_nreg(232, 1)

    return main


def test_set_max_nreg_of_warp_roles_must_be_one_instruction_per_warp_group():
    a, b = np.arange(32, dtype=np.float32), np.zeros(32, np.float32)
    _emu(_role_nreg_kernel(True))(a, b)
    np.testing.assert_array_equal(b, a + 1)
    # one T.set_max_nreg(40, 0) in each warp's branch (TileLang's aws examples): before, the emulator reported the
    # warps' different instructions; expected: the compiler runs one per warp group before the branches
    k = _emu(_role_nreg_kernel(False))
    assert any("runs once per warp group before them" in c and "warp group 0 (setmaxnreg.dec 40)" in c
               for c in k.choices), k.choices
    b = np.zeros(32, np.float32)
    k(a, b)
    np.testing.assert_array_equal(b, a + 1)
    # branches asking for different budgets stay as written: undefined, reported
    k = _emu(_role_nreg_kernel(False, consumer_nreg=48))
    assert not any("runs once per warp group" in c for c in k.choices), k.choices
    with pytest.raises(TileLangEmulationError) as e:
        k(a, np.zeros(32, np.float32))
    assert any(r[0] == "inactive_lanes" and "set_max_nreg" in r[1] for r in e.value.reports), e.value.reports


def _elif_epilogue():
    """An elif chain whose last branch is the epilogue of warps 4-7 (`elif 128 <= tx < 256:` after two branches of
    single warps' scalar work): the epilogue is lowered inside the region of its threads, where its condition
    holds for every thread; its copies through the shared tile need that region's barriers (between the writes
    and the reads of S, and between iterations)."""

    @T.prim_func
    def main(A: T.Tensor((256, 32), "float32"), B: T.Tensor((256, 32), "float32"), F: T.Tensor((128,), "float32")):
        with T.Kernel(1, threads=256):
            S = T.alloc_shared((128, 32), "float32")
            R = T.alloc_fragment((128, 32), "float32")
            tx = T.get_thread_binding()
            if tx < 64:
                F[tx] = 1.0
            elif tx < 128:
                F[tx] = 2.0
            elif 128 <= tx < 256:
                for it in T.serial(2):
                    for i, j in T.Parallel(128, 32):
                        R[i, j] = A[it * 128 + i, j] * 2.0
                    T.copy(R, S)
                    T.copy(S, B[it * 128, 0])

    return main


def test_an_epilogue_at_the_end_of_an_elif_chain_gets_its_barriers():
    seed = 20261207
    print("seed", seed)
    a = np.random.default_rng(seed).standard_normal((256, 32)).astype(np.float32)
    b, f = np.zeros_like(a), np.zeros(128, np.float32)
    k = _emu(_elif_epilogue())
    k(a, b, f)  # the emulator reports races if the epilogue's barriers are missing
    np.testing.assert_array_equal(b, a * 2)
    np.testing.assert_array_equal(f, np.r_[np.ones(64), np.full(64, 2.0)].astype(np.float32))
    assert "bar.sync" in tilelang.compile(_elif_epilogue(), target=SM90A).get_ptx()
