"""Emulator speed, all checks on (races, bounds, uninitialised reads; bank accounting in the IR emulator): the
reference fp16 GEMM (128x128x32 tiles, 128 threads, 2 stages, sm_80) at n^3 in the thread-level IR emulator and in
the PTX emulator (execution_backend="ptx": the PTX NVRTC made of the same kernel), against Triton's interpreter
(TRITON_INTERPRET=1) running a plain Triton GEMM with the same tiles on the same machine in the same run, and a
FlashAttention forward. Runs alternate between the two (the machine's load varies); medians of --repeat runs
each; both results are checked against a float64 NumPy product of the same seeded inputs.

Usage: python benchmarks/bench_emulator.py [--repeat 5] [--sizes 128,256,512,1024] [--no-scaling]
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
    """Medians of `repeat` runs each of the thread-level emulator, the PTX emulator (the PTX NVRTC made of the
    same kernel) and Triton's interpreter, alternating."""
    rng = np.random.default_rng(n)  # the Triton side draws the same inputs
    a = rng.standard_normal((n, n)).astype(np.float16)
    b = rng.standard_normal((n, n)).astype(np.float16)
    ks = {be: tilelang.compile(kernels.matmul(n, n, n, BM, BN, BK), target="cuda -arch=sm_80", execution_backend=be)
          for be in ("emulator", "ptx")}
    times = {"emulator": [], "ptx": [], "triton": []}
    errs, terr = {}, None
    if tri:
        tri.run(n)  # not timed: Triton's first launch of a size includes its tracing
    ref = a.astype(np.float64) @ b.astype(np.float64)
    for _ in range(repeat):
        for be, k in ks.items():
            c = np.zeros((n, n), np.float16)
            t = time.perf_counter()
            k(a, b, c)
            times[be].append(time.perf_counter() - t)
            errs[be] = float(np.abs(c - ref).max())
        if tri:
            r = tri.run(n)
            times["triton"].append(r["s"])
            terr = r["max_abs_err"]
    med = {be: (statistics.median(v) if v else None) for be, v in times.items()}
    return med, errs, terr


def scaling(repeat):
    """Cost per unit of work: the GEMM at 512^3, 512x512x1024, 1024x1024x512 and 1024^3 in each emulator, the
    shapes interleaved (round robin, `repeat` rounds: a machine whose speed drifts slows them all alike), the
    fastest run of each, in ms per 512^3 of multiply-adds. Linear scaling is a flat row."""
    shapes = [(512, 512, 512), (512, 512, 1024), (1024, 1024, 512), (1024, 1024, 1024)]
    print("cost per 512^3 of work (ms; fastest of interleaved runs):")
    print(f"{'emulator':>10}" + "".join(f"{f'{m}x{n}x{k}':>16}" for m, n, k in shapes) + f"{'largest/smallest':>18}")
    for backend in ("emulator", "ptx"):
        rng = np.random.default_rng(1)
        runs = []
        for m, n, k in shapes:
            kern = tilelang.compile(kernels.matmul(m, n, k, BM, BN, BK, num_stages=2), target="cuda -arch=sm_80",
                                    execution_backend=backend)
            a = rng.standard_normal((m, k)).astype(np.float16)
            b = rng.standard_normal((k, n)).astype(np.float16)
            c = np.zeros((m, n), np.float16)
            kern(a, b, c)  # warm
            runs.append((kern, a, b, c, m * n * k / 512 ** 3, []))
        for _ in range(repeat):
            for kern, a, b, c, _, ts in runs:
                t = time.perf_counter()
                kern(a, b, c)
                ts.append(time.perf_counter() - t)
        unit = [min(ts) * 1e3 / w for _, _, _, _, w, ts in runs]
        print(f"{'IR' if backend == 'emulator' else 'PTX':>10}" + "".join(f"{u:>16.1f}" for u in unit) +
              f"{unit[-1] / unit[0]:>18.2f}", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--sizes", default="128,256,512,1024")
    ap.add_argument("--triton-python", default=None)
    ap.add_argument("--no-scaling", action="store_true", help="skip the cost-per-work table")
    a = ap.parse_args()
    sizes = [int(s) for s in a.sizes.split(",")]
    print(f"CPU: {cpu_name()}; medians of {a.repeat} alternating runs; fp16 GEMM n^3, tiles {BM}x{BN}x{BK}")
    tri = TritonSide(a.triton_python) if a.triton_python else None
    print(f"{'n':>6}{'IR emu ms':>11}{'PTX emu ms':>12}{'Triton interp ms':>18}{'Triton/IR':>11}{'Triton/PTX':>12}"
          f"{'err IR / PTX / Triton':>26}")
    prev = None
    for n in sizes:
        med, errs, terr = gemm_case(n, a.repeat, tri)
        ir, px, tr = med["emulator"], med["ptx"], med["triton"]
        tcol = f"{tr * 1e3:>18.1f}{tr / ir:>11.2f}{tr / px:>12.2f}" if tr else f"{'-':>18}{'-':>11}{'-':>12}"
        ecol = f"{errs['emulator']:.3g} / {errs['ptx']:.3g} / " + (f"{terr:.3g}" if tr else "-")
        print(f"{n:>6}{ir * 1e3:>11.1f}{px * 1e3:>12.1f}{tcol}{ecol:>26}", flush=True)
        if prev:
            w = (n / prev[0]) ** 3
            print(f"{'':>6}  x{w:.0f} the work: IR emulator time x{ir / prev[1]:.2f}, PTX emulator x{px / prev[2]:.2f}")
        prev = (n, ir, px)
    if tri:
        tri.close()
    if not a.no_scaling:
        scaling(a.repeat)
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
