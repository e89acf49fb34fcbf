"""Warp specialisation on sm_90a without a GPU (docs/warp_specialization.md): a T.Pipelined loop over TMA
copies gets a producer warp group (one more, 128 threads) that issues the copies after waiting on per-stage
"empty" mbarriers, while the original warp groups wait on "full" mbarriers, run wgmma and release the stage;
setmaxnreg moves registers from the producer to the consumers. Checked in NVRTC's PTX, and run in the
emulator (one fiber per warp group, so a warp group waiting on another's arrivals lets it run) against float64
NumPy on seeded random inputs at ragged sizes. T.ws(...) blocks are explicit specialisation."""
import os
import re

import ml_dtypes
import numpy as np
import pytest

import tilelang
from tilelang.tools.sass import find_cuobjdump
import tilelang.language as T
from tilelang.errors import TileLangEmulationError, TileLangTypeError

import kernels


SM90A = {"kind": "cuda", "arch": "sm_90a"}
NP = {"float16": np.float16, "bfloat16": ml_dtypes.bfloat16}


def _rng():
    seed = int(os.environ.get("TL_TEST_SEED") or np.random.SeedSequence().entropy % 2**32)
    print("seed", seed)
    return np.random.default_rng(seed)


def _f64(x):
    return np.asarray(x).astype(np.float64)


def _ws_choice(k):
    return [c for c in k.choices if ": warp-specialized:" in c]


@pytest.mark.parametrize("threads,regs", [(256, 232), (384, 152), (128, None)])
def test_reference_gemm_is_warp_specialized_in_the_ptx(threads, regs):
    """Two consumer warp groups get 232 registers (TileLang's figure), three 152; the producer drops to 40 (the
    64K register file at 384 / 512 threads). One consumer warp group already has the whole per-thread budget at
    256 threads: no setmaxnreg. The PTX has both mbarrier families (full: expect_tx + try_wait; empty: arrive
    + try_wait), the TMA copies and wgmma; the block is launched with 128 more threads."""
    bm = 192 if threads == 384 else 128  # m64 rows per consumer warp group
    k = tilelang.compile(kernels.matmul(1024, 1024, 1024, bm, 128, 64, num_stages=3, threads=threads), target=SM90A)
    ptx, src = k.get_ptx(), k.get_kernel_source()
    if regs:
        assert "setmaxnreg.dec.sync.aligned.u32 40;" in ptx
        assert f"setmaxnreg.inc.sync.aligned.u32 {regs};" in ptx
    else:
        assert "setmaxnreg" not in ptx
    assert "mbarrier.arrive.expect_tx.shared::cta.b64" in ptx and "mbarrier.try_wait.parity" in ptx
    assert re.search(r"mbarrier\.arrive(\.release\.cta)?\.shared(::cta)?\.b64", ptx), ptx
    assert "cp.async.bulk.tensor.2d" in ptx and "wgmma.mma_async" in ptx
    # with setmaxnreg, one block per SM in the launch bounds: else ptxas ignores every setmaxnreg ("(C7508)
    # 'setmaxnreg' ignored; unable to determine register count at entry", now a warning: none here)
    bounds = f"__launch_bounds__({threads + 128}, 1)" if regs else f"__launch_bounds__({threads + 128})"
    assert bounds in src and k.compiled.threads == threads + 128
    assert not any("C7508" in w for w in k.warnings), k.warnings
    # the empty barriers count the consumer threads; the producer is the first thread after them
    assert re.search(rf"mbarrier_init\(&ws_empty\w*\[0\], {threads}\)", src), src
    assert f"if ((tx == {threads}))" in src
    ch = _ws_choice(k)
    wgs = "0" if threads == 128 else f"0..{threads // 128 - 1}"
    want = (f"producer wg {threads // 128} (setmaxnreg 40), consumers wg {wgs} ({regs})" if regs else
            f"producer wg 1 (no setmaxnreg), consumers wg 0;")
    assert len(ch) == 1 and want in ch[0] and f"{threads + 128} threads per block" in ch[0], k.choices
    res = k.get_resource_usage()
    assert res["spill_stores"] == 0 and res["spill_loads"] == 0 and res["stack_bytes"] == 0, res
    assert not k.warnings, k.warnings


def test_pass_config_and_reg_alloc_opt_out():
    """tl.disable_warp_specialized (TileLang's TL_DISABLE_WARP_SPECIALIZED) keeps the one-barrier pipeline;
    T.disable_warp_group_reg_alloc() keeps the split but emits no setmaxnreg."""
    func = kernels.matmul(512, 512, 512, 128, 128, 64, num_stages=2, threads=128)
    off = tilelang.compile(func, target=SM90A, pass_configs={tilelang.PassConfigKey.TL_DISABLE_WARP_SPECIALIZED: True})
    assert not _ws_choice(off) and "setmaxnreg" not in off.get_ptx() and off.compiled.threads == 128
    assert any("not warp-specialized: disabled by the pass config" in c for c in off.choices), off.choices

    @T.prim_func
    def no_realloc(A: T.Tensor((256, 256), "float16"), B: T.Tensor((256, 256), "float16"),
                   C: T.Tensor((256, 256), "float32")):
        with T.Kernel(2, 2, threads=256) as (bx, by):
            T.disable_warp_group_reg_alloc()
            A_s = T.alloc_shared((128, 64), "float16")
            B_s = T.alloc_shared((64, 128), "float16")
            C_l = T.alloc_fragment((128, 128), "float32")
            T.clear(C_l)
            for k in T.Pipelined(4, num_stages=2):
                T.copy(A[by * 128, k * 64], A_s)
                T.copy(B[k * 64, bx * 128], B_s)
                T.gemm(A_s, B_s, C_l)
            T.copy(C_l, C[by * 128, bx * 128])

    k = tilelang.compile(no_realloc, target=SM90A)
    assert "setmaxnreg" not in k.get_ptx() and "mbarrier.try_wait.parity" in k.get_ptx()
    assert any("(no setmaxnreg)" in c and "T.disable_warp_group_reg_alloc" in c for c in _ws_choice(k)), k.choices
    # elsewhere the opt-out has nothing to do
    kc = tilelang.compile(no_realloc, target="cpu")
    rng = _rng()
    a, b = (rng.standard_normal((256, 256)).astype(np.float16) for _ in range(2))
    c = np.zeros((256, 256), np.float32)
    kc(a, b, c)
    np.testing.assert_allclose(c, _f64(a) @ _f64(b), rtol=1e-4, atol=1e-3)


def test_sm90_without_a_and_sm80_are_not_split():
    for arch in ("sm_90", "sm_80"):
        k = tilelang.compile(kernels.matmul(512, 512, 512, 128, 128, 32), target={"kind": "cuda", "arch": arch})
        assert not _ws_choice(k) and "setmaxnreg" not in k.get_ptx()


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("bm,bn,bk,threads,stages", [(128, 128, 32, 128, 2), (128, 64, 64, 256, 3),
                                                     (64, 128, 32, 128, 4)])
def test_warp_specialized_gemm_matches_numpy_in_the_emulator(dtype, bm, bn, bk, threads, stages):
    """Ragged sizes (the last tiles hang over every edge); no race, deadlock or proxy report."""
    M, N, K = 2 * bm + 40, 2 * bn - 24, 5 * bk + 8
    rng = _rng()
    func = kernels.matmul(M, N, K, bm, bn, bk, dtype=dtype, out_dtype="float32", num_stages=stages, threads=threads)
    k = tilelang.compile(func, target=SM90A, execution_backend="emulator")
    assert _ws_choice(k) and "wgmma.wait_group 1" in _ws_choice(k)[0], k.choices  # overlapped consumers
    a = rng.standard_normal((M, K)).astype(NP[dtype])
    b = rng.standard_normal((K, N)).astype(NP[dtype])
    c = np.full((M, N), np.nan, np.float32)
    k(a, b, c)
    np.testing.assert_allclose(c, _f64(a) @ _f64(b), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("causal", [False, True])
def test_warp_specialized_flashattention_in_the_emulator(causal):
    """FlashAttention forward: K/V stages come from the producer warp group; the Q copy and the softmax run on
    the consumers."""
    rng = _rng()
    B, H, S, D = 1, 1, 128, 64
    func = kernels.flashattn(B, H, S, D, causal, num_stages=2)
    g = tilelang.compile(func, target=SM90A)
    assert _ws_choice(g) and "__launch_bounds__(256)" in g.get_kernel_source(), g.choices
    # two gemms per iteration (the softmax reads the first's accumulator): no overlap across iterations
    assert "wgmma.wait_group 0): 2 gemms per iteration" in _ws_choice(g)[0], g.choices
    assert "wgmma.mma_async" in g.get_ptx() and "mbarrier.try_wait.parity" in g.get_ptx()
    # the consumers' own barriers (before the TMA store of O) are named barrier 1 over their 128 threads
    assert "bar.sync 1, 128;" in g.get_ptx()
    res = g.get_resource_usage()
    assert res["spill_stores"] == 0 and res["stack_bytes"] == 0, res
    k = tilelang.compile(func, target=SM90A, execution_backend="emulator")
    q, kk, v = (rng.standard_normal((B, H, S, D)).astype(np.float16) for _ in range(3))
    o = np.zeros_like(q)
    k(q, kk, v, o)
    s = _f64(q) @ _f64(kk).transpose(0, 1, 3, 2) / np.sqrt(D)
    if causal:
        s = np.where(np.tril(np.ones((S, S), bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    np.testing.assert_allclose(_f64(o), p @ _f64(v), atol=2e-2)


def test_consumers_that_never_release_a_stage_deadlock():
    """The test hook drops the consumers' arrival on "empty": the producer's wait for the stage's second use
    can never complete, and the emulator says so, naming the barrier."""
    func = kernels.matmul(256, 128, 256, 128, 128, 32, num_stages=2)
    k = tilelang.compile(func, target=SM90A, execution_backend="emulator",
                         pass_configs={"tl.test_ws_skip_empty_arrive": True})
    a = np.ones((256, 256), np.float16)
    b = np.ones((256, 128), np.float16)
    c = np.zeros((256, 128), np.float16)
    with pytest.raises(TileLangEmulationError, match=r"deadlock.*ws_empty"):
        k(a, b, c)


def _explicit_ws(M, N, bm, bn, release=True, early=False):
    """TileLang-style explicit specialisation: warp group 1 loads tiles with T.tma_copy (issued by its first
    thread) once warp group 0 has released the tile; warp group 0 waits for the bytes, writes twice the tile
    and releases it."""

    @T.prim_func
    def main(A: T.Tensor((M, N), "float16"), B: T.Tensor((M, N), "float16")):
        with T.Kernel(T.ceildiv(M, bm), threads=256) as bx:
            full = T.alloc_barrier(128)
            empty = T.alloc_barrier(128)
            S = T.alloc_shared((bm, bn), "float16")
            with T.ws(1):
                for j in T.serial(T.ceildiv(N, bn)):
                    if j >= 1:
                        T.mbarrier_wait_parity(empty[0], (j + 1) % 2)
                    T.tma_copy(A[bx * bm, j * bn], S, barrier=full[0])  # the bytes full[0] expects
                    T.mbarrier_arrive(full[0])  # warp group 1's 128 arrivals
            with T.ws(0):
                tx = T.get_thread_binding()
                for j in T.serial(T.ceildiv(N, bn)):
                    T.mbarrier_wait_parity(full[0], j % 2)
                    if early:  # releases the tile before reading it: the next copy races with the reads
                        T.mbarrier_arrive(empty[0])
                    for e in T.serial(bm * bn // 128):
                        r = (e * 128 + tx) // bn
                        c = (e * 128 + tx) % bn
                        if bx * bm + r < M and j * bn + c < N:
                            B[bx * bm + r, j * bn + c] = S[r, c] * 2
                    if release and not early:
                        T.mbarrier_arrive(empty[0])

    return main


def test_explicit_ws_blocks_run_in_the_emulator():
    M, N = 100, 200  # ragged: the TMA boxes hang over both edges
    func = _explicit_ws(M, N, 64, 64)
    g = tilelang.compile(func, target=SM90A)
    ptx = g.get_ptx()
    assert "cp.async.bulk.tensor" in ptx and "mbarrier.try_wait.parity" in ptx
    k = tilelang.compile(func, target=SM90A, execution_backend="emulator")
    rng = _rng()
    a = rng.standard_normal((M, N)).astype(np.float16)
    b = np.zeros_like(a)
    k(a, b)
    np.testing.assert_array_equal(b, a * 2)


def test_explicit_ws_without_the_release_deadlocks():
    k = tilelang.compile(_explicit_ws(64, 256, 64, 64, release=False), target=SM90A, execution_backend="emulator")
    with pytest.raises(TileLangEmulationError, match="deadlock"):
        k(np.ones((64, 256), np.float16), np.zeros((64, 256), np.float16))


def test_explicit_ws_releasing_before_reading_is_a_race():
    """The consumers arrive on "empty" before reading the tile: the producer's next TMA copy into it is
    reported as a race with those reads."""
    k = tilelang.compile(_explicit_ws(64, 256, 64, 64, early=True), target=SM90A, execution_backend="emulator")
    with pytest.raises(TileLangEmulationError, match="race"):
        k(np.ones((64, 256), np.float16), np.zeros((64, 256), np.float16))


def test_ws_rejects_a_warp_group_the_block_does_not_have():
    with pytest.raises(TileLangTypeError, match=r"T.ws\(2,\): the block has 256 threads"):

        @T.prim_func
        def bad(A: T.Tensor((128,), "float32")):
            with T.Kernel(1, threads=256):
                with T.ws(2):
                    A[0] = 1.0


# ---- overlapped consumers: one wgmma group in flight across iterations -------------------------------------


def _gemm_ws(M, N, K, bm, bn, bk, stages, threads=128, wg_wait=0, scale_in_loop=False, restage_a=False):
    """The reference GEMM with T.gemm's wg_wait as given; `scale_in_loop` halves the accumulator after each
    gemm (so the accumulator is used by another statement of the loop: no default overlap); `restage_a`: the
    consumers copy each A stage into their own shared tile (rewritten every iteration) for the gemm."""

    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=threads) as (bx, by):
            A_s = T.alloc_shared((bm, bk), "float16")
            A2_s = T.alloc_shared((bm, bk), "float16")
            B_s = T.alloc_shared((bk, bn), "float16")
            C_l = T.alloc_fragment((bm, bn), "float32")
            T.clear(C_l)
            for k in T.Pipelined(T.ceildiv(K, bk), num_stages=stages):
                T.copy(A[by * bm, k * bk], A_s)
                T.copy(B[k * bk, bx * bn], B_s)
                if restage_a:
                    for i, j in T.Parallel(bm, bk):
                        A2_s[i, j] = A_s[i, j]
                    T.gemm(A2_s, B_s, C_l, wg_wait=wg_wait)
                else:
                    T.gemm(A_s, B_s, C_l, wg_wait=wg_wait)
                if scale_in_loop:
                    for i, j in T.Parallel(bm, bn):
                        C_l[i, j] = C_l[i, j] * 0.5
            T.copy(C_l, C[by * bm, bx * bn])

    return main


def test_gemm_pipeline_overlaps_consecutive_wgmma_groups_by_default():
    """The consumers wait with wgmma.wait_group 1 (the group of this iteration stays in flight while the next
    stage's wgmma is issued) and release stage k once iteration k+1's wait retired its wgmma; kernel.choices
    says so. The epilogue still waits for everything (wait_group 0 after the loop)."""
    k = tilelang.compile(kernels.matmul(1024, 1024, 1024, 128, 128, 64, num_stages=3, threads=256), target=SM90A)
    ptx = k.get_ptx()
    assert "wgmma.wait_group.sync.aligned 1;" in ptx and "wgmma.wait_group.sync.aligned 0;" in ptx
    ch = _ws_choice(k)
    assert len(ch) == 1 and "wgmma.wait_group 1, the default for a GEMM pipeline" in ch[0], k.choices
    assert "release stage k after iteration k+1's wait" in ch[0]
    res = k.get_resource_usage()
    assert res["spill_stores"] == 0 and res["stack_bytes"] == 0, res
    # ptxas keeps the groups asynchronous (it reports "wgmma.mma_async instructions are serialized" otherwise)
    log = k.compiled.compile_log
    assert "ptxas info" in log and "serialized" not in log, log


def test_no_default_overlap_where_the_accumulator_is_used_in_the_loop():
    """Another statement of the loop reads the accumulator: the gemm keeps wg_wait 0 (choices say why), and
    the emulator's result is still right."""
    M, N, K, bm, bn, bk = 160, 96, 200, 64, 64, 32
    func = _gemm_ws(M, N, K, bm, bn, bk, 2, scale_in_loop=True)
    g = tilelang.compile(func, target=SM90A)
    ch = _ws_choice(g)
    assert ch and "wgmma.wait_group 0" in ch[0] and "'C_l' is used by other statements" in ch[0], g.choices
    assert "wgmma.wait_group.sync.aligned 1;" not in g.get_ptx()
    k = tilelang.compile(func, target=SM90A, execution_backend="emulator")
    rng = _rng()
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c = np.zeros((M, N), np.float32)
    k(a, b, c)
    want = np.zeros((M, N))
    for kk in range(0, K, bk):
        want = (want + _f64(a[:, kk:kk + bk]) @ _f64(b[kk:kk + bk])) * 0.5
    np.testing.assert_allclose(c, want, rtol=1e-5, atol=1e-4)


def test_no_default_overlap_where_an_operand_is_rewritten_in_the_loop():
    """The consumers rewrite the gemm's A tile every iteration: overlapping would change it under the wgmma
    still in flight, so the gemm keeps wg_wait 0 (choices say why); the emulator's result is right."""
    M, N, K, bm, bn, bk = 128 + 8, 64, 5 * 32, 64, 64, 32
    func = _gemm_ws(M, N, K, bm, bn, bk, 2, restage_a=True)
    g = tilelang.compile(func, target=SM90A)
    ch = _ws_choice(g)
    assert ch and "wgmma.wait_group 0): the operand 'A2_s' is used by other statements" in ch[0], g.choices
    k = tilelang.compile(func, target=SM90A, execution_backend="emulator")
    rng = _rng()
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c = np.full((M, N), np.nan, np.float32)
    k(a, b, c)
    np.testing.assert_allclose(c, _f64(a) @ _f64(b), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("wg_wait", [1, -1])
def test_explicit_wg_wait_is_honoured_in_a_specialised_pipeline(wg_wait):
    """TileLang's wg_wait: wgmma.wait_group n after the gemm's commit (-1: none). In the specialised pipeline
    the stage is released once a later wait retired the group: with -1 the pass adds wgmma.wait_group 1 after
    the gemm. Ragged sizes, no report."""
    M, N, K, bm, bn, bk = 2 * 64 + 24, 128 - 40, 7 * 32 + 8, 64, 128, 32
    func = _gemm_ws(M, N, K, bm, bn, bk, 3, wg_wait=wg_wait)
    g = tilelang.compile(func, target=SM90A)
    ch = _ws_choice(g)
    how = "as the loop's wg_wait / T.wait_wgmma leave them" if wg_wait == 1 else "wgmma.wait_group 1 added"
    assert ch and f"1 wgmma group(s) in flight across iterations ({how}" in ch[0], g.choices
    assert "wgmma.wait_group.sync.aligned 1;" in g.get_ptx() and "serialized" not in g.compiled.compile_log
    k = tilelang.compile(func, target=SM90A, execution_backend="emulator")
    rng = _rng()
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c = np.full((M, N), np.nan, np.float32)
    k(a, b, c)
    np.testing.assert_allclose(c, _f64(a) @ _f64(b), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("stages", [2, 3])
def test_releasing_a_stage_before_its_wgmma_completed_is_reported(stages):
    """The test hook releases stage k right after iteration k's gemm is issued (before the wait that retires
    it): the producer's TMA copy into that stage is issued while the wgmma still reads it, and the emulator
    reports the overwrite. The same kernel without the hook runs clean."""
    M, N, K, bm, bn, bk = 128, 128, 8 * stages * 32, 128, 128, 32
    func = kernels.matmul(M, N, K, bm, bn, bk, out_dtype="float32", num_stages=stages)
    rng = _rng()
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    bad = tilelang.compile(func, target=SM90A, execution_backend="emulator",
                           pass_configs={"tl.test_ws_early_release": True})
    with pytest.raises(TileLangEmulationError, match=r"wgmma_operand_overwritten.*TMA copy"):
        bad(a, b, np.zeros((M, N), np.float32))
    good = tilelang.compile(func, target=SM90A, execution_backend="emulator")
    c = np.zeros((M, N), np.float32)
    good(a, b, c)
    np.testing.assert_allclose(c, _f64(a) @ _f64(b), rtol=1e-5, atol=1e-4)


# ---- a T.Pipelined loop inside another loop ---------------------------------------------------------------


def _persistent_gemm(M, N, K, bm, bn, bk, stages, blocks, threads=128, shrinking=False):
    """Each block computes `per` output tiles in a serial loop around the pipeline (a persistent kernel).
    `shrinking`: tile j of a block sums only K blocks j .. (the pipeline's extent depends on the outer loop)."""
    tiles_n = -(-N // bn)
    tiles = -(-M // bm) * tiles_n
    per = -(-tiles // blocks)
    nk = -(-K // bk)

    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(blocks, threads=threads) as bx:
            A_s = T.alloc_shared((bm, bk), "float16")
            B_s = T.alloc_shared((bk, bn), "float16")
            C_l = T.alloc_fragment((bm, bn), "float32")
            for j in T.serial(per):
                tile = bx * per + j
                skip = j if shrinking else 0
                T.clear(C_l)
                for k in T.Pipelined(nk - skip, num_stages=stages):
                    T.copy(A[(tile // tiles_n) * bm, (k + skip) * bk], A_s)
                    T.copy(B[(k + skip) * bk, (tile % tiles_n) * bn], B_s)
                    T.gemm(A_s, B_s, C_l)
                T.copy(C_l, C[(tile // tiles_n) * bm, (tile % tiles_n) * bn])

    return main, per


def _persistent_want(a, b, M, N, bm, bn, bk, blocks, per, shrinking):
    tiles_n = -(-N // bn)
    want = np.zeros((M, N))
    for bx in range(blocks):
        for j in range(per):
            tile = bx * per + j
            r, c = (tile // tiles_n) * bm, (tile % tiles_n) * bn
            k0 = (j if shrinking else 0) * bk
            want[r:r + bm, c:c + bn] = _f64(a[r:r + bm, k0:]) @ _f64(b[k0:, c:c + bn])
    return want


@pytest.mark.parametrize("stages,shrinking", [(3, False), (2, False), (3, True)])
def test_pipeline_inside_a_persistent_loop_is_split(stages, shrinking):
    """The pipeline runs once per tile of a serial loop: both sides number its iterations across the runs (a
    register counter), so stage g % s and phase (g / s) % 2 continue where the last tile stopped (5 K blocks
    per tile with 3 stages: the phases do not restart at a multiple of the stage count). With `shrinking` the
    run length changes from tile to tile. Ragged M, N, K; compiled for sm_90a and run in the emulator."""
    M, N, K, bm, bn, bk, blocks = 2 * 64 + 16, 2 * 64 - 8, 4 * 32 + 16, 64, 64, 32, 2
    func, per = _persistent_gemm(M, N, K, bm, bn, bk, stages, blocks, shrinking=shrinking)
    g = tilelang.compile(func, target=SM90A)
    ch = _ws_choice(g)
    if shrinking:  # ptxas serialises overlapped wgmma groups across a loop whose trip count it does not know
        assert ch and "wgmma.wait_group 0): the loop's trip count is not a constant" in ch[0], g.choices
    else:
        assert ch and "wgmma.wait_group 1" in ch[0], g.choices
    assert any("counts the iterations of every run of the enclosing loop" in c for c in g.choices), g.choices
    ptx = g.get_ptx()
    assert "wgmma.mma_async" in ptx and "cp.async.bulk.tensor.2d" in ptx and "mbarrier.try_wait.parity" in ptx
    assert "__launch_bounds__(256)" in g.get_kernel_source()
    res = g.get_resource_usage()
    assert res["spill_stores"] == 0 and res["stack_bytes"] == 0, res
    assert "ptxas info" in g.compiled.compile_log and "serialized" not in g.compiled.compile_log
    k = tilelang.compile(func, target=SM90A, execution_backend="emulator")
    rng = _rng()
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c = np.full((M, N), np.nan, np.float32)
    k(a, b, c)
    np.testing.assert_allclose(c, _persistent_want(a, b, M, N, bm, bn, bk, blocks, per, shrinking),
                               rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("stages", [2, 3])
def test_pipeline_under_the_tile_condition_of_t_persistent_is_split(stages):
    """T.Persistent runs the pipeline under `if (this block's w-th tile exists)`. Before: "not warp-specialized: the
    T.Pipelined loop is inside a condition", the one-barrier form with a __syncthreads per iteration (zoo persistent
    GEMM at 114 SASS per k-iteration on sm_90a). Expected: the producer runs the same condition around its loop (it
    reads no on-chip memory), the iteration counter is unsigned so stage and phase are a mask and a shift (no
    floor-division helpers in the source), and the product matches NumPy at ragged sizes in the emulator."""
    M, N, K, bm, bn, bk, blocks = 200, 136, 160, 64, 64, 32, 3

    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(blocks, threads=128) as bid:
            A_s = T.alloc_shared((bm, bk), "float16")
            B_s = T.alloc_shared((bk, bn), "float16")
            acc = T.alloc_fragment((bm, bn), "float32")
            for tm, tn in T.Persistent([T.ceildiv(M, bm), T.ceildiv(N, bn)], blocks, bid):
                T.clear(acc)
                for k in T.Pipelined(T.ceildiv(K, bk), num_stages=stages):
                    T.copy(A[tm * bm, k * bk], A_s)
                    T.copy(B[k * bk, tn * bn], B_s)
                    T.gemm(A_s, B_s, acc)
                T.copy(acc, C[tm * bm, tn * bn])

    g = tilelang.compile(main, target=SM90A)
    assert _ws_choice(g), g.choices
    src = g.get_kernel_source()
    assert "__launch_bounds__(256)" in src and "floormod" not in src and "floordiv" not in src
    # The consumers read their iteration number (carried across tiles in a register) once per iteration from
    # lane 0, so ptxas builds the wgmma descriptors in uniform registers. Before: no shuffle, every
    # descriptor in vector registers and moved over with R2UR before each HGMMA (66 SASS per k-iteration in
    # the zoo's persistent GEMM); expected: between two HGMMAs at most one R2UR (the shuffled iteration number
    # itself) and the descriptors added in uniform registers (UIADD3).
    assert src.count("tl::shfl_sync(") == 1, src
    if find_cuobjdump() is not None:
        sass = g.get_sass().splitlines()
        hg = [i for i, line in enumerate(sass) if "HGMMA" in line]
        assert len(hg) >= 2, sass
        first_iter = sass[hg[0]:hg[1] + 1]
        assert sum("R2UR" in line for line in first_iter) <= 1, "\n".join(first_iter)
        assert any("UIADD3" in line for line in first_iter), "\n".join(first_iter)
    k = tilelang.compile(main, target=SM90A, execution_backend="emulator")
    rng = _rng()
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c = np.full((M, N), np.nan, np.float32)
    k(a, b, c)
    np.testing.assert_allclose(c, _f64(a) @ _f64(b), rtol=1e-4, atol=1e-3)


def test_pipeline_whose_coordinates_read_on_chip_memory_is_not_split():
    """The producer warp group cannot read the consumers' registers: a copy coordinate taken from a
    T.alloc_var keeps the one-barrier pipeline, and kernel.choices says why."""

    @T.prim_func
    def main(A: T.Tensor((256, 256), "float16"), B: T.Tensor((256, 256), "float16"),
             C: T.Tensor((256, 256), "float32")):
        with T.Kernel(2, 2, threads=128) as (bx, by):
            row = T.alloc_var("int32")
            row = by * 128
            A_s = T.alloc_shared((128, 64), "float16")
            B_s = T.alloc_shared((64, 128), "float16")
            C_l = T.alloc_fragment((128, 128), "float32")
            T.clear(C_l)
            for k in T.Pipelined(4, num_stages=2):
                T.copy(A[row, k * 64], A_s)
                T.copy(B[k * 64, bx * 128], B_s)
                T.gemm(A_s, B_s, C_l)
            T.copy(C_l, C[by * 128, bx * 128])

    k = tilelang.compile(main, target=SM90A)
    assert not _ws_choice(k), k.choices
    assert any("not warp-specialized: the T.Pipelined loop's bounds or its copies' coordinates read on-chip"
               in c for c in k.choices), k.choices


# ---- tile ops inside T.ws blocks ---------------------------------------------------------------------------


def _ws_ring_gemm(M, N, K, bm, bn, bk, consumers=(1, 2), producer=0):
    """Explicit producer / consumer GEMM over a two-slot ring: the producer warp group fills slot k % 2 with
    T.tma_copy once the consumers freed it; the consumer warp groups (several: the gemm is split over their
    threads) clear, accumulate and write back with tile ops inside their T.ws block."""
    ncons = 128 * len(consumers)

    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128 * (len(consumers) + 1)) as (bx, by):
            As = T.alloc_shared((2, bm, bk), "float16")
            Bs = T.alloc_shared((2, bk, bn), "float16")
            acc = T.alloc_fragment((bm, bn), "float32")
            filled = T.alloc_barrier([128, 128])   # per slot: the producer's arrivals (and the bytes)
            freed = T.alloc_barrier([ncons, ncons])  # per slot: the consumers' arrivals
            with T.ws(*consumers):
                T.fill(acc, 0)
            for k in T.serial(T.ceildiv(K, bk)):
                with T.ws(producer):
                    T.mbarrier_wait_parity(freed[k % 2], ((k // 2) & 1) ^ 1)
                    T.tma_copy(A[by * bm:(by + 1) * bm, k * bk:(k + 1) * bk], As[k % 2, :, :], barrier=filled[k % 2])
                    T.tma_copy(B[k * bk:(k + 1) * bk, bx * bn:(bx + 1) * bn], Bs[k % 2, :, :], barrier=filled[k % 2])
                    T.mbarrier_arrive(filled[k % 2])
                with T.ws(*consumers):
                    T.mbarrier_wait_parity(filled[k % 2], (k // 2) & 1)
                    T.gemm(As[k % 2, :, :], Bs[k % 2, :, :], acc)
                    T.mbarrier_arrive(freed[k % 2])
            with T.ws(*consumers):
                for i, j in T.Parallel(bm, bn):
                    acc[i, j] = acc[i, j] * 0.5
                T.copy(acc, C[by * bm, bx * bn])

    return main


@pytest.mark.parametrize("consumers,producer", [((1, 2), 0), ((0,), 1)])
def test_tile_ops_inside_ws_blocks_run_on_their_warp_groups(consumers, producer):
    """Before: T.fill / T.gemm / T.Parallel / T.copy inside T.ws were refused (lowered for all the block's
    threads), and a gemm on a slot of a ring buffer fell back to mma.sync. Expected: each is partitioned over
    the threads of the T.ws block's warp groups (thread index rebased to their first thread), the gemm is wgmma
    on the slot, and the explicit producer / consumer GEMM matches NumPy in the emulator (race and bounds checks
    on) at ragged sizes, with the consumers first or last in the block."""
    M, N, K = 200, 136, 160
    func = _ws_ring_gemm(M, N, K, 128, 128, 64, consumers, producer)
    ptx = tilelang.compile(func, target=SM90A).get_ptx()
    # wgmma reads each slot of the 3-D ring buffers in place (descriptors at the slot's offset)
    assert "cp.async.bulk.tensor" in ptx and "mbarrier.expect_tx" in ptx and "wgmma.mma_async" in ptx, ptx[:2000]
    k = tilelang.compile(func, target=SM90A, execution_backend="emulator")
    rng = _rng()
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c = np.full((M, N), np.nan, np.float32)
    k(a, b, c)
    np.testing.assert_allclose(c, 0.5 * (_f64(a) @ _f64(b)), rtol=1e-3, atol=1e-3)


def _two_groups_own_tiles(M, N, target_sync=False):
    """Each warp group works on its own half of the rows with its own fragment and shared tile; warp group 1's
    transposing pass through shared memory needs a barrier among its own threads only."""

    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=256):
            f0 = T.alloc_fragment((M // 2, N), "float32")
            f1 = T.alloc_fragment((M // 2, N), "float32")
            s1 = T.alloc_shared((N, M // 2), "float32")
            with T.ws(0):
                T.copy(A[0:M // 2, :], f0)
                for i, j in T.Parallel(M // 2, N):
                    f0[i, j] = f0[i, j] + 1.0
                T.copy(f0, B[0:M // 2, :])
            with T.ws(1):
                for i, j in T.Parallel(M // 2, N):
                    s1[j, i] = A[M // 2 + i, j] * 3.0
                for i, j in T.Parallel(M // 2, N):
                    f1[i, j] = s1[j, i]
                T.copy(f1, B[M // 2:M, :])

    return main


@pytest.mark.parametrize("target", ["cuda -arch=sm_80", "cuda -arch=sm_90a"])
def test_ws_blocks_partition_over_their_own_threads_with_their_own_barrier(target):
    """Every element of each half is written by the warp group that owns it (a partition over all 256 threads
    would leave half of each tile undone); the barrier between warp group 1's shared-memory write and its read
    is `bar.sync 9, 128` (named barrier 8 + first warp group, over its 128 threads), not __syncthreads, which
    warp group 0 would never reach."""
    M, N = 64, 48
    func = _two_groups_own_tiles(M, N)
    g = tilelang.compile(func, target=target)
    src = g.get_kernel_source()
    assert re.search(r"named_barrier_sync\(9, 128\)|bar\.sync 9, 128", src + g.get_ptx()), src
    k = tilelang.compile(func, target=target, execution_backend="emulator")
    a = _rng().standard_normal((M, N)).astype(np.float32)
    b = np.full_like(a, np.nan)
    k(a, b)
    np.testing.assert_array_equal(b[:M // 2], a[:M // 2] + 1.0)
    np.testing.assert_array_equal(b[M // 2:], a[M // 2:] * 3.0)


def test_single_thread_work_in_a_ws_block_is_its_first_threads():
    """A scalar atomic in a T.ws block is made once (by the block's first thread), not by each of its threads:
    the warp groups' condition is not control flow of a single thread."""

    @T.prim_func
    def main(C: T.Tensor((4,), "int32")):
        with T.Kernel(2, threads=256):
            with T.ws(1):
                T.atomic_add(C[1], 1)
            with T.ws(0):
                tx = T.get_thread_binding()
                T.atomic_add(C[2 + tx % 2], 1)  # reads the thread index: each thread's own

    k = tilelang.compile(main, target=SM90A, execution_backend="emulator")
    c = np.zeros(4, np.int32)
    k(c)
    assert list(c) == [0, 2, 128, 128]


def _branch_halves(M, N, K):
    """TileLang's other spelling of specialisation: `if tx < 128:` / `else:` on T.get_thread_binding(), each
    branch computing its own half of the rows with tile ops (copies into shared memory, a gemm, an epilogue)."""
    h = M // 2

    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=256):
            A0 = T.alloc_shared((h, K), "float16")
            A1 = T.alloc_shared((h, K), "float16")
            B0 = T.alloc_shared((K, N), "float16")
            B1 = T.alloc_shared((K, N), "float16")
            acc0 = T.alloc_fragment((h, N), "float32")
            acc1 = T.alloc_fragment((h, N), "float32")
            tx = T.get_thread_binding()
            if tx < 128:
                T.copy(A[0:h, :], A0)
                T.copy(B, B0)
                T.clear(acc0)
                T.gemm(A0, B0, acc0)
                T.copy(acc0, C[0:h, :])
            else:
                T.copy(A[h:M, :], A1)
                T.copy(B, B1)
                T.clear(acc1)
                T.gemm(A1, B1, acc1)
                for i, j in T.Parallel(h, N):
                    acc1[i, j] = acc1[i, j] * 2.0
                T.copy(acc1, C[h:M, :])

    return main


@pytest.mark.parametrize("target", ["cuda -arch=sm_80", "cuda -arch=sm_90a"])
def test_tile_ops_under_a_branch_on_the_thread_index(target):
    """Before: tile ops under `if tx < 128:` were partitioned over all 256 threads, so half of each tile was never
    computed. Expected: each branch over whole warp groups is lowered for its threads, with a named barrier of its
    own (8 + its first warp group) between its copies and its gemm, and the result matches NumPy."""
    M, N, K = 128, 64, 64
    func = _branch_halves(M, N, K)
    g = tilelang.compile(func, target=target)
    ptx, src = g.get_ptx(), g.get_kernel_source()
    if target.endswith("sm_80"):  # cp.async then ldmatrix (sm_90a: TMA, waited on its mbarrier, then wgmma)
        assert "bar.sync 8, 128" in ptx and "bar.sync 9, 128" in ptx, re.findall(r"bar.*sync.*", ptx)
    assert "floormod" not in src, src  # the rebased index of warp group 1 is known to be non-negative
    k = tilelang.compile(func, target=target, execution_backend="emulator")
    rng = _rng()
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c = np.full((M, N), np.nan, np.float32)
    k(a, b, c)
    want = _f64(a) @ _f64(b)
    want[M // 2:] *= 2
    np.testing.assert_allclose(c, want, rtol=1e-3, atol=1e-3)


def test_tile_ops_in_an_elif_branch_run_on_its_warp_group():
    """`if tx < 128: ... elif tx >= 128 and tx < 256: ... elif tx >= 256: ...`: the middle branch is the else
    branch's own branch on the thread index; its gemm is lowered for its 128 threads (before the fix: for the
    else branch's 256, an internal error on sm_90a)."""
    M = N = K = 64

    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float32"),
             D: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=384):
            As = T.alloc_shared((M, K), "float16")
            Bs = T.alloc_shared((K, N), "float16")
            acc = T.alloc_fragment((M, N), "float32")
            other = T.alloc_fragment((M, N), "float32")
            tx = T.get_thread_binding()
            if tx < 128:
                for i, j in T.Parallel(M // 2, N):
                    D[i, j] = 1.0
            elif tx >= 128 and tx < 256:
                T.copy(A, As)
                T.copy(B, Bs)
                T.clear(acc)
                T.gemm(As, Bs, acc)
                T.copy(acc, C)
            elif tx >= 256:
                T.fill(other, 2.0)
                for i, j in T.Parallel(M // 2, N):
                    D[M // 2 + i, j] = other[i, j] + 1.0

    for target in ["cuda -arch=sm_80", "cuda -arch=sm_90a"]:
        k = tilelang.compile(main, target=target, execution_backend="emulator")
        rng = _rng()
        a = rng.standard_normal((M, K)).astype(np.float16)
        b = rng.standard_normal((K, N)).astype(np.float16)
        c, d = np.full((M, N), np.nan, np.float32), np.zeros((M, N), np.float32)
        k(a, b, c, d)
        np.testing.assert_allclose(c, _f64(a) @ _f64(b), rtol=1e-3, atol=1e-3)
        np.testing.assert_array_equal(d[:M // 2], 1.0)
        np.testing.assert_array_equal(d[M // 2:], 3.0)


def test_a_tma_copy_in_a_producer_branch_is_issued_by_its_first_thread():
    """`if tx >= 128: T.tma_copy(...)` (the producer branch, no tile work of its own) beside a consumer branch with
    tile work: the copy is issued by thread 128, the branch's first thread. Before, thread 0 issued it, which does
    not run the branch, so the tile was never loaded (the emulator read it uninitialised)."""
    M, N = 64, 64

    @T.prim_func
    def main(A: T.Tensor((M, N), "float16"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=256):
            S = T.alloc_shared((M, N), "float16")
            acc = T.alloc_fragment((M, N), "float32")
            loaded = T.alloc_barrier(128)
            tx = T.get_thread_binding()
            if tx >= 128:
                T.tma_copy(A, S, barrier=loaded[0])
                T.mbarrier_arrive(loaded[0])
            else:
                T.mbarrier_wait_parity(loaded[0], 0)
                for i, j in T.Parallel(M, N):
                    acc[i, j] = S[i, j] * 2.0
                T.copy(acc, B)

    k = tilelang.compile(main, target=SM90A, execution_backend="emulator")
    a = _rng().standard_normal((M, N)).astype(np.float16)
    b = np.full((M, N), np.nan, np.float32)
    k(a, b)
    np.testing.assert_array_equal(b, _f64(a) * 2)


def _branch_of(lo, hi, threads=256):
    @T.prim_func
    def main(A: T.Tensor((4, 48), "float32"), C: T.Tensor((64, 64), "float32"), R: T.Tensor((4,), "float32")):
        with T.Kernel(1, threads=threads):
            acc = T.alloc_fragment((64, 64), "float32")
            a = T.alloc_fragment((4, 48), "float32")
            s = T.alloc_fragment((4,), "float32")
            tx = T.get_thread_binding()
            if tx >= lo and tx < hi:
                T.fill(acc, 1.0)
                T.copy(acc, C)
                T.copy(A, a)
                T.reduce_sum(a, s, dim=1)
                T.copy(s, R)
    return main


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
@pytest.mark.parametrize("lo,hi,threads", [(0, 64, 256), (32, 64, 96), (0, 32, 96), (160, 256, 256)])
def test_tile_ops_under_a_branch_of_whole_warps(arch, lo, hi, threads):
    """Tile ops under a condition selecting whole warps (TileLang's mHC pre kernel: `if tx < 32` in a block of
    96) are lowered for the threads it selects. Before: refused unless whole warp groups (multiples of 128)."""
    a = _rng().standard_normal((4, 48)).astype(np.float32)
    c = np.full((64, 64), np.nan, np.float32)
    r = np.zeros(4, np.float32)
    tilelang.compile(_branch_of(lo, hi, threads), target=f"cuda -arch={arch}", execution_backend="emulator")(a, c, r)
    np.testing.assert_array_equal(c, np.ones((64, 64)))
    np.testing.assert_allclose(r, a.astype(np.float64).sum(1), rtol=1e-5, atol=5e-5)  # float32 sums of 48 (random seed)


def test_tile_ops_under_a_branch_of_part_of_a_warp_are_refused():
    msg = _ws_error(lambda: _branch_of(0, 48))
    assert "must be whole warps (multiples of 32); this branch runs on threads 0..47" in msg, msg
    assert "T.fill(acc, 1.0)" in msg, msg


def _panel_handoff(M, N, K, bk=64):
    """Warp group 1 loads A's 128-byte column panels one by one (T.tma_copy into `As[:, j * 64:(j + 1) * 64]`,
    one mbarrier each); warp group 0 multiplies each panel as it lands (a gemm on the column / row range, in an
    unrolled loop), writes the fp16 product to shared memory and hands it back; warp group 1 multiplies it by W."""
    nk = K // bk

    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), W: T.Tensor((N, N), "float16"),
             C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=256):
            As = T.alloc_shared((M, K), "float16")
            Bs = T.alloc_shared((K, N), "float16")
            Ws = T.alloc_shared((N, N), "float16")
            Ps = T.alloc_shared((M, N), "float16")
            acc = T.alloc_fragment((M, N), "float32")
            out = T.alloc_fragment((M, N), "float32")
            landed = T.alloc_barrier([128] * (nk + 1))
            product = T.alloc_barrier(128)
            with T.ws(1):
                T.tma_copy(B, Bs, barrier=landed[nk])
                T.tma_copy(W, Ws, barrier=landed[nk])
                T.mbarrier_arrive(landed[nk])
                for j in T.unroll(nk):
                    T.tma_copy(A[0:M, j * bk:(j + 1) * bk], As[:, j * bk:(j + 1) * bk], barrier=landed[j])
                    T.mbarrier_arrive(landed[j])
                T.mbarrier_wait_parity(product, 0)
                T.gemm(Ps, Ws, out, clear_accum=True)
                T.copy(out, C)
            with T.ws(0):
                T.mbarrier_wait_parity(landed[nk], 0)
                for j in T.unroll(nk):
                    T.mbarrier_wait_parity(landed[j], 0)
                    T.gemm(As[:, j * bk:(j + 1) * bk], Bs[j * bk:(j + 1) * bk, :], acc, clear_accum=(j == 0))
                T.copy(acc, Ps)
                T.mbarrier_arrive(product)

    return main


def test_column_panels_by_tma_and_wgmma_and_a_handoff_between_warp_groups():
    """Before: a TMA copy into a column range of a shared tile was refused, a gemm on a range with a loop-variable
    corner fell back to mma.sync, and warp group 0's generic stores of Ps reached warp group 1's wgmma without a
    fence.proxy.async by the writers (the emulator's async_proxy report). Expected: one TMA copy per 128-byte
    panel, wgmma on the ranges, the writers' fence, and the result matches NumPy."""
    M, N, K = 64, 64, 128
    func = _panel_handoff(M, N, K)
    g = tilelang.compile(func, target=SM90A)
    ptx = g.get_ptx()
    assert ptx.count("cp.async.bulk.tensor") >= 4 and "wgmma.mma_async" in ptx and "fence.proxy.async" in ptx
    assert not [w for w in g.warnings if "mma.sync" in w], g.warnings
    k = tilelang.compile(func, target=SM90A, execution_backend="emulator")
    rng = _rng()
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    w = rng.standard_normal((N, N)).astype(np.float16)
    c = np.full((M, N), np.nan, np.float32)
    k(a, b, w, c)
    p = (_f64(a) @ _f64(b)).astype(np.float16)
    # P is rounded to fp16 on both sides; a product on a rounding tie may differ by one fp16 ulp (|P| ~ 10:
    # 2^-7) times |W| (~3) in an element, while a missed panel or an unfenced read is off by whole units
    np.testing.assert_allclose(c, _f64(p) @ _f64(w), rtol=2e-3, atol=0.1)


def _ws_error(body):
    from tilelang.errors import TileLangError

    with pytest.raises(TileLangError) as e:
        tilelang.compile(body(), target=SM90A)
    return str(e.value)


def test_ws_tile_ops_errors_name_the_line():
    """What cannot be lowered per warp group is refused at the user's line: warp groups that are not
    consecutive, a fragment two regions use (its registers are one region's)."""

    def gaps():
        @T.prim_func
        def main(C: T.Tensor((128, 128), "float32")):
            with T.Kernel(1, threads=384):
                acc = T.alloc_fragment((128, 128), "float32")
                with T.ws(0, 2):
                    T.fill(acc, 1.0)
                    T.copy(acc, C)
        return main

    msg = _ws_error(gaps)
    assert "T.ws(0, 2) is not supported" in msg and "consecutive warp groups" in msg and "T.fill(acc" in msg, msg

    def shared_fragment():
        @T.prim_func
        def main(C: T.Tensor((128, 128), "float32")):
            with T.Kernel(1, threads=256):
                acc = T.alloc_fragment((128, 128), "float32")
                with T.ws(1):
                    T.fill(acc, 1.0)
                T.copy(acc, C)
        return main

    msg = _ws_error(shared_fragment)
    assert "fragment 'acc' is used by threads 128..255 (a T.ws block" in msg, msg
    assert "and by all 256 threads of the block" in msg, msg
    assert "T.copy(acc, C)" in msg, msg



@pytest.mark.parametrize("target", ["cuda -arch=sm_80", "cuda -arch=sm_90a"])
def test_a_pipelined_gemm_inside_a_ws_block(target):
    """A T.Pipelined loop inside T.ws is lowered for its warp group: cp.async (sm_80) or TMA issued by the
    group's first thread (sm_90a), the per-iteration barrier a named one of the group; warp group 0 idles."""
    M, N, K = 128, 128, 256

    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=256):
            As = T.alloc_shared((M, 64), "float16")
            Bs = T.alloc_shared((64, N), "float16")
            acc = T.alloc_fragment((M, N), "float32")
            with T.ws(1):
                T.clear(acc)
                for k in T.Pipelined(K // 64, num_stages=2):
                    T.copy(A[0, k * 64], As)
                    T.copy(B[k * 64, 0], Bs)
                    T.gemm(As, Bs, acc)
                T.copy(acc, C)

    g = tilelang.compile(main, target=target)
    assert "bar.sync 0" not in g.get_ptx() and "barrier.sync 0" not in g.get_ptx()
    k = tilelang.compile(main, target=target, execution_backend="emulator")
    rng = _rng()
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c = np.full((M, N), np.nan, np.float32)
    k(a, b, c)
    np.testing.assert_allclose(c, _f64(a) @ _f64(b), rtol=1e-3, atol=1e-3)


def test_ws_tile_ops_need_named_barriers():
    """HIP has no barrier over part of a block: tile ops inside T.ws are refused there, naming the target."""
    from tilelang.errors import TileLangUnsupportedError

    with pytest.raises(TileLangUnsupportedError, match=r"named barrier, which the HIP target does not have"):
        tilelang.compile(_two_groups_own_tiles(64, 48), target="hip")


def _flashattn_heads_loop(B, H, S, D, causal, bm=64, bn=64, stages=2):
    """FlashAttention forward with the heads in a serial loop inside each block (the K/V pipeline runs once per
    head; causal: its length depends on the query block)."""
    scale = (1.0 / D) ** 0.5 * 1.44269504
    shape = [B, H, S, D]

    @T.prim_func
    def main(Q: T.Tensor(shape, "float16"), K: T.Tensor(shape, "float16"), V: T.Tensor(shape, "float16"),
             O: T.Tensor(shape, "float16")):
        with T.Kernel(T.ceildiv(S, bm), B, threads=128) as (bx, bz):
            Q_s = T.alloc_shared([bm, D], "float16")
            K_s = T.alloc_shared([bn, D], "float16")
            V_s = T.alloc_shared([bn, D], "float16")
            O_s = T.alloc_shared([bm, D], "float16")
            acc_s = T.alloc_fragment([bm, bn], "float32")
            acc_s_cast = T.alloc_fragment([bm, bn], "float16")
            acc_o = T.alloc_fragment([bm, D], "float32")
            m = T.alloc_fragment([bm], "float32")
            m_prev = T.alloc_fragment([bm], "float32")
            sc = T.alloc_fragment([bm], "float32")
            ssum = T.alloc_fragment([bm], "float32")
            lsum = T.alloc_fragment([bm], "float32")
            for h in T.serial(H):
                T.copy(Q[bz, h, bx * bm:(bx + 1) * bm, :], Q_s)
                T.fill(acc_o, 0)
                T.fill(lsum, 0)
                T.fill(m, -T.infinity("float32"))
                n = T.min(T.ceildiv(S, bn), T.ceildiv((bx + 1) * bm, bn)) if causal else T.ceildiv(S, bn)
                for k in T.Pipelined(n, num_stages=stages):
                    T.copy(K[bz, h, k * bn:(k + 1) * bn, :], K_s)
                    if causal:
                        for i, j in T.Parallel(bm, bn):
                            acc_s[i, j] = T.if_then_else(bx * bm + i >= k * bn + j, 0, -T.infinity("float32"))
                    else:
                        T.clear(acc_s)
                    T.gemm(Q_s, K_s, acc_s, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)
                    T.copy(m, m_prev)
                    T.fill(m, -T.infinity("float32"))
                    T.reduce_max(acc_s, m, dim=1, clear=False)
                    for i in T.Parallel(bm):
                        m[i] = T.max(m[i], m_prev[i])
                    for i in T.Parallel(bm):
                        sc[i] = T.exp2(m_prev[i] * scale - m[i] * scale)
                    for i, j in T.Parallel(bm, bn):
                        acc_s[i, j] = T.exp2(acc_s[i, j] * scale - m[i] * scale)
                    T.reduce_sum(acc_s, ssum, dim=1)
                    for i in T.Parallel(bm):
                        lsum[i] = lsum[i] * sc[i] + ssum[i]
                    T.copy(acc_s, acc_s_cast)
                    for i, j in T.Parallel(bm, D):
                        acc_o[i, j] *= sc[i]
                    T.copy(V[bz, h, k * bn:(k + 1) * bn, :], V_s)
                    T.gemm(acc_s_cast, V_s, acc_o, policy=T.GemmWarpPolicy.FullRow)
                for i, j in T.Parallel(bm, D):
                    acc_o[i, j] /= lsum[i]
                T.copy(acc_o, O_s)
                T.copy(O_s, O[bz, h, bx * bm:(bx + 1) * bm, :])

    return main


@pytest.mark.parametrize("causal", [False, True])
def test_flashattention_with_an_outer_heads_loop_in_the_emulator(causal):
    """The brief's other nested case: the K/V pipeline inside a serial loop over heads (3 heads, 2 or 1..2 K/V
    blocks per run with 2 stages: the phases continue across heads). The Q copy of each head and the softmax
    run on the consumers."""
    B, H, S, D = 1, 3, 128, 64
    func = _flashattn_heads_loop(B, H, S, D, causal)
    g = tilelang.compile(func, target=SM90A)
    assert _ws_choice(g) and "__launch_bounds__(256)" in g.get_kernel_source(), g.choices
    assert any("counts the iterations of every run" in c for c in g.choices), g.choices
    res = g.get_resource_usage()
    assert res["spill_stores"] == 0 and res["stack_bytes"] == 0, res
    k = tilelang.compile(func, target=SM90A, execution_backend="emulator")
    rng = _rng()
    q, kk, v = (rng.standard_normal((B, H, S, D)).astype(np.float16) for _ in range(3))
    o = np.zeros_like(q)
    k(q, kk, v, o)
    s = _f64(q) @ _f64(kk).transpose(0, 1, 3, 2) / np.sqrt(D)
    if causal:
        s = np.where(np.tril(np.ones((S, S), bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    np.testing.assert_allclose(_f64(o), p @ _f64(v), atol=2e-2)


def test_one_stage_pipeline_whose_copies_read_a_page_table_is_split():
    """Paged attention's KV copy: `page = Table[b, t]` at the top of a one-stage T.Pipelined, the copy from
    `Pages[page, ...]`. Before: the let hid the copies from the pipeline, so the loop stayed synchronous TMA in
    the consumers' path (zoo MLA decode at 780 SASS per iteration on sm_90a, TileLang 751). Expected: the
    producer warp group computes the let again around its copies (it reads only a global tensor), the loop is
    warp-specialised, and the result matches NumPy in the emulator."""
    P, R, D, NB = 6, 64, 64, 4  # pages of R rows, NB blocks each reading 3 pages in table order

    @T.prim_func
    def main(Pages: T.Tensor((P, R, D), "float16"), Table: T.Tensor((NB, 3), "int32"), Q: T.Tensor((64, D), "float16"),
             O: T.Tensor((NB, 64, R), "float32")):
        with T.Kernel(NB, threads=128) as b:
            Q_s = T.alloc_shared((64, D), "float16")
            KV_s = T.alloc_shared((R, D), "float16")
            S = T.alloc_fragment((64, R), "float32")
            acc = T.alloc_fragment((64, R), "float32")
            T.copy(Q, Q_s)
            T.clear(acc)
            for t in T.Pipelined(3, num_stages=1):
                page = Table[b, t]
                T.copy(Pages[page, 0, 0], KV_s)
                T.gemm(Q_s, KV_s, S, transpose_B=True, clear_accum=True)
                for i, j in T.Parallel(64, R):
                    acc[i, j] += S[i, j]
            T.copy(acc, O[b, 0, 0])

    k = tilelang.compile(main, target=SM90A)
    assert _ws_choice(k), k.choices
    assert any("1-stage TMA pipeline" in c for c in k.choices), k.choices
    rng = _rng()
    pages = rng.standard_normal((P, R, D)).astype(np.float16)
    table = np.stack([rng.permutation(P)[:3] for _ in range(NB)]).astype(np.int32)
    q = rng.standard_normal((64, D)).astype(np.float16)
    o = np.full((NB, 64, R), np.nan, np.float32)
    tilelang.compile(main, target=SM90A, execution_backend="emulator")(pages, table, q, o)
    want = np.stack([sum(_f64(q) @ _f64(pages[p]).T for p in table[b]) for b in range(NB)])
    np.testing.assert_allclose(o, want, rtol=1e-4, atol=1e-3)
