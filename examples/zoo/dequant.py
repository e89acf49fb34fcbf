"""Dequantising GEMMs, C = A @ dequant(W)^T: int4 weights (two's complement nibbles, two per byte, low nibble
first) and fp4 e2m1 weights (sign, 2 exponent bits, 1 mantissa bit), each with one float16 scale per `group`
weights along K, into float16 activations (w4a16); the weights are decoded into registers (a T.gemm operand
fragment). And an int8 x int8 -> int32 GEMM with A taken through registers."""
import numpy as np

import tilelang.language as T


def w4a16_gemm(M, N, K, group, fmt="int4", block_M=64, block_N=64, block_K=64, stages=2, threads=128):
    assert fmt in ("int4", "fp4") and K % block_K == 0 and block_K % group == 0 and group % 2 == 0

    @T.prim_func
    def gemm_w4a16(A: T.Tensor((M, K), "float16"), W: T.Tensor((N, K // 2), "uint8"),
                   S: T.Tensor((N, K // group), "float16"), C: T.Tensor((M, N), "float16")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bn, bm):
            A_s = T.alloc_shared((block_M, block_K), "float16")
            W_s = T.alloc_shared((block_N, block_K // 2), "uint8")
            S_s = T.alloc_shared((block_N, block_K // group), "float16")
            W_r = T.alloc_fragment((block_N, block_K), "float16")
            C_l = T.alloc_fragment((block_M, block_N), "float32")
            C_s = T.alloc_shared((block_M, block_N), "float16")
            T.clear(C_l)
            for k in T.Pipelined(K // block_K, num_stages=stages):
                T.copy(A[bm * block_M, k * block_K], A_s)
                T.copy(W[bn * block_N, k * block_K // 2], W_s)
                T.copy(S[bn * block_N, k * block_K // group], S_s)
                for n, j in T.Parallel(block_N, block_K):
                    q = (W_s[n, j // 2] >> ((j % 2) * 4)) & 0xF
                    if fmt == "int4":
                        v = T.Cast("float16", (T.Cast("int32", q) ^ 8) - 8)  # sign-extend the nibble
                    else:  # e2m1: 0, 0.5 (subnormal), then (1 + m / 2) * 2^(e - 1)
                        e = (q >> 1) & 3
                        m = T.Cast("float32", q & 1)
                        mag = T.if_then_else(e == 0, m * 0.5, (1.0 + m * 0.5) * T.Cast("float32", 1 << e) * 0.5)
                        v = T.Cast("float16", T.if_then_else((q & 8) != 0, -mag, mag))
                    W_r[n, j] = v * S_s[n, j // group]
                T.gemm(A_s, W_r, C_l, transpose_B=True)
            T.copy(C_l, C_s)
            T.copy(C_s, C[bm * block_M, bn * block_N])

    return gemm_w4a16


def int8_gemm(M, N, K, block_M=64, block_N=64, block_K=64, stages=2, threads=128):
    @T.prim_func
    def gemm_s8(A: T.Tensor((M, K), "int8"), B: T.Tensor((N, K), "int8"), C: T.Tensor((M, N), "int32")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bn, bm):
            A_s = T.alloc_shared((block_M, block_K), "int8")
            B_s = T.alloc_shared((block_N, block_K), "int8")
            A_r = T.alloc_fragment((block_M, block_K), "int8")
            C_l = T.alloc_fragment((block_M, block_N), "int32")
            T.clear(C_l)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=stages):
                T.copy(A[bm * block_M, k * block_K], A_s)
                T.copy(B[bn * block_N, k * block_K], B_s)
                T.copy(A_s, A_r)
                T.gemm(A_r, B_s, C_l, transpose_B=True)
            T.copy(C_l, C[bm * block_M, bn * block_N])

    return gemm_s8


_E2M1 = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0])


def w4a16_inputs(rng, M, N, K, group):
    a = rng.standard_normal((M, K)).astype(np.float16)
    w = rng.integers(0, 256, (N, K // 2)).astype(np.uint8)
    s = (rng.random((N, K // group)) * 0.5 + 0.05).astype(np.float16)
    return a, w, s, np.zeros((M, N), np.float16)


def w4a16_weights(w, s, group, fmt="int4"):
    """The dequantised weights [N, K] in float64."""
    q = np.stack([w & 0xF, w >> 4], axis=-1).reshape(w.shape[0], -1).astype(np.int64)  # low nibble first
    vals = np.where(q >= 8, q - 16, q).astype(np.float64) if fmt == "int4" else _E2M1[q]
    return vals * np.repeat(s.astype(np.float64), group, axis=1)


def w4a16_reference(a, w, s, group, fmt="int4"):
    return a.astype(np.float64) @ w4a16_weights(w, s, group, fmt).T


def int8_inputs(rng, M, N, K):
    a = rng.integers(-128, 128, (M, K)).astype(np.int8)
    b = rng.integers(-128, 128, (N, K)).astype(np.int8)
    return a, b, np.zeros((M, N), np.int32)


def int8_reference(a, b):
    return a.astype(np.int64) @ b.astype(np.int64).T
