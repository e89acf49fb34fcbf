"""Wall time of one autotuning sweep with the local pool and with Ray, on this machine. Not a test.

The sweep: a float32 CPU GEMM over 16 tile configurations (three of them rejected by lowering alone),
each executor starting from empty kernel caches, the same timing options, one OpenMP thread per kernel
(OMP_NUM_THREADS=1, see docs/tools.md). Ray runs a local instance with as many CPUs as this machine has;
its start-up is reported apart from the sweep. Point RAY_ADDRESS at a cluster to time that instead.

    python benchmarks/bench_autotune_ray.py [--size 256] [--cpus N]
"""
import argparse
import os
import sys
import tempfile
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import tilelang  # noqa: E402
import tilelang.language as T  # noqa: E402


def gemm(M, N, K, block_M=64, block_N=64, block_K=32):
    @T.prim_func
    def gemm_kernel(A: T.Tensor((M, K), "float32"), B: T.Tensor((K, N), "float32"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_s = T.alloc_shared((block_M, block_K), "float32")
            B_s = T.alloc_shared((block_K, block_N), "float32")
            C_l = T.alloc_fragment((block_M, block_N), "float32")
            T.clear(C_l)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                T.copy(A[by * block_M, k * block_K], A_s)
                T.copy(B[k * block_K, bx * block_N], B_s)
                T.gemm(A_s, B_s, C_l)
            T.copy(C_l, C[by * block_M, bx * block_N])

    return gemm_kernel


def ref(A, B):
    return A.astype("float64") @ B.astype("float64")


CONFIGS = [{"block_M": m, "block_N": n, "block_K": k} for m in (32, 64, 128) for n in (32, 64) for k in (16, 32)] + \
    [{"block_M": 16, "block_N": 128}, {"block_M": 0}, {"block_M": 8192, "block_N": 8192},
     {"block_M": 16384, "block_N": 8192}]


def sweep(executor, size):
    tuned = tilelang.autotune(configs=CONFIGS, warmup=2, rep=20, ref_prog=ref, atol=1e-3, rtol=1e-3,
                              return_mode="min", use_cache=False, verbose=False, executor=executor)(
        tilelang.jit(out_idx=[2], target="cpu")(gemm))
    t0 = time.perf_counter()
    result = tuned(size, size, size)
    return time.perf_counter() - t0, result


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=256)
    ap.add_argument("--cpus", type=int, default=os.cpu_count())
    a = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["TILELANG_CACHE_DIR"] = os.path.join(tmp, "local")
        secs, local = sweep("local", a.size)
        rows.append(("local pool", secs, local))

        import ray

        # a fresh kernel cache for this machine's Ray workers and the driver (set before Ray starts them)
        os.environ["TILELANG_CACHE_DIR"] = os.path.join(tmp, "ray")
        t0 = time.perf_counter()
        if os.environ.get("RAY_ADDRESS"):
            ray.init()
        else:
            env = {"PYTHONPATH": os.pathsep.join(p for p in sys.path if p and os.path.isdir(p))}
            ray.init(num_cpus=a.cpus, include_dashboard=False, log_to_driver=False, runtime_env={"env_vars": env})
        start = time.perf_counter() - t0
        secs, on_ray = sweep("ray", a.size)
        rows.append(("ray", secs, on_ray))
        ray.shutdown()

    print(f"autotuning a {a.size}^3 float32 CPU GEMM over {len(CONFIGS)} configurations "
          f"({os.cpu_count()} cores here; Ray with {a.cpus} CPUs, start-up {start:.1f} s not included)")
    print(f"{'executor':<12}{'wall s':>8}  {'valid':>5}  {'pruned':>6}  best config (ms)")
    for name, secs, r in rows:
        valid = sum(c.ok for c in r.results)
        print(f"{name:<12}{secs:>8.1f}  {valid:>5}  {getattr(r, 'pruned', 0):>6}  {r.config} ({r.latency:.3f})")


if __name__ == "__main__":
    main()
