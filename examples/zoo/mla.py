"""DeepSeek's multi-head latent attention, decode and V3.2 sparse forward. Every head attends to one latent KV
row per token of `dv + dpe` values (DeepSeek: 512 + 64): the score is q_nope . kv[:dv] + q_pe . kv[dv:], the
value is kv[:dv].

- mla_decode: one query token per sequence; the KV cache is paged (`pages[page, token, :]`, `table[b, i]` the
  physical page of the sequence's i-th page, `lengths[b]` its tokens); a block of `block_H` heads shares each
  KV tile.
- sparse_mla: a query token attends to the `topk` KV rows its index list names (`indices[b, s, :]`, -1 for an
  unused slot), gathered tile by tile.
Softmax in base 2 with the scale folded in; zeros for a query with no key."""
import numpy as np

import tilelang.language as T

from .softmax import online_softmax

LOG2E = 1.44269504


def mla_decode(batch, heads, max_pages, page_size, dv=512, dpe=64, block_H=64, threads=256, num_pages=None,
               dtype="float16"):
    assert heads % block_H == 0
    num_pages = num_pages or batch * max_pages
    scale = (dv + dpe) ** -0.5 * LOG2E
    block_N = page_size  # one page per KV tile

    @T.prim_func
    def mla_decode_paged(Q: T.Tensor((batch, heads, dv), dtype), Q_pe: T.Tensor((batch, heads, dpe), dtype),
                         Pages: T.Tensor((num_pages, page_size, dv + dpe), dtype),
                         Table: T.Tensor((batch, max_pages), "int32"), Lengths: T.Tensor((batch,), "int32"),
                         O: T.Tensor((batch, heads, dv), dtype)):
        with T.Kernel(heads // block_H, batch, threads=threads) as (hb, b):
            Q_s = T.alloc_shared((block_H, dv), dtype)
            Qpe_s = T.alloc_shared((block_H, dpe), dtype)
            KV_s = T.alloc_shared((block_N, dv), dtype)
            Kpe_s = T.alloc_shared((block_N, dpe), dtype)
            O_s = T.alloc_shared((block_H, dv), dtype)
            S = T.alloc_fragment((block_H, block_N), "float32")
            P_s = T.alloc_shared((block_H, block_N), dtype)  # the probabilities, read by every warp of a row
            acc = T.alloc_fragment((block_H, dv), "float32")
            m = T.alloc_fragment((block_H,), "float32")
            m_prev = T.alloc_fragment((block_H,), "float32")
            rescale = T.alloc_fragment((block_H,), "float32")
            row_sum = T.alloc_fragment((block_H,), "float32")
            l = T.alloc_fragment((block_H,), "float32")

            T.copy(Q[b, hb * block_H, 0], Q_s)
            T.copy(Q_pe[b, hb * block_H, 0], Qpe_s)
            T.clear(acc)
            T.clear(l)
            T.fill(m, -T.infinity("float32"))
            length = Lengths[b]
            for t in T.Pipelined(T.ceildiv(length, block_N), num_stages=1):
                page = Table[b, t]
                T.copy(Pages[page, 0, 0], KV_s)
                T.copy(Pages[page, 0, dv], Kpe_s)
                T.clear(S)
                T.gemm(Q_s, KV_s, S, transpose_B=True, policy=T.GemmWarpPolicy.FullCol)
                T.gemm(Qpe_s, Kpe_s, S, transpose_B=True, policy=T.GemmWarpPolicy.FullCol)
                for i, j in T.Parallel(block_H, block_N):  # the last page's tokens past the length
                    S[i, j] = T.if_then_else(t * block_N + j < length, S[i, j], -T.infinity("float32"))
                online_softmax(S, m, m_prev, rescale, row_sum, l, acc, scale)
                T.copy(S, P_s)
                T.gemm(P_s, KV_s, acc, policy=T.GemmWarpPolicy.FullCol)
            for i, j in T.Parallel(block_H, dv):
                acc[i, j] = T.if_then_else(l[i] > 0, acc[i, j] / l[i], 0)
            T.copy(acc, O_s)
            T.copy(O_s, O[b, hb * block_H, 0])

    return mla_decode_paged


def sparse_mla(batch, seq, seq_kv, heads, topk, dv=512, dpe=64, block_H=64, block_I=64, threads=256,
               dtype="float16"):
    assert heads % block_H == 0 and topk % block_I == 0
    scale = (dv + dpe) ** -0.5 * LOG2E

    @T.prim_func
    def sparse_mla_fwd(Q: T.Tensor((batch, seq, heads, dv + dpe), dtype),
                       KV: T.Tensor((batch, seq_kv, dv + dpe), dtype),
                       Indices: T.Tensor((batch, seq, topk), "int32"),
                       O: T.Tensor((batch, seq, heads, dv), dtype)):
        with T.Kernel(seq, heads // block_H, batch, threads=threads) as (s, hb, b):
            Q_s = T.alloc_shared((block_H, dv), dtype)
            Qpe_s = T.alloc_shared((block_H, dpe), dtype)
            KV_s = T.alloc_shared((block_I, dv), dtype)
            Kpe_s = T.alloc_shared((block_I, dpe), dtype)
            I_s = T.alloc_shared((block_I,), "int32")
            O_s = T.alloc_shared((block_H, dv), dtype)
            S = T.alloc_fragment((block_H, block_I), "float32")
            P_s = T.alloc_shared((block_H, block_I), dtype)
            acc = T.alloc_fragment((block_H, dv), "float32")
            m = T.alloc_fragment((block_H,), "float32")
            m_prev = T.alloc_fragment((block_H,), "float32")
            rescale = T.alloc_fragment((block_H,), "float32")
            row_sum = T.alloc_fragment((block_H,), "float32")
            l = T.alloc_fragment((block_H,), "float32")

            T.copy(Q[b, s, hb * block_H, 0], Q_s)
            T.copy(Q[b, s, hb * block_H, dv], Qpe_s)
            T.clear(acc)
            T.clear(l)
            T.fill(m, -T.infinity("float32"))
            for t in T.Pipelined(topk // block_I, num_stages=1):
                T.copy(Indices[b, s, t * block_I], I_s)
                for j, d in T.Parallel(block_I, dv):  # gather the named rows (row 0 for an unused slot)
                    KV_s[j, d] = KV[b, T.max(I_s[j], 0), d]
                for j, d in T.Parallel(block_I, dpe):
                    Kpe_s[j, d] = KV[b, T.max(I_s[j], 0), dv + d]
                T.clear(S)
                T.gemm(Q_s, KV_s, S, transpose_B=True, policy=T.GemmWarpPolicy.FullCol)
                T.gemm(Qpe_s, Kpe_s, S, transpose_B=True, policy=T.GemmWarpPolicy.FullCol)
                for i, j in T.Parallel(block_H, block_I):
                    S[i, j] = T.if_then_else(I_s[j] >= 0, S[i, j], -T.infinity("float32"))
                online_softmax(S, m, m_prev, rescale, row_sum, l, acc, scale, empty_rows=True)
                T.copy(S, P_s)
                T.gemm(P_s, KV_s, acc, policy=T.GemmWarpPolicy.FullCol)
            for i, j in T.Parallel(block_H, dv):
                acc[i, j] = T.if_then_else(l[i] > 0, acc[i, j] / l[i], 0)
            T.copy(acc, O_s)
            T.copy(O_s, O[b, s, hb * block_H, 0])

    return sparse_mla_fwd


def decode_inputs(rng, batch, heads, max_pages, page_size, dv, dpe, lengths):
    num_pages = batch * max_pages
    q = rng.standard_normal((batch, heads, dv)).astype(np.float16)
    q_pe = rng.standard_normal((batch, heads, dpe)).astype(np.float16)
    pages = rng.standard_normal((num_pages, page_size, dv + dpe)).astype(np.float16)
    table = rng.permutation(num_pages).reshape(batch, max_pages).astype(np.int32)  # scattered pages
    return q, q_pe, pages, table, np.asarray(lengths, np.int32), np.zeros((batch, heads, dv), np.float16)


def _attend(q_full, kv, dv):
    """q_full [heads, dv + dpe], kv [tokens, dv + dpe] -> [heads, dv] (float64)."""
    if kv.shape[0] == 0:
        return np.zeros((q_full.shape[0], dv))
    s = q_full @ kv.T / np.sqrt(q_full.shape[1])
    p = np.exp(s - s.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)) @ kv[:, :dv]


def decode_reference(q, q_pe, pages, table, lengths):
    batch, heads, dv = q.shape
    page_size = pages.shape[1]
    out = np.zeros((batch, heads, dv))
    for b in range(batch):
        n = int(lengths[b])
        kv = np.concatenate([pages[table[b, i]] for i in range(-(-n // page_size))], axis=0)[:n] if n else \
            np.zeros((0, pages.shape[2]))
        out[b] = _attend(np.concatenate([q[b], q_pe[b]], axis=1).astype(np.float64), kv.astype(np.float64), dv)
    return out


def sparse_inputs(rng, batch, seq, seq_kv, heads, topk, dv, dpe, unused=0):
    q = rng.standard_normal((batch, seq, heads, dv + dpe)).astype(np.float16)
    kv = rng.standard_normal((batch, seq_kv, dv + dpe)).astype(np.float16)
    idx = np.stack([np.stack([rng.permutation(seq_kv)[:topk] for _ in range(seq)]) for _ in range(batch)])
    idx = idx.astype(np.int32)
    if unused:
        idx[..., topk - unused:] = -1
    return q, kv, idx, np.zeros((batch, seq, heads, dv), np.float16)


def sparse_reference(q, kv, idx, dv):
    batch, seq, heads, _ = q.shape
    out = np.zeros((batch, seq, heads, dv))
    for b in range(batch):
        for s in range(seq):
            sel = idx[b, s][idx[b, s] >= 0]
            out[b, s] = _attend(q[b, s].astype(np.float64), kv[b, sel].astype(np.float64), dv)
    return out
