"""Reference kernels written in the DSL, exactly as TileLang users write them.

Each factory takes Python values (sizes, dtypes, flags) and returns a ``@T.prim_func``. They are
shared by the front-end tests (parse / print / re-parse) and by the backends' numeric tests, so
keep them faithful to TileLang's own examples.
"""
import importlib.util
import os

import tilelang.language as T


def demo_matmul_kernel():
    """The reference program's kernel (../shared/examples/gemm_tilelang_demo.py), defined once, verbatim,
    in examples/gemm_cpu_demo.py: 1024^3 fp16, 128x128x32 tiles, 128 threads, 2 stages."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "gemm_cpu_demo.py")
    spec = importlib.util.spec_from_file_location("gemm_cpu_demo", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.matmul_kernel


def matmul(M, N, K, block_M=128, block_N=128, block_K=32, dtype="float16", accum_dtype="float32",
           out_dtype=None, num_stages=2, threads=128):
    """The reference GEMM (the demo's kernel): C[M, N] = A[M, K] @ B[K, N]."""
    out_dtype = out_dtype or dtype

    @T.prim_func
    def matmul_kernel(
        A: T.Buffer((M, K), dtype),
        B: T.Buffer((K, N), dtype),
        C: T.Buffer((M, N), out_dtype),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)

            T.clear(C_local)

            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                T.copy(A[by * block_M:(by + 1) * block_M, k * block_K:(k + 1) * block_K], A_shared)
                T.copy(B[k * block_K:(k + 1) * block_K, bx * block_N:(bx + 1) * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)

            T.copy(C_local, C[by * block_M:(by + 1) * block_M, bx * block_N:(bx + 1) * block_N])

    return matmul_kernel


def matmul_transposed(M, N, K, block_M=128, block_N=128, block_K=32, trans_A=False, trans_B=False,
                      dtype="float16", accum_dtype="float32", out_dtype=None, num_stages=2, threads=128,
                      policy=T.GemmWarpPolicy.Square, b_dtype=None):
    """GEMM with transposed operands: A is stored (K, M) when trans_A, B is stored (N, K) when trans_B.

    C[M, N] = op(A) @ op(B), op = transpose where requested. A is `dtype`, B `b_dtype` (default: the same; fp8
    gemms mix e4m3 and e5m2).
    """
    out_dtype = out_dtype or dtype
    b_dtype = b_dtype or dtype
    A_shape = (K, M) if trans_A else (M, K)
    B_shape = (N, K) if trans_B else (K, N)
    A_shared_shape = (block_K, block_M) if trans_A else (block_M, block_K)
    B_shared_shape = (block_N, block_K) if trans_B else (block_K, block_N)

    @T.prim_func
    def main(
        A: T.Tensor(A_shape, dtype),
        B: T.Tensor(B_shape, b_dtype),
        C: T.Tensor((M, N), out_dtype),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared(A_shared_shape, dtype)
            B_shared = T.alloc_shared(B_shared_shape, b_dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                if trans_A:
                    T.copy(A[k * block_K, by * block_M], A_shared)
                else:
                    T.copy(A[by * block_M, k * block_K], A_shared)
                if trans_B:
                    T.copy(B[bx * block_N, k * block_K], B_shared)
                else:
                    T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local, trans_A, trans_B, policy=policy)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main


def flashattn(batch, heads, seq_len, dim, is_causal, block_M=64, block_N=64, num_stages=1, threads=128,
              dtype="float16", accum_dtype="float"):
    """FlashAttention forward, Q, K, V, Output: [batch, heads, seq_len, dim].

    Like TileLang's example_mha_fwd_bhsd, seq_len must be a multiple of block_M and block_N (the
    key loop does not mask a partial last key block).
    """
    assert seq_len % block_M == 0 and seq_len % block_N == 0, "seq_len must be a multiple of the block sizes"
    scale = (1.0 / dim) ** 0.5 * 1.44269504  # log2(e)
    shape = [batch, heads, seq_len, dim]

    @T.prim_func
    def main(
        Q: T.Tensor(shape, dtype),
        K: T.Tensor(shape, dtype),
        V: T.Tensor(shape, dtype),
        Output: T.Tensor(shape, dtype),
    ):
        with T.Kernel(T.ceildiv(seq_len, block_M), heads, batch, threads=threads) as (bx, by, bz):
            Q_shared = T.alloc_shared([block_M, dim], dtype)
            K_shared = T.alloc_shared([block_N, dim], dtype)
            V_shared = T.alloc_shared([block_N, dim], dtype)
            O_shared = T.alloc_shared([block_M, dim], dtype)
            acc_s = T.alloc_fragment([block_M, block_N], accum_dtype)
            acc_s_cast = T.alloc_fragment([block_M, block_N], dtype)
            acc_o = T.alloc_fragment([block_M, dim], accum_dtype)
            scores_max = T.alloc_fragment([block_M], accum_dtype)
            scores_max_prev = T.alloc_fragment([block_M], accum_dtype)
            scores_scale = T.alloc_fragment([block_M], accum_dtype)
            scores_sum = T.alloc_fragment([block_M], accum_dtype)
            logsum = T.alloc_fragment([block_M], accum_dtype)

            T.copy(Q[bz, by, bx * block_M:(bx + 1) * block_M, :], Q_shared)
            T.fill(acc_o, 0)
            T.fill(logsum, 0)
            T.fill(scores_max, -T.infinity(accum_dtype))

            loop_range = (
                T.min(T.ceildiv(seq_len, block_N), T.ceildiv((bx + 1) * block_M, block_N))
                if is_causal else T.ceildiv(seq_len, block_N))

            for k in T.Pipelined(loop_range, num_stages=num_stages):
                T.copy(K[bz, by, k * block_N:(k + 1) * block_N, :], K_shared)
                if is_causal:
                    for i, j in T.Parallel(block_M, block_N):
                        acc_s[i, j] = T.if_then_else(bx * block_M + i >= k * block_N + j, 0,
                                                     -T.infinity(acc_s.dtype))
                else:
                    T.clear(acc_s)
                T.gemm(Q_shared, K_shared, acc_s, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)

                # Online softmax: rescale by the running row maximum.
                T.copy(scores_max, scores_max_prev)
                T.fill(scores_max, -T.infinity(accum_dtype))
                T.reduce_max(acc_s, scores_max, dim=1, clear=False)
                for i in T.Parallel(block_M):
                    scores_max[i] = T.max(scores_max[i], scores_max_prev[i])
                for i in T.Parallel(block_M):
                    scores_scale[i] = T.exp2(scores_max_prev[i] * scale - scores_max[i] * scale)
                for i, j in T.Parallel(block_M, block_N):
                    acc_s[i, j] = T.exp2(acc_s[i, j] * scale - scores_max[i] * scale)
                T.reduce_sum(acc_s, scores_sum, dim=1)
                for i in T.Parallel(block_M):
                    logsum[i] = logsum[i] * scores_scale[i] + scores_sum[i]
                T.copy(acc_s, acc_s_cast)

                for i, j in T.Parallel(block_M, dim):
                    acc_o[i, j] *= scores_scale[i]

                T.copy(V[bz, by, k * block_N:(k + 1) * block_N, :], V_shared)
                T.gemm(acc_s_cast, V_shared, acc_o, policy=T.GemmWarpPolicy.FullRow)

            for i, j in T.Parallel(block_M, dim):
                acc_o[i, j] /= logsum[i]
            T.copy(acc_o, O_shared)
            T.copy(O_shared, Output[bz, by, bx * block_M:(bx + 1) * block_M, :])

    return main


def rms_norm(M, N, blk_m, dtype="float32", accum_dtype="float32", eps=1e-12, threads=128):
    """Row-wise RMSNorm without weight: B[i, :] = A[i, :] / sqrt(mean(A[i, :]^2) + eps)."""

    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, blk_m), threads=threads) as bx:
            A_shared = T.alloc_shared((blk_m, N), dtype)
            A_pow_local = T.alloc_fragment((blk_m, N), accum_dtype)
            A_local = T.alloc_fragment((blk_m, N), accum_dtype)
            A_powsum = T.alloc_fragment((blk_m,), accum_dtype)

            T.copy(A[bx * blk_m:(bx + 1) * blk_m, :], A_shared)
            T.copy(A_shared, A_local)
            for i, j in T.Parallel(blk_m, N):
                A_pow_local[i, j] = A_local[i, j] * A_local[i, j]
            T.reduce_sum(A_pow_local, A_powsum, dim=1)
            for i in T.Parallel(blk_m):
                A_powsum[i] = T.rsqrt(A_powsum[i] / N + eps)
            for i, j in T.Parallel(blk_m, N):
                A_local[i, j] *= A_powsum[i]
            T.copy(A_local, B[bx * blk_m:(bx + 1) * blk_m, :])

    return main


def softmax(M, N, block_M, dtype="float32", accum_dtype="float32", threads=128):
    """Row softmax over the last dimension: Y[i, :] = softmax(X[i, :])."""
    scale = 1.44269504  # log2(e): exp(x) = exp2(x * log2(e))

    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), Y: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bx:
            x = T.alloc_fragment((block_M, N), accum_dtype)
            row_max = T.alloc_fragment((block_M,), accum_dtype)
            row_sum = T.alloc_fragment((block_M,), accum_dtype)

            T.copy(X[bx * block_M:(bx + 1) * block_M, :], x)
            T.reduce_max(x, row_max, dim=1)
            for i, j in T.Parallel(block_M, N):
                x[i, j] = T.exp2(x[i, j] * scale - row_max[i] * scale)
            T.reduce_sum(x, row_sum, dim=1)
            for i, j in T.Parallel(block_M, N):
                x[i, j] = x[i, j] / row_sum[i]
            T.copy(x, Y[bx * block_M:(bx + 1) * block_M, :])

    return main


def matmul_splitk(M, N, K, block_M=128, block_N=128, block_K=32, split_k=4, dtype="float16",
                  accum_dtype="float32", out_dtype="float32", num_stages=2, threads=128):
    """Split-K GEMM: each z-block multiplies one K/split_k slab and atomically adds its tile into C.

    C must be zero-initialised by the caller. K must be a multiple of split_k * block_K.
    """
    assert K % (split_k * block_K) == 0, "K must be a multiple of split_k * block_K"
    splitK = K // split_k

    @T.prim_func
    def main(
        A: T.Tensor((M, K), dtype),
        B: T.Tensor((K, N), dtype),
        C: T.Tensor((M, N), out_dtype),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), split_k, threads=threads) as (bx, by, bz):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)

            T.clear(C_local)
            for ko in T.Pipelined(T.ceildiv(splitK, block_K), num_stages=num_stages):
                T.copy(A[by * block_M, bz * splitK + ko * block_K], A_shared)
                T.copy(B[bz * splitK + ko * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)

            T.atomic_add(C[by * block_M:(by + 1) * block_M, bx * block_N:(bx + 1) * block_N], C_local)

    return main


def cumsum(M, N, block_M, block_N, dim=0, reverse=False, scope="shared", dtype="float32", threads=128):
    """Block-wise inclusive prefix sum: each (block_M, block_N) tile of A is scanned along `dim`
    (in reverse when `reverse`) and written to B. `scope` is "shared" or "fragment"."""

    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            if scope == "shared":
                A_tile = T.alloc_shared((block_M, block_N), dtype)
            else:
                A_tile = T.alloc_fragment((block_M, block_N), dtype)
            T.copy(A[by * block_M, bx * block_N], A_tile)
            T.cumsum(src=A_tile, dim=dim, reverse=reverse)
            T.copy(A_tile, B[by * block_M, bx * block_N])

    return main


def elementwise_add(block=256, dtype="float32"):
    """C = A + B over a length `n` known only at run time; the last block guards its tail."""
    n = T.dynamic("n")

    @T.prim_func
    def main(A: T.Tensor((n,), dtype), B: T.Tensor((n,), dtype), C: T.Tensor((n,), dtype)):
        with T.Kernel(T.ceildiv(n, block), threads=block) as bx:
            for i in T.Parallel(block):
                idx = bx * block + i
                if idx < n:
                    C[idx] = A[idx] + B[idx]

    return main


def axpb():
    """B = alpha * A + beta over a length `n` known only at run time; alpha float, beta int scalars."""
    n = T.dynamic("n")

    @T.prim_func
    def axpb(A: T.Tensor((n,), "float32"), B: T.Tensor((n,), "float32"), alpha: T.float32, beta: T.int32):
        with T.Kernel(T.ceildiv(n, 128), threads=128) as bx:
            for i in T.Parallel(128):
                idx = bx * 128 + i
                if idx < n:
                    B[idx] = alpha * A[idx] + T.cast(beta, "float32")

    return axpb


def all_kernels():
    """(name, PrimFunc) pairs with small sizes, for tests that walk every kernel."""
    return [
        ("matmul", matmul(256, 256, 256)),
        ("matmul_tA", matmul_transposed(256, 192, 128, 64, 64, 32, trans_A=True)),
        ("matmul_tB", matmul_transposed(256, 192, 128, 64, 64, 32, trans_B=True)),
        ("matmul_tAB", matmul_transposed(256, 192, 128, 64, 64, 32, trans_A=True, trans_B=True)),
        ("flashattn", flashattn(1, 2, 128, 64, is_causal=False)),
        ("flashattn_causal", flashattn(1, 2, 128, 64, is_causal=True)),
        ("rms_norm", rms_norm(256, 128, 8)),
        ("softmax", softmax(256, 128, 8)),
        ("matmul_splitk", matmul_splitk(256, 256, 512, 64, 64, 32, split_k=4)),
        ("cumsum", cumsum(128, 128, 32, 32)),
        ("cumsum_fragment_reverse", cumsum(128, 128, 32, 32, dim=1, reverse=True, scope="fragment")),
        ("elementwise_add", elementwise_add()),
    ]


def grid_two_phase(nb, sync=True, skip_block=None):
    """Phase 1: each block sums its 64 elements into P[bx]. Phase 2: each block divides its elements by the NEXT
    block's sum, which only a grid-wide barrier makes visible."""
    @T.prim_func
    def k(X: T.Tensor((nb * 64,), "float32"), P: T.Tensor((nb,), "float32"), Y: T.Tensor((nb * 64,), "float32")):
        with T.Kernel(nb, threads=64) as bx:
            s = T.alloc_shared((64,), "float32")
            for i in T.Parallel(64):
                s[i] = X[bx * 64 + i]
            tx = T.get_thread_binding()
            if tx == 0:
                acc = T.alloc_var("float32")
                acc = 0.0
                for i in T.serial(64):
                    acc += s[i]
                P[bx] = acc
            if sync:
                if skip_block is None:
                    T.sync_grid()
                elif bx != skip_block:
                    T.sync_grid()
            for i in T.Parallel(64):
                Y[bx * 64 + i] = X[bx * 64 + i] / P[(bx + 1) % nb]
    return k
