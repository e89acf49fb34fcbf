"""FlashAttention forward and backward with grouped-query attention (`heads` query heads share `heads // groups`
K/V heads) and an optional causal mask, Q: [batch, heads, seq, dim], K, V: [batch, heads // groups, seq, dim].

- forward: O and the log-sum-exp of each row's scores in base 2 (LSE, what the backward needs).
- backward: a preprocessing kernel (Delta = rowsum(dO * O)), then one block per key block and query head that
  walks the query blocks: dV += P^T dO, dK += dS^T Q (summed over a group's heads with atomic adds into float32
  accumulators) and dQ += dS K (atomic adds into a float32 accumulator). The scores are computed transposed
  (K Q^T) so that the key block stays the rows of every accumulator."""
import numpy as np

import tilelang.language as T

from .softmax import online_softmax

LOG2E = 1.44269504


def forward(batch, heads, groups, seq, dim, causal, block_M=64, block_N=64, stages=1, threads=128, dtype="float16"):
    assert seq % block_M == 0 and seq % block_N == 0 and heads % groups == 0
    kv_heads = heads // groups
    scale = dim ** -0.5 * LOG2E
    q_shape, kv_shape = (batch, heads, seq, dim), (batch, kv_heads, seq, dim)

    @T.prim_func
    def flash_fwd(Q: T.Tensor(q_shape, dtype), K: T.Tensor(kv_shape, dtype), V: T.Tensor(kv_shape, dtype),
                  O: T.Tensor(q_shape, dtype), LSE: T.Tensor((batch, heads, seq), "float32")):
        with T.Kernel(seq // block_M, heads, batch, threads=threads) as (qb, h, b):
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
            steps = T.ceildiv((qb + 1) * block_M, block_N) if causal else seq // block_N
            for kb in T.Pipelined(steps, num_stages=stages):
                T.copy(K[b, h // groups, kb * block_N, 0], K_s)
                T.copy(V[b, h // groups, kb * block_N, 0], V_s)
                if causal:
                    for i, j in T.Parallel(block_M, block_N):
                        S[i, j] = T.if_then_else(qb * block_M + i >= kb * block_N + j, 0, -T.infinity("float32"))
                else:
                    T.clear(S)
                T.gemm(Q_s, K_s, S, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)
                online_softmax(S, m, m_prev, rescale, row_sum, l, acc, scale)
                T.copy(S, P)
                T.gemm(P, V_s, acc, policy=T.GemmWarpPolicy.FullRow)
            for i, j in T.Parallel(block_M, dim):
                acc[i, j] /= l[i]
            T.copy(acc, O_s)
            T.copy(O_s, O[b, h, qb * block_M, 0])
            for i in T.Parallel(block_M):
                LSE[b, h, qb * block_M + i] = m[i] * scale + T.log2(l[i])

    return flash_fwd


def backward_preprocess(batch, heads, seq, dim, block_M=64, threads=128, dtype="float16"):
    shape = (batch, heads, seq, dim)

    @T.prim_func
    def flash_bwd_pre(O: T.Tensor(shape, dtype), dO: T.Tensor(shape, dtype),
                      Delta: T.Tensor((batch, heads, seq), "float32")):
        with T.Kernel(seq // block_M, heads, batch, threads=threads) as (qb, h, b):
            prod = T.alloc_fragment((block_M, dim), "float32")
            d = T.alloc_fragment((block_M,), "float32")
            for i, j in T.Parallel(block_M, dim):
                prod[i, j] = T.Cast("float32", O[b, h, qb * block_M + i, j]) * T.Cast("float32",
                                                                                    dO[b, h, qb * block_M + i, j])
            T.reduce_sum(prod, d, dim=1)
            T.copy(d, Delta[b, h, qb * block_M:(qb + 1) * block_M])

    return flash_bwd_pre


def backward(batch, heads, groups, seq, dim, causal, block_M=64, block_N=64, threads=128, dtype="float16"):
    assert seq % block_M == 0 and seq % block_N == 0 and heads % groups == 0
    kv_heads = heads // groups
    sm_scale = dim ** -0.5
    scale = sm_scale * LOG2E
    q_shape, kv_shape = (batch, heads, seq, dim), (batch, kv_heads, seq, dim)

    @T.prim_func
    def flash_bwd(Q: T.Tensor(q_shape, dtype), K: T.Tensor(kv_shape, dtype), V: T.Tensor(kv_shape, dtype),
                  dO: T.Tensor(q_shape, dtype), LSE: T.Tensor((batch, heads, seq), "float32"),
                  Delta: T.Tensor((batch, heads, seq), "float32"), dQ: T.Tensor(q_shape, "float32"),
                  dK: T.Tensor(kv_shape, "float32"), dV: T.Tensor(kv_shape, "float32")):
        with T.Kernel(seq // block_N, heads, batch, threads=threads) as (kb, h, b):
            K_s = T.alloc_shared((block_N, dim), dtype)
            V_s = T.alloc_shared((block_N, dim), dtype)
            Q_s = T.alloc_shared((block_M, dim), dtype)
            dO_s = T.alloc_shared((block_M, dim), dtype)
            PT_s = T.alloc_shared((block_N, block_M), dtype)
            dST_s = T.alloc_shared((block_N, block_M), dtype)
            lse_s = T.alloc_shared((block_M,), "float32")
            delta_s = T.alloc_shared((block_M,), "float32")
            ST = T.alloc_fragment((block_N, block_M), "float32")
            dPT = T.alloc_fragment((block_N, block_M), "float32")
            dK_acc = T.alloc_fragment((block_N, dim), "float32")
            dV_acc = T.alloc_fragment((block_N, dim), "float32")
            dQ_acc = T.alloc_fragment((block_M, dim), "float32")
            T.copy(K[b, h // groups, kb * block_N, 0], K_s)
            T.copy(V[b, h // groups, kb * block_N, 0], V_s)
            T.clear(dK_acc)
            T.clear(dV_acc)
            first = kb * block_N // block_M if causal else 0
            for qb in T.Pipelined(first, seq // block_M, num_stages=1):
                T.copy(Q[b, h, qb * block_M, 0], Q_s)
                T.copy(dO[b, h, qb * block_M, 0], dO_s)
                T.copy(LSE[b, h, qb * block_M:(qb + 1) * block_M], lse_s)
                T.copy(Delta[b, h, qb * block_M:(qb + 1) * block_M], delta_s)
                T.clear(ST)
                T.gemm(K_s, Q_s, ST, transpose_B=True)  # S^T: [keys, queries]
                for j, i in T.Parallel(block_N, block_M):
                    p = T.exp2(ST[j, i] * scale - lse_s[i])
                    ST[j, i] = T.if_then_else(not causal or qb * block_M + i >= kb * block_N + j, p, 0)
                T.copy(ST, PT_s)
                T.gemm(PT_s, dO_s, dV_acc)  # dV += P^T dO
                T.clear(dPT)
                T.gemm(V_s, dO_s, dPT, transpose_B=True)  # dP^T = V dO^T
                for j, i in T.Parallel(block_N, block_M):
                    dPT[j, i] = ST[j, i] * (dPT[j, i] - delta_s[i]) * sm_scale  # dS^T
                T.copy(dPT, dST_s)
                T.gemm(dST_s, Q_s, dK_acc)  # dK += dS^T Q
                T.clear(dQ_acc)
                T.gemm(dST_s, K_s, dQ_acc, transpose_A=True)  # dQ = dS K
                T.atomic_add(dQ[b, h, qb * block_M:(qb + 1) * block_M, :], dQ_acc)
            T.atomic_add(dK[b, h // groups, kb * block_N:(kb + 1) * block_N, :], dK_acc)
            T.atomic_add(dV[b, h // groups, kb * block_N:(kb + 1) * block_N, :], dV_acc)

    return flash_bwd


def inputs(rng, batch, heads, groups, seq, dim):
    q = rng.standard_normal((batch, heads, seq, dim)).astype(np.float16)
    k, v = (rng.standard_normal((batch, heads // groups, seq, dim)).astype(np.float16) for _ in range(2))
    do = rng.standard_normal((batch, heads, seq, dim)).astype(np.float16)
    return q, k, v, do


def reference(q, k, v, do, groups, causal):
    """(O, LSE in base 2, dQ, dK, dV) in float64."""
    q, k, v, do = (x.astype(np.float64) for x in (q, k, v, do))
    k, v = np.repeat(k, groups, axis=1), np.repeat(v, groups, axis=1)
    seq, dim = q.shape[2], q.shape[3]
    s = np.einsum("bhid,bhjd->bhij", q, k) / np.sqrt(dim)
    if causal:
        s = np.where(np.tril(np.ones((seq, seq), bool)), s, -np.inf)
    mx = s.max(-1, keepdims=True)
    e = np.exp(s - mx)
    den = e.sum(-1, keepdims=True)
    p = e / den
    o = p @ v
    lse = (mx[..., 0] + np.log(den[..., 0])) / np.log(2)
    dv = np.einsum("bhij,bhid->bhjd", p, do)
    dp = do @ v.transpose(0, 1, 3, 2)
    ds = p * (dp - (do * o).sum(-1, keepdims=True)) / np.sqrt(dim)
    dq = ds @ k
    dk = np.einsum("bhij,bhid->bhjd", ds, q)
    b, h = q.shape[:2]
    fold = lambda x: x.reshape(b, h // groups, groups, seq, dim).sum(2)  # noqa: E731
    return o, lse, dq, fold(dk), fold(dv)
