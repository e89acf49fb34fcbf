"""The Triton side of bench_gfx950_vs_triton.py, run by the Python that has Triton (the benchmark's own
environment; Triton is not a dependency of the package). Reads a JSON list of GEMM configs on stdin, compiles a
plain tiled Triton GEMM for each for GPUTarget("hip", "gfx950", 64) with no GPU, and prints a JSON object
{name: amdgcn assembly}. The kernel is the textbook Triton matmul (tl.dot over BK slices, fp32 accumulator),
written here for this comparison."""
import json
import os
import sys

os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")

import triton  # noqa: E402
import triton.language as tl  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402


@triton.jit
def gemm(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr,
         BK: tl.constexpr, B_NK: tl.constexpr):
    pid_m = tl.program_id(1)
    pid_n = tl.program_id(0)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        if B_NK:  # B stored N x K
            b = tl.load(b_ptr + rn[None, :] * K + (k + rk)[:, None])
        else:
            b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


@triton.jit
def gemm_mx(a_ptr, b_ptr, sa_ptr, sb_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr,
            BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """MXFP4: A (M x K) and B (N x K, K-contiguous) as packed e2m1 bytes (two values a byte, K / 2 bytes a row),
    one E8M0 scale byte per 32 K values of each row of A and of B, through tl.dot_scaled."""
    pid_m = tl.program_id(1)
    pid_n = tl.program_id(0)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rkp = tl.arange(0, BK // 2)
    rs = tl.arange(0, BK // 32)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * (K // 2) + (k // 2 + rkp)[None, :])
        b = tl.load(b_ptr + rn[None, :] * (K // 2) + (k // 2 + rkp)[:, None])
        sa = tl.load(sa_ptr + rm[:, None] * (K // 32) + (k // 32 + rs)[None, :])
        sb = tl.load(sb_ptr + rn[:, None] * (K // 32) + (k // 32 + rs)[None, :])
        acc = tl.dot_scaled(a, sa, "e2m1", b, sb, "e2m1", acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


TRITON_DTYPE = {"float16": "fp16", "bfloat16": "bf16", "float8_e4m3fn": "fp8e4nv", "float8_e5m2": "fp8e5"}


def main():
    out, shared = {}, {}
    for cfg in json.load(sys.stdin):
        if cfg["dtype"] == "mxfp4":
            sig = {"a_ptr": "*u8", "b_ptr": "*u8", "sa_ptr": "*u8", "sb_ptr": "*u8", "c_ptr": "*fp32",
                   "M": "constexpr", "N": "constexpr", "K": "constexpr", "BM": "constexpr", "BN": "constexpr",
                   "BK": "constexpr"}
            src = ASTSource(gemm_mx, sig, constexprs={"M": cfg["K"], "N": cfg["K"], "K": cfg["K"], "BM": cfg["BM"],
                                                      "BN": cfg["BN"], "BK": cfg["BK"]},
                            attrs={(i,): [["tt.divisibility", 16]] for i in range(5)})
            k = triton.compile(src, target=GPUTarget("hip", "gfx950", 64),
                               options={"num_warps": cfg["threads"] // 64, "num_stages": cfg["stages"]})
            out[cfg["name"]] = k.asm["amdgcn"]
            shared[cfg["name"]] = k.metadata.shared
            continue
        t = TRITON_DTYPE[cfg["dtype"]]
        sig = {"a_ptr": "*" + t, "b_ptr": "*" + t, "c_ptr": "*fp32", "M": "constexpr", "N": "constexpr",
               "K": "constexpr", "BM": "constexpr", "BN": "constexpr", "BK": "constexpr", "B_NK": "constexpr"}
        # the sizes are compile-time constants (as in ours) and the pointers 16-byte aligned (what Triton's JIT
        # infers from real tensors), so Triton may vectorise its loads as freely as we do
        src = ASTSource(gemm, sig, constexprs={"M": cfg["K"], "N": cfg["K"], "K": cfg["K"], "BM": cfg["BM"],
                                               "BN": cfg["BN"], "BK": cfg["BK"], "B_NK": cfg["blayout"] == "nk"},
                        attrs={(i,): [["tt.divisibility", 16]] for i in range(3)})
        k = triton.compile(src, target=GPUTarget("hip", "gfx950", 64),
                           options={"num_warps": cfg["threads"] // 64, "num_stages": cfg["stages"]})
        out[cfg["name"]] = k.asm["amdgcn"]
        shared[cfg["name"]] = k.metadata.shared
    json.dump({"triton": triton.__version__, "asm": out, "shared": shared}, sys.stdout)


if __name__ == "__main__":
    main()
