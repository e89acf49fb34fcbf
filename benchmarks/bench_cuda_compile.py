"""Compile latency of the CUDA backend, no GPU needed: the reference GEMM (128x128x32 tiles, 128
threads, 2 stages) from the DSL function to a cubin.

  cold    front end + passes + CUDA codegen + NVRTC (fresh, empty disk cache), in a new process
  cached  the same compile when the disk cache already holds the kernel, in a new process
  warm    the disk-cached compile again in an already-warm process (in-memory cache cleared)
  again   tilelang.compile of the unchanged function again in the same process (in-memory cache,
          keyed on the structural hash, target and options before any lowering; target < 0.5 ms)

Each figure is the median of --repeat runs. Targets (issue 4): cold < 1 s, cached < 20 ms.
Usage: python benchmarks/bench_cuda_compile.py [--repeat 5] [--arch sm_80]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
sys.path.insert(0, {tests!r})
import tilelang, kernels
t1 = time.perf_counter()
f = kernels.matmul(1024, 1024, 1024)
t2 = time.perf_counter()
k = tilelang.compile(f, target="cuda -arch={arch}")
t3 = time.perf_counter()
from tilelang.jit import clear_compile_memo
for _ in range(5):
    clear_compile_memo()  # the disk-cache path: lowering + codegen + cache lookup
    tilelang.compile(f, target="cuda -arch={arch}")
t4 = time.perf_counter()
tilelang.compile(f, target="cuda -arch={arch}")
memo = []
for _ in range(20):
    t = time.perf_counter()
    tilelang.compile(f, target="cuda -arch={arch}")  # an unchanged function again: the in-memory cache
    memo.append(time.perf_counter() - t)
m = k.compiled
print(json.dumps(dict(import_s=t1 - t0, parse_s=t2 - t1, compile_s=t3 - t2, warm_s=(t4 - t3) / 5,
                      memo_s=sorted(memo)[10],
                      from_cache=m.from_cache, lower_ms=m.lower_ms, codegen_ms=m.codegen_ms, nvrtc_ms=m.compile_ms)))
"""


def run(cache, arch):
    here = os.path.dirname(os.path.abspath(__file__))
    code = CHILD.format(tests=os.path.join(here, "..", "tests", "python"), arch=arch)
    env = dict(os.environ, TILELANG_CACHE_DIR=cache)
    env.pop("TILELANG_DISABLE_CACHE", None)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--arch", default="sm_80")
    a = ap.parse_args()
    cold, cached, warm, memo, parts = [], [], [], [], []
    for _ in range(a.repeat):
        with tempfile.TemporaryDirectory() as d:
            r = run(d, a.arch)
            assert not r["from_cache"]
            cold.append(r["parse_s"] + r["compile_s"])
            parts.append(r)
            r2 = run(d, a.arch)
            assert r2["from_cache"]
            cached.append(r2["parse_s"] + r2["compile_s"])
            warm.append(r2["warm_s"])
            memo.append(r2["memo_s"])
    med = statistics.median
    print(f"CUDA compile latency, reference GEMM 1024^3 (128x128x32, 2 stages), {a.arch}, median of {a.repeat}")
    print(f"{'phase':<44}{'ms':>10}{'target':>10}")
    print(f"{'cold: DSL -> cubin (empty cache)':<44}{med(cold) * 1e3:>10.1f}{'< 1000':>10}")
    print(f"{'  of which passes (lowering)':<44}{med(p['lower_ms'] for p in parts):>10.1f}")
    print(f"{'  of which CUDA codegen':<44}{med(p['codegen_ms'] for p in parts):>10.2f}")
    print(f"{'  of which NVRTC (ptx + cubin)':<44}{med(p['nvrtc_ms'] for p in parts):>10.1f}")
    print(f"{'cached: DSL -> cubin from disk, new process':<44}{med(cached) * 1e3:>10.1f}{'< 20':>10}")
    print(f"{'warm: disk-cached compile in a warm process':<44}{med(warm) * 1e3:>10.1f}")
    print(f"{'again: unchanged function, same process':<44}{med(memo) * 1e3:>10.3f}{'< 0.5':>10}")
    print(f"{'(python import of tilelang, not counted)':<44}{med(p['import_s'] for p in parts) * 1e3:>10.1f}")


if __name__ == "__main__":
    main()
