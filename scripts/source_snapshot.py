"""Writes the generated source, choices, warnings and shared-memory report (or the error) of a set of test kernels
for every GPU target, three explicit x86 CPU targets (independent of the host) and a few pass configs, one file each, with no binary built: run it before and after a change
that must not change generated code, then `diff -r BEFORE AFTER` (issue 33: zero diffs). Usage:
    python scripts/source_snapshot.py OUT_DIR"""
import os, sys, traceback
sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "tests", "python")))
import tilelang
from tilelang import _ffi
from tilelang import language as T
from tilelang.jit.headers import include_dir
import kernels as K

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
TARGETS = ["cuda -arch=sm_80", "cuda -arch=sm_86", "cuda -arch=sm_89", "cuda -arch=sm_90", "cuda -arch=sm_90a",
           "cuda -arch=sm_100a", "cuda -arch=sm_120a",
           "hip -arch=gfx90a", "hip -arch=gfx942", "hip -arch=gfx950", "metal", "opencl", "opencl -mattr=+subgroups",
           "cpu -mcpu=x86-64-v3", "cpu -mcpu=x86-64-v4", "cpu -mcpu=sapphirerapids"]
CFGS = {"": {}, "notma": {"tl.disable_tma_lower": "1"}, "nowgmma": {"tl.disable_wgmma": "1"},
        "nows": {"tl.disable_warp_specialized": "1"}, "noasync": {"tl.disable_async_copy": "1"}}

def mk(name, fn):
    try:
        return [(name, fn())]
    except Exception as e:  # noqa
        print("skip", name, type(e).__name__, e)
        return []

ks = list(K.all_kernels())
for dt, acc in [("bfloat16", "float32"), ("float32", "float32"), ("int8", "int32"), ("float8_e4m3fn", "float32")]:
    ks += mk(f"matmul_{dt}", lambda dt=dt, acc=acc: K.matmul(256, 256, 256, 64, 64, 64, dtype=dt, accum_dtype=acc))
ks += mk("matmul_small", lambda: K.matmul(128, 128, 128, 64, 64, 32))
ks += mk("matmul_cpu_rewrites", lambda: K.matmul(512, 512, 512, 32, 32, 32, dtype="float32"))  # every CPU rewrite
ks += mk("flashattn_st2", lambda: K.flashattn(1, 2, 256, 64, is_causal=True, num_stages=2))
ks += mk("cumsum_dim1", lambda: K.cumsum(128, 128, 32, 32, dim=1))
ks += mk("axpb", K.axpb)
ks += mk("splitk_atomic", lambda: K.matmul_splitk(128, 128, 256, 64, 64, 32, split_k=2))
try:
    import test_tma as TM
    ks += mk("tma_tile_copy", lambda: TM._tile_copy(256, 256, 64, 64))
    ks += mk("tma_pipeline_loop", lambda: TM._pipeline_in_a_loop(2, 128, 128, 128))
    ks += mk("tma_explicit", lambda: TM._explicit_tma(128, 128, 64, 64))
    ks += mk("tma_load_scale_store", lambda: TM._load_scale_store(128, 128, 64, 64))
except Exception as e:
    print("no test_tma", e)
try:
    import test_warp_specialize as WS
    ks += mk("ws_gemm", lambda: WS._gemm_ws(256, 256, 256, 128, 128, 64, 3))
    ks += mk("ws_explicit", lambda: WS._explicit_ws(128, 128, 64, 64))
    ks += mk("ws_fa_heads", lambda: WS._flashattn_heads_loop(1, 2, 128, 64, True))
except Exception as e:
    print("no test_ws", e)
try:
    import test_hopper as H
    ks += mk("hopper_one_tile", lambda: H._one_tile_gemm(64, 64, 64, True))
    ks += mk("hopper_barrier", lambda: H._barrier_kernel())
    ks += mk("hopper_nreg", lambda: H._nreg_kernel(240, True))
except Exception as e:
    print("no test_hopper", e)
try:
    import test_opencl_subgroups as SG
    for kind in ["sum", "max", "min", "abssum"]:
        ks += mk(f"reduce_{kind}", lambda kind=kind: SG._reduce_kernel(64, 128, kind, "float32"))
except Exception as e:
    print("no test_opencl_subgroups", e)
try:
    import test_fp8_gemm as F8
    ks += mk("fp8_small_gemm", lambda: F8._small_gemm(F8.E4M3, F8.E4M3, "float32", "shared"))
except Exception as e:
    print("no fp8", e)

n = 0
for name, f in ks:
    for t in TARGETS:
        for cname, cfg in CFGS.items():
            if cname and not t.startswith("cuda") and cname != "noasync":
                continue
            try:
                c = _ffi.compile(f, t, dict(cfg), include_dir(), True, "", False)
                text = c.source + "\n---choices\n" + "\n".join(c.choices) + "\n---warnings\n" + "\n".join(c.warnings) + \
                    "\n---smem\n" + c.smem_report
            except Exception as e:  # noqa
                text = f"ERROR {type(e).__name__}: {e}\n"
            fn = f"{name}__{t.replace(' ', '_').replace('=', '').replace('+', '')}__{cname or 'default'}.txt"
            with open(os.path.join(out, fn), "w") as fh:
                fh.write(text)
            n += 1
print("wrote", n, "files for", len(ks), "kernels")
