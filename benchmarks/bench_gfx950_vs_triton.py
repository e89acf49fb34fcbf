"""Our gfx950 (CDNA4) GEMMs against Triton's for the same tiles, statically: both compiled for gfx950 with no GPU,
compared on the code objects' assembly: the MFMA instruction each picks, MFMAs and instructions in one iteration of
the main (K) loop, LDS reads / writes and global loads per iteration, VGPRs / AGPRs / SGPRs, LDS bytes and
scratch. Nothing runs: these are the static facts that decide a GEMM's speed on the hardware (issue 35, item 4).

Triton lives in the benchmark's own environment, not in the package's: pass the Python that has it,
    python -m venv /tmp/triton-env && /tmp/triton-env/bin/pip install triton
    python benchmarks/bench_gfx950_vs_triton.py --triton-python /tmp/triton-env/bin/python
(or run with a Python that has both tilelang and triton). Prints one table; `--json FILE` also writes the rows.
"""
import argparse
import json
import os
import re
import subprocess
import sys

import tilelang
import tilelang.language as T

CONFIGS = [  # name, dtype, BM, BN, BK, threads, stages, B layout (M = N = K = 4096)
    # B stored K x N ("NN"): an MFMA lane needs k-contiguous values of one column, so B is read across rows
    ("NN fp16 128x128x32 4 waves", "float16", 128, 128, 32, 256, 2, "kn"),
    ("NN fp16 128x128x64 4 waves", "float16", 128, 128, 64, 256, 2, "kn"),
    ("NN fp16 256x128x64 4 waves", "float16", 256, 128, 64, 256, 2, "kn"),
    ("NN bf16 128x128x64 4 waves", "bfloat16", 128, 128, 64, 256, 2, "kn"),
    ("NN fp8 e4m3 128x128x128 4 waves", "float8_e4m3fn", 128, 128, 128, 256, 2, "kn"),
    # B stored N x K ("NT", T.gemm(..., transpose_B=True) / tl.dot(a, b.T)): both operands k-contiguous
    ("NT fp16 128x128x64 4 waves", "float16", 128, 128, 64, 256, 2, "nk"),
    ("NT fp16 256x128x64 4 waves", "float16", 256, 128, 64, 256, 2, "nk"),
    ("NT fp8 e4m3 128x128x128 4 waves", "float8_e4m3fn", 128, 128, 128, 256, 2, "nk"),
    # MXFP4 (e2m1 with an E8M0 scale per 32 K values; T.mma_gemm_blockscaled / tl.dot_scaled): our fp4 tensors
    # hold one value a byte (ml_dtypes' storage), Triton's inputs are packed two a byte
    ("NT mxfp4 128x128x128 4 waves", "mxfp4", 128, 128, 128, 256, 2, "nk"),
]
SIZE = 4096


def ours_mxfp4(BM, BN, BK, threads, stages):
    M = N = K = SIZE
    fp4 = "float4_e2m1fn"

    @T.prim_func
    def gemm(A: T.Tensor((M, K), fp4), B: T.Tensor((N, K), fp4), SA: T.Tensor((M, K // 32), "uint8"),
             SB: T.Tensor((N, K // 32), "uint8"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, BN), T.ceildiv(M, BM), threads=threads) as (bx, by):
            A_s = T.alloc_shared((BM, BK), fp4)
            B_s = T.alloc_shared((BN, BK), fp4)
            SA_s = T.alloc_shared((BM, BK // 32), "uint8")
            SB_s = T.alloc_shared((BN, BK // 32), "uint8")
            C_l = T.alloc_fragment((BM, BN), "float32")
            T.clear(C_l)
            for ko in T.Pipelined(T.ceildiv(K, BK), num_stages=stages):
                T.copy(A[by * BM, ko * BK], A_s)
                T.copy(B[bx * BN, ko * BK], B_s)
                T.copy(SA[by * BM, ko * (BK // 32)], SA_s)
                T.copy(SB[bx * BN, ko * (BK // 32)], SB_s)
                T.mma_gemm_blockscaled(A_s, B_s, C_l, SA_s, SB_s, transpose_B=True, k_start=ko * BK,
                                       sf_a_granularity_k=32, sf_b_granularity_k=32)
            T.copy(C_l, C[by * BM, bx * BN])

    return tilelang.compile(gemm, target="hip -arch=gfx950").get_assembly()


def ours(dtype, BM, BN, BK, threads, stages, blayout):
    if dtype == "mxfp4":
        return ours_mxfp4(BM, BN, BK, threads, stages)
    M = N = K = SIZE
    nk = blayout == "nk"
    b_shape, bs_shape = ((N, K), (BN, BK)) if nk else ((K, N), (BK, BN))

    @T.prim_func
    def gemm(A: T.Tensor((M, K), dtype), B: T.Tensor(b_shape, dtype), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, BN), T.ceildiv(M, BM), threads=threads) as (bx, by):
            A_s = T.alloc_shared((BM, BK), dtype)
            B_s = T.alloc_shared(bs_shape, dtype)
            C_l = T.alloc_fragment((BM, BN), "float32")
            T.clear(C_l)
            for ko in T.Pipelined(T.ceildiv(K, BK), num_stages=stages):
                T.copy(A[by * BM, ko * BK], A_s)
                if nk:
                    T.copy(B[bx * BN, ko * BK], B_s)
                else:
                    T.copy(B[ko * BK, bx * BN], B_s)
                T.gemm(A_s, B_s, C_l, transpose_B=nk)
            T.copy(C_l, C[by * BM, bx * BN])

    return tilelang.compile(gemm, target="hip -arch=gfx950").get_assembly()


def _instructions(lines):
    for ln in lines:
        s = ln.split(";")[0].strip()
        if s and not s.startswith(".") and not s.endswith(":"):
            yield s.split()[0]


def analyse(asm):
    """The kernel's resources and its main loop: the backward branch whose body holds the most MFMAs."""
    lines = asm.splitlines()
    labels = {ln.strip().split(":")[0]: i for i, ln in enumerate(lines) if re.match(r"^\.?L\w+:", ln.strip())}
    best = None
    for i, ln in enumerate(lines):
        m = re.match(r"\s*s_(cbranch_\w+|branch)\s+(\.?L\w+)", ln)
        if m and m.group(2) in labels and labels[m.group(2)] < i:
            body = list(_instructions(lines[labels[m.group(2)]:i + 1]))
            mf = sum(x.startswith("v_mfma") for x in body)
            if best is None or mf > best[0]:
                best = (mf, body)
    body = best[1] if best else []

    def res(key):
        m = re.search(re.escape(key) + r"\s*(\d+)", asm)
        return int(m.group(1)) if m else 0

    return {
        "mfma": ",".join(sorted(set(re.findall(r"v_mfma\w+", asm)))),
        "loop_mfma": sum(x.startswith("v_mfma") for x in body),
        "loop_instr": len(body),
        "loop_lds_rd": sum(x.startswith("ds_read") for x in body),
        "loop_lds_wr": sum(x.startswith("ds_write") for x in body),
        "loop_gload": sum(x.startswith(("global_load", "buffer_load")) for x in body),
        "loop_waitcnt": sum(x.startswith("s_waitcnt") for x in body),
        "vgpr": res("; NumVgprs:"), "agpr": res("; NumAgprs:"), "sgpr": res("; TotalNumSgprs:"),
        "lds": res("; LDSByteSize:"), "scratch": res("; ScratchSize:"), "occupancy": res("; Occupancy:"),
    }


def triton_asm(python, cfgs):
    payload = json.dumps([{"name": n, "dtype": d, "BM": bm, "BN": bn, "BK": bk, "threads": t, "stages": s, "K": SIZE,
                           "blayout": b} for n, d, bm, bn, bk, t, s, b in cfgs])
    side = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gfx950_triton_side.py")
    r = subprocess.run([python, side], input=payload, capture_output=True, text=True)
    if r.returncode:
        sys.exit(f"the Triton side failed ({python}):\n{r.stderr[-3000:]}")
    return json.loads(r.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--triton-python", default=sys.executable,
                    help="a Python with `triton` installed (default: this one)")
    ap.add_argument("--json", help="also write the rows here")
    args = ap.parse_args()
    tri = triton_asm(args.triton_python, CONFIGS)
    rows = []
    for name, dtype, bm, bn, bk, threads, stages, blayout in CONFIGS:
        for who, asm in (("tilelang-cpp", ours(dtype, bm, bn, bk, threads, stages, blayout)),
                         ("triton " + tri["triton"], tri["asm"][name])):
            r = analyse(asm)
            if who.startswith("triton"):  # Triton's LDS is dynamic (sized at launch): its metadata says how much
                r["lds"] = tri["shared"][name]
            r.update(config=name, compiler=who)
            rows.append(r)
    cols = ["config", "compiler", "mfma", "loop_mfma", "loop_instr", "loop_lds_rd", "loop_lds_wr", "loop_gload",
            "loop_waitcnt", "vgpr", "agpr", "sgpr", "lds", "scratch", "occupancy"]
    print(f"gfx950 GEMM code objects, M = N = K = {SIZE}, static (no GPU); loop_* = one iteration of the main K loop")
    width = {c: max(len(c), *(len(str(r[c])) for r in rows)) for c in cols}
    print("  ".join(c.ljust(width[c]) for c in cols))
    for r in rows:
        print("  ".join(str(r[c]).ljust(width[c]) for c in cols))
    print("\nper config, instructions per MFMA in the main loop (lower is leaner):")
    for name, *_ in CONFIGS:
        o, t = (next(r for r in rows if r["config"] == name and r["compiler"].startswith(w)) for w in ("tilelang", "triton"))
        ipm = lambda r: r["loop_instr"] / r["loop_mfma"] if r["loop_mfma"] else float("nan")  # noqa: E731
        print(f"  {name:34s} ours {ipm(o):6.2f}   triton {ipm(t):6.2f}   ratio {ipm(o) / ipm(t):5.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
