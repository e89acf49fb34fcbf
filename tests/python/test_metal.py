"""The Metal backend. There is no Metal compiler or runtime on Linux, so every kernel compiled here for
target "metal" is (a) checked by clang in C++ mode against our declarations of the MSL builtins
(include/tl_device/metal_check/msl_check.h) and (b) run in the emulator, lane by lane over 32-wide
SIMD-groups with simdgroup_matrix semantics from the MSL specification, against NumPy in float64.
"""
import os
import re

import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import (TileLangEmulationError, TileLangError, TileLangResourceError,
                             TileLangUnsupportedError)

import kernels
from tilelang.jit import metal as jit_metal


def _rng():
    """A fresh seed per test (TL_TEST_SEED to replay one), printed so that a failure names it."""
    seed = int(os.environ.get("TL_TEST_SEED") or np.random.SeedSequence().entropy % 2**32)
    print("seed", seed)
    return np.random.default_rng(seed)


def f64(x):
    return np.asarray(x).astype(np.float64)


def clang_check(source):
    """(returncode, diagnostics) of clang's syntax and type check of an MSL source."""
    ok, err = jit_metal.check_source(source)
    return (0 if ok else 1), err


def metal(func, **kw):
    """Compiles for Metal; the generated MSL must pass the clang check (every kernel of this file goes
    through here, the emulated ones too)."""
    k = tilelang.compile(func, target="metal", **kw)
    rc, err = clang_check(k.get_kernel_source())
    assert rc == 0, "the generated MSL does not pass the clang check:\n" + err + "\n" + k.get_kernel_source()
    return k


def emu(func, **kw):
    metal(func)  # the source of the same kernel passes the check
    return metal(func, execution_backend="emulator", **kw)


def attention(q, k, v, causal):
    """softmax(q k^T / sqrt(D)) v in float64 (causal: keys up to the query's row)."""
    S, D = q.shape[-2], q.shape[-1]
    s = f64(q) @ f64(k).transpose(0, 1, 3, 2) / np.sqrt(D)
    if causal:
        s = np.where(np.tril(np.ones((S, S), bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    return p / p.sum(-1, keepdims=True) @ f64(v)


def randn(rng, shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


# ---- target, code generation, runtime -----------------------------------------------------------------

def test_target_limits():
    for spec in ("metal", {"kind": "metal"}):
        t = tilelang.Target(spec)
        assert (t.kind, t.smem_limit, t.max_threads, t.warp_size) == ("metal", 32 * 1024, 1024, 32)
        assert "simdgroup_matrix" in t.features


def test_codegen_emits_msl():
    g = metal(kernels.matmul(128, 128, 64, 64, 64, 32, dtype="float16"))
    src = g.get_kernel_source()
    for s in ("#include <metal_stdlib>", "kernel void matmul_kernel_kernel(", "device half* A [[buffer(0)]]",
              "[[threadgroup_position_in_grid]]", "[[thread_position_in_threadgroup]]", "threadgroup half* A_shared",
              "threadgroup_barrier(mem_flags::mem_threadgroup", "simdgroup_half8x8", "simdgroup_float8x8",
              "simdgroup_load(", "simdgroup_store(", "simdgroup_multiply_accumulate("):
        assert s in src, s
    for cuda_only in ("cp_async", "ldmatrix", "mma_sync", "__syncthreads", "__shared__"):
        assert cuda_only not in src
    assert any("simdgroup_matrix 8x8 float16 -> float32" in c and "4 at a time" in c for c in g.choices)
    # reductions over a SIMD-group use its shuffles
    s = metal(kernels.softmax(64, 128, 8)).get_kernel_source()
    assert "simd_shuffle_xor(" in s


def test_reference_program_compiles_as_written():
    """The demo's kernel unchanged (1024^3 fp16, 128x128x32 tiles, 128 threads, 2 stages) compiles to MSL that
    passes the check; launching it needs a Metal runtime, which Linux does not have: a clear error."""
    k = metal(kernels.demo_matmul_kernel())
    assert k.compiled.binary_format == "msl"
    a = np.zeros((1024, 1024), np.float16)
    with pytest.raises(TileLangUnsupportedError, match=r"no Metal runtime.*execution_backend=\"emulator\""):
        k(a, a, a)


def test_every_test_kernel_compiles_to_checked_msl():
    """Every kernel of the shared test set compiles and passes the clang check, or (FlashAttention with 64x64
    fp16 tiles) is rejected for needing more than Metal's 32 KB of threadgroup memory."""
    built = 0
    for name, f in kernels.all_kernels():
        try:
            metal(f)
            built += 1
        except TileLangResourceError as e:
            assert name.startswith("flashattn") and "32768-byte limit" in str(e), name
    assert built >= 10


def test_registry_and_lower_trace(tmp_path, monkeypatch):
    from tilelang import _ffi
    from tilelang.tools import ir_lower_trace

    assert "metal" in _ffi.backend_kinds()
    header, fragments, names, emulatable, fork_safe = _ffi.backend_info("metal")
    assert names[0] == "metal" and emulatable and "mma_C" in fragments
    f = kernels.matmul(64, 64, 32, 64, 64, 32, dtype="float16")
    tr = ir_lower_trace(f, target="metal")
    assert [p.name for p in tr.passes][-6:] == ["Simplify", "HoistSimdgroupStaging", "HoistSimdgroupOperands",
                                                "SplitInteriorBlocks", "PlanSharedMemory", "InsertBarriers"]
    assert tr.source_ext == "metal" and "simdgroup_multiply_accumulate(" in tr.final_source
    assert any("tl.simdgroup_mma" in p.ir for p in tr.passes)
    monkeypatch.setenv("TL_LOWER_TRACE", str(tmp_path))
    k = metal(f)
    (out,) = os.listdir(tmp_path)
    assert (tmp_path / out / "final_source.metal").read_text() == k.get_kernel_source()


@pytest.mark.parametrize("name", ["matmul_tAB", "softmax", "flashattn16"])
def test_every_pass_output_reparses(name):
    """The Metal pipeline's IR after every pass (simdgroup calls included) prints and re-parses equal."""
    from tilelang import _ffi
    func = dict(kernels.all_kernels(), flashattn16=kernels.flashattn(1, 2, 128, 32, True, 64, 32))[name]
    for pass_name, f in _ffi.lower_trace_funcs(func, "metal"):
        text = _ffi.print_func(f)
        assert _ffi.structural_equal(f, T.parse_source(text)), f"{name}: the IR after {pass_name} differs"


def test_accumulators_stay_simdgroup_matrices_across_the_k_loop():
    """HoistSimdgroupStaging: where the K loop touches the accumulator only through T.gemm (the reference GEMM),
    it goes into simdgroup matrices once before the loop and back once after it; FlashAttention rescales its
    accumulator inside the loop, so there the moves stay in every iteration."""
    src = metal(kernels.demo_matmul_kernel()).get_kernel_source()
    loop = src.index("for (int32_t k = 0;")
    end = src.index("end tile op 3", loop)  # the gemm's op in the loop (the hoisted moves keep its number)
    assert src.index("simdgroup_load(C_simd") < loop and src.index("simdgroup_store(") > end
    body = src[loop:end]
    assert body.count("threadgroup_barrier(") == 2  # after the copies, and before the next iteration's copies
    fa = metal(kernels.flashattn(1, 2, 128, 32, True, 64, 32)).get_kernel_source()
    loop = fa.index("for (int32_t k = 0;")
    assert fa.index("simdgroup_load(C_simd") > loop


def test_clang_check_catches_broken_sources():
    src = metal(kernels.matmul(64, 64, 32, 64, 64, 32, dtype="float16")).get_kernel_source()
    assert clang_check(src)[0] == 0
    rc, err = clang_check(src.replace("simdgroup_multiply_accumulate(", "simdgroup_multiply_accumulat("))
    assert rc != 0 and "simdgroup_multiply_accumulat" in err
    # a type error: a float matrix loaded from a half tile
    rc, err = clang_check(src.replace("simdgroup_half8x8 A_simd", "simdgroup_float8x8 A_simd"))
    assert rc != 0 and "simdgroup_load" in err
    rc, err = clang_check(src.replace("[[thread_position_in_threadgroup]]", "[[thread_positon_in_threadgroup]]"))
    assert rc != 0 and "unknown attribute" in err


# ---- kernels in the emulator against NumPy ------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_reference_gemm(dtype):
    """The demo's kernel (128x128 tiles, 128 threads, 2 stages) at a size the emulator runs quickly. fp32 uses
    block_K = 16: with 32 its A and B tiles alone fill Metal's 32 KB and the accumulator staging tiles
    (4 KB) do not fit."""
    rng = _rng()
    M, N, K = 256, 256, 128
    k = emu(kernels.matmul(M, N, K, 128, 128, 32 if dtype == "float16" else 16, dtype=dtype, num_stages=2))
    a, b = randn(rng, (M, K), dtype), randn(rng, (K, N), dtype)
    c = np.full((M, N), np.nan, dtype)
    k(a, b, c)
    tol = (2e-3, 4e-2) if dtype == "float16" else (1e-5, 1e-4)  # fp16 C is rounded once
    np.testing.assert_allclose(f64(c), f64(a) @ f64(b), rtol=tol[0], atol=tol[1])


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_ragged_gemm(dtype):
    rng = _rng()
    M, N, K = 100, 72, 88  # no size a multiple of the 64x64x32 tile
    k = emu(kernels.matmul(M, N, K, 64, 64, 32, dtype=dtype, out_dtype="float32"))
    np_dt = np.float32 if dtype == "float32" else np.float16
    a, b = randn(rng, (M, K), np_dt), randn(rng, (K, N), np_dt)
    if dtype == "bfloat16":
        import ml_dtypes
        a, b = a.astype(ml_dtypes.bfloat16), b.astype(ml_dtypes.bfloat16)
    c = np.full((M, N), np.nan, np.float32)
    k(a, b, c)
    np.testing.assert_allclose(c, f64(a) @ f64(b), rtol=1e-5, atol=1e-4)
    if dtype == "bfloat16":
        assert "simdgroup_bfloat8x8" in k.get_kernel_source()


@pytest.mark.parametrize("trans_A,trans_B", [(True, False), (False, True), (True, True)])
def test_transposed_gemm(trans_A, trans_B):
    rng = _rng()
    M, N, K = 96, 80, 48
    k = emu(kernels.matmul_transposed(M, N, K, 64, 64, 16, trans_A=trans_A, trans_B=trans_B, dtype="float32",
                                      out_dtype="float32"))
    a = randn(rng, (K, M) if trans_A else (M, K))
    b = randn(rng, (N, K) if trans_B else (K, N))
    c = np.full((M, N), np.nan, np.float32)
    k(a, b, c)
    ref = (f64(a).T if trans_A else f64(a)) @ (f64(b).T if trans_B else f64(b))
    np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("reg,trans", [("A", False), ("B", False), ("B", True)])
def test_gemm_register_operands(reg, trans):
    """A or B held in registers (mma_C / mma_B layouts) goes to a threadgroup tile before simdgroup_load."""
    from test_emulator import _register_operand_gemm
    rng = _rng()
    M, N, K = 64, 64, 32
    k = emu(_register_operand_gemm(M, N, K, reg, trans))
    a = randn(rng, (M, K), np.float16)
    b = randn(rng, (N, K) if trans else (K, N), np.float16)
    c = np.full((M, N), np.nan, np.float32)
    k(a, b, c)
    np.testing.assert_allclose(c, f64(a) @ (f64(b).T if trans else f64(b)), rtol=1e-5, atol=1e-4)
    assert f"{reg}_stage" in k.get_kernel_source()


def test_softmax_and_rmsnorm_ragged_rows():
    rng = _rng()
    M, N = 70, 128  # 70 rows: the last block is partial
    x = randn(rng, (M, N))
    y = np.full_like(x, np.nan)
    emu(kernels.softmax(M, N, 8))(x, y)
    e = np.exp(f64(x) - f64(x).max(1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-7)
    y[:] = np.nan
    emu(kernels.rms_norm(M, N, 4))(x, y)
    np.testing.assert_allclose(y, f64(x) / np.sqrt((f64(x) ** 2).mean(1, keepdims=True) + 1e-12), rtol=1e-5)


@pytest.mark.parametrize("causal,dtype", [(False, "float16"), (True, "float16"), (True, "float32")])
def test_flashattention_forward(causal, dtype):
    """P (acc_s_cast) is a register operand of the second gemm: it goes to a threadgroup tile first."""
    rng = _rng()
    B, H, S, D = 1, 2, 128, 32
    bm, bn = (64, 16) if dtype == "float32" else (64, 32)  # fits Metal's 32 KB
    k = emu(kernels.flashattn(B, H, S, D, causal, block_M=bm, block_N=bn, dtype=dtype))
    q, kk, v = (randn(rng, (B, H, S, D), np.float16 if dtype == "float16" else np.float32) for _ in range(3))
    o = np.full_like(q, np.nan)
    k(q, kk, v, o)
    tol = 2e-3 if dtype == "float16" else 1e-5
    np.testing.assert_allclose(f64(o), attention(q, kk, v, causal), rtol=tol, atol=tol)


@pytest.mark.parametrize("D,causal,total", [(64, False, 20480), (64, True, 20480), (128, True, 28672)])
def test_flashattention_64x64_fits_in_32kb(D, causal, total):
    """TileLang's usual FlashAttention tile (64x64, fp16) needed 40960 bytes at head dim 64 and 45056 at 128. Q, the
    first gemm's A operand, is the same in every iteration: its simdgroup matrices are loaded once before the loop
    (HoistSimdgroupOperands) and Q_shared is dead during it; with liveness inside the loop (PlanSharedMemory)
    V_shared takes K_shared's bytes (K is dead after the first gemm, V is copied whole after it) and the first
    gemm's accumulator staging the P stage's. Race-free in the emulator, matching NumPy, and the MSL passes the
    clang check."""
    rng = _rng()
    B, H, S = 1, 2, 192
    f = kernels.flashattn(B, H, S, D, causal, block_M=64, block_N=64, dtype="float16")
    k = emu(f)
    rep = k.get_shared_memory_report()
    assert f"total {total} bytes" in rep, rep
    off = {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\w+)\s.*\s(\d+)$", rep, re.M)}
    assert off["K_shared"] == off["V_shared"] == off["Q_shared"], rep
    q, kk, v = (randn(rng, (B, H, S, D), np.float16) for _ in range(3))
    o = np.full_like(q, np.nan)
    k(q, kk, v, o)
    np.testing.assert_allclose(f64(o), attention(q, kk, v, causal), rtol=2e-3, atol=2e-3)
    src = metal(f).get_kernel_source()  # and the MSL passes the clang check
    assert re.search(r"simdgroup_half8x8 A_simd_\d+_all\[%d\];" % (D // 8 * 2), src), src  # Q as matrices


def test_a_tile_rewritten_in_the_loop_stays_in_threadgroup_memory():
    """The reference GEMM's A tile is copied anew every K step: its loads stay in the loop (no hoisting)."""
    src = metal(kernels.matmul(128, 128, 128, 64, 64, 32)).get_kernel_source()
    assert "_all[" not in src


def test_random_programs_match_numpy():
    """A few of the fuzzer's random tile programs (tests/fuzz/programs.py: elementwise, staged copies with ragged
    tails, reductions, GEMMs of every transpose and warp policy, cumsum, softmax) compiled for Metal: the MSL
    passes the check and the emulator matches NumPy. TL_FUZZ_SEED replays a start seed."""
    import sys
    fuzz_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fuzz")
    sys.path.insert(0, fuzz_dir)
    try:
        import programs
    finally:
        sys.path.remove(fuzz_dir)
    start = int(os.environ.get("TL_FUZZ_SEED") or np.random.SeedSequence().entropy % 10**6)
    print("first seed", start)
    for seed in range(start, start + 8):
        case = programs.generate(seed)
        k = emu(case.func, pass_configs=case.pass_configs or None)
        outs = [o.copy() for o in case.outputs]
        k(*[i.copy() for i in case.inputs], *outs)
        for o, w in zip(outs, case.reference):
            ok, how = programs._close(o, w, case.tol)
            assert ok, f"seed {seed} ({case.func.name}): {how}"


def test_emulator_reports_a_race_without_barriers():
    """Without barrier insertion, the accumulator staging tile is read by simdgroup_load before the other
    lanes' writes are ordered: the emulator reports the race at the gemm's line."""
    rng = _rng()
    f = kernels.matmul(64, 64, 32, 64, 64, 32, dtype="float32")
    a, b = randn(rng, (64, 32)), randn(rng, (32, 64))
    c = np.zeros((64, 64), np.float32)
    with pytest.raises(TileLangEmulationError, match=r"(?s)race.*C_stage.*kernels\.py"):
        emu(f, pass_configs={"tl.disable_barrier_insertion": True})(a, b, c)


# ---- what the target cannot do ------------------------------------------------------------------------

def _line_of(text):
    """The line of this file that holds `text` (once)."""
    (line,) = [i + 1 for i, l in enumerate(open(__file__).read().splitlines()) if text in l and "_line_of" not in l]
    return line


def test_threadgroup_memory_over_32kb_lists_the_buffers():
    @T.prim_func
    def big(A: T.Tensor((96, 64), "float32"), B: T.Tensor((96, 64), "float32")):
        with T.Kernel(1, threads=128) as bx:
            A_tile = T.alloc_shared((96, 64), "float32")  # 24 KB
            B_tile = T.alloc_shared((96, 64), "float32")  # 24 KB
            T.copy(A[0, 0], A_tile)
            T.copy(A_tile, B_tile)
            T.copy(B_tile, B[0, 0])

    with pytest.raises(TileLangResourceError) as e:
        metal(big)
    msg = str(e.value)
    assert "over the 32768-byte limit of Apple GPU (Metal)" in msg
    assert re.search(r"A_tile\s+96x64\s+float32", msg) and re.search(r"B_tile\s+96x64\s+float32", msg)
    assert "test_metal.py" in msg


def test_unsupported_dtypes_at_the_op():
    @T.prim_func
    def f64_copy(A: T.Tensor((128,), "float64"), B: T.Tensor((128,), "float64")):
        with T.Kernel(1, threads=128) as bx:
            for i in T.Parallel(128):
                B[i] = A[i] * 2.0

    with pytest.raises(TileLangUnsupportedError, match=r"float64 \(Metal GPUs have no double precision\)") as e:
        metal(f64_copy)
    assert f"test_metal.py:{_line_of('B[i] = A[i] * 2.0')}:" in str(e.value)

    @T.prim_func
    def fp8(A: T.Tensor((128,), "float8_e4m3fn"), B: T.Tensor((128,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            for i in T.Parallel(128):
                B[i] = T.cast(A[i], "float32")

    with pytest.raises(TileLangUnsupportedError, match=r"float8_e4m3fn \(MSL has no 8-bit float type\)") as e:
        metal(fp8)
    line = _line_of('B[i] = T.cast(A[i], "float32")')
    assert f"test_metal.py:{line}:" in str(e.value)

    @T.prim_func
    def atomic64(A: T.Tensor((128,), "int64"), B: T.Tensor((1,), "int64")):
        with T.Kernel(1, threads=128) as bx:
            for i in T.Parallel(128):
                T.atomic_add(B[0], A[i])

    with pytest.raises(TileLangUnsupportedError, match=r"Metal has no 64-bit atomic add") as e:
        metal(atomic64)
    assert f"test_metal.py:{_line_of('T.atomic_add(B[0], A[i])')}:" in str(e.value)


def test_gemm_dtype_and_k_rules():
    with pytest.raises(TileLangUnsupportedError, match=r"simdgroup_matrix 8x8.*got A int8"):
        metal(kernels.matmul(64, 64, 32, 64, 64, 32, dtype="int8", accum_dtype="int32", out_dtype="int32"))
    with pytest.raises(TileLangError, match=r"K to be a multiple of 8.*K = 12"):
        metal(kernels.matmul(64, 64, 36, 64, 64, 12, dtype="float32"))


def test_print_is_rejected_with_a_pointer_to_the_emulator():
    @T.prim_func
    def pr(A: T.Tensor((128,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            for i in T.Parallel(128):
                T.print(A[i])

    with pytest.raises(TileLangUnsupportedError, match=r"T.print is not supported by the Metal backend"):
        metal(pr)
