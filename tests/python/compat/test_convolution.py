"""TileLang's convolution example as written there (NHWC data, (KH, KW, C, F) filter, views of the filter
and output as 2-D matrices through T.Tensor(..., kernel.data), an im2col tile gathered with T.Parallel or
with T.c2d_im2col, a pipelined T.gemm), checked against a float64 NumPy convolution at small ragged sizes
on the CPU target and in the CUDA emulator."""
import numpy as np
import pytest

import tilelang
import tilelang.language as T

SEED = 1204


def convolution(N, C, H, W, F, K, S, D, P, block_M, block_N, block_K, num_stages, threads, use_op):
    KH, KW = K, K
    OH = (H + 2 * P - D * (K - 1) - 1) // S + 1
    OW = (W + 2 * P - D * (K - 1) - 1) // S + 1
    dtype, accum_dtype = "float16", "float"

    @T.prim_func
    def main(data: T.Tensor((N, H, W, C), dtype), kernel: T.Tensor((KH, KW, C, F), dtype),
             out: T.Tensor((N, OH, OW, F), dtype)):
        with T.Kernel(T.ceildiv(F, block_N), T.ceildiv(N * OH * OW, block_M), threads=threads) as (bx, by):
            data_shared = T.alloc_shared((block_M, block_K), dtype)
            kernel_shared = T.alloc_shared((block_K, block_N), dtype)
            out_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            out_shared = T.alloc_shared((block_M, block_N), dtype)

            kernel_flat = T.Tensor((KH * KW * C, F), dtype, kernel.data)
            out_flat = T.Tensor((N * OH * OW, F), dtype, out.data)

            T.annotate_layout({
                out_shared: tilelang.layout.make_swizzled_layout(out_shared),
                data_shared: tilelang.layout.make_swizzled_layout(data_shared),
                kernel_shared: tilelang.layout.make_swizzled_layout(kernel_shared),
            })

            T.clear(out_local)
            for k_iter in T.Pipelined(T.ceildiv(KH * KW * C, block_K), num_stages=num_stages):
                if use_op:
                    T.c2d_im2col(data, data_shared, by, k_iter, KH, S, D, P)
                else:
                    for i, j in T.Parallel(block_M, block_K):
                        k = k_iter * block_K + j
                        m = by * block_M + i
                        access_h = m % (OH * OW) // OW * S + k // (KW * C) * D - P
                        access_w = m % OW * S + k // C % KW * D - P
                        in_bound = ((access_h >= 0) and (access_w >= 0) and (access_h < H) and (access_w < W))
                        data_shared[i, j] = T.if_then_else(in_bound, data[m // (OH * OW), access_h, access_w, k % C], 0)
                T.copy(kernel_flat[k_iter * block_K, bx * block_N], kernel_shared)
                T.gemm(data_shared, kernel_shared, out_local)

            T.copy(out_local, out_shared)
            T.copy(out_shared, out_flat[by * block_M, bx * block_N])

    return main


def reference(a, b, S, D, P):
    N, H, W, C = a.shape
    K, _, _, F = b.shape
    OH = (H + 2 * P - D * (K - 1) - 1) // S + 1
    OW = (W + 2 * P - D * (K - 1) - 1) // S + 1
    ap = np.pad(a.astype(np.float64), ((0, 0), (P, P), (P, P), (0, 0)))
    out = np.zeros((N, OH, OW, F))
    for kh in range(K):
        for kw in range(K):
            patch = ap[:, kh * D:kh * D + (OH - 1) * S + 1:S, kw * D:kw * D + (OW - 1) * S + 1:S, :]
            out += np.einsum("nhwc,cf->nhwf", patch, b[kh, kw].astype(np.float64))
    return out


@pytest.mark.parametrize("where", ["cpu", "emulator"])
@pytest.mark.parametrize("use_op", [False, True])
def test_convolution_example(where, use_op):
    # N*OH*OW = 2*5*5 = 50 rows against 32-row tiles; KH*KW*C = 9*12 = 108 against 32; F = 40 against 32
    N, C, H, W, F, K, S, D, P = 2, 12, 9, 9, 40, 3, 2, 1, 1
    f = convolution(N, C, H, W, F, K, S, D, P, 32, 32, 32, 2, 128, use_op)
    print(f"seed {SEED}")
    rng = np.random.default_rng(SEED)
    a = rng.standard_normal((N, H, W, C)).astype("float16")
    b = rng.standard_normal((K, K, C, F)).astype("float16")
    if where == "cpu":
        k = tilelang.compile(f, out_idx=[2], target="cpu")
    else:
        k = tilelang.compile(f, out_idx=[2], target="cuda", execution_backend="emulator")
    out = k(a, b)
    np.testing.assert_allclose(out.astype(np.float64), reference(a, b, S, D, P), rtol=2e-2, atol=2e-2)


def test_conv_cuda_source_compiles_with_tensor_cores():
    f = convolution(2, 64, 16, 16, 128, 3, 1, 1, 1, 64, 64, 32, 2, 128, True)
    k = tilelang.compile(f, out_idx=[2], target="cuda -arch=sm_80")
    assert "mma.sync" in k.get_ptx() or "mma_m16n8k16" in k.get_kernel_source()
    # the filter is read only through its 2-D view, which becomes the parameter: its T.copy stays async
    assert any("T.copy kernel_flat -> kernel_shared: 16-byte cp.async" in c for c in k.choices), k.choices
    assert any("cp.async pipeline" in c for c in k.choices), k.choices
