"""Persistent GEMM (a fixed number of blocks walks the output tiles with T.Persistent) and stream-K GEMM (the
blocks split the flattened (tile, k-step) iteration space evenly; a tile shared by two blocks is summed with
atomic adds into a zeroed float32 C)."""
import numpy as np

import tilelang.language as T


def persistent_gemm(M, N, K, blocks, block_M=128, block_N=128, block_K=32, stages=2, threads=128, group=8,
                    dtype="float16", accum="float32"):
    @T.prim_func
    def gemm_persistent(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), accum)):
        with T.Kernel(blocks, threads=threads) as bid:
            A_s = T.alloc_shared((block_M, block_K), dtype)
            B_s = T.alloc_shared((block_K, block_N), dtype)
            C_l = T.alloc_fragment((block_M, block_N), accum)
            for bm, bn in T.Persistent([T.ceildiv(M, block_M), T.ceildiv(N, block_N)], blocks, bid, group):
                T.clear(C_l)
                for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=stages):
                    T.copy(A[bm * block_M, k * block_K], A_s)
                    T.copy(B[k * block_K, bn * block_N], B_s)
                    T.gemm(A_s, B_s, C_l)
                T.copy(C_l, C[bm * block_M, bn * block_N])

    return gemm_persistent


def stream_k_gemm(M, N, K, blocks, block_M=128, block_N=128, block_K=32, threads=128, dtype="float16"):
    m_tiles, n_tiles, k_iters = -(-M // block_M), -(-N // block_N), -(-K // block_K)
    total = m_tiles * n_tiles * k_iters
    per = -(-total // blocks)  # iterations per block
    segments = -(-per // k_iters) + 1  # most tiles one block's range can touch

    @T.prim_func
    def gemm_stream_k(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), "float32")):
        with T.Kernel(blocks, threads=threads) as bid:
            A_s = T.alloc_shared((block_M, block_K), dtype)
            B_s = T.alloc_shared((block_K, block_N), dtype)
            C_l = T.alloc_fragment((block_M, block_N), "float32")
            it = T.alloc_var("int32", init=bid * per)
            end = T.min(bid * per + per, total)
            for _ in T.serial(segments):
                if it < end:
                    tile = it // k_iters
                    k0 = it % k_iters
                    steps = T.min(k_iters - k0, end - it)
                    bm = tile // n_tiles
                    bn = tile % n_tiles
                    T.clear(C_l)
                    for k in T.serial(steps):
                        T.copy(A[bm * block_M, (k0 + k) * block_K], A_s)
                        T.copy(B[(k0 + k) * block_K, bn * block_N], B_s)
                        T.gemm(A_s, B_s, C_l)
                    T.atomic_add(C[bm * block_M:(bm + 1) * block_M, bn * block_N:(bn + 1) * block_N], C_l)
                    it = it + steps

    return gemm_stream_k


def inputs(rng, M, N, K):
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    return a, b, np.zeros((M, N), np.float32)


def reference(a, b):
    return a.astype(np.float64) @ b.astype(np.float64)
