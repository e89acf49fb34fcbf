"""CPU GEMM and compile-latency benchmark: our tile GEMM against NumPy's matmul (OpenBLAS) in one
run. Prints one table. Not a test.

NumPy's OpenBLAS is slowed on these machines by OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE; this script
re-executes itself without them (for its own process only) so the comparison is against OpenBLAS
at its best.

    python benchmarks/bench_cpu_gemm.py [--quick]
"""
import os
import sys

if any(k in os.environ for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")):
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")}
    os.execve(sys.executable, [sys.executable] + sys.argv, env)

import statistics  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import tilelang  # noqa: E402
import tilelang.language as T  # noqa: E402


def matmul(M, N, K, BM, BN, BK, in_dtype, accum="float32", out_dtype="float32"):
    @T.prim_func
    def gemm(A: T.Tensor((M, K), in_dtype), B: T.Tensor((K, N), in_dtype), C: T.Tensor((M, N), out_dtype)):
        with T.Kernel(T.ceildiv(N, BN), T.ceildiv(M, BM), threads=128) as (bx, by):
            A_shared = T.alloc_shared((BM, BK), in_dtype)
            B_shared = T.alloc_shared((BK, BN), in_dtype)
            C_local = T.alloc_fragment((BM, BN), accum)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, BK), num_stages=2):
                T.copy(A[by * BM, k * BK], A_shared)
                T.copy(B[k * BK, bx * BN], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * BM, bx * BN])

    return gemm


def timed(fn):
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def paired(ref, fns, reps):
    """Times `ref` and each of `fns` in turn, `reps` rounds, so that load from other jobs hits both sides
    alike. Returns the median time of ref, and per fn (median time, median of the per-round ratios)."""
    ref()
    for f in fns:
        f()
    t_ref, t_fn = [], [[] for _ in fns]
    for _ in range(reps):
        t_ref.append(timed(ref))
        for i, f in enumerate(fns):
            t_fn[i].append(timed(f))
    ratios = [[r / t for r, t in zip(t_ref, ts)] for ts in t_fn]
    return statistics.median(t_ref), [(statistics.median(ts), statistics.median(rs)) for ts, rs in zip(t_fn, ratios)]


def blas_info():
    try:
        from threadpoolctl import threadpool_info

        for i in threadpool_info():
            if i.get("internal_api") == "openblas":
                return f"OpenBLAS {i.get('version')} ({i.get('architecture')}, {i.get('num_threads')} threads)"
    except ImportError:
        pass
    return "NumPy BLAS"


def main():
    quick = "--quick" in sys.argv
    rows = []
    sizes = [1024] if quick else [1024, 2048]
    configs = [(128, 128, 32), (128, 128, 128)]
    rng = np.random.default_rng(0)
    for n in sizes:
        reps = 15 if n <= 1024 else 7
        a = rng.standard_normal((n, n), dtype=np.float32)
        b = rng.standard_normal((n, n), dtype=np.float32)
        c = np.empty((n, n), np.float32)
        flops = 2.0 * n ** 3
        kernels = [tilelang.compile(matmul(n, n, n, bm, bn, bk, "float32"), target="cpu") for bm, bn, bk in configs]
        for (bm, bn, bk), k in zip(configs, kernels):
            k(a, b, c)
            err = np.abs(c - a @ b).max()
            assert err < 1e-2 * n ** 0.5, err
        t_np, res = paired(lambda: np.matmul(a, b, out=c), [lambda k=k: k(a, b, c) for k in kernels], reps)
        rows.append((f"fp32 {n}^3", "numpy.matmul", flops / t_np / 1e9, 1.0))
        for (bm, bn, bk), (t, ratio) in zip(configs, res):
            rows.append((f"fp32 {n}^3", f"tilelang cpu {bm}x{bn}x{bk}", flops / t / 1e9, ratio))
        a16, b16 = a.astype(np.float16), b.astype(np.float16)
        a32, b32 = a16.astype(np.float32), b16.astype(np.float32)
        k16 = tilelang.compile(matmul(n, n, n, 128, 128, 128, "float16"), target="cpu")
        t_np16, [(t16, r16)] = paired(lambda: np.matmul(a32, b32, out=c), [lambda: k16(a16, b16, c)], reps)
        rows.append((f"fp16 {n}^3", "numpy.matmul on fp32 copies", flops / t_np16 / 1e9, 1.0))
        rows.append((f"fp16 {n}^3", "tilelang cpu 128x128x128 fp16 in, fp32 acc", flops / t16 / 1e9, r16))

    # Compile latency of the reference GEMM: cold (empty cache) and from the disk cache.
    f = matmul(1024, 1024, 1024, 128, 128, 32, "float16", out_dtype="float16")
    with tempfile.TemporaryDirectory() as d:
        os.environ["TILELANG_CACHE_DIR"] = d
        t0 = time.perf_counter()
        tilelang.compile(f, target="cpu")
        cold = time.perf_counter() - t0
        warm = []
        for _ in range(5):
            t0 = time.perf_counter()
            kk = tilelang.compile(f, target="cpu")
            warm.append(time.perf_counter() - t0)
            assert kk.from_cache
    print(f"# {blas_info()}, {os.cpu_count()} cores")
    print("# medians; 'vs numpy' is the median of per-round ratios (numpy and ours timed alternately)")
    print(f"{'problem':<12} {'implementation':<48} {'GFLOP/s':>9} {'vs numpy':>9}")
    for p, impl, g, r in rows:
        print(f"{p:<12} {impl:<48} {g:>9.1f} {r:>8.2f}x")
    print(f"compile reference GEMM (cpu): cold {cold * 1e3:.0f} ms, from disk cache {statistics.median(warm) * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
