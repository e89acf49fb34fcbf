"""Emulator speed, all checks on (races, bounds, uninitialised reads, bank accounting): the reference fp16 GEMM
(128x128x32 tiles, 128 threads, 2 stages, sm_80 thread-level IR) at n^3 against Triton's interpreter
(TRITON_INTERPRET=1) running a plain Triton GEMM with the same tiles on the same machine in the same run, and a
FlashAttention forward. Runs alternate between the two (the machine's load varies); medians of --repeat runs
each; both results are checked against a float64 NumPy product of the same seeded inputs.

Usage: python benchmarks/bench_emulator.py [--repeat 5] [--sizes 128,256,512,1024]
                                           [--triton-python PATH]   (a Python with `pip install triton numpy`)
Without --triton-python only our column is printed. OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE are unset for this
process and the Triton one (they slow NumPy, which Triton's interpreter computes with)."""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

for _v in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
    os.environ.pop(_v, None)

import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "python"))
import kernels  # noqa: E402
import tilelang  # noqa: E402

BM, BN, BK = 128, 128, 32


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


class TritonSide:
    """Triton's interpreter in its own process (the Python given), serving one timed run per request."""

    def __init__(self, python):
        self.p = subprocess.Popen([python, os.path.join(HERE, "emulator_triton_side.py")], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True, env=dict(os.environ))

    def run(self, n):
        self.p.stdin.write(json.dumps({"n": n, "bm": BM, "bn": BN, "bk": BK}) + "\n")
        self.p.stdin.flush()
        line = self.p.stdout.readline()
        if not line:
            sys.exit("the Triton side stopped (its error is above)")
        return json.loads(line)

    def close(self):
        self.p.stdin.close()
        self.p.wait()


def gemm_case(n, repeat, tri):
    """Medians of `repeat` runs each, ours and Triton's alternating."""
    rng = np.random.default_rng(n)  # the Triton side draws the same inputs
    a = rng.standard_normal((n, n)).astype(np.float16)
    b = rng.standard_normal((n, n)).astype(np.float16)
    c = np.zeros((n, n), np.float16)
    k = tilelang.compile(kernels.matmul(n, n, n, BM, BN, BK), target="cuda", execution_backend="emulator")
    ours, theirs, terr = [], [], None
    if tri:
        tri.run(n)  # not timed: Triton's first launch of a size includes its tracing
    for _ in range(repeat):
        t = time.perf_counter()
        k(a, b, c)
        ours.append(time.perf_counter() - t)
        if tri:
            r = tri.run(n)
            theirs.append(r["s"])
            terr = r["max_abs_err"]
    err = float(np.abs(c - a.astype(np.float64) @ b.astype(np.float64)).max())
    return statistics.median(ours), err, k.last_lane_ops, (statistics.median(theirs) if theirs else None), terr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--sizes", default="128,256,512,1024")
    ap.add_argument("--triton-python", default=None)
    a = ap.parse_args()
    sizes = [int(s) for s in a.sizes.split(",")]
    print(f"CPU: {cpu_name()}; medians of {a.repeat} alternating runs; fp16 GEMM n^3, tiles {BM}x{BN}x{BK}")
    tri = TritonSide(a.triton_python) if a.triton_python else None
    print(f"{'n':>6}{'ours ms':>11}{'Triton interp ms':>18}{'Triton/ours':>13}{'M lane ops/s':>14}"
          f"{'ours err':>10}{'Triton err':>12}")
    prev = None
    for n in sizes:
        wall, err, ops, twall, terr = gemm_case(n, a.repeat, tri)
        tcol = f"{twall * 1e3:>18.1f}{twall / wall:>13.2f}" if twall else f"{'-':>18}{'-':>13}"
        tecol = f"{terr:>12.3g}" if twall else f"{'-':>12}"
        print(f"{n:>6}{wall * 1e3:>11.1f}{tcol}{ops / wall / 1e6:>14.1f}{err:>10.3g}{tecol}", flush=True)
        if prev:
            print(f"{'':>6}  ours: time x{wall / prev[1]:.2f} for x{(n / prev[0]) ** 3:.0f} the work")
        prev = (n, wall)
    if tri:
        tri.close()
    rng = np.random.default_rng(0)
    q = [rng.standard_normal((1, 2, 256, 64)).astype(np.float16) for _ in range(3)]
    k = tilelang.compile(kernels.flashattn(1, 2, 256, 64, True), target="cuda", execution_backend="emulator")
    o = np.zeros_like(q[0])
    ts = []
    for _ in range(a.repeat):
        t = time.perf_counter()
        k(*q, o)
        ts.append(time.perf_counter() - t)
    wall = statistics.median(ts)
    print(f"FlashAttention 1x2x256x64 causal: {wall * 1e3:.1f} ms, {k.last_lane_ops / wall / 1e6:.1f} M lane ops/s")


if __name__ == "__main__":
    main()
