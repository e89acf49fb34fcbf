"""CacheGemmTilesCPU and PackGemmTilesCPU: the tiles a GEMM kernel copies out of its read-only inputs
are copied once per call into tile caches (filled by the first block that needs each tile), and a
B tile is packed into the micro-kernel's float panels by its copy. Checked as passes (before /
expected in the DSL), end to end against NumPy in float64 (ragged sizes, every transpose, fp32 /
fp16 / bf16 / fp8, grids grouped 2 x 2 with an odd edge, the portable micro-kernels forced), across
calls with new inputs and from concurrent threads, and on the kernels the rewrite must leave alone.
"""
import threading
import zlib

import ml_dtypes
import numpy as np
import pytest

import kernels
import tilelang
import tilelang.language as T
from tilelang import _ffi

from transform.passes import assert_equal

CACHED = "are cached for the whole call"
PACKED = "is packed into NR-column float panels by its copy"
NP = {"float32": np.float32, "float16": np.float16, "bfloat16": ml_dtypes.bfloat16,
      "float8_e4m3": ml_dtypes.float8_e4m3fn}


def _seed(*key):
    seed = zlib.crc32(repr(key).encode())
    print(f"seed {seed} for {key}")
    return np.random.default_rng(seed)


def _trace(func, name):
    return dict(_ffi.lower_trace_funcs(func, "cpu"))[name]


@T.prim_func
def _before(A: T.Tensor((256, 512), "float32"), B: T.Tensor((512, 256), "float32"), C: T.Tensor((256, 256), "float32")):
    with T.Kernel(2, 2, threads=128) as (bx, by):
        A_s = T.alloc_shared((128, 64), "float32")
        B_s = T.alloc_shared((64, 128), "float32")
        C_l = T.alloc_fragment((128, 128), "float32")
        T.clear(C_l)
        for k in T.Pipelined(8, num_stages=2):
            T.copy(A[by * 128, k * 64], A_s)
            T.copy(B[k * 64, bx * 128], B_s)
            T.gemm(A_s, B_s, C_l)
        T.copy(C_l, C[by * 128, bx * 128])


def test_cache_pass_before_expected():
    # After CoalesceGemmKStepsCPU (K = 256 per gemm call, since the tiles get caches): one cache per
    # input, one slot per tile of it plus a last one for tiles wholly outside it (past its end or, at a
    # negative start, before it); slot = tile row *
    # tiles per row + tile column; each copy and everything after it in the K loop run with the tile
    # bound to its slot.
    @T.prim_func
    def expected(A: T.Tensor((256, 512), "float32"), B: T.Tensor((512, 256), "float32"), C: T.Tensor((256, 256), "float32")):
        with T.Kernel(2, 2, threads=128) as (bx, by):
            A_s = T.alloc_shared((128, 256), "float32")
            B_s = T.alloc_shared((256, 128), "float32")
            C_l = T.alloc_fragment((128, 128), "float32")
            with T.attr(A_s, "tl.cpu_tile_cache", T.call_intrin("int64", "tl_cpu_cache_decl", 0, T.int64(5))):
                with T.attr(B_s, "tl.cpu_tile_cache", T.call_intrin("int64", "tl_cpu_cache_decl", 1, T.int64(5))):
                    T.fill(C_l, 0.0)
                    for k in T.Pipelined(2, num_stages=2):
                        a_row, a_col = T.cast(by * 128, "int64"), T.cast(k * 256, "int64")
                        with T.attr(A_s, "tl.cpu_cached_tile", T.call_intrin(
                                "int64", "tl_cpu_cache_slot", 0,
                                T.if_then_else(a_row >= T.int64(0) and a_row < T.int64(256) and (a_col >= T.int64(0) and a_col < T.int64(512)),
                                               a_row // T.int64(128) * T.int64(2) + a_col // T.int64(256), T.int64(4)))):
                            T.copy(A[by * 128:by * 128 + 128, k * 256:k * 256 + 256], A_s)
                            b_row, b_col = T.cast(k * 256, "int64"), T.cast(bx * 128, "int64")
                            with T.attr(B_s, "tl.cpu_cached_tile", T.call_intrin(
                                    "int64", "tl_cpu_cache_slot", 1,
                                    T.if_then_else(b_row >= T.int64(0) and b_row < T.int64(512) and (b_col >= T.int64(0) and b_col < T.int64(256)),
                                                   b_col // T.int64(128) + b_row // T.int64(256) * T.int64(2), T.int64(4)))):
                                T.copy(B[k * 256:k * 256 + 256, bx * 128:bx * 128 + 128], B_s)
                                T.gemm(A_s, B_s, C_l)
                    T.copy(C_l, C[by * 128:by * 128 + 128, bx * 128:bx * 128 + 128])

    assert_equal(_trace(_before, "CacheGemmTilesCPU"), expected)


def test_pack_pass_marks_only_the_b_tile():
    got = _trace(_before, "PackGemmTilesCPU")
    text = _ffi.print_func(got)
    assert 'T.attr(B_s, "tl.cpu_packed_b", 0)' in text, text
    assert 'T.attr(A_s, "tl.cpu_packed_b"' not in text, text
    # Lowered: the B tile becomes K x roundup(N, 32) floats, filled by tl_cpu_pack_b under the claim.
    low = _ffi.print_func(_trace(_before, "LowerTileOpsCPU"))
    assert 'B_s = T.alloc_shared((32768,), "float32")' in low, low
    assert '"tl_cpu_pack_b"' in low and '"tl_cpu_gemm_packed_b"' in low and '"tl_cpu_cache_claim"' in low, low


def test_generated_source_declares_caches_outside_the_parallel_region():
    k = tilelang.compile(_before, target="cpu")
    src = k.get_kernel_source()
    assert src.find("tl_cpu::TileCache<float> tl_tc0") < src.find("#pragma omp parallel"), src
    assert "tl_cpu::pack_b_tile<false>" in src and "tl_cpu::gemm_packed_b<false>" in src, src
    # The cached tiles are slots, not per-worker arrays.
    assert "float A_s[" not in src and "float B_s[" not in src, src
    assert sum(CACHED in c for c in k.choices) == 2 and any(PACKED in c for c in k.choices), k.choices


def _run(func, a, b, shape_c, target="cpu"):
    k = tilelang.compile(func, target=target)
    c = np.full(shape_c, np.nan, np.float32)
    k(a, b, c)
    return k, c


CASES = [
    # M, N, K, bm, bn, bk, trans_A, trans_B, dtype
    (200, 136, 1000, 64, 64, 32, False, False, "float32"),  # the last deeper tile overhangs K
    (200, 136, 1000, 64, 64, 32, True, True, "float32"),
    (130, 250, 512, 64, 64, 64, False, True, "float16"),
    (130, 250, 512, 64, 64, 64, True, False, "bfloat16"),  # bf16 x bf16: cached, not packed
    (97, 75, 256, 32, 32, 32, False, False, "float8_e4m3"),
    (950, 950, 256, 64, 64, 64, False, False, "float32"),  # 15 x 15 grid: 2 x 2 groups, odd edge
]


@pytest.mark.parametrize("M,N,K,bm,bn,bk,ta,tb,dtype", CASES)
def test_cached_gemm_matches_numpy(M, N, K, bm, bn, bk, ta, tb, dtype):
    rng = _seed("tile-cache", M, N, K, bm, bn, bk, ta, tb, dtype)
    a = rng.standard_normal((K, M) if ta else (M, K)).astype(NP[dtype])
    b = rng.standard_normal((N, K) if tb else (K, N)).astype(NP[dtype])
    f = kernels.matmul_transposed(M, N, K, bm, bn, bk, trans_A=ta, trans_B=tb, dtype=dtype, out_dtype="float32")
    k, c = _run(f, a, b, (M, N))
    assert sum(CACHED in x for x in k.choices) == 2, k.choices
    assert any(PACKED in x for x in k.choices) == (dtype != "bfloat16"), k.choices
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    ref = (a64.T if ta else a64) @ (b64.T if tb else b64)
    np.testing.assert_allclose(c, ref, rtol=1e-4, atol=1e-4 * np.sqrt(K))


def test_portable_micro_kernels_read_the_caches_too():
    rng = _seed("tile-cache-portable")
    a = rng.standard_normal((130, 512)).astype(np.float32)
    b = rng.standard_normal((512, 70)).astype(np.float32)
    f = kernels.matmul_transposed(130, 70, 512, 64, 64, 64, dtype="float32", out_dtype="float32")
    k, c = _run(f, a, b, (130, 70), target="cpu -mattr=-avx2")
    assert any("portable" in x for x in k.choices) and any(CACHED in x for x in k.choices), k.choices
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-4, atol=1e-3)


def test_every_call_reads_its_own_inputs_and_threads_do_not_share_caches():
    f = kernels.matmul_transposed(300, 200, 512, 64, 64, 64, dtype="float32", out_dtype="float32")
    k = tilelang.compile(f, target="cpu")
    assert any(CACHED in x for x in k.choices), k.choices
    rng = _seed("tile-cache-calls")
    inputs = [(rng.standard_normal((300, 512)).astype(np.float32), rng.standard_normal((512, 200)).astype(np.float32))
              for _ in range(4)]
    refs = [a.astype(np.float64) @ b.astype(np.float64) for a, b in inputs]
    for (a, b), ref in zip(inputs * 2, refs * 2):  # a stale cache would give the previous call's product
        c = np.empty((300, 200), np.float32)
        k(a, b, c)
        np.testing.assert_allclose(c, ref, rtol=1e-4, atol=1e-3)
    errors = []

    def worker(i):
        for _ in range(5):
            c = np.empty((300, 200), np.float32)
            k(*inputs[i], c)
            if not np.allclose(c, refs[i], rtol=1e-4, atol=1e-3):
                errors.append(i)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def _gemm_variant(kind, M=256, N=128, K=512, bm=64, bn=64, bk=64):
    """The reference GEMM with one change (most of them must keep its copies out of the tile caches)."""
    rows = M + bm if kind == "writes_source" else M
    extra = 2 if kind == "oversized_grid" else 0

    @T.prim_func
    def main(A: T.Tensor((rows, K), "float32"), B: T.Tensor((K, N), "float32"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, bn) + extra, T.ceildiv(M, bm) + extra, threads=128) as (bx, by):
            A_s = T.alloc_shared((bm, bk), "float32")
            B_s = T.alloc_shared((bk, bn), "float32")
            C_l = T.alloc_fragment((bm, bn), "float32")
            T.clear(C_l)
            for k in T.Pipelined(T.ceildiv(K, bk), num_stages=2):
                if kind == "misaligned":
                    T.copy(A[by * bm + 1, k * bk], A_s)
                else:
                    T.copy(A[by * bm, k * bk], A_s)
                T.copy(B[k * bk, bx * bn], B_s)
                T.gemm(A_s, B_s, C_l)
            if kind == "tile_read_elsewhere":
                for i, j in T.Parallel(bm, bn):
                    C_l[i, j] = C_l[i, j] + A_s[i, 0]
            if kind == "writes_source":  # rows no block reads: deterministic, but A is not read-only
                if bx == 0:
                    for i, j in T.Parallel(bm, bk):
                        A[M + i, j] = 1.0
            T.copy(C_l, C[by * bm, bx * bn])

    return main


@pytest.mark.parametrize("kind", ["misaligned", "tile_read_elsewhere", "writes_source"])
def test_kernels_outside_the_pattern_keep_per_block_copies(kind):
    M, N, K, bm = 256, 128, 512, 64
    rng = _seed("tile-cache-left-alone", kind)
    rows = M + bm if kind == "writes_source" else M
    a = rng.standard_normal((rows, K)).astype(np.float32)
    b = rng.standard_normal((K, N)).astype(np.float32)
    k, c = _run(_gemm_variant(kind), a, b, (M, N))
    cached = [x for x in k.choices if CACHED in x]
    assert not any("tiles of A" in x for x in cached), k.choices
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    if kind == "misaligned":  # rows by*64+1 .. by*64+64; the last block's last row is past A: zero
        ap = np.vstack([a64[1:], np.zeros((1, K))])
        ref = ap @ b64
    elif kind == "tile_read_elsewhere":  # A_s holds the last K tile of the block's rows
        ref = a64 @ b64 + np.repeat(a64[:, K - 64], N).reshape(M, N)
    else:
        ref = a64[:M] @ b64
    np.testing.assert_allclose(c, ref, rtol=1e-4, atol=1e-3)


def test_blocks_past_the_tensor_share_one_zero_tile():
    # Two extra block rows and columns: their tiles lie wholly outside A and B, read as zeros, and all
    # map to the caches' extra slot instead of past the end of the slot table.
    M, N, K = 256, 128, 512
    rng = _seed("tile-cache-oversized-grid")
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal((K, N)).astype(np.float32)
    k, c = _run(_gemm_variant("oversized_grid"), a, b, (M, N))
    assert sum(CACHED in x for x in k.choices) == 2, k.choices
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-4, atol=1e-3)
