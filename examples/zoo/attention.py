"""Block-sparse attention forward, Q, K, V, O: [batch, heads, seq, dim]: query block qb attends to the key
blocks its block mask marks (`mask[b, h, qb, kb]`, bool) or that its index list names (`index[b, h, qb, :count]`,
int32); online softmax in base 2 as FlashAttention. Block-causal attention is the mask variant with the
lower-triangular block mask (a token sees every token of its own block and of the blocks before). A query row
that sees no key gets zeros."""
import numpy as np

import tilelang.language as T

from .softmax import online_softmax

LOG2E = 1.44269504


def block_sparse_attention(batch, heads, seq, dim, block_M=64, block_N=64, sparsity="mask", max_blocks=None,
                           stages=1, threads=128, dtype="float16"):
    assert sparsity in ("mask", "index") and seq % block_M == 0 and seq % block_N == 0
    nq, nk = seq // block_M, seq // block_N
    max_blocks = max_blocks or nk
    scale = dim ** -0.5 * LOG2E
    shape = (batch, heads, seq, dim)
    sparse_shape = (batch, heads, nq, nk) if sparsity == "mask" else (batch, heads, nq, max_blocks)
    sparse_dtype = "bool" if sparsity == "mask" else "int32"

    @T.prim_func
    def block_sparse_attn(Q: T.Tensor(shape, dtype), K: T.Tensor(shape, dtype), V: T.Tensor(shape, dtype),
                          Sparse: T.Tensor(sparse_shape, sparse_dtype), Count: T.Tensor((batch, heads, nq), "int32"),
                          O: T.Tensor(shape, dtype)):
        with T.Kernel(nq, heads, batch, threads=threads) as (qb, h, b):
            Q_s = T.alloc_shared((block_M, dim), dtype)
            K_s = T.alloc_shared((block_N, dim), dtype)
            V_s = T.alloc_shared((block_N, dim), dtype)
            O_s = T.alloc_shared((block_M, dim), dtype)
            S = T.alloc_fragment((block_M, block_N), "float32")
            P = T.alloc_fragment((block_M, block_N), dtype)
            acc = T.alloc_fragment((block_M, dim), "float32")
            m = T.alloc_fragment((block_M,), "float32")
            m_prev = T.alloc_fragment((block_M,), "float32")
            rescale = T.alloc_fragment((block_M,), "float32")
            row_sum = T.alloc_fragment((block_M,), "float32")
            l = T.alloc_fragment((block_M,), "float32")

            T.copy(Q[b, h, qb * block_M, 0], Q_s)
            T.clear(acc)
            T.clear(l)
            T.fill(m, -T.infinity("float32"))
            steps = nk if sparsity == "mask" else Count[b, h, qb]
            for t in T.Pipelined(steps, num_stages=stages):
                kb = t if sparsity == "mask" else Sparse[b, h, qb, t]
                if sparsity == "index" or Sparse[b, h, qb, t]:
                    T.copy(K[b, h, kb * block_N, 0], K_s)
                    T.copy(V[b, h, kb * block_N, 0], V_s)
                    T.clear(S)
                    T.gemm(Q_s, K_s, S, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)
                    online_softmax(S, m, m_prev, rescale, row_sum, l, acc, scale)
                    T.copy(S, P)
                    T.gemm(P, V_s, acc, policy=T.GemmWarpPolicy.FullRow)
            for i, j in T.Parallel(block_M, dim):
                acc[i, j] = T.if_then_else(l[i] > 0, acc[i, j] / l[i], 0)
            T.copy(acc, O_s)
            T.copy(O_s, O[b, h, qb * block_M, 0])

    return block_sparse_attn


def block_causal_mask(batch, heads, nq, nk):
    return np.broadcast_to(np.tril(np.ones((nq, nk), bool)), (batch, heads, nq, nk)).copy()


def random_mask(rng, batch, heads, nq, nk, density=0.5):
    mask = rng.random((batch, heads, nq, nk)) < density
    mask[..., 0, :] = False  # one query block that sees nothing: zeros
    return mask


def mask_to_index(mask, max_blocks=None):
    """The index variant of a mask: the marked key blocks of each query block in increasing order, and
    their count (the unused tail repeats block 0, which the kernel never reads)."""
    b, h, nq, nk = mask.shape
    max_blocks = max_blocks or nk
    index = np.zeros((b, h, nq, max_blocks), np.int32)
    count = mask.sum(-1).astype(np.int32)
    for idx in np.ndindex(b, h, nq):
        sel = np.nonzero(mask[idx])[0]
        index[idx][:len(sel)] = sel
    return index, count


def inputs(rng, batch, heads, seq, dim):
    q, k, v = (rng.standard_normal((batch, heads, seq, dim)).astype(np.float16) for _ in range(3))
    return q, k, v, np.zeros((batch, heads, seq, dim), np.float16)


def reference(q, k, v, mask, block_M, block_N):
    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    seq, dim = q.shape[2], q.shape[3]
    allowed = np.repeat(np.repeat(mask, block_M, axis=2), block_N, axis=3)  # [b, h, seq, seq]
    s = np.einsum("bhid,bhjd->bhij", q, k) / np.sqrt(dim)
    s = np.where(allowed, s, -np.inf)
    mx = s.max(-1, keepdims=True)
    p = np.where(allowed, np.exp(s - np.where(np.isfinite(mx), mx, 0)), 0)
    den = p.sum(-1, keepdims=True)
    return np.einsum("bhij,bhjd->bhid", p / np.where(den > 0, den, 1), v)
