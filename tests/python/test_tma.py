"""TMA on sm_90 / sm_90a without a GPU: global->shared T.copy lowered to cp.async.bulk.tensor with a
`const __grid_constant__` tensor map per (tensor, box, swizzle), T.Pipelined on one "full" mbarrier per
stage, compiled through NVRTC with the PTX and ptxas' report checked, and run in the emulator (which
encodes its own tensor-map image and implements the bulk copy, its swizzle and out-of-bounds zero fill
from the PTX ISA) against float64 NumPy on seeded random inputs at ragged sizes."""
import os
import re
import warnings

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
TMA_2D = "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"


def _rng():
    seed = int(os.environ.get("TL_TEST_SEED") or np.random.SeedSequence().entropy % 2**32)
    print("seed", seed)
    return np.random.default_rng(seed)


def _emu(func, **kw):
    return tilelang.compile(func, target=SM90A, execution_backend="emulator", **kw)


def _f64(x):
    return np.asarray(x).astype(np.float64)


def _no_spills(k):
    res = k.get_resource_usage()
    assert res["spill_stores"] == 0 and res["spill_loads"] == 0 and res["stack_bytes"] == 0, res


def _tma_copies(k):
    return [c for c in k.choices if ": T.copy " in c and ": TMA (" in c]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_reference_gemm_uses_tma_and_mbarriers(dtype):
    """The demo GEMM on sm_90a: both tile copies are TMA (2-D, A in the 64B swizzle of its 64-byte rows, B
    as one 128B-swizzled copy per 128-byte panel), the pipeline waits on mbarrier phases instead of
    cp.async groups, the tensor maps are __grid_constant__ parameters, and wgmma reads the tiles."""
    k = tilelang.compile(kernels.matmul(1024, 1024, 1024, dtype=dtype), target=SM90A)
    ptx, src = k.get_ptx(), k.get_kernel_source()
    assert TMA_2D in ptx
    assert "mbarrier.arrive.expect_tx.shared::cta.b64" in ptx and "mbarrier.try_wait.parity" in ptx
    assert "mbarrier.init.shared::cta.b64" in ptx and "fence.mbarrier_init.release.cluster" in ptx
    assert f"wgmma.mma_async.sync.aligned.m64n128k16.f32.{AB[dtype]}.{AB[dtype]}" in ptx
    assert "cp.async.cg" not in ptx and "cp.async.wait_group" not in ptx and "mma.sync" not in ptx
    # one 128-byte, 64-byte-aligned tensor-map parameter per (tensor, box, swizzle)
    assert src.count("const __grid_constant__ tl::TensorMap") == 2, src
    assert len(re.findall(r"\.param \.align 64 \.b8 \w+_param_\d+\[128\]", ptx)) == 2
    _no_spills(k)
    assert not k.warnings, k.warnings
    copies = _tma_copies(k)
    assert len(copies) == 2, k.choices
    assert any("A -> A_shared" in c and "box 128x32" in c and "64B swizzle" in c for c in copies), copies
    assert any("B -> B_shared" in c and "2x cp.async.bulk.tensor.2d" in c and "box 32x64" in c and "128B swizzle" in c
               for c in copies), copies
    assert any("2-stage TMA pipeline" in c and "'full' mbarrier per stage" in c for c in k.choices), k.choices
    rep = k.get_shared_memory_report()
    assert "tma_bar" in rep and "uint64" in rep, rep
    rows = {r.split()[0]: r.split() for r in rep.splitlines()[1:] if r and not r.startswith("total")}
    assert rows["A_shared"][5] == "1024" and rows["B_shared"][5] == "1024", rep  # whole swizzle patterns
    assert int(rows["B_shared"][-1]) % 1024 == 0 and int(rows["A_shared"][-1]) % 1024 == 0, rep


@pytest.mark.parametrize("arch", ["sm_80", "sm_89"])
def test_sm80_to_sm89_keep_cp_async(arch):
    k = tilelang.compile(kernels.matmul(256, 256, 256), target=f"cuda -arch={arch}")
    ptx = k.get_ptx()
    assert "cp.async.cg.shared.global" in ptx and "cp.async.bulk" not in ptx and "mbarrier" not in ptx
    assert "TensorMap" not in k.get_kernel_source()


def test_sm90_without_a_uses_tma_with_mma_sync():
    """TMA is sm_90 (wgmma needs sm_90a): on plain sm_90 the copies are TMA and the gemm mma.sync."""
    k = tilelang.compile(kernels.matmul(512, 512, 512), target="cuda -arch=sm_90")
    ptx = k.get_ptx()
    assert TMA_2D in ptx and "mma.sync.aligned.m16n8k16" in ptx and "wgmma" not in ptx
    _no_spills(k)


# (block_M, block_N, block_K, threads, trans_A, trans_B, stages): every swizzle mode of the tiles (rows
# of 32 / 64 / 128 bytes, 128-byte panels), K- and MN-major operands, 1 to 4 stages.
CONFIGS = {
    "ref_128x128x32_3st": (128, 128, 32, 128, False, False, 3),
    "k16_32B_rows_2st": (64, 64, 16, 128, False, False, 2),
    "k64_128B_rows_4st": (64, 128, 64, 128, False, True, 4),
    "trans_A_panels_2st": (64, 128, 32, 128, True, False, 2),
    "unpipelined_1st": (64, 64, 32, 128, False, False, 1),
}


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_tma_gemm_matches_numpy_in_the_emulator(name, dtype):
    """Ragged sizes: the last tiles hang over the tensors' edges, where TMA fills zeros."""
    bm, bn, bk, threads, ta, tb, stages = CONFIGS[name]
    M, N, K = bm + 40, bn + 24, 3 * bk + 8
    rng = _rng()
    func = kernels.matmul_transposed(M, N, K, bm, bn, bk, trans_A=ta, trans_B=tb, dtype=dtype, out_dtype="float32",
                                     threads=threads, num_stages=stages)
    k = _emu(func)
    assert len(_tma_copies(k)) == 2, k.choices
    assert not k.warnings, k.warnings
    a = rng.standard_normal((K, M) if ta else (M, K)).astype(NP[dtype])
    b = rng.standard_normal((N, K) if tb else (K, N)).astype(NP[dtype])
    c = np.full((M, N), np.nan, np.float32)
    k(a, b, c)
    A, B = _f64(a), _f64(b)
    np.testing.assert_allclose(c, (A.T if ta else A) @ (B.T if tb else B), rtol=1e-5, atol=1e-4)
    g = tilelang.compile(func, target=SM90A)
    assert "cp.async.bulk.tensor" in g.get_ptx() and "wgmma.mma_async" in g.get_ptx()
    _no_spills(g)


def test_4096_gemm_128x256x64_three_stages():
    """The issue's large tile: B's 512-byte rows are four 128B-swizzled panels (four TMA copies), 144 KB of
    stages plus the barriers, no spills."""
    k = tilelang.compile(kernels.matmul(4096, 4096, 4096, 128, 256, 64, num_stages=3, threads=256), target=SM90A)
    ptx = k.get_ptx()
    assert TMA_2D in ptx and "mbarrier.try_wait.parity" in ptx and "wgmma.mma_async" in ptx
    assert "cp.async.cg" not in ptx
    _no_spills(k)
    assert not k.warnings, k.warnings
    assert any("B -> B_shared" in c and "4x cp.async.bulk.tensor.2d" in c for c in _tma_copies(k)), k.choices


@pytest.mark.parametrize("causal,D", [(False, 64), (True, 64), (False, 128), (True, 128)],
                         ids=["full-d64", "causal-d64", "full-d128", "causal-d128"])
def test_flashattention_forward_with_tma(causal, D):
    """Q, K and V tiles by TMA (4-D tensors, boxes 1x1x64xD), K/V on a 2-stage mbarrier pipeline, both
    gemms on wgmma; the emulator agrees with NumPy (the kernel needs seq_len a multiple of its blocks)."""
    rng = _rng()
    B, H, S = 1, 2, 128
    func = kernels.flashattn(B, H, S, D, causal, num_stages=2)
    g = tilelang.compile(func, target=SM90A)
    ptx = g.get_ptx()
    assert "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes" in ptx
    assert "mbarrier.try_wait.parity" in ptx and "wgmma.mma_async" in ptx and "mma.sync" not in ptx
    _no_spills(g)
    assert not g.warnings, g.warnings
    k = _emu(func)
    assert len(_tma_copies(k)) == 3, k.choices
    q, kk, v = (rng.standard_normal((B, H, S, D)).astype(np.float16) for _ in range(3))
    o = np.zeros_like(q)
    k(q, kk, v, o)
    s = _f64(q) @ _f64(kk).transpose(0, 1, 3, 2) / np.sqrt(D)
    if causal:
        s = np.where(np.tril(np.ones((S, S), bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    np.testing.assert_allclose(_f64(o), p @ _f64(v), atol=2e-2)


def _tile_copy(M, N, bm, bn, dtype="float16", disable_tma=False, twice=False):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            S = T.alloc_shared((bm, bn), dtype)
            T.copy(A[by * bm, bx * bn], S, disable_tma=disable_tma)
            for i, j in T.Parallel(bm, bn):
                B[by * bm + i, bx * bn + j] = S[bm - 1 - i, j]
            if twice:
                T.copy(A[by * bm, bx * bn], S, disable_tma=disable_tma)
                for i, j in T.Parallel(bm, bn):
                    B[by * bm + i, bx * bn + j] = B[by * bm + i, bx * bn + j] + S[i, j]

    return main


@pytest.mark.parametrize("case", ["rows", "symbolic"])
def test_a_copy_that_cannot_use_tma_warns_and_falls_back(case):
    """A 4-row tile is not a whole 8-row swizzle pattern: cp.async. A symbolic row length: neither TMA's
    16-byte strides nor cp.async's row alignment can be proven: synchronous loads. The warning names the
    user's line and the reason, and the copy still computes the right thing."""
    n = T.dynamic("n")
    func = _tile_copy(64, 64, 4, 64) if case == "rows" else _tile_copy(64, n, 64, 64)
    with pytest.warns(TileLangPerformanceWarning, match="TMA") as w:
        k = _emu(func)
    msg = str(w[0].message)
    assert "test_tma.py" in msg, msg
    if case == "rows":
        assert "does not use TMA: the tile has 4 rows, not a multiple of the 8 rows" in msg and "cp.async" in msg, msg
    else:
        assert "symbolic" in msg and "synchronous loads" in msg, msg
    assert not _tma_copies(k)
    ptx = tilelang.compile(func, target=SM90A).get_ptx()
    assert "cp.async.bulk" not in ptx and ("cp.async.cg" in ptx) == (case == "rows")
    rng = _rng()
    a = rng.standard_normal((64, 64 if case == "rows" else 96)).astype(np.float16)
    b = np.zeros_like(a)
    k(a, b)
    bm = 4 if case == "rows" else 64
    np.testing.assert_array_equal(b, np.concatenate([t[::-1] for t in np.split(a, 64 // bm)]))


def test_a_symbolic_outer_dimension_keeps_tma():
    """Before: any symbolic dimension of the tensor ruled TMA out. Expected: a symbolic number of rows of
    64-element rows is a TMA copy (the row stride, 128 bytes, is a multiple of 16, so every outer one is;
    the tensor map is encoded from the call's shape), with the rows past the end zero-filled."""
    m = T.dynamic("m")
    func = _tile_copy(m, 64, 64, 64)
    k = _emu(func)
    assert len(_tma_copies(k)) == 1, k.choices
    assert "cp.async.bulk.tensor" in tilelang.compile(func, target=SM90A).get_ptx()
    rng = _rng()
    a = rng.standard_normal((100, 64)).astype(np.float16)
    b = np.zeros_like(a)
    k(a, b)
    pad = np.zeros((128, 64), np.float16)
    pad[:100] = a
    np.testing.assert_array_equal(b, np.concatenate([t[::-1] for t in np.split(pad, 2)])[:100])


@pytest.mark.parametrize("how", ["disable_tma", "pass_config", "tilelang_key"])
def test_opting_out_of_tma_is_silent(how):
    func = _tile_copy(128, 128, 64, 64, disable_tma=how == "disable_tma")
    cfg = {"disable_tma": {}, "pass_config": {"tl.disable_tma_lower": True},
           "tilelang_key": {tilelang.PassConfigKey.TL_DISABLE_TMA_LOWER: True}}[how]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        k = tilelang.compile(func, target=SM90A, pass_configs=cfg)
    assert "cp.async.cg" in k.get_ptx() and "cp.async.bulk" not in k.get_ptx()
    assert not k.warnings and not _tma_copies(k), k.choices


def test_unpipelined_copies_reuse_their_barrier_phase():
    """Two TMA copies into one tile, each waited on its own mbarrier phase (parity tracked in a register),
    the second after the tile's earlier readers are done (a __syncthreads the barrier pass inserts)."""
    func = _tile_copy(100, 72, 64, 64, twice=True)  # ragged: the copies' boxes hang over both edges
    k = _emu(func)
    assert len(_tma_copies(k)) == 2, k.choices
    rng = _rng()
    a = rng.standard_normal((100, 72)).astype(np.float16)
    b = np.zeros_like(a)
    k(a, b)
    ref = np.zeros((128, 128))
    pad = np.zeros((128, 128))
    pad[:100, :72] = _f64(a)
    for bi in range(2):
        for bj in range(2):
            t = pad[bi * 64:(bi + 1) * 64, bj * 64:(bj + 1) * 64]
            ref[bi * 64:(bi + 1) * 64, bj * 64:(bj + 1) * 64] = t[::-1] + t
    np.testing.assert_allclose(_f64(b), ref[:100, :72], rtol=1e-3)


def test_threads_read_a_tma_tile_after_the_wait_with_no_barrier():
    """Before: a __syncthreads between the mbarrier wait and the threads' reads of the tile the TMA copy
    wrote. Expected: none there (every thread waits on the mbarrier, which makes the landed bytes visible to
    it); the one barrier left orders the second copy after the first copy's readers (WAR), and the
    emulator (races checked) gives NumPy's numbers."""
    func = _tile_copy(100, 72, 64, 64, twice=True)
    src = tilelang.compile(func, target=SM90A).get_kernel_source()
    waits = [m.start() for m in re.finditer(r"tl::mbarrier_wait_parity\(", src)]
    assert len(waits) == 2, src
    after_first_wait = src[waits[0]:src.index("tl::tma_load(", waits[0])]
    assert after_first_wait.count("__syncthreads()") == 1, after_first_wait  # before the second copy only
    assert "__syncthreads()" not in src[waits[1]:], src
    k = _emu(func)
    rng = _rng()
    a = rng.standard_normal((100, 72)).astype(np.float16)
    b = np.zeros_like(a)
    k(a, b)
    pad = np.zeros((128, 128))
    pad[:100, :72] = _f64(a)
    ref = np.zeros((128, 128))
    for bi in range(2):
        for bj in range(2):
            t = pad[bi * 64:(bi + 1) * 64, bj * 64:(bj + 1) * 64]
            ref[bi * 64:(bi + 1) * 64, bj * 64:(bj + 1) * 64] = t[::-1] + t
    np.testing.assert_allclose(_f64(b), ref[:100, :72], rtol=1e-3)


def test_overwriting_a_tile_others_still_read_is_a_race():
    """Without barrier insertion, the second TMA copy overwrites the tile while other threads have read it
    since the last barrier: the emulator reports the race at the copy."""
    func = _tile_copy(64, 64, 64, 64, twice=True)
    k = _emu(func, pass_configs={"tl.disable_barrier_insertion": True})
    a = np.ones((64, 64), np.float16)
    with pytest.raises(TileLangEmulationError, match="race"):
        k(a, np.zeros_like(a))


def test_tma_ir_prints_and_reparses():
    from tilelang import _ffi

    for pass_name, f in _ffi.lower_trace_funcs(kernels.matmul(256, 256, 128), "cuda -arch=sm_90a"):
        text = _ffi.print_func(f)
        assert _ffi.structural_equal(f, T.parse_source(text)), f"the IR after {pass_name} does not re-parse:\n{text}"
    assert "tl.tma_load" in text and "tl.tensor_map" in text, text


def _pipeline_in_a_loop(R, M, N, K, bm=64, bn=64, bk=32, stages=2):
    @T.prim_func
    def main(A: T.Tensor((R, M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            A_s = T.alloc_shared((bm, bk), "float16")
            B_s = T.alloc_shared((bk, bn), "float16")
            acc = T.alloc_fragment((bm, bn), "float32")
            T.clear(acc)
            for r in T.serial(R):
                for k in T.Pipelined(T.ceildiv(K, bk), num_stages=stages):
                    T.copy(A[r, by * bm, k * bk], A_s)
                    T.copy(B[k * bk, bx * bn], B_s)
                    T.gemm(A_s, B_s, acc)
            T.copy(acc, C[by * bm, bx * bn])

    return main


def test_a_pipeline_that_runs_several_times_keeps_its_phases():
    """A 2-stage TMA pipeline of 3 iterations (an odd count per stage) inside a loop: the iterations are
    numbered across runs, so every run waits on the right stage and phase (3-D boxes of A). The one-barrier
    form: on sm_90a such a loop is warp-specialised by default (test_warp_specialize.py covers that form)."""
    R, M, N, K = 3, 72, 80, 3 * 32 - 8
    func = _pipeline_in_a_loop(R, M, N, K)
    k = _emu(func, pass_configs={"tl.disable_warp_specialized": True})
    assert len(_tma_copies(k)) == 2 and "tma_iters" in k.get_kernel_source(), k.choices
    rng = _rng()
    a = rng.standard_normal((R, M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c = np.full((M, N), np.nan, np.float32)
    k(a, b, c)
    np.testing.assert_allclose(c, _f64(a).sum(0) @ _f64(b), rtol=1e-5, atol=1e-3)
    ptx = tilelang.compile(func, target=SM90A).get_ptx()
    assert "cp.async.bulk.tensor.3d" in ptx and "wgmma.mma_async" in ptx


def _explicit_tma(M, N, bm, bn, wait=True):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float16"), B: T.Tensor((M, N), "float16")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            bars = T.alloc_barrier(128)
            S = T.alloc_shared((bm, bn), "float16")
            T.tma_copy(A[by * bm, bx * bn], S, barrier=bars[0])
            T.mbarrier_arrive(bars[0])  # every thread arrives: the copy itself only adds expected bytes
            if wait:
                T.mbarrier_wait_parity(bars[0], 0)
            for i, j in T.Parallel(bm, bn):
                B[by * bm + i, bx * bn + j] = S[i, j] * 2

    return main


def test_explicit_tma_copy_with_a_user_barrier():
    """T.tma_copy issues the load and its expect_tx (no arrival, as TileLang's) on the user's barrier; the user
    arrives and waits."""
    func = _explicit_tma(100, 136, 64, 64)  # ragged
    g = tilelang.compile(func, target=SM90A)
    ptx = g.get_ptx()
    assert TMA_2D in ptx and "mbarrier.expect_tx" in ptx and "mbarrier.arrive.expect_tx" not in ptx, ptx
    assert any("T.tma_copy A -> S: TMA" in c for c in g.choices), g.choices
    k = _emu(func)
    rng = _rng()
    a = rng.standard_normal((100, 136)).astype(np.float16)
    b = np.zeros_like(a)
    k(a, b)
    np.testing.assert_array_equal(b, a * 2)
    from tilelang import _ffi

    text = _ffi.print_func(func)
    assert "T.tma_copy(A[by * 64:by * 64 + 64, bx * 64:bx * 64 + 64], S" in text and "bars[0])" in text, text
    assert _ffi.structural_equal(func, T.parse_source(text))


@pytest.mark.parametrize("check_uninit", [True, False])
def test_explicit_tma_copy_without_its_wait_is_reported(check_uninit):
    """Without the wait the tile is read before the copy lands (never-written elements), and the copy is
    still in flight when the block ends."""
    k = _emu(_explicit_tma(64, 64, 64, 64, wait=False), pass_configs={"emulator.check_uninit": check_uninit})
    a = np.ones((64, 64), np.float16)
    with pytest.raises(TileLangEmulationError) as e:
        k(a, np.zeros_like(a))
    kind, msg = e.value.reports[0]
    if check_uninit:
        assert kind == "uninitialized_read" and "'S'" in msg, e.value.reports[0]
    else:
        assert kind == "tma_not_waited" and "still in flight" in msg and "test_tma.py" in msg, e.value.reports


@pytest.mark.parametrize("target,what", [("cuda -arch=sm_80", "needs a Hopper target"), ("llvm", "not for the CPU")])
def test_explicit_tma_copy_needs_hopper(target, what):
    from tilelang.errors import TileLangUnsupportedError

    with pytest.raises(TileLangUnsupportedError, match=what) as e:
        tilelang.compile(_explicit_tma(64, 64, 64, 64), target=target)
    assert "test_tma.py" in str(e.value)


def _load_scale_store(M, N, bm, bn):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float16"), B: T.Tensor((M, N), "float16")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            S = T.alloc_shared((bm, bn), "float16")
            S2 = T.alloc_shared((bm, bn), "float16")
            T.copy(A[by * bm, bx * bn], S)
            for i, j in T.Parallel(bm, bn):
                S2[i, j] = S[i, j] * 3
            T.copy(S2, B[by * bm, bx * bn])

    return main


@pytest.mark.parametrize("bn", [32, 64, 128], ids=["64B", "128B", "panels"])
def test_tma_store(bn):
    """shared -> global T.copy as a TMA store (fence.proxy.async by every writer, then one thread's bulk
    tensor store, commit and wait); out-of-bounds elements of the ragged edge tiles are not written."""
    M, N = 100, 2 * bn + 24
    func = _load_scale_store(M, N, 64, bn)
    g = tilelang.compile(func, target=SM90A)
    ptx = g.get_ptx()
    assert "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group" in ptx and "cp.async.bulk.wait_group 0" in ptx
    assert "fence.proxy.async.shared::cta" in ptx
    assert any("S2 -> B: TMA store" in c for c in g.choices), g.choices
    k = _emu(func)
    rng = _rng()
    a = rng.standard_normal((M, N)).astype(np.float16)
    b = np.full_like(a, 7)
    k(a, b)
    np.testing.assert_array_equal(b, (a * np.float16(3)).astype(np.float16))


def test_tma_store_of_unfenced_writes_is_reported():
    k = _emu(_load_scale_store(64, 64, 64, 64), pass_configs={"tl.test_skip_fence_proxy_async": True})
    a = np.ones((64, 64), np.float16)
    with pytest.raises(TileLangEmulationError) as e:
        k(a, np.zeros_like(a))
    kind, msg = e.value.reports[0]
    assert kind == "async_proxy" and "TMA store" in msg, e.value.reports


def test_a_pipeline_mixing_tma_and_cp_async_copies_uses_cp_async():
    """S2's 4-row tile cannot be TMA; the pipeline then synchronises all its copies with cp.async groups,
    saying so for the copy that could have been TMA."""
    M, N, K = 64, 64, 200

    @T.prim_func
    def main(A: T.Tensor((M, K), "float32"), B: T.Tensor((4, K), "float32"), C: T.Tensor((M, 64), "float32")):
        with T.Kernel(1, threads=128) as bx:
            S1 = T.alloc_shared((64, 32), "float32")
            S2 = T.alloc_shared((4, 32), "float32")
            acc = T.alloc_fragment((64, 32), "float32")
            T.clear(acc)
            for k in T.Pipelined(T.ceildiv(K, 32), num_stages=2):
                T.copy(A[0, k * 32], S1)
                T.copy(B[0, k * 32], S2)
                for i, j in T.Parallel(64, 32):
                    acc[i, j] += S1[i, j] * S2[i % 4, j]
            T.copy(acc, C[0, 0])

    with pytest.warns(TileLangPerformanceWarning, match="does not use TMA") as w:
        k = _emu(main)
    msgs = [str(x.message) for x in w]
    assert any("A -> S1 does not use TMA: the T.Pipelined loop at" in m and "it uses cp.async" in m for m in msgs), msgs
    assert not _tma_copies(k)
    ptx = tilelang.compile(main, target=SM90A).get_ptx()
    assert "cp.async.cg" in ptx and "cp.async.bulk.tensor" not in ptx
    rng = _rng()
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal((4, K)).astype(np.float32)
    c = np.zeros((M, 64), np.float32)
    k(a, b, c)
    A4 = _f64(a).reshape(M, -1)
    Bt = np.tile(_f64(b), (16, 1))  # row i uses B row i % 4
    pad = (-K) % 32
    prod = np.pad(A4 * Bt, ((0, 0), (0, pad))).reshape(M, -1, 32).sum(1)
    np.testing.assert_allclose(c[:, :32], prod, rtol=1e-4, atol=1e-4)


# ---- T.atomic_add(..., use_tma=True): TMA reductions ---------------------------------------------------------


def _tma_reduce(M, N, bm, bn, parts, dtype="float32"):
    """Each of `parts` blocks per tile adds its scaled tile into the output with one TMA reduction."""

    @T.prim_func
    def main(A: T.Tensor((parts, M, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), parts, threads=128) as (bx, by, bz):
            S = T.alloc_shared((bm, bn), dtype)
            T.copy(A[bz, by * bm, bx * bn], S)
            for i, j in T.Parallel(bm, bn):
                S[i, j] = S[i, j] * (bz + 1)
            T.atomic_add(C[by * bm:(by + 1) * bm, bx * bn:(bx + 1) * bn], S, use_tma=True)

    return main


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_atomic_add_with_use_tma_is_a_tma_reduction(dtype):
    """Before: use_tma was not a parameter (TypeError). Expected: on sm_90a the tile is added by
    cp.reduce.async.bulk.tensor .add (the writers fence their stores first), and three blocks adding into the same
    ragged tiles give NumPy's sum in the emulator; sm_80 falls back to element-wise atomics with a warning."""
    M, N, parts = 100, 72, 3
    func = _tma_reduce(M, N, 64, 64 if dtype == "float16" else 32, parts, dtype)
    g = tilelang.compile(func, target=SM90A)
    ptx = g.get_ptx()
    assert "cp.reduce.async.bulk.tensor.2d.global.shared::cta.add" in ptx and "fence.proxy.async" in ptx, ptx[-3000:]
    assert any("TMA reduction" in c for c in g.choices), g.choices
    k = _emu(func)
    rng = _rng()
    np_t = np.float16 if dtype == "float16" else np.float32
    a = (rng.standard_normal((parts, M, N)) * 0.5).astype(np_t)
    c = rng.standard_normal((M, N)).astype(np_t)
    want = c.astype(np.float64) + sum((p + 1) * a[p].astype(np.float64) for p in range(parts))
    k(a, c)
    np.testing.assert_allclose(c, want, rtol=1e-2 if dtype == "float16" else 1e-5, atol=1e-2 if dtype == "float16" else 1e-5)
    with pytest.warns(UserWarning, match=r"use_tma=True\) uses element-wise atomics: TMA needs sm_90"):
        tilelang.compile(func, target="cuda -arch=sm_80")


def test_atomic_add_use_tma_needs_a_tile_value():
    from tilelang.errors import TileLangTypeError

    with pytest.raises(TileLangTypeError, match=r"use_tma=True\) adds a tile"):
        @T.prim_func
        def main(C: T.Tensor((4,), "float32")):
            with T.Kernel(1, threads=32):
                T.atomic_add(C[0], 1.0, use_tma=True)
