"""Shared memory planned with liveness inside warp-specialised kernels (the flagship-kernels issue).

PlanSharedMemory lets two shared buffers share bytes when their live ranges do not overlap. Before, the
ranges were counted in top-level statements of the kernel body, and a warp-specialised kernel (sm_90a)
is one top-level statement (the producer / consumer split), so nothing in it was reused: an MLA decode
kernel with a 512-wide latent cache needed 296,000 bytes against sm_90a's 232,448. Expected: the
consumers' statements are the units, the producer's buffers are live from the consumers' first statement
to their last use, mbarriers keep their bytes for the whole kernel (PTX: an mbarrier's memory is not
repurposed without mbarrier.inval), and InsertBarriers puts the barrier a reuse needs. Every kernel here
also runs in the emulator with its race checks on, against NumPy in float64.
"""
import re

import numpy as np
import pytest

import tilelang
import tilelang.language as T

SEED = 4242
SM90_LIMIT = 232448


def smem_table(kernel):
    """{buffer: (bytes, offset)} and the total, from the kernel's shared-memory report."""
    rows, total = {}, None
    for line in kernel.get_shared_memory_report().splitlines():
        m = re.match(r"total (\d+) bytes", line)
        if m:
            total = int(m.group(1))
            continue
        parts = line.split()
        if len(parts) >= 6 and parts[0] != "buffer" and parts[-1].isdigit() and parts[-2].isdigit():
            rows[parts[0]] = (int(parts[4]), int(parts[-1]))
    return rows, total


def overlap(a, b):
    (na, oa), (nb, ob) = a, b
    return oa < ob + nb and ob < oa + na


def latent_decode(B, H, L, dim=512, rope=64, heads_blk=64, block_n=64, stages=2):
    """Decode attention over a compressed latent cache (MLA with the projections absorbed): each query
    head scores every cache row by its latent part plus its rotary part, and the softmax-weighted latent
    rows are its output. Rows past L are masked out."""
    scale = (dim + rope) ** -0.5 * 1.4426950408889634  # log2(e): exp2 below

    @T.prim_func
    def decode(Qn: T.Tensor((B, H, dim), "float16"), Qr: T.Tensor((B, H, rope), "float16"),
               Cache: T.Tensor((B, L, dim), "float16"), Rope: T.Tensor((B, L, rope), "float16"),
               Out: T.Tensor((B, H, dim), "float16")):
        with T.Kernel(H // heads_blk, B, threads=256) as (hb, b):
            qn = T.alloc_shared((heads_blk, dim), "float16")
            qr = T.alloc_shared((heads_blk, rope), "float16")
            cache = T.alloc_shared((block_n, dim), "float16")
            rot = T.alloc_shared((block_n, rope), "float16")
            probs = T.alloc_shared((heads_blk, block_n), "float16")
            staged = T.alloc_shared((heads_blk, dim), "float16")
            score = T.alloc_fragment((heads_blk, block_n), "float32")
            acc = T.alloc_fragment((heads_blk, dim), "float32")
            run_max = T.alloc_fragment((heads_blk,), "float32")
            old_max = T.alloc_fragment((heads_blk,), "float32")
            denom = T.alloc_fragment((heads_blk,), "float32")
            tile_sum = T.alloc_fragment((heads_blk,), "float32")
            rescale = T.alloc_fragment((heads_blk,), "float32")
            T.copy(Qn[b, hb * heads_blk:(hb + 1) * heads_blk, :], qn)
            T.copy(Qr[b, hb * heads_blk:(hb + 1) * heads_blk, :], qr)
            T.fill(acc, 0)
            T.fill(denom, 0)
            T.fill(run_max, -T.infinity("float32"))
            for t in T.Pipelined(T.ceildiv(L, block_n), num_stages=stages):
                T.copy(Cache[b, t * block_n:(t + 1) * block_n, :], cache)
                T.copy(Rope[b, t * block_n:(t + 1) * block_n, :], rot)
                T.gemm(qn, cache, score, transpose_B=True, clear_accum=True)
                T.gemm(qr, rot, score, transpose_B=True)
                for i, j in T.Parallel(heads_blk, block_n):
                    score[i, j] = T.if_then_else(t * block_n + j < L, score[i, j] * scale, -T.infinity("float32"))
                T.copy(run_max, old_max)
                T.reduce_max(score, run_max, dim=1, clear=False)
                for i in T.Parallel(heads_blk):
                    rescale[i] = T.exp2(old_max[i] - run_max[i])
                for i, j in T.Parallel(heads_blk, block_n):
                    score[i, j] = T.exp2(score[i, j] - run_max[i])
                T.reduce_sum(score, tile_sum, dim=1)
                for i in T.Parallel(heads_blk):
                    denom[i] = denom[i] * rescale[i] + tile_sum[i]
                for i, j in T.Parallel(heads_blk, dim):
                    acc[i, j] *= rescale[i]
                T.copy(score, probs)
                T.gemm(probs, cache, acc)
            for i, j in T.Parallel(heads_blk, dim):
                acc[i, j] /= denom[i]
            T.copy(acc, staged)
            T.copy(staged, Out[b, hb * heads_blk:(hb + 1) * heads_blk, :])

    return decode


def _reference(qn, qr, cache, rot):
    f = lambda x: x.astype(np.float64)  # noqa: E731
    dim, rope = qn.shape[-1], qr.shape[-1]
    s = (np.einsum("bhd,bld->bhl", f(qn), f(cache)) + np.einsum("bhd,bld->bhl", f(qr), f(rot))) * (dim + rope) ** -0.5
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    return np.einsum("bhl,bld->bhd", p, f(cache))


def test_latent_decode_fits_sm90a_by_reusing_the_staging_tile():
    """Before: 296,000 bytes ('needs 296000 bytes of shared memory, over the 232448-byte limit of sm_90a').
    Expected: the output staging tile reuses bytes of buffers dead after the loop, under the limit."""
    k = tilelang.compile(latent_decode(1, 64, 8192), target="cuda -arch=sm_90a")
    assert any("warp-specialised" in c or "producer" in c for c in k.choices), k.choices
    rows, total = smem_table(k)
    assert total <= SM90_LIMIT, k.get_shared_memory_report()
    assert sum(n for n, _ in rows.values()) > SM90_LIMIT  # it only fits by reuse
    assert any(overlap(rows["staged"], rows[o]) for o in ("qn", "cache", "qr", "rot", "probs")), rows


@pytest.mark.parametrize("L", [128, 200])
def test_latent_decode_in_the_emulator(L):
    """The reuse is safe: the emulator (races and uninitialised reads checked) gives NumPy's numbers,
    with a ragged cache length too."""
    print(f"seed {SEED + L}")
    r = np.random.default_rng(SEED + L)
    B, H, dim, rope = 1, 64, 512, 64
    qn = r.standard_normal((B, H, dim)).astype(np.float16)
    qr = r.standard_normal((B, H, rope)).astype(np.float16)
    cache = r.standard_normal((B, L, dim)).astype(np.float16)
    rot = r.standard_normal((B, L, rope)).astype(np.float16)
    k = tilelang.compile(latent_decode(B, H, L), out_idx=[4], target="cuda -arch=sm_90a", execution_backend="emulator")
    out = k(qn, qr, cache, rot)
    np.testing.assert_allclose(out.astype(np.float64), _reference(qn, qr, cache, rot), atol=2e-3, rtol=1e-2)


def staged_prologue(M=128, N=128, K=256, bk=64):
    """A consumer-only buffer used before the pipelined loop (`pre`), while the producer fills the
    stage buffers from the start: they must not share bytes."""

    @T.prim_func
    def k(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), Bias: T.Tensor((M, N), "float16"),
          C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=128):
            pre = T.alloc_shared((M, N), "float16")
            a_s = T.alloc_shared((M, bk), "float16")
            b_s = T.alloc_shared((bk, N), "float16")
            acc = T.alloc_fragment((M, N), "float32")
            T.copy(Bias, pre)
            T.copy(pre, acc)
            for t in T.Pipelined(K // bk, num_stages=2):
                T.copy(A[0, t * bk], a_s)
                T.copy(B[t * bk, 0], b_s)
                T.gemm(a_s, b_s, acc)
            T.copy(acc, C)

    return k


def test_producer_stage_buffers_never_share_bytes_with_the_consumers_prologue():
    k = tilelang.compile(staged_prologue(), target="cuda -arch=sm_90a")
    rows, _ = smem_table(k)
    assert not overlap(rows["pre"], rows["a_s"]) and not overlap(rows["pre"], rows["b_s"]), rows
    print("seed", SEED)
    r = np.random.default_rng(SEED)
    a = r.standard_normal((128, 256)).astype(np.float16)
    b = r.standard_normal((256, 128)).astype(np.float16)
    bias = r.standard_normal((128, 128)).astype(np.float16)
    ke = tilelang.compile(staged_prologue(), target="cuda -arch=sm_90a", execution_backend="emulator")
    c = np.zeros((128, 128), np.float32)
    ke(a, b, bias, c)
    want = a.astype(np.float64) @ b.astype(np.float64) + bias.astype(np.float64)
    np.testing.assert_allclose(c, want, atol=1e-2, rtol=1e-3)


@pytest.mark.parametrize("target", ["cuda -arch=sm_90a", "cuda -arch=sm_80"])
def test_mbarriers_keep_their_bytes(target):
    """Before: a TMA kernel's mbarrier shared its 16 bytes with a tile used after it (16,400 bytes for
    16,416 of buffers), repurposing an mbarrier without mbarrier.inval. Expected: no barrier overlaps
    another buffer."""
    for kern in (latent_decode(1, 64, 256, dim=128), staged_prologue()):
        k = tilelang.compile(kern, target=target)
        rows, _ = smem_table(k)
        bars = [n for n in rows if "bar" in n or "empty" in n]
        if target.endswith("sm_90a"):
            assert bars, rows
        for b in bars:
            for o in rows:
                if o != b:
                    assert not overlap(rows[b], rows[o]), (b, o, rows)
