"""OpenCL on PoCL against the CPU target and NumPy, in one run: the reference GEMM (fp32, the demo's
128x128x32 tiles, 128 threads, 2 stages) and the row softmax. Prints one table of medians. Not a test.

  opencl kernel   the kernel's device time from OpenCL profiling events (no host<->device copies)
  opencl call     a whole kernel(...) call: buffers created, inputs copied in, outputs copied back
  cpu             the same DSL kernel compiled for target "cpu" (C++ with OpenMP over blocks)
  numpy           a @ b (OpenBLAS) / the softmax written in NumPy

NumPy's OpenBLAS is slowed on these machines by OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE; this script
re-executes itself without them (for its own process only).

    python benchmarks/bench_opencl.py [--quick]
"""
import os
import sys

if any(k in os.environ for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")):
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")}
    os.execve(sys.executable, [sys.executable] + sys.argv, env)

import platform  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "python"))
import kernels  # noqa: E402
import tilelang  # noqa: E402
from tilelang.jit import opencl as jit_opencl  # noqa: E402


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def median_ms(fn, reps):
    fn()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


def main():
    quick = "--quick" in sys.argv
    reps = 3 if quick else 10
    rng = np.random.default_rng(0)
    n = 256 if quick else 512
    rows, cols = (1024, 256) if quick else (4096, 512)
    dev = jit_opencl.device()
    print(f"CPU: {cpu_name()} ({os.cpu_count()} cores visible)")
    print(f"OpenCL: {dev['platform']} / {dev['name']} / {dev['version']}; "
          f"POCL_WORK_GROUP_METHOD={os.environ.get('POCL_WORK_GROUP_METHOD', '(PoCL default)')}")
    results = []

    # the reference GEMM, fp32
    a = rng.standard_normal((n, n)).astype(np.float32)
    b = rng.standard_normal((n, n)).astype(np.float32)
    func = kernels.matmul(n, n, n, 128, 128, 32, dtype="float32", num_stages=2)
    t = time.perf_counter()
    k_cl = tilelang.compile(func, target="opencl")
    compile_cl = time.perf_counter() - t
    k_cpu = tilelang.compile(func, target="cpu")
    c = np.zeros((n, n), np.float32)
    k_cl(a, b, c)
    err = float(np.abs(c - a.astype(np.float64) @ b).max())
    ms_kernel = k_cl.get_profiler().do_bench(input_tensors=[a, b, c], n_warmup=1, n_repeat=reps)
    ms_call = median_ms(lambda: k_cl(a, b, c), reps)
    ms_cpu = median_ms(lambda: k_cpu(a, b, c), reps)
    ms_np = median_ms(lambda: a @ b, reps)
    flop = 2.0 * n ** 3
    results.append((f"GEMM fp32 {n}^3", ms_kernel, ms_call, ms_cpu, ms_np, flop, err, compile_cl))

    # softmax
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    y = np.zeros_like(x)
    sfunc = kernels.softmax(rows, cols, 8)
    t = time.perf_counter()
    s_cl = tilelang.compile(sfunc, target="opencl")
    compile_s = time.perf_counter() - t
    s_cpu = tilelang.compile(sfunc, target="cpu")

    def np_softmax():
        e = np.exp(x - x.max(1, keepdims=True))
        return e / e.sum(1, keepdims=True)

    s_cl(x, y)
    err_s = float(np.abs(y - np_softmax()).max())
    ms_kernel_s = s_cl.get_profiler().do_bench(input_tensors=[x, y], n_warmup=1, n_repeat=reps)
    ms_call_s = median_ms(lambda: s_cl(x, y), reps)
    ms_cpu_s = median_ms(lambda: s_cpu(x, y), reps)
    ms_np_s = median_ms(np_softmax, reps)
    results.append((f"softmax {rows}x{cols}", ms_kernel_s, ms_call_s, ms_cpu_s, ms_np_s, None, err_s, compile_s))

    print()
    hdr = f"{'kernel':<20}{'opencl kernel':>15}{'opencl call':>13}{'cpu target':>12}{'numpy':>10}" \
          f"{'max |err|':>11}{'cl compile':>12}"
    print(hdr)
    print("-" * len(hdr))
    for name, mk, mc, mcpu, mnp, flop, err, comp in results:
        print(f"{name:<20}{mk:>12.2f} ms{mc:>10.2f} ms{mcpu:>9.2f} ms{mnp:>7.2f} ms{err:>11.1e}{comp:>10.2f} s")
        if flop:
            print(f"{'  GFLOP/s':<20}{flop / mk / 1e6:>15.1f}{flop / mc / 1e6:>13.1f}{flop / mcpu / 1e6:>12.1f}"
                  f"{flop / mnp / 1e6:>10.1f}")
    print("\nmedians of", reps, "runs; 'cl compile' is the first tilelang.compile (lowering + PoCL build, or the disk "
          "cache)")


if __name__ == "__main__":
    main()
