"""Static figures of the kernel zoo (examples/zoo) at DeepSeek-scale sizes, no GPU needed: each kernel compiled
for sm_80 and sm_90a (NVRTC, ptxas), then registers, spills, shared memory, the matrix instruction the compiler
chose, and the SASS of the main loop per iteration (cuobjdump; benchmarks/bench_cuda_sass.py's counting), with
the compile time. Numerics are tests/python/test_zoo.py's (small sizes, CPU target and emulator).

Sizes (DeepSeek-V3 / V3.2 where they apply): GEMMs 4096^3 (persistent: 132 blocks, one per H100 SM; stream-K:
132 blocks); w4a16 M = N = K = 4096 with a scale per 64 weights; int8 4096^3; block-sparse attention batch 1,
32 heads, 4096 tokens, head dim 128, 64 x 64 blocks; FlashAttention forward and backward batch 1, 32 query heads over
8 K/V heads, 4096 tokens, head dims 128 (causal) and 64; MLA decode batch 64, 128 heads, latent 512 + rope 64,
64-token pages, 4096 tokens per sequence; sparse MLA forward 4096 queries over 8192 keys, 128 heads, top-k 2048.
Usage: python benchmarks/bench_zoo.py [--arch sm_80 sm_90a] [--only NAME]
"""
import argparse
import os
import platform
import re
import sys
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

import tilelang  # noqa: E402
from bench_cuda_sass import analyse, disassemble, tool_dir  # noqa: E402
from examples.zoo import attention, dequant, flash_attention, gemm, mla  # noqa: E402


def cases():
    n = 4096
    return [
        ("persistent GEMM fp16 4096^3 (132 blocks)", lambda: gemm.persistent_gemm(n, n, n, 132), [(128, 128, 32)]),
        ("stream-K GEMM fp16 4096^3 (132 blocks)", lambda: gemm.stream_k_gemm(n, n, n, 132), [(128, 128, 32)]),
        ("w4a16 int4 4096^3, group 64", lambda: dequant.w4a16_gemm(n, n, n, 64, "int4"), [(64, 64, 64)]),
        ("w4a16 fp4 e2m1 4096^3, group 64", lambda: dequant.w4a16_gemm(n, n, n, 64, "fp4"), [(64, 64, 64)]),
        ("int8 x int8 4096^3", lambda: dequant.int8_gemm(n, n, n), [(64, 64, 64)]),
        ("block-sparse attention (mask) h32 s4096 d128", lambda: attention.block_sparse_attention(
            1, 32, n, 128, sparsity="mask"), [(64, 64, 128), (64, 128, 64)]),
        ("block-sparse attention (index) h32 s4096 d128", lambda: attention.block_sparse_attention(
            1, 32, n, 128, sparsity="index"), [(64, 64, 128), (64, 128, 64)]),
        ("FlashAttention fwd GQA h32/8 s4096 d128 causal", lambda: flash_attention.forward(1, 32, 4, n, 128, True),
         [(64, 64, 128), (64, 128, 64)]),
        ("FlashAttention bwd GQA h32/8 s4096 d128 causal, 256 thr", lambda: flash_attention.backward(1, 32, 4, n, 128, True, threads=256),
         [(64, 64, 128), (64, 128, 64), (64, 64, 128), (64, 128, 64), (64, 128, 64)]),
        ("FlashAttention fwd GQA h32/8 s4096 d64", lambda: flash_attention.forward(1, 32, 4, n, 64, False),
         [(64, 64, 64), (64, 64, 64)]),
        ("FlashAttention bwd GQA h32/8 s4096 d64", lambda: flash_attention.backward(1, 32, 4, n, 64, False),
         [(64, 64, 64), (64, 64, 64), (64, 64, 64), (64, 64, 64), (64, 64, 64)]),
        ("MLA decode paged b64 h128 512+64", lambda: mla.mla_decode(64, 128, 64, 64),
         [(64, 64, 512), (64, 64, 64), (64, 512, 64)]),
        ("sparse MLA fwd s4096 kv8192 h128 topk2048", lambda: mla.sparse_mla(1, n, 8192, 128, 2048),
         [(64, 64, 512), (64, 64, 64), (64, 512, 64)]),
    ]


# Recorded: SASS per main-loop iteration of the same programs (examples/zoo, these sizes) compiled by TileLang
# 0.1.15 (PyPI; its own nvcc flags, CUDA 13; the cubin its compile passes to nvcc) and counted by analyse() here,
# 2026-12-05 (the harness is described in docs/zoo.md). "error": TileLang stops with an internal error.
TILELANG_0_1_15 = {
    "persistent GEMM": {"sm_80": "151", "sm_90a": "34"},
    "stream-K GEMM": {"sm_80": "116", "sm_90a": "89"},
    "w4a16 int4": {"sm_80": "524", "sm_90a": "514"},
    "w4a16 fp4": {"sm_80": "2048", "sm_90a": "2035"},
    "int8 x int8": {"sm_80": "81", "sm_90a": "32.5"},
    "block-sparse attention (mask)": {"sm_80": "755", "sm_90a": "525"},
    "block-sparse attention (index)": {"sm_80": "742", "sm_90a": "446"},
    "FlashAttention fwd GQA h32/8 s4096 d128": {"sm_80": "766", "sm_90a": "511"},
    "FlashAttention bwd GQA h32/8 s4096 d128": {"sm_80": "678", "sm_90a": "596"},
    "FlashAttention fwd GQA h32/8 s4096 d64": {"sm_80": "498", "sm_90a": "393"},
    "FlashAttention bwd GQA h32/8 s4096 d64": {"sm_80": "744", "sm_90a": "569"},
    "MLA decode": {"sm_80": "1528", "sm_90a": "751"},
    "sparse MLA": {"sm_80": "error", "sm_90a": "1201"},
}


def tilelang_figure(name, arch):
    return next((v.get(arch, "-") for k, v in TILELANG_0_1_15.items() if name.startswith(k)), "-")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--arch", nargs="*", default=["sm_80", "sm_90a"])
    ap.add_argument("--only", default=None)
    args = ap.parse_args()
    tools = tool_dir()
    tilelang.disable_cache()  # compile times are cold compiles (NVRTC + ptxas), not cache hits
    print(f"kernel zoo, static figures ({platform.processor() or platform.machine()}; {tilelang.__file__})")
    print("loop/iter: SASS instructions per iteration of the main loop; mma: the matrix instruction chosen")
    hdr = ("kernel", "arch", "mma", "regs", "spills", "shared bytes", "loop/iter", "TileLang 0.1.15 loop/iter",
           "HMMA/HGMMA", "total SASS", "compile s")
    print("| " + " | ".join(hdr) + " |")
    print("|" + "---|" * len(hdr))
    for name, make, gemms in cases():
        if args.only and args.only not in name:
            continue
        for arch in args.arch:
            t0 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    k = tilelang.compile(make(), target=f"cuda -arch={arch}")
                except tilelang.errors.TileLangError as e:
                    print(f"| {name} | {arch} | error: {str(e).splitlines()[0][:90]} |")
                    continue
            secs = time.perf_counter() - t0
            choice = next((c for c in k.choices if "T.gemm:" in c), "")
            mma = "wgmma" if "wgmma" in choice else ("mma.sync" if "mma.sync" in choice else "-")
            m = re.search(r"warp(?:s| groups) (\d+)x(\d+)", choice)
            iter_macs = sum(a * b * c for a, b, c in gemms) / (int(m.group(1)) * int(m.group(2))) if m else None
            r = analyse(disassemble(k.compiled.binary, tools), iter_macs)
            res = k.get_resource_usage()
            spills = res.get("spill_stores", 0) + res.get("spill_loads", 0)
            print(f"| {name} | {arch} | {mma} | {res['registers']} | {spills} | {res['shared_bytes']} | "
                  f"{r['loop']} | {tilelang_figure(name, arch)} | {r['hmma']} | {r['total']} | {secs:.1f} |")


if __name__ == "__main__":
    main()
