"""Block-scaled tcgen05 (MXFP8, kind::mxf8f6f4.block_scale) on the tcgen05 family (docs/blackwell.md): TileLang's
scale-factor path, written in the DSL as its Blackwell examples write it. Warp 0 loads A, B and the packed E8M0
scale words (uint32 [K groups / 4 * rows]: word g * rows + r holds the scales of K groups 4 g .. 4 g + 3 of row r,
byte i for group 4 g + i) with TMA; warp 2 reorders the scale words for tcgen05.cp (T.tcgen05_sf_warp_transpose);
warp 1 copies them into tensor memory (T.tcgen05_cp_warpx4) and issues T.tcgen05_gemm_blockscaled, whose k32 steps
take scale byte ((k_start + 32 s) / 128) % 4. Run in the emulator (and its PTX twin) against float64 NumPy on
seeded random inputs, one CTA and a CTA pair; compiled for sm_100a through NVRTC and ptxas (PTX and SASS checked);
and the refusals."""
import os
import re

import ml_dtypes
import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import TileLangError

SM100A = "cuda -arch=sm_100a"
F8 = {"float8_e4m3fn": ml_dtypes.float8_e4m3fn, "float8_e5m2": ml_dtypes.float8_e5m2}


def _rng():
    seed = int(os.environ.get("TL_TEST_SEED") or np.random.SeedSequence().entropy % 2**32)
    print("seed", seed)
    return np.random.default_rng(seed)


def mxfp8_gemm(M, N, K, a_dtype="float8_e4m3fn", b_dtype="float8_e4m3fn", transpose_B=False, pair=False,
               stages=2, gran=128, out_tile=False, annotate=False, bK=128):
    """C (float32) = sum over K groups of (A * sa) @ (B * sb), 128 x bN tiles (bN = 128; a pair: 256 x 256, each
    block its 128 rows of A and 128 of B's columns, both blocks all 256 scale words of B). The branch of warp 1 is
    written `warp == 1` (warp = tx // 32), as TileLang's examples do."""
    bM = 128
    bN = 256 if pair else 128
    nb = bN // 2 if pair else bN
    kg = (K // gran + 3) // 4  # scale words per row
    period = max(1, gran * 4 // bK)  # k tiles a scale word lasts
    W = max(1, bK // (gran * 4))     # scale words a row a k tile (word groups copied with it)

    @T.prim_func
    def main(A: T.Tensor((M, K), a_dtype), B: T.Tensor((N, K) if transpose_B else (K, N), b_dtype),
             SFA: T.Tensor((kg * M,), "uint32"), SFB: T.Tensor((kg * N,), "uint32"), C: T.Tensor((M, N), "float32")):
        with T.ClusterKernel(M // bM, N // bN, threads=128, cluster_dims=2 if pair else 1) as (bx, by):
            A_s = T.alloc_shared((stages, bM, bK), a_dtype)
            B_s = T.alloc_shared((stages, nb, bK) if transpose_B else (stages, bK, nb), b_dtype)
            SFA_s = T.alloc_shared((stages, W * bM), "uint32")
            SFB_s = T.alloc_shared((stages, W * bN), "uint32")
            acc = T.alloc_tmem([bM, bN], "float32")
            sfa_t = T.alloc_tmem([bM, 4 * W], "uint32")
            sfb_t = T.alloc_tmem([bM, W * bN // 32], "uint32")
            out = T.alloc_fragment((bM, bN), "float32")
            C_s = T.alloc_shared((bM, bN), "float32") if out_tile else None
            loaded = T.alloc_barrier([32] * stages)
            sf_ready = (T.alloc_cluster_barrier([64] * stages) if pair else T.alloc_barrier([32] * stages))
            consumed = (T.alloc_cluster_barrier([1] * stages) if pair else T.alloc_barrier([1] * stages))
            done = T.alloc_barrier([1])
            if annotate:  # TileLang's form: the accumulator's store layout, before C is read back
                T.annotate_layout({acc: T.make_blockscaled_gemm_layout(acc, A_s[0, :, :])})
            tx = T.get_thread_binding()
            warp = tx // 32
            rank = T.block_rank_in_cluster()
            n_k = K // bK
            if warp == 0:
                for k in T.serial(n_k):
                    s = k % stages
                    T.mbarrier_wait_parity(consumed[s], ((k // stages) & 1) ^ 1)
                    T.tma_copy(A[bx * bM:(bx + 1) * bM, k * bK:(k + 1) * bK], A_s[s, :, :], barrier=loaded[s])
                    col = by * bN + rank * nb
                    if transpose_B:
                        T.tma_copy(B[col:col + nb, k * bK:(k + 1) * bK], B_s[s, :, :], barrier=loaded[s])
                    else:
                        T.tma_copy(B[k * bK:(k + 1) * bK, col:col + nb], B_s[s, :, :], barrier=loaded[s])
                    if k % period == 0:
                        for w in T.unroll(W):
                            g = k // period * W + w
                            T.tma_copy(SFA[g * M + bx * bM:g * M + (bx + 1) * bM], SFA_s[s, w * bM:(w + 1) * bM],
                                       barrier=loaded[s])
                            T.tma_copy(SFB[g * N + by * bN:g * N + (by + 1) * bN], SFB_s[s, w * bN:(w + 1) * bN],
                                       barrier=loaded[s])
                    T.mbarrier_arrive(loaded[s])
            elif warp == 1 and rank == 0:
                for k in T.serial(n_k):
                    s = k % stages
                    T.mbarrier_wait_parity(sf_ready[s], (k // stages) & 1)
                    if k % period == 0:
                        T.tcgen05_cp_warpx4(SFA_s[s, :], sfa_t, use_2cta=pair)
                        T.tcgen05_cp_warpx4(SFB_s[s, :], sfb_t, use_2cta=pair)
                    T.tcgen05_gemm_blockscaled(A_s[s, :, :], B_s[s, :, :], acc, sfa_t, sfb_t, transpose_B=transpose_B,
                                               mbar=consumed[s], clear_accum=k == 0, k_start=k * bK,
                                               sf_a_granularity_k=gran, sf_b_granularity_k=gran, use_2cta=pair)
                T.tcgen05_mma_arrive(done, arrive_2cta=pair)
            elif warp == 2:
                for k in T.serial(n_k):
                    s = k % stages
                    T.mbarrier_wait_parity(loaded[s], (k // stages) & 1)
                    if k % period == 0:
                        T.tcgen05_sf_warp_transpose(SFA_s[s, :])
                        T.tcgen05_sf_warp_transpose(SFB_s[s, :])
                        T.fence_proxy_async()
                    if pair:
                        T.mbarrier_arrive(sf_ready[s], 0)  # the pair's MMA warp waits in the even block
                    else:
                        T.mbarrier_arrive(sf_ready[s])
            T.mbarrier_wait_parity(done, 0)
            T.copy(acc, out)
            if out_tile:  # through a shared tile used only after the roles' branches
                T.copy(out, C_s)
                T.copy(C_s, C[bx * bM, by * bN])
            else:
                T.copy(out, C[bx * bM, by * bN])

    return main


def pack_scales(s8):
    """[rows, 4 g] uint8 E8M0 -> the group-major uint32 words [g * rows]: word j * rows + r packs row r's scales
    of groups 4 j .. 4 j + 3, byte i for group 4 j + i."""
    w = s8.astype(np.uint32)
    p = w[:, 0::4] | (w[:, 1::4] << 8) | (w[:, 2::4] << 16) | (w[:, 3::4] << 24)
    return np.ascontiguousarray(p.T).reshape(-1)


def reference(a, b, sfa8, sfb8, transpose_B, gran):
    K = a.shape[1]
    sa = np.repeat(2.0 ** (sfa8[:, :K // gran].astype(np.float64) - 127), gran, axis=1)
    bk = b.astype(np.float64) if transpose_B else b.astype(np.float64).T  # [N, K]
    sb = np.repeat(2.0 ** (sfb8[:, :K // gran].astype(np.float64) - 127), gran, axis=1)
    return (a.astype(np.float64) * sa) @ (bk * sb).T


def run_scaled(prog, a, b, sfa8, sfb8, gran, transpose_B=True):
    """Compiles `prog` (a block-scaled gemm: A, B, the packed scale words, C) for sm_100a, runs it in the emulator
    (and its PTX twin) and compares C with the float64 reference; returns the choice table."""
    k = tilelang.compile(prog, target=SM100A, execution_backend="emulator")
    c = np.full((a.shape[0], b.shape[0] if transpose_B else b.shape[1]), np.nan, np.float32)
    k(a, b, pack_scales(sfa8), pack_scales(sfb8), c)
    ref = reference(a, b, sfa8, sfb8, transpose_B, gran)
    np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-5 * np.abs(ref).max())
    return "\n".join(k.choices)


@pytest.mark.parametrize("M,N,K,a_dtype,b_dtype,transpose_B,pair", [
    (128, 128, 1024, "float8_e4m3fn", "float8_e4m3fn", False, False),   # two scale words a row
    (256, 256, 640, "float8_e5m2", "float8_e4m3fn", True, False),       # 5 K groups: the last word's bytes 1-3 unused
    (256, 256, 512, "float8_e4m3fn", "float8_e5m2", False, True),       # a CTA pair: 256 x 256
    (256, 512, 1024, "float8_e4m3fn", "float8_e4m3fn", True, True),
])
def test_mxfp8_gemm_in_the_emulator(M, N, K, a_dtype, b_dtype, transpose_B, pair):
    rng = _rng()
    gran = 128
    ng = (K // gran + 3) // 4 * 4
    a = rng.standard_normal((M, K)).astype(F8[a_dtype])
    b = rng.standard_normal((N, K) if transpose_B else (K, N)).astype(F8[b_dtype])
    # scales 2^-6 .. 2^5, and in the padding of the last word values the kernel must not use (255: NaN)
    sfa8 = rng.integers(121, 133, (M, ng)).astype(np.uint8)
    sfb8 = rng.integers(121, 133, (N, ng)).astype(np.uint8)
    sfa8[:, K // gran:] = 255
    sfb8[:, K // gran:] = 255
    text = run_scaled(mxfp8_gemm(M, N, K, a_dtype, b_dtype, transpose_B, pair), a, b, sfa8, sfb8, gran, transpose_B)
    grp = "2" if pair else "1"
    assert f"tcgen05.mma.cta_group::{grp}.kind::mxf8f6f4.block_scale.scale_vec::1X" in text, text
    assert f"tcgen05.cp.cta_group::{grp}.32x128b.warpx4" in text and "issued by thread 32 of its branch" in text, text


def test_scale_words_of_several_groups_a_tile():
    """Granularity 32 with 256-value K tiles: a tile takes two scale words a row (word groups copied as two chunks);
    step s of tile k reads group ((k_start + 32 s) / 128) % 2 at columns 4 q .. (A) and 4 q .. (B, 128 columns),
    byte ((k_start + 32 s) / 32) % 4 of it. Before, every step read the first group (a wrong result, said
    nowhere)."""
    rng = _rng()
    M, N, K, gran = 128, 128, 512, 32
    a = rng.standard_normal((M, K)).astype(ml_dtypes.float8_e4m3fn)
    b = rng.standard_normal((N, K)).astype(ml_dtypes.float8_e4m3fn)
    sfa8 = rng.integers(121, 133, (M, K // gran)).astype(np.uint8)
    sfb8 = rng.integers(121, 133, (N, K // gran)).astype(np.uint8)
    text = run_scaled(mxfp8_gemm(M, N, K, transpose_B=True, gran=gran, bK=256), a, b, sfa8, sfb8, gran)
    assert "of word group ((k_start + 32 s) / 128) % 2 of A's" in text


def test_a_wrong_scale_byte_changes_the_result():
    """The k32 steps of tile k take byte (k / 1) % 4 of the word (granularity 128 = one tile): swapping two bytes
    of one row's word changes exactly that row of C."""
    rng = _rng()
    M, N, K = 128, 128, 512
    a = rng.standard_normal((M, K)).astype(ml_dtypes.float8_e4m3fn)
    b = rng.standard_normal((K, N)).astype(ml_dtypes.float8_e4m3fn)
    sfa8 = np.full((M, 4), 127, np.uint8)
    sfb8 = np.full((N, 4), 127, np.uint8)
    sfa8[5] = [127, 130, 127, 127]  # row 5: K group 1 scaled by 8
    k = tilelang.compile(mxfp8_gemm(M, N, K), target=SM100A, execution_backend="emulator")
    c = np.zeros((M, N), np.float32)
    k(a, b, pack_scales(sfa8), pack_scales(sfb8), c)
    np.testing.assert_allclose(c, reference(a, b, sfa8, sfb8, False, 128), rtol=1e-5, atol=1e-3)
    plain = a.astype(np.float64) @ b.astype(np.float64)
    diff = np.abs(c - plain).max(axis=1) > 1e-3
    assert diff[5] and diff.sum() == 1


def test_the_mxfp8_gemms_compile_for_sm100a():
    for pair in (False, True):
        k = tilelang.compile(mxfp8_gemm(1024, 1024, 1024, pair=pair, stages=4), target=SM100A)
        ptx = k.get_ptx()
        grp = "2" if pair else "1"
        for s in (f"tcgen05.mma.cta_group::{grp}.kind::mxf8f6f4.block_scale.scale_vec::1X",
                  f"tcgen05.cp.cta_group::{grp}.32x128b.warpx4", "shfl.sync.idx.b32"):
            assert s in ptx, s
        res = k.get_resource_usage()
        # (the pair's 128-thread epilogue holds 256 fp32 accumulator columns a thread: it spills, as the f16
        # pair GEMM does at 128 threads)
        assert pair or (res["spill_stores"] == 0 and res["spill_loads"] == 0), res
        sass = k.get_sass()
        # the 8-bit tensor-core MMA and the shared-to-tensor-memory copy of 32 lanes x 128 bits to 4 warps
        assert re.search(r"\bUTCQMMA\b", sass) and re.search(r"\bUTCCP\.\S*4x32dp128bit", sass)


def _kernel_with(body):
    @T.prim_func
    def main(A: T.Tensor((128, 128), "float16"), C: T.Tensor((128, 128), "float32")):
        with T.Kernel(1, threads=128):
            A_s = T.alloc_shared((128, 128), "float16")
            F_s = T.alloc_shared((128,), "float32")
            U_s = T.alloc_shared((100,), "uint32")
            acc = T.alloc_tmem([128, 128], "float32")
            sf = T.alloc_tmem([128, 4], "uint32")
            bar = T.alloc_barrier([1])
            body(A_s, F_s, U_s, acc, sf, bar)
    return main


@pytest.mark.parametrize("body,msg", [
    (lambda A_s, F_s, U_s, acc, sf, bar: T.tcgen05_gemm_blockscaled(A_s, A_s, acc, sf, sf, mbar=bar, k_start=0,
                                                                     sf_a_granularity_k=128, sf_b_granularity_k=128),
     "float8_e4m3fn / float8_e5m2 / float4_e2m1fn A and B"),
    (lambda A_s, F_s, U_s, acc, sf, bar: T.tcgen05_cp_warpx4(F_s, sf), "must be a uint32 shared tile"),
    (lambda A_s, F_s, U_s, acc, sf, bar: T.tcgen05_sf_warp_transpose(U_s), "constant multiple of 128 words"),
    (lambda A_s, F_s, U_s, acc, sf, bar: T.tcgen05_cp_warpx4(U_s, acc), "must be a uint32 shared tile"),
])
def test_misuse_is_a_clear_error(body, msg):
    with pytest.raises(TileLangError, match=re.escape(msg)):
        tilelang.compile(_kernel_with(body), target=SM100A)


def test_other_targets_refuse_it():
    M = N = K = 256
    with pytest.raises(TileLangError, match="tcgen05 family"):
        tilelang.compile(mxfp8_gemm(M, N, K), target="cuda -arch=sm_90a")


def test_the_output_tile_shares_bytes_with_the_stage_ring():
    """Six stages of A and B (192 KB) and a 64 KB fp32 output tile exceed sm_100a's 227 KB side by side; the output
    tile is used only after the warp roles' branches, when every stage has been consumed, so it takes the ring's
    bytes (and the result is right in the emulator, whose race and overwrite checks would see a wrong overlay)."""
    rng = _rng()
    M, N, K = 128, 128, 768
    a = rng.standard_normal((M, K)).astype(ml_dtypes.float8_e4m3fn)
    b = rng.standard_normal((K, N)).astype(ml_dtypes.float8_e4m3fn)
    sfa8 = rng.integers(124, 130, (M, 8)).astype(np.uint8)
    sfb8 = rng.integers(124, 130, (N, 8)).astype(np.uint8)
    c = np.full((M, N), np.nan, np.float32)
    k = tilelang.compile(mxfp8_gemm(M, N, K, stages=6, out_tile=True), target=SM100A, execution_backend="emulator")
    k(a, b, pack_scales(sfa8), pack_scales(sfb8), c)
    ref = reference(a, b, sfa8, sfb8, False, 128)
    np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-5 * np.abs(ref).max())


def test_make_blockscaled_gemm_layout_annotates_the_accumulator():
    """T.annotate_layout({acc: T.make_blockscaled_gemm_layout(acc, A)}) (TileLang's form) is accepted and changes
    nothing: the accumulator is placed as the MMA stores it either way (same numbers); a layout made for another
    buffer, or given to a fragment, is a clear error."""
    rng = _rng()
    M, N, K, gran = 128, 128, 512, 128
    a = rng.standard_normal((M, K)).astype(F8["float8_e4m3fn"])
    b = rng.standard_normal((K, N)).astype(F8["float8_e4m3fn"])
    sfa8 = rng.integers(121, 133, (M, 4)).astype(np.uint8)
    sfb8 = rng.integers(121, 133, (N, 4)).astype(np.uint8)
    c = np.full((M, N), np.nan, np.float32)
    k = tilelang.compile(mxfp8_gemm(M, N, K, annotate=True), target=SM100A, execution_backend="emulator")
    k(a, b, pack_scales(sfa8), pack_scales(sfb8), c)
    ref = reference(a, b, sfa8, sfb8, False, gran)
    np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-5 * np.abs(ref).max())

    with pytest.raises(TileLangError, match=r"the layout given for 'other' was made for 'acc' \(128, 128\)"):
        @T.prim_func
        def wrong(A: T.Tensor((128, 128), "float8_e4m3fn")):
            with T.Kernel(1, threads=128):
                A_s = T.alloc_shared((128, 128), "float8_e4m3fn")
                acc = T.alloc_tmem([128, 128], "float32")
                other = T.alloc_tmem([128, 64], "float32")
                T.annotate_layout({other: T.make_blockscaled_gemm_layout(acc, A_s)})

    with pytest.raises(TileLangError, match=r"C 'acc' must be a tensor-memory accumulator \(T.alloc_tmem\)"):
        @T.prim_func
        def fragment(A: T.Tensor((128, 128), "float8_e4m3fn")):
            with T.Kernel(1, threads=128):
                A_s = T.alloc_shared((128, 128), "float8_e4m3fn")
                acc = T.alloc_fragment([128, 128], "float32")
                T.annotate_layout({acc: T.make_blockscaled_gemm_layout(acc, A_s)})
