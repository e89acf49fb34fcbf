"""GPU check: every CUDA kernel of the test suite against PyTorch on random inputs, then timing of the
reference GEMM and a 4096^3 fp16 GEMM against torch.matmul (cuBLAS). Prints one short table.
Needs a CUDA GPU and PyTorch. Run through scripts/gpu_check.sh (which builds the project first)."""
import os
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "python"))
import kernels  # noqa: E402
import tilelang  # noqa: E402

dev = "cuda"
torch.manual_seed(0)
rows = []


def check(name, func, inputs, out, ref_fn, atol, rtol=1e-2):
    try:
        k = tilelang.compile(func, target="cuda")
        k(*inputs, out)
        torch.cuda.synchronize()
        ref = ref_fn(*[t.double() for t in inputs])
        err = (out.double() - ref).abs().max().item()
        ok = torch.allclose(out.double(), ref, atol=atol, rtol=rtol)
        rows.append((name, "ok" if ok else "MISMATCH", f"{err:.2e}"))
    except Exception as e:  # report and go on: one table for everything
        rows.append((name, "ERROR", str(e).splitlines()[0][:60]))


def r(*shape, dt=torch.float16):
    return torch.randn(*shape, device=dev, dtype=dt)


for M, N, K in [(1024, 1024, 1024), (1000, 1000, 1000), (200, 136, 72)]:
    a, b = r(M, K), r(K, N)
    check(f"gemm {M}x{N}x{K}", kernels.matmul(M, N, K, out_dtype="float32"), [a, b],
          torch.empty(M, N, device=dev), lambda x, y: x @ y, 1e-2)
for ta, tb in [(True, False), (False, True), (True, True)]:
    M, N, K = 512, 256, 384
    a = r(K, M) if ta else r(M, K)
    b = r(N, K) if tb else r(K, N)
    check(f"gemm tA={int(ta)} tB={int(tb)} bf16", kernels.matmul_transposed(M, N, K, 128, 128, 32, ta, tb, dtype="bfloat16",
                                                                           out_dtype="float32"),
          [a.bfloat16(), b.bfloat16()], torch.empty(M, N, device=dev),
          lambda x, y: (x.T if ta else x) @ (y.T if tb else y), 5e-2)
a, b = r(512, 1024), r(1024, 512)
check("split-K gemm", kernels.matmul_splitk(512, 512, 1024, 128, 128, 32, 4), [a, b], torch.zeros(512, 512, device=dev),
      lambda x, y: x @ y, 1e-2)
for causal in (False, True):
    B, H, S, D = 2, 4, 512, 64
    q, k_, v = r(B, H, S, D), r(B, H, S, D), r(B, H, S, D)

    def attn(q, k, v, causal=causal):
        s = q @ k.transpose(-1, -2) / D ** 0.5
        if causal:
            s = s.masked_fill(~torch.ones(S, S, dtype=torch.bool, device=dev).tril(), float("-inf"))
        return torch.softmax(s, -1) @ v

    check(f"flashattn causal={causal}", kernels.flashattn(B, H, S, D, causal), [q, k_, v], torch.empty_like(q), attn, 2e-2)
x = torch.randn(1000, 512, device=dev)
check("softmax", kernels.softmax(1000, 512, 4), [x], torch.empty_like(x), lambda t: torch.softmax(t, -1), 1e-5)
check("rmsnorm", kernels.rms_norm(1000, 512, 4), [x], torch.empty_like(x),
      lambda t: t / torch.sqrt((t * t).mean(-1, keepdim=True) + 1e-12), 1e-4)

print(f"{'kernel':<28}{'result':<10}{'max abs err':>14}")
for name, res, err in rows:
    print(f"{name:<28}{res:<10}{err:>14}")


def bench(fn, n=50):
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(n):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        ts.append(s.elapsed_time(e))
    ts.sort()
    return ts[len(ts) // 2]


print(f"\n{'GEMM fp16 (median ms)':<28}{'ours':>10}{'cuBLAS':>10}{'TFLOP/s':>10}{'ratio':>8}")
for M, bm, bn, bk, st in [(1024, 128, 128, 32, 2), (4096, 128, 128, 32, 3)]:
    a, b, c = r(M, M), r(M, M), torch.empty(M, M, device=dev, dtype=torch.float16)
    t0 = time.time()
    k = tilelang.compile(kernels.matmul(M, M, M, bm, bn, bk, num_stages=st), target="cuda")
    ours = bench(lambda: k(a, b, c))
    theirs = bench(lambda: torch.matmul(a, b))
    tf = 2 * M ** 3 / ours / 1e9
    print(f"{f'{M}^3 ({bm}x{bn}x{bk}, {st} st)':<28}{ours:>10.3f}{theirs:>10.3f}{tf:>10.1f}{theirs / ours:>8.2f}")
