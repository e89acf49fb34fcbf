"""CPU benchmark: our tile GEMM (each micro-kernel family the host runs), softmax and RMSNorm against
NumPy (OpenBLAS) in one run, plus compile latency. Prints one table. Not a test.

Timing: each implementation runs in blocks of back-to-back calls and the blocks of all implementations
take turns, each after a short idle (SETTLE); a row's figure is the median block. (Alternating single
calls makes both libraries' idle OpenMP / OpenBLAS threads spin against each other and skews the ratio.) GFLOP/s are also given as a
percentage of this machine's FMA peak, measured with a register-only FMA loop on all cores for the
vector width of the row's ISA.

OPENBLAS_* variables (OPENBLAS_CORETYPE, OPENBLAS_L2_SIZE, ...) slow OpenBLAS down on these machines;
the script re-executes itself without them, so NumPy is OpenBLAS at its best. Only the
"OpenBLAS Haswell kernel" rows run NumPy in a child process with OPENBLAS_CORETYPE=Haswell: the
fair opponent of our AVX2 kernels on a machine with AVX-512.

    python benchmarks/bench_cpu_gemm.py [--quick]
"""
import os
import sys

if any(k.startswith("OPENBLAS_") for k in os.environ):
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENBLAS_")}
    os.execve(sys.executable, [sys.executable] + sys.argv, env)

import ctypes  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402

import tilelang  # noqa: E402
import tilelang.language as T  # noqa: E402
from tilelang.jit import clear_compile_memo  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "python"))
import kernels as K  # noqa: E402


def matmul(M, N, K_, BM, BN, BK, in_dtype, accum="float32", out_dtype="float32"):
    @T.prim_func
    def gemm(A: T.Tensor((M, K_), in_dtype), B: T.Tensor((K_, N), in_dtype), C: T.Tensor((M, N), out_dtype)):
        with T.Kernel(T.ceildiv(N, BN), T.ceildiv(M, BM), threads=128) as (bx, by):
            A_shared = T.alloc_shared((BM, BK), in_dtype)
            B_shared = T.alloc_shared((BK, BN), in_dtype)
            C_local = T.alloc_fragment((BM, BN), accum)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K_, BK), num_stages=2):
                T.copy(A[by * BM, k * BK], A_shared)
                T.copy(B[k * BK, bx * BN], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * BM, bx * BN])

    return gemm


# Seconds of idle before each block: OpenBLAS's and OpenMP's worker threads keep spinning for a while
# after a call, and a block started meanwhile shares the cores with them (measured: the first
# implementation after NumPy's block lost 10-25%). BENCH_SETTLE overrides it.
SETTLE = float(os.environ.get("BENCH_SETTLE", "0.3"))


def blocks(fns, calls, rounds, remote=()):
    """Median seconds per call of each fn: `calls` back-to-back calls per block, blocks in turn; each
    of `remote` (HaswellBlas) takes its turn too and is reported after the fns."""
    for f in fns:
        f()
    per = [[] for _ in range(len(fns) + len(remote))]
    for _ in range(rounds):
        for i, f in enumerate(fns):
            time.sleep(SETTLE)
            t = time.perf_counter()
            for _ in range(calls):
                f()
            per[i].append((time.perf_counter() - t) / calls)
        for i, r in enumerate(remote):
            time.sleep(SETTLE)
            per[len(fns) + i].append(r.block())
    return [statistics.median(p) for p in per]


PEAK_SRC = r"""
#include <immintrin.h>
#include <omp.h>
#include <chrono>
// GFLOP/s of independent FMA chains (enough to cover the FMA latency on every core) on all threads.
extern "C" double fma_peak(int width) {
  const long iters = 20000000;
  double best = 0;
  for (int rep = 0; rep < 3; ++rep) {
    auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel
    {
      if (width == 16) {
#ifdef __AVX512F__
        __m512 a[12], b = _mm512_set1_ps(1e-7f), c = _mm512_set1_ps(0.999999f);
        for (int i = 0; i < 12; ++i) a[i] = _mm512_set1_ps(float(i));
        for (long n = 0; n < iters / 4; ++n)
#pragma GCC unroll 12
          for (int i = 0; i < 12; ++i) a[i] = _mm512_fmadd_ps(a[i], c, b);
        float s = 0;
        for (int i = 0; i < 12; ++i) s += _mm512_reduce_add_ps(a[i]);
        if (s == 1234.5f) __builtin_trap();
#endif
      } else {
        __m256 a[12], b = _mm256_set1_ps(1e-7f), c = _mm256_set1_ps(0.999999f);
        for (int i = 0; i < 12; ++i) a[i] = _mm256_set1_ps(float(i));
        for (long n = 0; n < iters / 4; ++n)
#pragma GCC unroll 12
          for (int i = 0; i < 12; ++i) a[i] = _mm256_fmadd_ps(a[i], c, b);
        alignas(32) float v[8];
        __m256 s = a[0];
        for (int i = 1; i < 12; ++i) s = _mm256_add_ps(s, a[i]);
        _mm256_store_ps(v, s);
        if (v[0] == 1234.5f) __builtin_trap();
      }
    }
    double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    double flops = 2.0 * width * 12 * (iters / 4) * omp_get_max_threads();
    if (flops / dt > best) best = flops / dt;
  }
  return best / 1e9;
}
"""


def fma_peaks(features):
    """Measured all-core fp32 FMA peak in GFLOP/s per vector width: {8: ymm, 16: zmm}."""
    if "fma" not in features:
        return {}
    with tempfile.TemporaryDirectory() as d:
        src, lib = os.path.join(d, "peak.cc"), os.path.join(d, "peak.so")
        with open(src, "w") as f:
            f.write(PEAK_SRC)
        flags = ["-mavx2", "-mfma"] + (["-mavx512f"] if "avx512f" in features else [])
        subprocess.run(["g++", "-O2", "-fopenmp", "-fPIC", "-shared", *flags, src, "-o", lib], check=True)
        fn = ctypes.CDLL(lib).fma_peak
        fn.restype, fn.argtypes = ctypes.c_double, [ctypes.c_int]
        return {w: fn(w) for w in ([8, 16] if "avx512f" in features else [8])}


HASWELL_CHILD = r"""
import sys, time, numpy as np
n, calls = int(sys.argv[1]), int(sys.argv[2])
rng = np.random.default_rng(0)
a = rng.standard_normal((n, n), dtype=np.float32); b = rng.standard_normal((n, n), dtype=np.float32)
c = np.empty((n, n), np.float32)
np.matmul(a, b, out=c)
for line in sys.stdin:  # one block of back-to-back calls per request, so blocks interleave with the parent's
    t = time.perf_counter()
    for _ in range(calls):
        np.matmul(a, b, out=c)
    print((time.perf_counter() - t) / calls, flush=True)
"""


class HaswellBlas:
    """NumPy with OpenBLAS forced to its Haswell (AVX2) kernel, in a child process; call() runs one
    block of `calls` matmuls there and returns seconds per call, so it can take turns in blocks()."""

    def __init__(self, n, calls):
        env = dict(os.environ, OPENBLAS_CORETYPE="Haswell")
        self.p = subprocess.Popen([sys.executable, "-c", HASWELL_CHILD, str(n), str(calls)], env=env,
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def block(self):
        self.p.stdin.write("go\n")
        self.p.stdin.flush()
        return float(self.p.stdout.readline())

    def close(self):
        self.p.stdin.close()
        self.p.wait()


def blas_info():
    try:
        from threadpoolctl import threadpool_info

        for i in threadpool_info():
            if i.get("internal_api") == "openblas":
                return f"OpenBLAS {i.get('version')} ({i.get('architecture')}, {i.get('num_threads')} threads)"
    except ImportError:
        pass
    try:  # NumPy >= 1.25: the build's BLAS (the kernel OpenBLAS picks at run time is not shown here)
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        return f"NumPy BLAS {blas.get('name')} {blas.get('version')}"
    except Exception:  # noqa: BLE001 - older NumPy
        return "NumPy BLAS"


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def families(host):
    """(label, target) of each micro-kernel family the host runs, best first."""
    out = []
    if "avx512f" in host:
        out.append(("avx512", "cpu"))
    if {"avx2", "fma"} <= host:
        out.append(("avx2", "cpu -mattr=-avx512f" if "avx512f" in host else "cpu"))
    return out or [("portable", "cpu")]


def main():
    quick = "--quick" in sys.argv
    host = set(tilelang.Target("cpu").features)
    peaks = fma_peaks(host)
    width = {"avx512": 16, "avx2": 8}
    rows = []  # (problem, implementation, GFLOP/s or None, % of peak or None, ratio, opponent)

    def add(problem, impl, gflops, ratio, vs, isa=None):
        pct = 100 * gflops / peaks[width[isa]] if gflops and isa in width and width[isa] in peaks else None
        rows.append((problem, impl, gflops, pct, ratio, vs))

    rng = np.random.default_rng(0)
    fams = families(host)
    for n in [1024] if quick else [1024, 2048]:
        calls, rounds = (8, 5) if n <= 1024 else (2, 5)
        a = rng.standard_normal((n, n), dtype=np.float32)
        b = rng.standard_normal((n, n), dtype=np.float32)
        c = np.empty((n, n), np.float32)
        flops = 2.0 * n ** 3
        impls = [("numpy.matmul (OpenBLAS)", None, None)]
        for label, target in fams:
            for bm, bn, bk in [(128, 128, 32), (128, 128, 128)]:
                k = tilelang.compile(matmul(n, n, n, bm, bn, bk, "float32"), target=target)
                k(a, b, c)
                err = np.abs(c - a @ b).max()
                assert err < 1e-2 * n ** 0.5, err
                impls.append((f"tilelang {label} {bm}x{bn}x{bk}", label, k))
        fns = [lambda: np.matmul(a, b, out=c)] + [lambda k=k: k(a, b, c) for _, _, k in impls[1:]]
        haswell = [HaswellBlas(n, calls)] if "avx2" in dict(fams) else []
        ts = blocks(fns, calls, rounds, haswell)
        for h in haswell:
            h.close()
        t_np = ts[0]
        add(f"fp32 {n}^3", impls[0][0], flops / t_np / 1e9, 1.0, "numpy")
        for (name, label, _), t in zip(impls[1:], ts[1:len(impls)]):
            add(f"fp32 {n}^3", name, flops / t / 1e9, t_np / t, "numpy", label)
        if haswell:
            t_h = ts[-1]
            add(f"fp32 {n}^3", "numpy.matmul, OpenBLAS Haswell kernel", flops / t_h / 1e9, 1.0, "haswell")
            for (name, label, _), t in zip(impls[1:], ts[1:len(impls)]):
                if label == "avx2":
                    add(f"fp32 {n}^3", name + " vs Haswell", flops / t / 1e9, t_h / t, "haswell", label)
        # Half precision in, fp32 accumulate, against OpenBLAS fp32 on the same values.
        best = fams[0][0]
        for dt, npt in [("float16", np.float16), ("bfloat16", ml_dtypes.bfloat16)]:
            ah, bh = a.astype(npt), b.astype(npt)
            kh = tilelang.compile(matmul(n, n, n, 128, 128, 128, dt), target="cpu")
            t32, th = blocks([lambda: np.matmul(a, b, out=c), lambda: kh(ah, bh, c)], calls, rounds)
            short = dt.replace("bfloat", "bf").replace("float", "fp")
            add(f"{short} {n}^3", f"tilelang {best} 128x128x128 {dt} in, fp32 acc", flops / th / 1e9, t32 / th,
                "numpy fp32", best)

    # Softmax and RMSNorm over 4096 x 4096 fp32 (memory-bound: GB/s of one read + one write).
    m = 4096
    x = rng.standard_normal((m, m), dtype=np.float32)
    y = np.empty_like(x)

    def np_softmax():
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    def np_rmsnorm():
        return x / np.sqrt(np.mean(x * x, axis=1, keepdims=True) + 1e-12)

    for name, kern, ref in [("softmax", K.softmax(m, m, 8), np_softmax), ("rmsnorm", K.rms_norm(m, m, 8), np_rmsnorm)]:
        k = tilelang.compile(kern, target="cpu")
        k(x, y)
        np.testing.assert_allclose(y, ref(), rtol=1e-4, atol=1e-6)
        t_np, t_tl = blocks([ref, lambda k=k: k(x, y)], 3, 5)
        gbs = lambda t: 2 * x.nbytes / t / 1e9  # noqa: E731
        rows.append((f"{name} {m}^2", "numpy", None, None, 1.0, f"{gbs(t_np):.1f} GB/s"))
        rows.append((f"{name} {m}^2", "tilelang cpu (8 rows per block)", None, None, t_np / t_tl,
                     f"{gbs(t_tl):.1f} GB/s"))

    # Compile latency of the reference GEMM: cold (empty cache) and from the disk cache.
    f = matmul(1024, 1024, 1024, 128, 128, 32, "float16", out_dtype="float16")
    with tempfile.TemporaryDirectory() as d:
        os.environ["TILELANG_CACHE_DIR"] = d
        clear_compile_memo()  # else a second compile is an in-process lookup, not the disk cache
        t0 = time.perf_counter()
        tilelang.compile(f, target="cpu")
        cold = time.perf_counter() - t0
        warm = []
        for _ in range(5):
            clear_compile_memo()
            t0 = time.perf_counter()
            kk = tilelang.compile(f, target="cpu")
            warm.append(time.perf_counter() - t0)
            assert kk.from_cache
    print(f"# {cpu_model()}, {os.cpu_count()} cores; {blas_info()}; host features: {' '.join(sorted(host))}")
    print("# measured FMA peak (all cores): " +
          ", ".join(f"{'zmm' if w == 16 else 'ymm'} {g:.0f} GFLOP/s" for w, g in sorted(peaks.items())))
    print("# medians of blocks of back-to-back calls; 'ratio' = opponent time / our time (> 1: we are faster)")
    print(f"{'problem':<13} {'implementation':<46} {'GFLOP/s':>8} {'% peak':>7} {'ratio':>7}  vs")
    for p, impl, g, pct, r, vs in rows:
        gs = f"{g:8.1f}" if g is not None else f"{'':>8}"
        ps = f"{pct:6.0f}%" if pct is not None else f"{'':>7}"
        print(f"{p:<13} {impl:<46} {gs} {ps} {r:6.2f}x  {vs}")
    print(f"compile reference GEMM (cpu): cold {cold * 1e3:.0f} ms, "
          f"from disk cache {statistics.median(warm) * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
