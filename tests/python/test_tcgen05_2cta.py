"""2-CTA tcgen05 (cta_group::2) on the tcgen05 family (docs/blackwell.md): in a T.ClusterKernel of block pairs, each
block loads its 128 rows of A and N / 2 columns of B with TileLang's 2-CTA TMA load (T.tma_copy into a cluster
barrier: both copies complete the even block's barrier), the even block's MMA warp issues
T.tcgen05_gemm(..., use_2cta=True) for the pair's 256 x N tile and commits to both blocks
(T.tcgen05_mma_arrive(..., arrive_2cta=True)), and every block reads its own tensor memory. Run in the emulator
against float64 NumPy on seeded random inputs (ragged sizes included), compiled for sm_100a through NVRTC and
ptxas (PTX and SASS checked), and the refusals."""
import os
import re

import ml_dtypes
import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import TileLangError, TileLangUnsupportedError

SM100A = "cuda -arch=sm_100a"
NP = {"float16": np.float16, "bfloat16": ml_dtypes.bfloat16}


def _rng():
    seed = int(os.environ.get("TL_TEST_SEED") or np.random.SeedSequence().entropy % 2**32)
    print("seed", seed)
    return np.random.default_rng(seed)


def pair_gemm(M, N, K, bM=128, bN=256, bK=64, stages=2, dtype="bfloat16", threads=128, out_dtype="float32",
              epilogue_warps=False):
    """C = A @ B (B stored [K, N]) with 256 x bN tiles computed by block pairs: blocks bx = 2i, 2i + 1 of a cluster
    of two hold rows [128 bx, +128) of A and of C; block rank r of the pair holds columns [bN by + r bN / 2, +bN / 2)
    of B. Warp 0 of each block loads a ring of `stages` stages (both blocks' loads and both TMA warps' arrivals
    complete the even block's `full` barrier); warp 1 of the even block issues the MMAs, each freeing its stage in
    both blocks, and commits them all to `done` in both blocks. With epilogue_warps (256 threads) warps 4-7 read
    the accumulator, in the elif branch after the even block's MMA branch (`elif rank == 0 and tx < 64:` is no
    thread range in the odd block: the epilogue's own range makes it a region of its own)."""

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), out_dtype)):
        with T.ClusterKernel(T.ceildiv(M, bM), T.ceildiv(N, bN), threads=threads, cluster_dims=2) as (bx, by):
            A_s = T.alloc_shared((stages, bM, bK), dtype)
            B_s = T.alloc_shared((stages, bK, bN // 2), dtype)
            acc = T.alloc_tmem([bM, bN], "float32")
            out = T.alloc_fragment((bM, bN), "float32")
            full = T.alloc_cluster_barrier([64] * stages)
            free = T.alloc_cluster_barrier([1] * stages)
            done = T.alloc_barrier(1)
            tx = T.get_thread_binding()
            rank = T.block_rank_in_cluster()
            n_k = T.ceildiv(K, bK)
            if tx < 32:
                for k in T.serial(n_k):
                    s = k % stages
                    T.mbarrier_wait_parity(free[s], ((k // stages) & 1) ^ 1)
                    T.tma_copy(A[bx * bM:(bx + 1) * bM, k * bK:(k + 1) * bK], A_s[s, :, :], barrier=full[s])
                    col = by * bN + rank * (bN // 2)
                    T.tma_copy(B[k * bK:(k + 1) * bK, col:col + bN // 2], B_s[s, :, :], barrier=full[s])
                    T.mbarrier_arrive(full[s], 0)
            elif rank == 0 and tx < 64:
                for k in T.serial(n_k):
                    s = k % stages
                    T.mbarrier_wait_parity(full[s], (k // stages) & 1)
                    T.tcgen05_gemm(A_s[s, :, :], B_s[s, :, :], acc, mbar=free[s], clear_accum=k == 0, use_2cta=True)
                T.tcgen05_mma_arrive(done, arrive_2cta=True)
            elif epilogue_warps and tx >= 128:
                T.mbarrier_wait_parity(done, 0)
                T.copy(acc, out)
                T.copy(out, C[bx * bM, by * bN])
            if not epilogue_warps:
                T.mbarrier_wait_parity(done, 0)
                T.copy(acc, out)
                T.copy(out, C[bx * bM, by * bN])

    return main


@pytest.mark.parametrize("M,N,K,dtype,kw", [
    (256, 256, 192, "bfloat16", {}),
    (200, 200, 136, "float16", {"stages": 3}),       # ragged: TMA fills the tails with zeros
    (512, 128, 128, "bfloat16", {"bN": 128, "threads": 256}),  # two pairs; two column groups read tensor memory
    (256, 128, 128, "float16", {"bN": 128, "threads": 256, "epilogue_warps": True}),
])
def test_pair_gemm_in_the_emulator(M, N, K, dtype, kw):
    rng = _rng()
    a = rng.standard_normal((M, K)).astype(NP[dtype])
    b = rng.standard_normal((K, N)).astype(NP[dtype])
    c = np.full((M, N), np.nan, np.float32)
    k = tilelang.compile(pair_gemm(M, N, K, dtype=dtype, **kw), target=SM100A, execution_backend="emulator")
    k(a, b, c)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-5 * np.abs(ref).max())
    text = "\n".join(k.choices)
    assert "tcgen05.mma.cta_group::2.kind::f16 256x" in text and "issued by thread 32 of its branch" in text, text
    assert "2-CTA load" in text and "tcgen05.alloc.cta_group::2" in text, text


def test_the_8192_pair_gemm_compiles_for_sm100a_without_spills():
    """The issue's 8192^3 bf16 GEMM with 256 x 256 pair tiles (256 threads: two column groups read the 256
    accumulator columns, 128 registers each)."""
    k = tilelang.compile(pair_gemm(8192, 8192, 8192, stages=4, threads=256, out_dtype="bfloat16"), target=SM100A)
    ptx = k.get_ptx()
    for s in ("tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32",
              "tcgen05.relinquish_alloc_permit.cta_group::2",
              "tcgen05.mma.cta_group::2.kind::f16",
              "tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64",
              "cp.async.bulk.tensor.2d.cta_group::2.shared::cluster.global.mbarrier::complete_tx::bytes",
              "mapa.shared::cluster", "tcgen05.dealloc.cta_group::2", "barrier.cluster.arrive",
              ".reqnctapercluster 2, 1, 1"):
        assert s in ptx, s
    assert "cta_group::1" not in ptx  # one CTA group per kernel
    res = k.get_resource_usage()
    assert res["spill_stores"] == 0 and res["spill_loads"] == 0, res
    sass = k.get_sass()
    for s in (r"\bUTCHMMA\.2CTA\b", r"\bUTMALDG\.2D\.2CTA\b", r"\bUTCBAR\.2CTA\.MULTICAST\b"):
        assert re.search(s, sass), s


def _misuse(mode, cluster=2, read=True, grid=(2, 2)):
    @T.prim_func
    def main(A: T.Tensor((256, 64), "float16"), B: T.Tensor((64, 256), "float16"), C: T.Tensor((256, 256), "float32")):
        with T.ClusterKernel(*grid, threads=128, cluster_dims=cluster) as (bx, by):
            A_s = T.alloc_shared((128, 64), "float16")
            B_s = T.alloc_shared((64, 128), "float16")
            B_full = T.alloc_shared((64, 256), "float16")
            bar = T.alloc_cluster_barrier([1])
            done = T.alloc_barrier(1)
            if mode == "load":
                T.tma_copy(A[0:128, 0:64], A_s, barrier=bar[0])
            else:
                acc = T.alloc_tmem([128, 256], "float32")
                T.copy(A[bx * 128, 0], A_s)
                T.copy(B[0, 0], B_s)
                T.copy(B, B_full)
                if mode == "whole_b":
                    T.tcgen05_gemm(A_s, B_full, acc, mbar=done, clear_accum=True, use_2cta=True)
                else:
                    T.tcgen05_gemm(A_s, B_s, acc, mbar=done, clear_accum=True, use_2cta=True)
                if mode == "mixed":
                    T.tcgen05_mma_arrive(done)
            if read:  # (an accumulator nobody reads is dead code)
                out = T.alloc_fragment((128, 256), "float32")
                T.mbarrier_wait_parity(done, 0)
                T.copy(acc, out)
                T.copy(out, C[bx * 128, 0])

    return main


def test_misuse_is_a_clear_error():
    with pytest.raises(TileLangUnsupportedError, match="an even number of blocks"):
        tilelang.compile(_misuse("pair", cluster=(3, 1, 1), grid=(3, 2)), target=SM100A)
    # pairs of consecutive ranks: a (1, 2, 1) cluster pairs blocks along y
    assert "tcgen05.mma.cta_group::2" in tilelang.compile(_misuse("pair", cluster=(1, 2, 1)), target=SM100A).get_ptx()
    with pytest.raises(TileLangUnsupportedError, match="mixes 2-CTA tcgen05"):
        tilelang.compile(_misuse("mixed"), target=SM100A)
    with pytest.raises(TileLangError, match=r"each block holds N / 2 = 128 columns of B"):
        tilelang.compile(_misuse("whole_b"), target=SM100A)
    with pytest.raises(TileLangUnsupportedError, match="2-CTA load.* needs the tcgen05 family"):
        tilelang.compile(_misuse("load", read=False), target="cuda -arch=sm_90a")
    with pytest.raises(TileLangUnsupportedError, match="needs the tcgen05 family"):
        tilelang.compile(_misuse("pair", read=False), target="cuda -arch=sm_90a")
    # the 2-CTA forms compile where they belong
    assert "tcgen05.mma.cta_group::2" in tilelang.compile(_misuse("pair"), target=SM100A).get_ptx()


def pair_ts(N=64, D=64, dtype="float16", sync=True):
    """O = P @ V on a CTA pair with A in tensor memory (FlashAttention's P @ V on 256-row tiles): each block writes
    its 128 rows of P (from global memory through a fragment) into its own tensor memory and loads D / 2 columns of
    V; after a fence of those generic-proxy writes and a cluster barrier the even block issues
    T.tcgen05_gemm(P_t, V_s, O_t, use_2cta=True) (tcgen05.mma.cta_group::2 with [a]) and commits to both blocks.
    sync=False leaves the cluster barrier out."""

    @T.prim_func
    def main(P: T.Tensor((256, N), dtype), V: T.Tensor((N, D), dtype), O: T.Tensor((256, D), "float32")):
        with T.ClusterKernel(2, threads=128, cluster_dims=2) as bx:
            V_s = T.alloc_shared((N, D // 2), dtype)
            P_t = T.alloc_tmem([128, N], dtype)
            O_t = T.alloc_tmem([128, D], "float32")
            P_r = T.alloc_fragment((128, N), dtype)
            O_r = T.alloc_fragment((128, D), "float32")
            done = T.alloc_barrier(1)
            tx = T.get_thread_binding()
            rank = T.block_rank_in_cluster()
            T.copy(V[0:N, rank * (D // 2):(rank + 1) * (D // 2)], V_s)
            T.copy(P[bx * 128:(bx + 1) * 128, 0:N], P_r)
            T.copy(P_r, P_t)
            T.fence_proxy_async()
            if sync:
                T.cluster_sync()
            if rank == 0 and tx < 32:
                T.tcgen05_gemm(P_t, V_s, O_t, mbar=None, clear_accum=True, use_2cta=True)
                T.tcgen05_mma_arrive(done, arrive_2cta=True)
            T.mbarrier_wait_parity(done, 0)
            T.copy(O_t, O_r)
            T.copy(O_r, O[bx * 128:(bx + 1) * 128, 0:D])

    return main


@pytest.mark.parametrize("N,D,dtype", [(64, 64, "float16"), (128, 32, "bfloat16")])
def test_pair_mma_with_a_in_tensor_memory(N, D, dtype):
    """Before: "operand A in tensor memory with use_2cta is not implemented". Expected: each block's 128 rows of A
    come from its own tensor memory (both emulators read them so: the two halves of P differ), against float64
    NumPy."""
    rng = _rng()
    p = rng.standard_normal((256, N)).astype(NP[dtype])
    v = rng.standard_normal((N, D)).astype(NP[dtype])
    o = np.full((256, D), np.nan, np.float32)
    k = tilelang.compile(pair_ts(N, D, dtype), target=SM100A, execution_backend="emulator")
    k(p, v, o)
    ref = p.astype(np.float64) @ v.astype(np.float64)
    np.testing.assert_allclose(o, ref, rtol=1e-5, atol=1e-5 * np.abs(ref).max())
    text = "\n".join(k.choices)
    assert "tcgen05.mma.cta_group::2.kind::f16 256x" in text and "A in tensor memory 'P_t'" in text, text


def test_pair_mma_with_a_in_tensor_memory_assembles_and_needs_the_cluster_met():
    k = tilelang.compile(pair_ts(), target=SM100A)
    assert re.search(r"tcgen05\.mma\.cta_group::2\.kind::f16 \[%r\d+\], \[%r\d+\], %rd\d+", k.get_ptx())
    assert re.search(r"\bUTCHMMA\.2CTA\b", k.get_sass())
    res = k.get_resource_usage()
    assert res["spill_stores"] == 0 and res["spill_loads"] == 0, res
    p = np.ones((256, 64), np.float16)
    v = np.ones((64, 64), np.float16)
    with pytest.raises(TileLangError, match="cluster_not_started"):
        tilelang.compile(pair_ts(sync=False), target=SM100A, execution_backend="emulator")(
            p, v, np.zeros((256, 64), np.float32))
