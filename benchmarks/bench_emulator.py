"""Emulator throughput: lane operations per second (one IR statement or expression evaluated for one
thread) and wall time, for the reference GEMM at 256^3 (128x128x32 tiles, 128 threads, 2 stages) and a
FlashAttention forward. Median of --repeat runs, all checks (races, bounds, uninitialised reads) on.
Usage: python benchmarks/bench_emulator.py [--repeat 5]"""
import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "python"))
import kernels  # noqa: E402
import tilelang  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    cases = []
    A, B = rng.standard_normal((256, 256)).astype(np.float16), rng.standard_normal((256, 256)).astype(np.float16)
    cases.append(("reference GEMM 256^3", kernels.matmul(256, 256, 256), [A, B, np.zeros((256, 256), np.float16)]))
    q = [rng.standard_normal((1, 2, 256, 64)).astype(np.float16) for _ in range(3)]
    cases.append(("FlashAttention 1x2x256x64 causal", kernels.flashattn(1, 2, 256, 64, True), q + [np.zeros_like(q[0])]))
    print(f"{'kernel':<36}{'wall ms':>10}{'lane ops':>14}{'M lane ops/s':>14}")
    for name, f, args in cases:
        k = tilelang.compile(f, target="cuda", execution_backend="emulator")
        ts = []
        for _ in range(a.repeat):
            t = time.perf_counter()
            k(*args)
            ts.append(time.perf_counter() - t)
        wall = statistics.median(ts)
        print(f"{name:<36}{wall * 1e3:>10.1f}{k.last_lane_ops:>14,}{k.last_lane_ops / wall / 1e6:>14.1f}")


if __name__ == "__main__":
    main()
