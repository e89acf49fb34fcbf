"""SASS-level leanness of the CUDA backend, no GPU needed: compiles kernels for an arch, disassembles
the cubin (cuobjdump/nvdisasm from the toolkit, or from PyPI's nvidia-cuda-cuobjdump and
nvidia-cuda-nvdisasm, which scripts/setup.sh installs), and prints per kernel: total SASS instructions, instructions per iteration of
the main loop (among the innermost backward branches with tensor-core work, the one whose body holds the
most HMMA/IMMA or HGMMA/IGMMA (sm_90a wgmma), else the largest loop; the out-of-line retries of mbarrier
waits after the kernel's last EXIT close no loop), tensor-core instructions / LDSM
/ LDGSTS counts, integer ops, compares and branches, and the epilogue after the main loop.

Where a kernel has two main loops with the same HMMA count, loop/iter is the leaner one. Where ptxas (or
the compiler's unroll hint on pipelined loops) unrolled the main loop, loop/iter is per k-iteration: the
body over the iterations it holds, counted from its tensor-core work (HMMA/HGMMA multiply-accumulates)
against one iteration's (the gemms listed per case, over the warps or warp groups that share them).
The TileLang and Triton columns are recorded figures for the same kernels (see the cases).

Targets (issue 32): reference GEMM <= 120 per k-iteration on sm_80 and <= 25 on sm_90a; 4096^3 with
128x256x64 tiles <= 233 (sm_80) and <= 97 (sm_90a), no spills; FlashAttention forward below TileLang with
fast math, no spills.
Usage: python benchmarks/bench_cuda_sass.py [--arch sm_80]
"""
import argparse
import collections
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "python"))

import tilelang  # noqa: E402
import kernels  # noqa: E402

INT_OPS = {"IADD3", "IMAD", "LEA", "LOP3", "SHF", "IABS", "IMNMX", "SEL", "PRMT", "UIADD3", "UIMAD", "ULEA",
           "ULOP3", "USHF", "IADD", "IMUL", "SHL", "SHR", "MOV", "UMOV"}


def tool_dir():
    for name in ("cuobjdump",):
        p = shutil.which(name)
        if p and shutil.which("nvdisasm"):
            return os.path.dirname(p)
    for d in glob.glob(os.path.join(sys.prefix, "lib", "python*", "site-packages", "nvidia", "*", "bin")):
        if os.path.exists(os.path.join(d, "cuobjdump")) and os.path.exists(os.path.join(d, "nvdisasm")):
            return d
    sys.exit("cuobjdump and nvdisasm not found: pip install nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm")


def disassemble(cubin, tools):
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        env = dict(os.environ, PATH=tools + os.pathsep + os.environ.get("PATH", ""))
        out = subprocess.run([os.path.join(tools, "cuobjdump"), "-sass", f.name], capture_output=True, text=True,
                             env=env, check=True).stdout
    return [(int(m.group(1), 16), m.group(2).strip()) for m in re.finditer(r"/\*([0-9a-f]{4,})\*/\s+(.*?);", out)]


def opcode(text):
    return re.sub(r"^@!?U?P\w+\s+", "", text).split()[0].split(".")[0]


TENSOR_OPS = ("HMMA", "IMMA", "HGMMA", "IGMMA")  # per warp (mma.sync) and per warp group (wgmma)


def tensor_macs(text):
    """Multiply-accumulates of one warp (HMMA, IMMA) or warp group (HGMMA, IGMMA) tensor-core instruction."""
    m = re.search(r"[HI]GMMA\.(\d+)x(\d+)x(\d+)", text)
    if m:
        return int(m.group(1)) * int(m.group(2)) * int(m.group(3))
    m = re.search(r"[HI]MMA\.168(\d+)", text)  # HMMA.16816 = m16n8k16, HMMA.1688 = m16n8k8, IMMA.16832
    return 16 * 8 * int(m.group(1)) if m else 0


def analyse(ins, iter_macs=None):
    """iter_macs: the tensor-core multiply-accumulates one warp (HMMA) / warp group (HGMMA) does per
    main-loop k-iteration; where ptxas unrolled the loop, loop/iter is the body over the iterations it
    holds (its tensor-core work over iter_macs)."""
    ops = [(a, opcode(t)) for a, t in ins]
    loops = []
    # ptxas places the retry of an mbarrier wait out of line, after the kernel's last EXIT, with a branch back
    # into the loop that waited: that branch closes no loop.
    code_end = max((a for a, o in ops if o == "EXIT"), default=None)
    for a, t in ins:
        m = re.search(r"BRA (?:`\(\.L_x_\d+\) )?(0x[0-9a-f]+)", t)
        if code_end is not None and a > code_end:
            continue
        if m and int(m.group(1), 16) < a and int(m.group(1), 16) != a:
            lo = int(m.group(1), 16)
            body = [o for b, o in ops if lo <= b <= a]
            loops.append((sum(body.count(o) for o in TENSOR_OPS), len(body), lo, a))
    row = {"total": len(ops), "slow_loop": None}
    if loops:
        # A kernel split into an interior fast path and a guarded path has two main loops with the
        # same HMMA count: the leaner one is what interior blocks run; the other is reported apart.
        # The main loop is innermost among the loops with tensor-core work: an outer loop that holds it (a
        # persistent or stream-K kernel's loop over tiles, or the remainder copy of a loop ptxas unrolled)
        # is not an iteration of it.
        inner = [(h, n, lo, hi) for h, n, lo, hi in loops
                 if h == 0 or not any(h2 and lo <= lo2 and hi2 <= hi and (lo2, hi2) != (lo, hi)
                                      for h2, _, lo2, hi2 in loops)]
        top = max(h for h, _, _, _ in inner)
        mains = sorted((n, lo, hi) for h, n, lo, hi in inner if h == top)
        _, lo, hi = mains[0]
        if len(mains) > 1 and mains[-1][0] != mains[0][0]:
            row["slow_loop"] = mains[-1][0]
        body = [o for b, o in ops if lo <= b <= hi]
        unroll = 1
        if iter_macs:
            macs = sum(tensor_macs(t) for a, t in ins if lo <= a <= hi)
            unroll = max(1, round(macs / iter_macs))
        row["unroll"] = unroll
        end = max(m[2] for m in mains)
        epi = [o for b, o in ops if b > end and o not in ("NOP",)]
    else:
        body, epi = [], []
    c = collections.Counter(o for _, o in ops)
    cb = collections.Counter(body)
    u = row.get("unroll", 1)
    row.update(loop=round(len(body) / u, 1), hmma=sum(c[o] for o in TENSOR_OPS), ldsm=c["LDSM"], ldgsts=c["LDGSTS"],
               loop_int=round(sum(v for k, v in cb.items() if k in INT_OPS) / u, 1),
               loop_isetp=round(cb["ISETP"] / u, 1),
               isetp=c["ISETP"], bra=c["BRA"], epi=len(epi), epi_bra=epi.count("BRA"), epi_isetp=epi.count("ISETP"))
    return row


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--arch", default="sm_80")
    args = ap.parse_args()
    tools = tool_dir()
    # (name, kernel, pass configs, the gemms of one main-loop iteration as (M, N, K), recorded figures)
    # Recorded: SASS per main-loop k-iteration of the same kernel (tests/python/kernels.py) compiled by
    # TileLang 0.1.15 (PyPI; its own nvcc flags, CUDA 13) and counted by analyse() here, 2026-12-02; Triton 3.9
    # as recorded in issue 32.
    fm = {"tl.enable_fast_math": True}
    fa_tuned = dict(block_M=128, block_N=128, num_stages=2, threads=256)  # TileLang's example's tuned config
    cases = [
        ("reference GEMM 1024^3", kernels.matmul(1024, 1024, 1024), None, [(128, 128, 32)],
         {"sm_80": (150, 122), "sm_90a": (23.2, 81)}),
        ("ragged GEMM 1000x1000x1000", kernels.matmul(1000, 1000, 1000), None, [(128, 128, 32)], {}),
        # issue 32's big-tile row: 128x256x64, 3 stages, 256 threads
        ("GEMM 4096^3 128x256x64, 3 stages", kernels.matmul(4096, 4096, 4096, block_M=128, block_N=256, block_K=64,
                                                          num_stages=3, threads=256), None, [(128, 256, 64)],
         {"sm_80": (253, 233), "sm_90a": (99, 97)}),
        ("RMSNorm 4096x4096", kernels.rms_norm(4096, 4096, 4), None, None, {}),
        # FlashAttention forward, batch 1, 8 heads, seq 1024 (per KV block), exact math and fast math
        ("FlashAttention d64, 64x64, 1 stage", kernels.flashattn(1, 8, 1024, 64, is_causal=False), None,
         [(64, 64, 64), (64, 64, 64)], {}),
        ("FlashAttention d64, 64x64, 1 stage, fast math", kernels.flashattn(1, 8, 1024, 64, is_causal=False), fm,
         [(64, 64, 64), (64, 64, 64)], {"sm_80": (364, None), "sm_90a": (261, None)}),
        ("FlashAttention d128, 64x64, 1 stage", kernels.flashattn(1, 8, 1024, 128, is_causal=False), None,
         [(64, 64, 128), (64, 128, 64)], {}),
        ("FlashAttention d128, 64x64, 1 stage, fast math", kernels.flashattn(1, 8, 1024, 128, is_causal=False), fm,
         [(64, 64, 128), (64, 128, 64)], {"sm_80": (491, None), "sm_90a": (312, None)}),
        ("FlashAttention d64, 128x128, 2 stages, 256 thr, fast math",
         kernels.flashattn(1, 8, 1024, 64, is_causal=False, **fa_tuned), fm, [(128, 128, 64), (128, 64, 128)],
         {"sm_80": (620, None), "sm_90a": (445, None)}),
        ("FlashAttention d128, 128x128, 2 stages, 256 thr, fast math",
         kernels.flashattn(1, 8, 1024, 128, is_causal=False, **fa_tuned), fm, [(128, 128, 128), (128, 128, 128)],
         {"sm_80": (926, None), "sm_90a": (503, None)}),
    ]
    print(f"SASS of the CUDA backend for {args.arch} ({tilelang.__name__} from {os.path.dirname(tilelang.__file__)})")
    print("loop/iter: instructions per k-iteration of the main loop (a loop ptxas unrolled counts per iteration)")
    hdr = ("kernel", "total", "loop/iter", "TileLang", "Triton", "unrolled", "HMMA/HGMMA", "LDSM", "LDGSTS",
           "int ops/iter", "ISETP/iter", "ISETP", "BRA", "epilogue", "epi BRA", "regs", "spills")
    print("| " + " | ".join(hdr) + " |")
    print("|" + "---|" * len(hdr))
    for name, f, cfg, gemms, recorded in cases:
        k = tilelang.compile(f, target=f"cuda -arch={args.arch}", pass_configs=cfg)
        iter_macs = None
        if gemms:
            # the warps (mma.sync) or warp groups (wgmma) that share each gemm, from the compiler's choices
            m = next(re.search(r"warp(?:s| groups) (\d+)x(\d+)", c) for c in k.choices if "T.gemm:" in c)
            iter_macs = sum(a * b * c for a, b, c in gemms) / (int(m.group(1)) * int(m.group(2)))
        r = analyse(disassemble(k.compiled.binary, tools), iter_macs)
        res = k.get_resource_usage()
        spills = res.get("spill_stores", 0) + res.get("spill_loads", 0)
        tl_fig, triton_fig = recorded.get(args.arch, (None, None))
        show = lambda v: "—" if v is None else str(v)  # noqa: E731
        print(f"| {name} | {r['total']} | {r['loop']} | {show(tl_fig)} | {show(triton_fig)} | {r.get('unroll', 1)}x | "
              f"{r['hmma']} | {r['ldsm']} | {r['ldgsts']} | {r['loop_int']} | {r['loop_isetp']} | {r['isetp']} | "
              f"{r['bra']} | {r['epi']} | {r['epi_bra']} | {res['registers']} | {spills} |")


if __name__ == "__main__":
    main()
