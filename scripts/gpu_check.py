"""The GPU gate (run through scripts/gpu_check.sh, which builds the project offline first):

  1. the reference program exactly as written (examples/reference/gemm_tilelang_demo.py, a copy of
     ../shared/examples/gemm_tilelang_demo.py, which does not travel to the GPU machine);
  2. every CUDA kernel of the test suite against PyTorch on random inputs, ragged sizes included;
  3. per-intrinsic micro-tests (mma.sync fp16/bf16 with every ldmatrix form, cp.async groups, warp
     shuffles, vector loads/stores) on the GPU, in the emulator and in the PTX emulator on the same
     integer-valued inputs, compared bit for bit;
  4. compute-sanitizer memcheck and racecheck on three kernels;
  3b. on a Hopper GPU, the sm_90a wgmma GEMMs of scripts/gpu_check_hopper.py against torch (both dtypes,
     every swizzle mode and warp-group split) and, on integer inputs, bit for bit against the emulator;
  3c. on a Blackwell GPU, the cases of scripts/gpu_check_blackwell.py for its family (tcgen05: kind::f16 / tf32,
     the CTA pair, MXFP8, padded MXFP4, kind::mxf4, NVFP4; sm_120a: NVFP4, MXFP4, MXFP8 and fp4 / fp6 operands
     on the block-scaled mma.sync) against float64 NumPy: what the emulators assume where the ISA text here is
     silent;
  5. timings: the reference GEMM, 8192^3 fp16/bf16 GEMMs against torch.matmul (cuBLAS) (on Hopper also
     the sm_90a wgmma GEMMs with 128x256x64 tiles), FlashAttention
     forward against torch.nn.functional.scaled_dot_product_attention.

Prints one table, writes it as JSON ($OUT/gpu_check.json when OUT is set, and build/gpu_check.json), and
exits 1 on any mismatch, error or sanitizer report (timings never fail the gate; they are reported).

TL_GPU_CHECK_DRY=1 is the dry run that keeps this script from rotting on machines without a GPU
(tests/python/test_gpu_check.py): with tests/gpu_check_dry on PYTHONPATH (a NumPy stand-in for the torch
calls made here), every kernel runs in the emulator at small sizes, the reference program and the
sanitizer are skipped, and timings run once. A "skip" row exists only in a dry run."""
import json
import os
import shutil
import subprocess
import sys
import time
import traceback

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "python"))
import kernels  # noqa: E402
import tilelang  # noqa: E402

T0 = time.time()
DRY = os.environ.get("TL_GPU_CHECK_DRY") == "1"
dev = "cuda"
EXEC = {"execution_backend": "emulator"} if DRY else {}  # how every kernel of this script is built
torch.manual_seed(0)
rows = []      # (section, name, status, detail)
timings = []   # dicts


def row(section, name, status, detail=""):
    rows.append({"section": section, "name": name, "status": status, "detail": detail})
    print(f"[{section}] {name}: {status} {detail}", flush=True)


def guarded(section, name, fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - one table for everything
        row(section, name, "ERROR", f"{type(e).__name__}: {str(e).splitlines()[0][:160] if str(e) else ''}")
        traceback.print_exc()


def r(*shape, dt=torch.float16):
    return torch.randn(*shape, device=dev, dtype=dt)


# ---- 1. the reference program as written --------------------------------------------------------------
def reference_program():
    p = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "reference", "gemm_tilelang_demo.py")],
                       capture_output=True, text=True, timeout=300)
    out = (p.stdout + p.stderr).strip().splitlines()
    last = out[-1] if out else ""
    err = float(last.rsplit(":", 1)[1]) if p.returncode == 0 and "Max absolute difference" in last else None
    # fp16 output of magnitude ~32: rounding alone gives up to ~3e-2; a wrong kernel gives O(10)
    row("reference", "gemm_tilelang_demo.py as written", "ok" if err is not None and err < 0.1 else "MISMATCH"
        if err is not None else "ERROR", last[:160])


if DRY:
    row("reference", "gemm_tilelang_demo.py as written", "skip", "dry run")
else:
    guarded("reference", "gemm_tilelang_demo.py as written", reference_program)


# ---- 2. every CUDA kernel against torch -----------------------------------------------------------------
def check(name, func, inputs, out, ref_fn, atol, rtol=1e-2):
    def run():
        k = tilelang.compile(func, target="cuda", **EXEC)
        k(*inputs, out)
        torch.cuda.synchronize()
        ref = ref_fn(*[t.double() for t in inputs])
        err = (out.double() - ref).abs().max().item()
        ok = torch.allclose(out.double(), ref, atol=atol, rtol=rtol)
        row("kernels", name, "ok" if ok else "MISMATCH", f"max abs err {err:.2e}")
    guarded("kernels", name, run)


for M, N, K in [(200, 136, 72)] if DRY else [(1024, 1024, 1024), (1000, 1000, 1000), (200, 136, 72)]:
    a, b = r(M, K), r(K, N)
    check(f"gemm {M}x{N}x{K}", kernels.matmul(M, N, K, out_dtype="float32"), [a, b],
          torch.empty(M, N, device=dev), lambda x, y: x @ y, 1e-2)
for ta, tb in [(True, False), (False, True), (True, True)]:
    M, N, K = (136, 72, 96) if DRY else (512, 256, 384)
    a = r(K, M) if ta else r(M, K)
    b = r(N, K) if tb else r(K, N)
    check(f"gemm tA={int(ta)} tB={int(tb)} bf16",
          kernels.matmul_transposed(M, N, K, 128, 128, 32, ta, tb, dtype="bfloat16", out_dtype="float32"),
          [a.bfloat16(), b.bfloat16()], torch.empty(M, N, device=dev),
          lambda x, y, ta=ta, tb=tb: (x.T if ta else x) @ (y.T if tb else y), 5e-2)
SK = (136, 256) if DRY else (512, 1024)
a, b = r(SK[0], SK[1]), r(SK[1], SK[0])
check("split-K gemm (atomics)", kernels.matmul_splitk(SK[0], SK[0], SK[1], 128, 128, 32, 4), [a, b],
      torch.zeros(SK[0], SK[0], device=dev), lambda x, y: x @ y, 1e-2)
for causal in (False, True):
    B, H, S, D = (1, 1, 128, 64) if DRY else (2, 4, 512, 64)
    q, k_, v = r(B, H, S, D), r(B, H, S, D), r(B, H, S, D)

    def attn(q, k, v, causal=causal, S=S, D=D):
        s = q @ k.transpose(-1, -2) / D ** 0.5
        if causal:
            s = s.masked_fill(~torch.ones(S, S, dtype=torch.bool, device=dev).tril(), float("-inf"))
        return torch.softmax(s, -1) @ v

    check(f"flashattn causal={causal}", kernels.flashattn(B, H, S, D, causal), [q, k_, v], torch.empty_like(q),
          attn, 2e-2)
R = 100 if DRY else 1000
x = torch.randn(R, 512, device=dev)
check(f"softmax {R}x512", kernels.softmax(R, 512, 4), [x], torch.empty_like(x), lambda t: torch.softmax(t, -1), 1e-5)
check(f"rmsnorm {R}x512", kernels.rms_norm(R, 512, 4), [x], torch.empty_like(x),
      lambda t: t / torch.sqrt((t * t).mean(-1, keepdim=True) + 1e-12), 1e-4)
# T.sync_grid: a cooperative launch (cuLaunchCooperativeKernel), one block per SM so that all are resident
NB = 4 if DRY else torch.cuda.get_device_properties(0).multi_processor_count
x = torch.randn(NB * 64, device=dev).abs() + 0.5


def grid_ref(t, p):
    a = t.cpu().numpy()
    return torch.from_numpy(a / np.repeat(np.roll(a.reshape(NB, 64).sum(1), -1), 64)).to(dev)


check(f"grid barrier (T.sync_grid, {NB} blocks)", kernels.grid_two_phase(NB), [x, torch.zeros(NB, device=dev)],
      torch.empty_like(x), grid_ref, 1e-5)


# ---- 3. intrinsics: GPU against the emulator, bit for bit -----------------------------------------------
def ints(shape, dtype, lo=-3, hi=4):
    """Small integers: every product and sum is exact in every order, so results must match exactly."""
    return np.random.default_rng(7).integers(lo, hi, size=shape).astype(np.float32).astype(dtype)


def bit_exact(name, func, inputs_np, out_shape, out_dtype, target="cuda"):
    def run():
        emu_out = np.zeros(out_shape, out_dtype)
        tilelang.compile(func, target=target, execution_backend="emulator")(*inputs_np, emu_out)
        tin = [torch.from_numpy(np.ascontiguousarray(x).view(np.uint16)).view(torch.bfloat16).to(dev)
               if x.dtype.name == "bfloat16" else torch.from_numpy(np.ascontiguousarray(x)).to(dev) for x in inputs_np]
        gout = torch.zeros(out_shape, device=dev, dtype=getattr(torch, np.dtype(out_dtype).name))
        tilelang.compile(func, target=target, **EXEC)(*tin, gout)
        torch.cuda.synchronize()
        g = gout.cpu().numpy()
        same = g.tobytes() == emu_out.tobytes()
        diff = int(np.count_nonzero(g.view(np.uint8) != emu_out.view(np.uint8)))
        row("intrinsics", name, "ok" if same else "MISMATCH", "bit-identical" if same else f"{diff} bytes differ")
        if target.startswith("cuda"):  # the PTX that ships, interpreted (docs/emulator.md), against the same GPU run
            ptx_out = np.zeros(out_shape, out_dtype)
            tilelang.compile(func, target=target, execution_backend="ptx")(*inputs_np, ptx_out)
            same = g.tobytes() == ptx_out.tobytes()
            diff = int(np.count_nonzero(g.view(np.uint8) != ptx_out.view(np.uint8)))
            row("intrinsics", name + " [PTX emulator]", "ok" if same else "MISMATCH",
                "bit-identical" if same else f"{diff} bytes differ")
    guarded("intrinsics", name, run)


import ml_dtypes  # noqa: E402

for dt, npdt in [("float16", np.float16), ("bfloat16", ml_dtypes.bfloat16)]:
    for ta, tb in [(False, False), (True, False), (False, True), (True, True)]:
        M, N, K = 64, 64, 64
        a = ints((K, M) if ta else (M, K), npdt)
        b = ints((N, K) if tb else (K, N), npdt)
        bit_exact(f"mma.sync m16n8k16 {dt} + ldmatrix (tA={int(ta)}, tB={int(tb)})",
                  kernels.matmul_transposed(M, N, K, 64, 64, 32, ta, tb, dtype=dt, out_dtype="float32"), [a, b],
                  (M, N), np.float32)
bit_exact("cp.async groups (3-stage pipeline)", kernels.matmul(128, 128, 256, 64, 64, 32, out_dtype="float32",
                                                                num_stages=3),
          [ints((128, 256), np.float16), ints((256, 128), np.float16)], (128, 128), np.float32)
import tilelang.language as T  # noqa: E402


def row_reduce(kind):
    @T.prim_func
    def k(A: T.Tensor((64, 128), "float32"), S: T.Tensor((64,), "float32")):
        with T.Kernel(16, threads=128) as bx:
            F = T.alloc_fragment((4, 128), "float32")
            s = T.alloc_fragment((4,), "float32")
            T.copy(A[bx * 4, 0], F)
            if kind == "sum":
                T.reduce_sum(F, s, dim=1)
            else:
                T.reduce_max(F, s, dim=1)
            T.copy(s, S[bx * 4])
    return k


for kind in ("sum", "max"):
    bit_exact(f"warp shuffles (row {kind} of a striped fragment)", row_reduce(kind), [ints((64, 128), np.float32)],
              (64,), np.float32)
bit_exact("vector loads/stores (elementwise)", kernels.elementwise_add(),
          [ints((1000,), np.float32), ints((1000,), np.float32)], (1000,), np.float32)


# ---- 3b. Hopper (sm_90a): wgmma GEMMs against torch and, on integer inputs, bit for bit against the emulator
import gpu_check_hopper as hopper  # noqa: E402

if torch.cuda.get_device_capability(0)[0] == 9:
    for name in hopper.GEMMS:
        for dt, tdt in [("float16", torch.float16), ("bfloat16", torch.bfloat16)]:
            sa, sb, sc = hopper.operand_shapes(name)
            ta, tb = hopper.GEMMS[name][7], hopper.GEMMS[name][8]

            def run_hopper(name=name, dt=dt, tdt=tdt, sa=sa, sb=sb, sc=sc, ta=ta, tb=tb):
                k = tilelang.compile(hopper.gemm(name, dt), target=hopper.SM90A)
                assert "wgmma.mma_async" in k.get_ptx(), "no wgmma in the PTX"
                assert all(p in k.get_ptx() for p in hopper.TMA_PTX), "no TMA / mbarrier pipeline in the PTX"
                if DRY:
                    size = hopper.small_size(name)
                    sa, sb, sc = hopper.operand_shapes(name, size)
                    k = tilelang.compile(hopper.gemm(name, dt, size), target=hopper.SM90A, **EXEC)
                a, b, c = r(*sa, dt=tdt), r(*sb, dt=tdt), torch.empty(*sc, device=dev)
                k(a, b, c)
                torch.cuda.synchronize()
                ref = (a.double().T if ta else a.double()) @ (b.double().T if tb else b.double())
                err = (c.double() - ref).abs().max().item()
                ok = torch.allclose(c.double(), ref, atol=5e-2, rtol=1e-2)
                row("hopper", f"wgmma gemm {name} {dt}", "ok" if ok else "MISMATCH", f"max abs err {err:.2e}")
            guarded("hopper", f"wgmma gemm {name} {dt}", run_hopper)
    for name in ("64x64x16 (32B swizzle)",) if DRY else ("64x64x16 (32B swizzle)", "tA tB 128x64x32",
                                                          "2 warp groups along N"):
        for dt, npdt in [("float16", np.float16), ("bfloat16", ml_dtypes.bfloat16)]:
            size = hopper.small_size(name)
            sa, sb, sc = hopper.operand_shapes(name, size)
            bit_exact(f"wgmma {name} {dt} (sm_90a, GPU vs emulator)", hopper.gemm(name, dt, size),
                      [ints(sa, npdt), ints(sb, npdt)], sc, np.float32, target=hopper.SM90A)
else:
    row("hopper", "sm_90a wgmma checks", "ok", f"skipped: not a Hopper GPU ({torch.cuda.get_device_name(0)})")


# ---- 3c. Blackwell: tcgen05 (10.x / 11.x) or sm_120a's block-scaled mma.sync (12.x) against float64 NumPy ------
import gpu_check_blackwell as blackwell  # noqa: E402


def to_device(x):
    """A NumPy input as a CUDA tensor of the kernel's dtype (fp4 operands come packed as int8 already)."""
    name = x.dtype.name
    if name in ("float16", "float32", "int8", "uint8", "int32"):
        return torch.from_numpy(np.ascontiguousarray(x)).to(dev)
    if name == "bfloat16":
        return torch.from_numpy(x.astype(np.float32)).to(dev).to(torch.bfloat16)
    if name in ("float8_e4m3fn", "float8_e5m2"):
        return torch.from_numpy(np.ascontiguousarray(x).view(np.uint8)).to(dev).view(getattr(torch, name))
    if name == "uint32":
        return torch.from_numpy(np.ascontiguousarray(x).view(np.int32)).to(dev).view(torch.uint32)
    raise TypeError(f"no device form for {name}")


CAP = torch.cuda.get_device_capability(0)
BW_FAMILIES = ("tcgen05", "sm120") if DRY else tuple(f for f in (blackwell.family(CAP),) if f)
for fam in BW_FAMILIES:
    for name, make in blackwell.CASES[fam]:
        def run_blackwell(fam=fam, name=name, make=make):
            prog, inputs, out, ref, rtol = make(np.random.default_rng(1234))
            k = tilelang.compile(prog, target=blackwell.DRY_TARGET[fam] if DRY else blackwell.target(CAP), **EXEC)
            args = list(inputs) if DRY else [to_device(x) for x in inputs]
            k(*args)
            if not DRY:
                torch.cuda.synchronize()
            got = np.asarray(args[out] if DRY else args[out].cpu().numpy(), np.float64)
            err = float(np.abs(got - ref).max() / max(np.abs(ref).max(), 1e-30))
            ok = bool(np.isfinite(got).all()) and err <= rtol
            row("blackwell", name, "ok" if ok else "MISMATCH", f"max error {err:.1e} of the largest |C| (tolerance {rtol:g})")
        guarded("blackwell", name, run_blackwell)
if not BW_FAMILIES:
    row("blackwell", "tcgen05 / sm_120a checks", "ok", f"skipped: not a Blackwell GPU ({torch.cuda.get_device_name(0)})")


# ---- 4. compute-sanitizer -------------------------------------------------------------------------------
SAN = r"""
import sys, torch
sys.path.insert(0, {tests!r})
import tilelang, kernels
d = "cuda"
a, b = torch.randn(200, 72, device=d, dtype=torch.float16), torch.randn(72, 136, device=d, dtype=torch.float16)
tilelang.compile(kernels.matmul(200, 136, 72, out_dtype="float32"), target="cuda")(a, b, torch.empty(200, 136, device=d))
q = torch.randn(1, 2, 128, 64, device=d, dtype=torch.float16)
tilelang.compile(kernels.flashattn(1, 2, 128, 64, True), target="cuda")(q, q, q, torch.empty_like(q))
x = torch.randn(100, 256, device=d)
tilelang.compile(kernels.softmax(100, 256, 4), target="cuda")(x, torch.empty_like(x))
torch.cuda.synchronize()
print("sanitized kernels ran")
"""


def sanitizer(tool):
    def run():
        exe = shutil.which("compute-sanitizer") or next(
            (p for p in ("/usr/local/cuda/bin/compute-sanitizer",) if os.path.exists(p)), None)
        if exe is None:
            row("sanitizer", tool, "ERROR", "compute-sanitizer not found")
            return
        code = SAN.format(tests=os.path.join(ROOT, "tests", "python"))
        p = subprocess.run([exe, "--tool", tool, "--error-exitcode", "9", sys.executable, "-c", code],
                           capture_output=True, text=True, timeout=420)
        text = p.stdout + p.stderr
        summary = next((line for line in text.splitlines() if "ERROR SUMMARY" in line or "RACECHECK SUMMARY" in line),
                       "")
        ok = p.returncode == 0 and "sanitized kernels ran" in text
        row("sanitizer", f"{tool} (ragged gemm, causal flashattn, softmax)", "ok" if ok else "REPORT",
            summary.strip()[:160] or text.strip().splitlines()[-1][:160] if text.strip() else f"rc {p.returncode}")
    guarded("sanitizer", tool, run)


if DRY:
    row("sanitizer", "memcheck, racecheck", "skip", "dry run")
else:
    sanitizer("memcheck")
    sanitizer("racecheck")


# ---- 5. timings -----------------------------------------------------------------------------------------
def bench(fn, n=1 if DRY else 30):
    for _ in range(0 if DRY else 3):
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


def time_gemm(name, M, dt, bm=128, bn=128, bk=32, st=3, threads=128, target="cuda"):
    def run():
        tdt = getattr(torch, dt)
        a, b, c = r(M, M, dt=tdt), r(M, M, dt=tdt), torch.empty(M, M, device=dev, dtype=tdt)
        k = tilelang.compile(kernels.matmul(M, M, M, bm, bn, bk, dtype=dt, num_stages=st, threads=threads),
                             target=target, **EXEC)
        k(a, b, c)
        ok = torch.allclose(c.float(), (a @ b).float(), atol=1.0, rtol=5e-2)
        ours, theirs = bench(lambda: k(a, b, c)), bench(lambda: torch.matmul(a, b))
        tf = 2 * M ** 3 / ours / 1e9
        timings.append(dict(name=name, ours_ms=ours, ref_ms=theirs, ref="torch.matmul (cuBLAS)", tflops=tf,
                            ratio=theirs / ours))
        row("timing", name, "ok" if ok else "MISMATCH",
            f"{ours:.3f} ms vs cuBLAS {theirs:.3f} ms ({theirs / ours:.2f}x), {tf:.0f} TFLOP/s")
    guarded("timing", name, run)


def time_attn(name, B, H, S, D, causal):
    def run():
        q, k_, v = r(B, H, S, D), r(B, H, S, D), r(B, H, S, D)
        o = torch.empty_like(q)
        kern = tilelang.compile(kernels.flashattn(B, H, S, D, causal), target="cuda", **EXEC)
        kern(q, k_, v, o)
        ref = torch.nn.functional.scaled_dot_product_attention(q, k_, v, is_causal=causal)
        ok = torch.allclose(o.float(), ref.float(), atol=2e-2, rtol=2e-2)
        ours = bench(lambda: kern(q, k_, v, o))
        theirs = bench(lambda: torch.nn.functional.scaled_dot_product_attention(q, k_, v, is_causal=causal))
        flops = 4 * B * H * S * S * D / (2 if causal else 1)
        tf = flops / ours / 1e9
        timings.append(dict(name=name, ours_ms=ours, ref_ms=theirs, ref="scaled_dot_product_attention", tflops=tf,
                            ratio=theirs / ours))
        row("timing", name, "ok" if ok else "MISMATCH",
            f"{ours:.3f} ms vs SDPA {theirs:.3f} ms ({theirs / ours:.2f}x), {tf:.0f} TFLOP/s")
    guarded("timing", name, run)


BIG, SEQ = (256, 128) if DRY else (8192, 4096)  # the dry run walks the same code at sizes the emulator runs
REF = 256 if DRY else 1024
time_gemm(f"reference GEMM {REF}^3 fp16 (128x128x32, 2 stages)", REF, "float16", st=2)
time_gemm(f"GEMM {BIG}^3 fp16 (128x128x32, 3 stages)", BIG, "float16")
time_gemm(f"GEMM {BIG}^3 bf16 (128x128x32, 3 stages)", BIG, "bfloat16")
if torch.cuda.get_device_capability(0)[0] == 9:
    for name, size, dt, bm, bn, bk, threads, st in hopper.TIMED[:1] if DRY else hopper.TIMED:
        time_gemm(name.replace(f"{size}^3", f"{BIG}^3") if DRY else name, BIG if DRY else size, dt, bm, bn, bk,
                  st, threads, target=hopper.SM90A)
for D in (64, 128):
    for causal in (False, True):
        time_attn(f"FlashAttention fwd {1 if DRY else 4}x{1 if DRY else 16}x{SEQ}x{D} causal={causal}",
                  *((1, 1) if DRY else (4, 16)), SEQ, D, causal)

# ---- the table --------------------------------------------------------------------------------------------
failed = [x for x in rows if x["status"] != "ok" and not (DRY and x["status"] == "skip")]
print("\n| section | check | result | detail |\n|---|---|---|---|")
for x in rows:
    print(f"| {x['section']} | {x['name']} | {x['status']} | {x['detail']} |")
elapsed = time.time() - T0
print(f"\n{len(rows) - len(failed)} passed, {len(failed)} failed ({elapsed:.0f} s, {torch.cuda.get_device_name(0)})")
report = dict(device=torch.cuda.get_device_name(0), elapsed_s=elapsed, ok=not failed, dry_run=DRY, rows=rows,
              timings=timings)
paths = [os.path.join(ROOT, "build", "gpu_check_dry.json" if DRY else "gpu_check.json")]
if os.environ.get("OUT"):
    paths.append(os.path.join(os.environ["OUT"], "gpu_check.json"))
for p in paths:
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, "w") as f:
        json.dump(report, f, indent=1)
sys.exit(1 if failed else 0)
