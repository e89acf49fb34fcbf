"""SASS-level leanness of the CUDA backend, no GPU needed: compiles kernels for an arch, disassembles
the cubin (cuobjdump/nvdisasm from the toolkit, or from PyPI's nvidia-cuda-cuobjdump and
nvidia-cuda-nvdisasm, which scripts/setup.sh does not install: `pip install nvidia-cuda-cuobjdump
nvidia-cuda-nvdisasm`), and prints per kernel: total SASS instructions, instructions per iteration of
the main loop (the backward branch whose body holds the most HMMA or HGMMA (sm_90a wgmma), else the
largest loop), HMMA+HGMMA / LDSM
/ LDGSTS counts, integer ops, compares and branches, and the epilogue after the main loop.

Where a kernel has two main loops with the same HMMA count, loop/iter is the leaner one.

Targets for the reference GEMM on sm_80 (issue 14): <= 130 instructions per main-loop iteration,
<= 4 branches in the epilogue, < 600 in total, no more registers, no spills.
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


def analyse(ins):
    ops = [(a, opcode(t)) for a, t in ins]
    loops = []
    for a, t in ins:
        m = re.search(r"BRA (?:`\(\.L_x_\d+\) )?(0x[0-9a-f]+)", t)
        if m and int(m.group(1), 16) < a and int(m.group(1), 16) != a:
            lo = int(m.group(1), 16)
            body = [o for b, o in ops if lo <= b <= a]
            loops.append((body.count("HMMA") + body.count("HGMMA"), len(body), lo, a))
    row = {"total": len(ops), "slow_loop": None}
    if loops:
        # A kernel split into an interior fast path and a guarded path has two main loops with the
        # same HMMA count: the leaner one is what interior blocks run; the other is reported apart.
        top = max(h for h, _, _, _ in loops)
        mains = sorted((n, lo, hi) for h, n, lo, hi in loops if h == top)
        _, lo, hi = mains[0]
        if len(mains) > 1 and mains[-1][0] != mains[0][0]:
            row["slow_loop"] = mains[-1][0]
        body = [o for b, o in ops if lo <= b <= hi]
        end = max(m[2] for m in mains)
        epi = [o for b, o in ops if b > end and o not in ("NOP",)]
    else:
        body, epi = [], []
    c = collections.Counter(o for _, o in ops)
    cb = collections.Counter(body)
    row.update(loop=len(body), hmma=c["HMMA"] + c["HGMMA"], ldsm=c["LDSM"], ldgsts=c["LDGSTS"],
               loop_int=sum(v for k, v in cb.items() if k in INT_OPS), loop_isetp=cb["ISETP"],
               isetp=c["ISETP"], bra=c["BRA"], epi=len(epi), epi_bra=epi.count("BRA"), epi_isetp=epi.count("ISETP"))
    return row


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--arch", default="sm_80")
    args = ap.parse_args()
    tools = tool_dir()
    cases = [
        ("reference GEMM 1024^3", kernels.matmul(1024, 1024, 1024)),
        ("ragged GEMM 1000x1000x1000", kernels.matmul(1000, 1000, 1000)),
        ("FlashAttention fwd 1x8x1024x64", kernels.flashattn(1, 8, 1024, 64, is_causal=False)),
        ("RMSNorm 4096x4096", kernels.rms_norm(4096, 4096, 4)),
        # issue 32's FlashAttention row: d 128, with and without tl.enable_fast_math (--use_fast_math)
        ("FlashAttention fwd 1x8x1024x128", kernels.flashattn(1, 8, 1024, 128, is_causal=False)),
        ("FlashAttention fwd 1x8x1024x128, fast math", (kernels.flashattn(1, 8, 1024, 128, is_causal=False),
                                                          {"tl.enable_fast_math": True})),
    ]
    print(f"SASS of the CUDA backend for {args.arch} ({tilelang.__name__} from {os.path.dirname(tilelang.__file__)})")
    hdr = ("kernel", "total", "loop/iter", "HMMA/HGMMA", "LDSM", "LDGSTS", "int ops/iter", "ISETP/iter", "ISETP",
           "BRA", "epilogue", "epi BRA", "regs")
    print("| " + " | ".join(hdr) + " |")
    print("|" + "---|" * len(hdr))
    for name, f in cases:
        f, cfg = f if isinstance(f, tuple) else (f, None)
        k = tilelang.compile(f, target=f"cuda -arch={args.arch}", pass_configs=cfg)
        r = analyse(disassemble(k.compiled.binary, tools))
        regs = k.get_resource_usage()["registers"]
        print(f"| {name} | {r['total']} | {r['loop']} | {r['hmma']} | {r['ldsm']} | {r['ldgsts']} | {r['loop_int']} | "
              f"{r['loop_isetp']} | {r['isetp']} | {r['bra']} | {r['epi']} | {r['epi_bra']} | {regs} |")


if __name__ == "__main__":
    main()
