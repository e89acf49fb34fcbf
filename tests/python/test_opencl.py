"""The OpenCL backend run for real: kernels compiled for target "opencl" are built by the OpenCL runtime
(PoCL on this machine's CPU; scripts/setup.sh installs it) and must match a float64 NumPy reference on
fresh random inputs. Sizes are small: PoCL compiles every kernel with LLVM.
"""
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import (TileLangArgumentError, TileLangResourceError, TileLangUnsupportedError)
from tilelang.jit import clear_compile_memo
from tilelang.jit import opencl as jit_opencl

import kernels


def _rng():
    """A fresh seed per test (TL_TEST_SEED to replay one), printed so that a failure names it."""
    seed = int(os.environ.get("TL_TEST_SEED") or np.random.SeedSequence().entropy % 2**32)
    print("seed", seed)
    return np.random.default_rng(seed)


def ocl(func, **kw):
    return tilelang.compile(func, target="opencl", **kw)


def f64(x):
    return np.asarray(x).astype(np.float64)


def randn(rng, shape):
    return rng.standard_normal(shape).astype(np.float32)


def test_runtime_has_a_device():
    d = jit_opencl.device()
    print(d["platform"], "/", d["name"], "/", d["version"])
    assert d["local_mem"] > 0 and d["max_work_group"] >= 128


# ---- kernels against NumPy ----------------------------------------------------------------------------

@pytest.mark.parametrize("M,N,K,tiles", [(128, 128, 128, (64, 64, 32)),
                                         (100, 72, 88, (64, 64, 32))])  # ragged: no size a multiple of the tile
def test_reference_gemm_fp32(M, N, K, tiles):
    rng = _rng()
    bm, bn, bk = tiles
    k = ocl(kernels.matmul(M, N, K, bm, bn, bk, dtype="float32", num_stages=2))
    a, b = randn(rng, (M, K)), randn(rng, (K, N))
    c = np.full((M, N), np.nan, np.float32)
    k(a, b, c)
    np.testing.assert_allclose(c, f64(a) @ f64(b), rtol=1e-4, atol=1e-4)
    assert any("per-thread multiply-adds" in x for x in k.choices)


def test_reference_program_as_written_fp16():
    """The demo's kernel unchanged (1024^3 fp16, 128x128x32 tiles, 128 threads, 2 stages). float16 is a storage
    format on OpenCL (vload_half / vstore_half_rte, no cl_khr_fp16 needed): products accumulate in fp32."""
    rng = _rng()
    k = ocl(kernels.demo_matmul_kernel())
    a, b = (rng.standard_normal((1024, 1024)).astype(np.float16) for _ in range(2))
    c = np.zeros((1024, 1024), np.float16)
    k(a, b, c)
    ref = f64(a) @ f64(b)
    np.testing.assert_allclose(f64(c), ref, rtol=2e-3, atol=4e-2)  # C is rounded to fp16 once
    src = k.get_kernel_source()
    assert "vload_half(0, " in src and "vstore_half_rte(" in src and "cl_khr_fp16" not in src


def test_splitk_atomic_add():
    rng = _rng()
    M, N, K = 72, 64, 128
    k = ocl(kernels.matmul_splitk(M, N, K, 32, 32, 16, split_k=4, dtype="float32"))
    a, b = randn(rng, (M, K)), randn(rng, (K, N))
    c = np.zeros((M, N), np.float32)
    k(a, b, c)
    np.testing.assert_allclose(c, f64(a) @ f64(b), rtol=1e-4, atol=1e-4)
    assert "atomic_cmpxchg" in k.get_kernel_source()


def test_softmax_and_rmsnorm_ragged_rows():
    rng = _rng()
    M, N = 70, 128  # 70 rows: the last block is partial
    x = randn(rng, (M, N))
    y = np.zeros_like(x)
    ocl(kernels.softmax(M, N, 8))(x, y)
    e = np.exp(f64(x) - f64(x).max(1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-7)
    ocl(kernels.rms_norm(M, N, 4))(x, y)
    np.testing.assert_allclose(y, f64(x) / np.sqrt((f64(x) ** 2).mean(1, keepdims=True) + 1e-12), rtol=1e-5)


@pytest.mark.parametrize("dim,reverse", [(1, False), (0, True)])
def test_cumsum(dim, reverse):
    rng = _rng()
    M, N, bm, bn = 80, 48, 32, 32  # ragged in both dimensions
    x = randn(rng, (M, N))
    y = np.zeros_like(x)
    ocl(kernels.cumsum(M, N, bm, bn, dim=dim, reverse=reverse))(x, y)
    ref = np.zeros((M, N))
    for i in range(0, M, bm):
        for j in range(0, N, bn):
            t = f64(x[i:i + bm, j:j + bn])
            if reverse:
                t = np.flip(t, dim)
            s = np.cumsum(t, dim)
            ref[i:i + bm, j:j + bn] = np.flip(s, dim) if reverse else s
    np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("causal", [False, True])
def test_flashattention_forward(causal):
    """fp32 (an fp16 FlashAttention also matches, but PoCL takes ~40 s to compile it cold: too slow here)."""
    rng = _rng()
    B, H, S, D = 1, 2, 128, 32
    k = ocl(kernels.flashattn(B, H, S, D, causal, block_M=64, block_N=64, dtype="float32"))
    q, kk, v = (randn(rng, (B, H, S, D)) for _ in range(3))
    o = np.zeros_like(q)
    k(q, kk, v, o)
    s = f64(q) @ f64(kk).transpose(0, 1, 3, 2) / np.sqrt(D)
    if causal:
        s = np.where(np.tril(np.ones((S, S), bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    np.testing.assert_allclose(f64(o), p @ f64(v), rtol=1e-4, atol=1e-4)


def test_dynamic_length_and_scalars():
    rng = _rng()
    k = ocl(kernels.axpb())
    n = 1000  # not a multiple of the 128-thread block
    a = randn(rng, (n,))
    b = np.zeros_like(a)
    k(a, b, 1.5, -3)
    np.testing.assert_allclose(b, 1.5 * f64(a) - 3, rtol=1e-6)
    with pytest.raises(TileLangArgumentError, match="dtype float32"):
        k(a.astype(np.float64), b, 1.5, -3)


def test_value_semantics_match_the_cpu_target():
    """Integer floor division / modulo by zero and INT_MIN // -1 (helpers, never a trap), float64 to int32
    casts of NaN / inf / out-of-range values (saturating), int8 wrap-around: the same bits as the CPU target
    (docs/semantics.md)."""
    rng = _rng()
    n = T.dynamic("n")

    @T.prim_func
    def ops(A: T.Tensor((n,), "int32"), B: T.Tensor((n,), "int32"), X: T.Tensor((n,), "float64"),
            C: T.Tensor((n,), "int32"), D: T.Tensor((n,), "int32"), Y: T.Tensor((n,), "int32"),
            Z: T.Tensor((n,), "int8")):
        with T.Kernel(T.ceildiv(n, 64), threads=64) as bx:
            for i in T.Parallel(64):
                idx = bx * 64 + i
                if idx < n:
                    C[idx] = A[idx] // B[idx]
                    D[idx] = A[idx] % B[idx]
                    Y[idx] = T.cast(X[idx] * 1e10, "int32")
                    Z[idx] = T.cast(A[idx], "int8") * T.cast(3, "int8")

    N = 300
    a = rng.integers(-100, 100, N).astype(np.int32)
    b = rng.integers(-3, 4, N).astype(np.int32)
    a[:4], b[:4] = [-2**31, -2**31, 7, -7], [-1, 0, 0, -1]
    x = rng.standard_normal(N)
    x[:3] = [np.nan, np.inf, -np.inf]
    got = {}
    for target in ("cpu", "opencl"):
        outs = [np.zeros(N, np.int32) for _ in range(3)] + [np.zeros(N, np.int8)]
        tilelang.compile(ops, target=target)(a, b, x, *outs)
        got[target] = outs
    for name, c, o in zip("CDYZ", got["cpu"], got["opencl"]):
        np.testing.assert_array_equal(o, c, err_msg=f"output {name}")
    np.testing.assert_array_equal(got["opencl"][0][4:], np.where(b[4:] == 0, 0, a[4:] // np.where(b[4:] == 0, 1, b[4:])))


def test_random_programs_match_numpy():
    """A few of the fuzzer's random tile programs (tests/fuzz/programs.py: elementwise, staged copies with ragged
    tails, reductions, GEMMs, cumsum, softmax) on OpenCL against NumPy; TL_FUZZ_SEED replays a start seed."""
    fuzz_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fuzz")
    sys.path.insert(0, fuzz_dir)
    try:
        import programs
    finally:
        sys.path.remove(fuzz_dir)
    start = int(os.environ.get("TL_FUZZ_SEED") or np.random.SeedSequence().entropy % 10**6)
    print("first seed", start)
    ran = 0
    for seed in range(start, start + 40):
        if ran == 6:
            break
        case = programs.generate(seed)
        try:
            k = ocl(case.func, pass_configs=case.pass_configs or None)
        except TileLangUnsupportedError as e:  # bfloat16 programs: no OpenCL C type
            assert "bfloat16" in str(e), str(e)
            continue
        outs = [o.copy() for o in case.outputs]
        k(*[i.copy() for i in case.inputs], *outs)
        for o, w in zip(outs, case.reference):
            ok, how = programs._close(o, w, case.tol)
            assert ok, f"seed {seed} ({case.func.name}): {how}"
        ran += 1
    assert ran == 6


def test_split_tile_op_has_one_barrier_before_its_branches():
    """Regression: the fuzzer's ragged `views` programs (seeds 153 and 269: a shared tile, the interior-block
    split) had a barrier at the head of both branches of the block-uniform if; PoCL corrupted its heap
    running them (SIGSEGV / abort). HoistBranchBarriers puts one barrier before the if. Run in a child
    process, so a crash fails this test instead of the whole run."""
    fuzz_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fuzz")
    code = (f"import sys\nsys.path.insert(0, {fuzz_dir!r})\n"
            "import tilelang, programs\n"
            "for seed in (153, 269):\n"
            "    case = programs.generate(seed)\n"
            "    k = tilelang.compile(case.func, target='opencl', pass_configs=case.pass_configs or None)\n"
            "    outs = [o.copy() for o in case.outputs]\n"
            "    k(*[i.copy() for i in case.inputs], *outs)\n"
            "    for o, w in zip(outs, case.reference):\n"
            "        ok, how = programs._close(o, w, case.tol)\n"
            "        print('seed', seed, ok, how, flush=True)\n"
            "    src = k.get_kernel_source()\n"
            "    print('split', seed, src.count('} else {') > 0, flush=True)\n"
            "    print('branch-head barrier', seed, bool(__import__('re').search("
            "r'(\\{|else \\{)\\n(\\s*// tile op \\d+\\n)?\\s*barrier\\(', src)), flush=True)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, (r.returncode, r.stdout[-2000:], r.stderr[-2000:])
    for seed in (153, 269):
        assert f"seed {seed} True" in r.stdout, r.stdout
        assert f"split {seed} True" in r.stdout, r.stdout  # the if/else the regression needs is still there
        assert f"branch-head barrier {seed} False" in r.stdout, r.stdout


# ---- the generated OpenCL C -----------------------------------------------------------------------

def test_codegen_uses_local_memory_barriers_and_vector_loads():
    """What the generator means to print, compiled for real by the OpenCL runtime."""
    k = ocl(kernels.softmax(64, 128, 8))
    src = k.get_kernel_source()
    assert re.search(r"__kernel __attribute__\(\(reqd_work_group_size\(128, 1, 1\)\)\) void main_kernel\(", src)
    assert re.search(r"__local uchar smem\[\d+\]", src)            # the planned tile memory
    assert re.search(r"__local float\* red_smem_\d+ = \(__local float\*\)\(smem \+ \d+\)", src)
    assert "barrier(CLK_LOCAL_MEM_FENCE" in src
    assert re.search(r"vload4\(0, \(&X\[", src)                   # 16-byte loads of the rows
    assert re.search(r"vstore4\(\(float4\)\(", src)              # and 16-byte stores
    assert "__syncthreads" not in src and "threadIdx" not in src and "#include" not in src
    g = ocl(kernels.matmul(128, 128, 64, 64, 64, 32, dtype="float32"))
    gsrc = g.get_kernel_source()
    assert "__local float* A_shared" in gsrc and "__local float* B_shared" in gsrc
    assert gsrc.count("barrier(CLK_LOCAL_MEM_FENCE") >= 2
    assert jit_opencl.device()["name"] in g.compiled.compiler  # built by the OpenCL runtime's compiler


def test_codegen_without_a_runtime_and_no_runtime_error():
    """Generating OpenCL C needs no runtime; compiling for 'opencl' without one is a clear error at
    compile time (importing tilelang still works)."""
    code = r"""
import sys
sys.path.insert(0, %r)
import tilelang, kernels
from tilelang import _ffi
from tilelang.errors import TileLangUnsupportedError
f = kernels.softmax(64, 128, 8)
src = _ffi.codegen(f, "opencl", {})
assert "__kernel" in src and "barrier(CLK_LOCAL_MEM_FENCE" in src, src
try:
    tilelang.compile(f, target="opencl")
except TileLangUnsupportedError as e:
    print("ERR", e)
else:
    print("NO ERROR")
""" % os.path.dirname(os.path.abspath(__file__))
    env = dict(os.environ, TILELANG_OPENCL_LIBRARY="/nonexistent/libOpenCL.so.1")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "ERR target 'opencl': no OpenCL runtime: /nonexistent/libOpenCL.so.1 could not be loaded" in r.stdout
    assert "apt-get install ocl-icd-libopencl1 pocl-opencl-icd" in r.stdout


# ---- a race the barrier analysis would have to catch --------------------------------------------

def _row_sum_kernel(M, N):
    @T.prim_func
    def row_sum(X: T.Tensor((M, N), "float32"), Y: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=128) as bx:
            x = T.alloc_fragment((M, N), "float32")
            s = T.alloc_fragment((M,), "float32")
            T.copy(X[0, 0], x)
            T.reduce_sum(x, s, dim=1)  # every thread's partials go through local memory
            for i, j in T.Parallel(M, N):
                Y[i, j] = s[i]

    return row_sum


def test_missing_barriers_give_wrong_results():
    """Without barrier insertion, the partials of a reduction are read through local memory before the
    other work-items wrote them: on PoCL (work-items of a group run one after another between barriers)
    the result is wrong, deterministically; with barriers it is right."""
    rng = _rng()
    f = _row_sum_kernel(8, 128)
    good = ocl(f)
    bad = ocl(f, pass_configs={"tl.disable_barrier_insertion": True})
    assert good.get_kernel_source().count("barrier(") >= 1
    assert bad.get_kernel_source().count("barrier(") == 0
    x = randn(rng, (8, 128)) + 1.0  # fresh values: nothing left in local memory matches them
    y = np.zeros_like(x)
    bad(x, y)
    wrong = np.abs(y - f64(x).sum(1, keepdims=True)).max()
    good(x, y)
    np.testing.assert_allclose(y, np.broadcast_to(f64(x).sum(1, keepdims=True), y.shape), rtol=1e-5, atol=1e-4)
    # the race reads partials not written yet: stale values (a wrong sum) or uninitialised ones (NaN)
    assert not np.isfinite(wrong) or wrong > 1e-2, "the race did not show"


# ---- what the target cannot do ------------------------------------------------------------------------

def test_local_memory_over_the_device_limit_lists_the_buffers():
    limit = jit_opencl.device()["local_mem"]
    rows = limit // (64 * 4) // 2 + 64  # two tiles of this many rows overflow the limit

    @T.prim_func
    def big(A: T.Tensor((rows, 64), "float32"), B: T.Tensor((rows, 64), "float32")):
        with T.Kernel(1, threads=128) as bx:
            A_tile = T.alloc_shared((rows, 64), "float32")
            B_tile = T.alloc_shared((rows, 64), "float32")
            T.copy(A[0, 0], A_tile)
            T.copy(A_tile, B_tile)
            T.copy(B_tile, B[0, 0])

    with pytest.raises(TileLangResourceError) as e:
        ocl(big)
    msg = str(e.value)
    assert "bytes of local memory, over the %d-byte limit of OpenCL device" % limit in msg
    assert re.search(r"A_tile\s+%dx64\s+float32" % rows, msg) and re.search(r"B_tile\s+%dx64\s+float32" % rows, msg)
    assert "test_opencl.py" in msg  # located at the kernel


def test_unsupported_dtypes():
    with pytest.raises(TileLangUnsupportedError, match="bfloat16.*OpenCL C has no such type"):
        ocl(kernels.matmul(64, 64, 64, 64, 64, 32, dtype="bfloat16", out_dtype="float32"))


def test_unknown_execution_backend():
    with pytest.raises(TileLangUnsupportedError, match="execution_backend 'nvrtc' is not available for target "
                                                       "'opencl'"):
        ocl(kernels.softmax(16, 64, 8), execution_backend="nvrtc")


def test_emulator_runs_the_opencl_lowering():
    """The OpenCL lowering is thread-level IR without mma / cp.async / shuffles: the emulator runs it (lane by
    lane, with race checks), which catches what PoCL's sequential work-items would hide."""
    from tilelang.errors import TileLangEmulationError

    rng = _rng()
    f = _row_sum_kernel(8, 128)
    x = randn(rng, (8, 128))
    y = np.zeros_like(x)
    ocl(f, execution_backend="emulator")(x, y)
    np.testing.assert_allclose(y, np.broadcast_to(f64(x).sum(1, keepdims=True), y.shape), rtol=1e-5, atol=1e-4)
    with pytest.raises(TileLangEmulationError, match="race"):
        ocl(f, execution_backend="emulator", pass_configs={"tl.disable_barrier_insertion": True})(x, y)


def test_autotune_on_opencl(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path))
    rng = _rng()

    def softmax_blocks(M, N, block_M=8):
        return kernels.softmax(M, N, block_M)

    def ref(x):
        e = np.exp(f64(x) - f64(x).max(1, keepdims=True))
        return e / e.sum(1, keepdims=True)

    tuned = tilelang.autotune(configs=[{"block_M": 4}, {"block_M": 8}], warmup=2, rep=5, ref_prog=ref, atol=1e-6,
                              rtol=1e-4)(tilelang.jit(out_idx=[1], target="opencl")(softmax_blocks))
    result = tuned(32, 128)
    assert [r.ok for r in result.results] == [True, True] and result.latency > 0
    x = randn(rng, (32, 128))
    np.testing.assert_allclose(result(x), ref(x), rtol=1e-5, atol=1e-7)


# ---- tools --------------------------------------------------------------------------------------------

def test_profiler_lower_trace_and_disk_cache(tmp_path, monkeypatch):
    rng = _rng()
    f = kernels.softmax(64, 128, 8)
    k = ocl(f)
    ms = k.get_profiler().do_bench(n_warmup=2, n_repeat=5)
    assert 0 < ms < 1e4
    assert k._mod.last_launch_ms > 0  # OpenCL profiling events
    def softmax_ref(x, y):
        e = np.exp(f64(x) - f64(x).max(1, keepdims=True))
        return e / e.sum(1, keepdims=True)

    k.get_profiler().assert_allclose(softmax_ref, atol=1e-6, rtol=1e-4)

    from tilelang.tools import ir_lower_trace

    trace = ir_lower_trace(f, "opencl", out_dir=str(tmp_path / "trace"))
    names = [p.name for p in trace.passes]
    assert "LowerTileOpsGPU" in names and "InsertBarriers" in names
    assert (tmp_path / "trace" / "final_source.cl").read_text().count("__kernel") == 1
    monkeypatch.setenv("TL_LOWER_TRACE", str(tmp_path / "env_trace"))
    traced = ocl(f)  # the JIT writes the trace of its own compile
    (out,) = os.listdir(tmp_path / "env_trace")
    assert (tmp_path / "env_trace" / out / "final_source.cl").read_text() == traced.get_kernel_source()
    monkeypatch.delenv("TL_LOWER_TRACE")

    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path / "cache"))
    clear_compile_memo()
    first = ocl(kernels.rms_norm(16, 64, 4))
    clear_compile_memo()
    second = ocl(kernels.rms_norm(16, 64, 4))
    assert not first.from_cache and second.from_cache
    x = randn(rng, (16, 64))
    y = np.zeros_like(x)
    second(x, y)
    np.testing.assert_allclose(y, f64(x) / np.sqrt((f64(x) ** 2).mean(1, keepdims=True) + 1e-12), rtol=1e-5)
