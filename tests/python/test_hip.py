"""The HIP backend (AMD CDNA, wave64, MFMA): every kernel is compiled by the real toolchain (hipcc, Debian's
ROCm) to a gfx90a code object whose assembly must hold the MFMA instructions and no scratch spills, and its
thread-level IR runs in the emulator (lane by lane, wave64, MFMA semantics from the ISA guide) against a
float64 NumPy reference on fresh seeded inputs, at sizes that are not multiples of the tiles. No AMD GPU is
needed (or used): calling a kernel built for HIP is a clear error.
"""
import os
import re
import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import (TileLangEmulationError, TileLangLayoutError,
                             TileLangResourceError, TileLangUnsupportedError)

import kernels


NP = {"float16": np.float16, "bfloat16": ml_dtypes.bfloat16, "float32": np.float32}


def _rng():
    """A fresh seed per test (TL_TEST_SEED to replay one), printed so that a failure names it."""
    seed = int(os.environ.get("TL_TEST_SEED") or np.random.SeedSequence().entropy % 2**32)
    print("seed", seed)
    return np.random.default_rng(seed)


def f64(x):
    return np.asarray(x).astype(np.float64)


_built = {}


def hip(name, make):
    """(code-object kernel, emulator kernel) of a kernel, built once per session."""
    if name not in _built:
        f = make()
        _built[name] = (tilelang.compile(f, target="hip"), tilelang.compile(f, target="hip", execution_backend="emulator"))
    return _built[name]


def attention(q, k, v, causal):
    """softmax(q k^T / sqrt(D)) v in float64, over [B, H, S, D] arrays (causal: keys up to the query's row)."""
    S, D = q.shape[-2], q.shape[-1]
    s = f64(q) @ f64(k).transpose(0, 1, 3, 2) / np.sqrt(D)
    if causal:
        s = np.where(np.tril(np.ones((S, S), bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    return p @ f64(v)


def check_code_object(k, mfma=None, arch="gfx90a"):
    """Built for `arch`: the assembly holds `mfma` (when given) and the code object spills nothing."""
    res = k.get_resource_usage()
    asm = k.get_assembly()
    assert ".amdhsa_kernel" in asm and arch in asm
    assert res["scratch_bytes"] == 0 and res["spill_stores"] == 0 and res["sgpr_spill_lanes"] == 0, res
    assert res["lds_bytes"] == res["shared_bytes"], res  # the planned LDS is what the code object declares
    if mfma:
        assert mfma in asm, f"{mfma} missing from the assembly"
        assert res["mfma_count"] > 0
    src = k.get_kernel_source()
    assert '#include "tl_device/hip/common.h"' in src and "hip_runtime" not in src
    return res


# ---- target ---------------------------------------------------------------------------------------------

def test_target_values():
    t = tilelang.Target("hip")
    assert (t.kind, t.arch, t.smem_limit, t.max_threads, t.warp_size) == ("hip", "gfx90a", 65536, 1024, 64)
    assert tilelang.Target({"kind": "hip", "arch": "gfx940"}).arch == "gfx940"
    assert str(tilelang.Target("hip -arch=gfx940")) == "hip -arch=gfx940"
    with pytest.raises(Exception, match="gfx1100 is not known"):
        tilelang.Target("hip -arch=gfx1100")


def test_gfx940_builds_and_unknown_toolchain_arch_is_clear():
    k = tilelang.compile(kernels.matmul(64, 64, 32, 64, 64, 32), target={"kind": "hip", "arch": "gfx940"})
    assert "gfx940" in k.get_assembly() and re.search(r"v_mfma_f32_32x32x8_?f16", k.get_assembly())  # gfx940 spells it 8_f16
    # gfx942 needs a newer LLVM than Debian's ROCm 5.2 hipcc (clang 15): tests/python/test_hip_gfx942.py


def test_without_hipcc_building_is_a_clear_error_and_the_emulator_still_runs():
    code = r"""
import sys
sys.path.insert(0, %r)
import numpy as np, tilelang, kernels
from tilelang.errors import TileLangUnsupportedError
f = kernels.matmul(64, 64, 32, 64, 64, 32, dtype="float16", out_dtype="float32")
try:
    tilelang.compile(f, target="hip")
    print("built")
except TileLangUnsupportedError as e:
    print("error:", str(e).splitlines()[0])
a = np.ones((64, 32), np.float16); b = np.ones((32, 64), np.float16); c = np.zeros((64, 64), np.float32)
tilelang.compile(f, target="hip", execution_backend="emulator")(a, b, c)
print("emulated", c[0, 0])
""" % os.path.dirname(os.path.abspath(__file__))
    env = dict(os.environ, TL_HIPCC="/nonexistent/hipcc", TL_HIP_CLANG="/nonexistent/clang++", TILELANG_DISABLE_CACHE="1")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "error: target 'hip': no hipcc found (install it with `apt-get install hipcc`" in r.stdout, r.stdout
    assert "emulated 32.0" in r.stdout, r.stdout


# ---- kernels: code object + emulator against NumPy ------------------------------------------------------

@pytest.mark.parametrize("dtype,mfma", [("float16", "v_mfma_f32_32x32x8f16"), ("bfloat16", "v_mfma_f32_32x32x8bf16_1k")])
def test_reference_gemm(dtype, mfma):
    """The reference GEMM, 128x128x32 tiles on 4 waves (256 threads), M, N, K = 256, 256, 128: 64x64 per wave,
    so 32x32x8 MFMA tiles."""
    rng = _rng()
    M, N, K = 256, 256, 128
    k, e = hip("gemm_" + dtype, lambda: kernels.matmul(M, N, K, 128, 128, 32, dtype=dtype, out_dtype="float32", threads=256))
    res = check_code_object(k, mfma)
    assert res["lds_bytes"] == 2 * (128 * 32 + 32 * 128) * 2  # num_stages=2: two LDS buffers of A and B
    assert any("MFMA v_mfma_f32_32x32x8" in c and "waves 2x2" in c for c in k.choices), k.choices
    assert any("2-stage LDS pipeline" in c for c in k.choices), k.choices
    asm = k.get_assembly()  # global -> LDS in 16-byte chunks; A (row-major, k-packed) read 16 bytes per lane
    assert "global_load_dwordx4" in asm and "ds_write_b128" in asm and "ds_read_b128" in asm
    # C: 4 consecutive float32 columns a lane (the MFMAs compute the transposed tile), one 16-byte store each
    assert "global_store_dwordx4" in asm and not re.search(r"global_store_dword\s", asm)
    assert any("k-packed" in c for c in k.choices), k.choices
    a, b = rng.standard_normal((M, K)).astype(NP[dtype]), rng.standard_normal((K, N)).astype(NP[dtype])
    c = np.full((M, N), np.nan, np.float32)
    e(a, b, c)
    np.testing.assert_allclose(c, f64(a) @ f64(b), rtol=1e-5, atol=1e-4)
    with pytest.raises(TileLangUnsupportedError, match="no AMD GPU runtime.*execution_backend=\"emulator\""):
        k(a, b, c)


def test_reference_program_as_written_compiles_for_gfx90a():
    """The demo's kernel unchanged (1024^3 fp16, 128x128x32 tiles, 128 threads, 2 stages): 2 waves of 128x64."""
    k = tilelang.compile(kernels.demo_matmul_kernel(), target="hip")
    res = check_code_object(k, "v_mfma_f32_32x32x8f16")
    assert res["lds_bytes"] == 2 * (128 * 32 + 32 * 128) * 2 and res["agprs"] + res["vgprs"] <= 512, res


@pytest.mark.parametrize("dtype,mfma", [("float16", "v_mfma_f32_16x16x16f16"), ("bfloat16", "v_mfma_f32_16x16x16bf16_1k")])
def test_ragged_gemm_16x16_tiles(dtype, mfma):
    """No size a multiple of the 64x48x32 tile; 2 waves of 32x48 each, so 16x16x16 MFMA tiles; the output is
    rounded once to the 16-bit dtype."""
    rng = _rng()
    M, N, K = 100, 72, 88
    k, e = hip("gemm_ragged_" + dtype, lambda: kernels.matmul(M, N, K, 64, 48, 32, dtype=dtype))
    check_code_object(k, mfma)
    assert k.layouts["C_local"] == "mfma_C(64x48, waves 2x1)", k.layouts
    asm = k.get_assembly()  # 4 consecutive 16-bit columns a lane: 8-byte stores under the ragged guards
    assert "global_store_dwordx2" in asm and "global_store_short" not in asm
    a, b = rng.standard_normal((M, K)).astype(NP[dtype]), rng.standard_normal((K, N)).astype(NP[dtype])
    c = np.zeros((M, N), NP[dtype])
    e(a, b, c)
    tol = 2e-3 if dtype == "float16" else 1.6e-2
    np.testing.assert_allclose(f64(c), f64(a) @ f64(b), rtol=tol, atol=10 * tol)


@pytest.mark.parametrize("stages,async_copy", [(1, True), (3, True), (2, False)])
def test_pipeline_stages_and_plain_vector_copies(stages, async_copy):
    """num_stages LDS buffers rotate (1: none); with tl.disable_async_copy the copies are tl.vector_load chunks of
    16 bytes straight into the swizzled tile instead (no pipeline)."""
    rng = _rng()
    M, N, K = 128, 96, 160
    cfg = {} if async_copy else {"tl.disable_async_copy": True}
    f = kernels.matmul(M, N, K, 64, 48, 32, dtype="float16", out_dtype="float32", num_stages=stages)
    if async_copy:
        e = tilelang.compile(f, target="hip", execution_backend="emulator", pass_configs=cfg)
    else:  # the loss of the pipeline is reported
        with pytest.warns(tilelang.errors.TileLangPerformanceWarning, match="disabled by the pass config"):
            e = tilelang.compile(f, target="hip", execution_backend="emulator", pass_configs=cfg)
    per_stage = (64 * 32 + 32 * 64) * 2  # the 48-column K x N B's rows are padded to 64 in LDS (docs/hip.md)
    total = per_stage * stages if async_copy and stages > 1 else per_stage
    assert f"total {total} bytes" in e.get_shared_memory_report(), e.get_shared_memory_report()
    ir = e.get_lowered_ir()
    assert ('"tl.cp_async"' in ir) == async_copy and ('"tl.vector_load", A_shared[' in ir) == (not async_copy)
    a, b = rng.standard_normal((M, K)).astype(np.float16), rng.standard_normal((K, N)).astype(np.float16)
    c = np.zeros((M, N), np.float32)
    e(a, b, c)
    np.testing.assert_allclose(c, f64(a) @ f64(b), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("stages", [2, 3])
def test_pipelined_prefetch_goes_through_registers(stages):
    """CDNA has no cp.async: in the steady state the prefetch's global loads go into registers before the
    MFMAs and the registers are stored to the next stage's LDS buffer after them (StagePrefetchInRegisters),
    so the loads are in flight during the compute. Ragged sizes; the emulator's race and bounds checks are on."""
    rng = _rng()
    M, N, K = 100, 72, 200
    f = kernels.matmul(M, N, K, 64, 48, 32, dtype="float16", out_dtype="float32", num_stages=stages)
    e = tilelang.compile(f, target="hip", execution_backend="emulator")
    assert any("prefetch copies load into registers" in c for c in e.choices), e.choices
    src = e.get_kernel_source()
    loop = src[src.index("for (int32_t k = 0"):]
    first_mma, last_mma = loop.index("tl::mfma_"), loop.rindex("tl::mfma_")
    assert loop.index("tl::vector_load<16>((&prefetch_regs") < first_mma
    assert loop.index("tl::vector_store_shared<16>((&A_shared[") > last_mma
    assert "tl::cp_async<" not in loop[:last_mma]  # no load-then-store copy before the compute
    a, b = rng.standard_normal((M, K)).astype(np.float16), rng.standard_normal((K, N)).astype(np.float16)
    c = np.zeros((M, N), np.float32)
    e(a, b, c)
    np.testing.assert_allclose(c, f64(a) @ f64(b), rtol=1e-5, atol=1e-4)


def test_splitk_atomic_add():
    rng = _rng()
    M, N, K = 72, 64, 256
    k, e = hip("splitk", lambda: kernels.matmul_splitk(M, N, K, 64, 64, 32, split_k=4, dtype="float16"))
    check_code_object(k, "v_mfma_f32_32x32x8f16")
    assert "global_atomic_cmpswap" in k.get_assembly()  # safe float atomics (docs/hip.md)
    a, b = rng.standard_normal((M, K)).astype(np.float16), rng.standard_normal((K, N)).astype(np.float16)
    c = np.zeros((M, N), np.float32)
    e(a, b, c)
    np.testing.assert_allclose(c, f64(a) @ f64(b), rtol=1e-5, atol=1e-4)


def test_softmax_and_rmsnorm_ragged_rows():
    rng = _rng()
    M, N = 70, 128  # 70 rows: the last block is partial
    x = rng.standard_normal((M, N)).astype(np.float32)
    y = np.zeros_like(x)
    k, e = hip("softmax", lambda: kernels.softmax(M, N, 8))
    check_code_object(k)
    assert "ds_bpermute_b32" in k.get_assembly()  # cross-lane reduction
    # the butterfly spans the whole 64-lane wave (xor 32 .. 1), one partial per wave through LDS
    assert [int(m) for m in re.findall(r'"tl.shfl_xor", red_\d+\[d_?\d*\], (\d+), 64\)', k.get_lowered_ir())][:6] == \
        [32, 16, 8, 4, 2, 1]
    assert any("6-step wave64 butterfly" in c for c in k.choices), k.choices
    e(x, y)
    ex = np.exp(f64(x) - f64(x).max(1, keepdims=True))
    np.testing.assert_allclose(y, ex / ex.sum(1, keepdims=True), rtol=1e-5, atol=1e-7)
    k, e = hip("rmsnorm", lambda: kernels.rms_norm(M, N, 4))
    check_code_object(k)
    e(x, y)
    np.testing.assert_allclose(y, f64(x) / np.sqrt((f64(x) ** 2).mean(1, keepdims=True) + 1e-12), rtol=1e-5)


@pytest.mark.parametrize("causal", [False, True])
def test_flashattention_forward(causal):
    """fp16 FlashAttention: Q K^T and P V on 32x32x8 MFMA, the online softmax reduces mfma_C rows in-lane (a lane
    holds columns of one row) and with an xor shuffle across the two 32-lane groups; P is staged through LDS for the second gemm."""
    rng = _rng()
    B, H, S, D = 1, 2, 128, 64
    k, e = hip(f"fa_{causal}", lambda: kernels.flashattn(B, H, S, D, causal, block_M=64, block_N=64, dtype="float16"))
    check_code_object(k, "v_mfma_f32_32x32x8f16")
    assert k.layouts["acc_s"] == "mfma_C(64x64, waves 2x1, 32x32 tiles)", k.layouts
    assert k.layouts["scores_max"] == "mfma_rows(64, waves 2x1, 32x32 tiles)", k.layouts
    q, kk, v = (rng.standard_normal((B, H, S, D)).astype(np.float16) for _ in range(3))
    o = np.zeros_like(q)
    e(q, kk, v, o)
    np.testing.assert_allclose(f64(o), attention(q, kk, v, causal), rtol=1e-2, atol=2e-3)  # P, O rounded to fp16
    # P is staged in a swizzled LDS tile: its 16-byte MFMA reads and the Q, K, V operand reads are conflict-free
    banks = e.last_bank_conflicts
    staged = [x for (b, d), x in banks.items() if b.startswith("A_stage") and d == "read"]
    assert staged and all(x["extra_cycles"] == 0 for x in staged), banks
    # its writes are 8 bytes a lane (4 columns of a row), conflict-free in the half-swapped tile (32-way row-major)
    assert all(x["extra_cycles"] == 0 for (b, d), x in banks.items() if b.startswith("A_stage") and d == "write"), banks
    assert all(banks[(b, "read")]["extra_cycles"] == 0 for b in ("Q_shared", "K_shared", "V_shared")), banks
    # the epilogue: acc_o -> O_shared in 8-byte stores (4 columns a lane; 4-way as 2-byte stores), O_shared ->
    # Output in 16-byte LDS reads (4-way as 2-byte reads), both conflict-free (test_hip_lds.py: every access)
    assert banks[("O_shared", "read")]["extra_cycles"] == 0 and banks[("O_shared", "write")]["extra_cycles"] == 0, banks
    assert "ds_read_b128" in k.get_assembly() and "ds_write_b64" in k.get_assembly()


def test_lds_swizzle_is_bank_conflict_free_for_mfma_reads():
    """CDNA LDS: 32 banks of 4 bytes; a 16-byte-per-lane access is served 8 lanes at a time. The k-packed A read
    of a wave (lane l: row l % 16, the 16-byte chunk of k = 8 * (l // 16) in its k step) and the 16-byte copy
    writes must touch 8 different 4-bank groups in every 8-lane pass; a row-major tile would not."""
    from tilelang import _ffi

    def worst(offset, nbytes):
        """The most distinct 4-byte words any bank serves in one pass of 128 / nbytes lanes."""
        per = 128 // nbytes
        w = 0
        for p in range(0, 64, per):
            banks = {}
            for l in range(p, p + per):
                for x in range(nbytes // 4):
                    word = offset(l) // 4 + x
                    banks.setdefault(word % 32, set()).add(word)
            w = max(w, max(len(s) for s in banks.values()))
        return w

    for cols in (32, 64, 128):  # fp16 tile rows of 64, 128, 256 bytes
        for swizzled, bound in ((True, 1), (False, 4)):
            def elem(r, c):
                return _ffi.swizzled_offset(r, c, cols, 2) if swizzled else r * cols + c

            for kk in range(cols // 32):
                read = worst(lambda l: 2 * elem(l % 16, kk * 32 + 8 * (l // 16)), 16)
                assert (read <= bound) if swizzled else (read >= bound), (cols, swizzled, kk, read)
            write = worst(lambda l: 2 * elem(l // (cols // 8), 8 * (l % (cols // 8))), 16)  # striped copy rows
            assert write == 1, (cols, swizzled, write)


def test_lower_trace_covers_hip(tmp_path):
    from tilelang.tools import ir_lower_trace
    trace = ir_lower_trace(kernels.matmul(64, 64, 64, 64, 64, 32), target="hip", out_dir=str(tmp_path))
    names = [p.name for p in trace.passes]
    assert "LayoutInference" in names and "InsertBarriers" in names
    files = os.listdir(tmp_path)
    assert "final_source.hip" in files and "index.html" in files
    assert "mfma_C(64x64" in (tmp_path / next(f for f in files if "LayoutInference" in f)).read_text()
    assert "tl::mfma_32x32x8_f16" in (tmp_path / "final_source.hip").read_text()


def test_random_programs_match_numpy():
    """A few of the fuzzer's random tile programs (tests/fuzz/programs.py) lowered for HIP and run in the emulator
    against NumPy; TL_FUZZ_SEED replays a start seed."""
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
        k = tilelang.compile(case.func, target="hip", execution_backend="emulator", pass_configs=case.pass_configs or None)
        outs = [o.copy() for o in case.outputs]
        k(*[i.copy() for i in case.inputs], *outs)
        for o, w in zip(outs, case.reference):
            ok, how = programs._close(o, w, case.tol)
            assert ok, f"seed {seed} ({case.func.name}): {how}"


# ---- the emulator's checks hold on HIP ---------------------------------------------------------------------

def test_emulator_reports_an_lds_race_without_barriers():
    rng = _rng()
    f = kernels.matmul(64, 64, 64, 64, 64, 32, dtype="float16", out_dtype="float32")
    e = tilelang.compile(f, target="hip", execution_backend="emulator",
                         pass_configs={"tl.disable_barrier_insertion": True})
    a, b = rng.standard_normal((64, 64)).astype(np.float16), rng.standard_normal((64, 64)).astype(np.float16)
    with pytest.raises(TileLangEmulationError, match="race"):
        e(a, b, np.zeros((64, 64), np.float32))


def test_out_of_range_lds_index_and_uninitialised_lds_read_are_reported():
    n = 128

    @T.prim_func
    def shift(A: T.Tensor((n,), "float32"), B: T.Tensor((n,), "float32"), off: T.int32):
        with T.Kernel(1, threads=128) as bx:
            S = T.alloc_shared((n,), "float32")
            T.copy(A, S)
            for i in T.Parallel(n):
                B[i] = S[i + off]  # reads S[128] in the last lane when off is 1 (run time: not a compile error)

    @T.prim_func
    def stale(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            S = T.alloc_shared((128,), "float32")
            T.copy(A, S[0:64])
            for i in T.Parallel(64):
                B[i] = S[i + 64]  # never written

    a, b = np.arange(n, dtype=np.float32), np.zeros(n, np.float32)
    with pytest.raises(TileLangEmulationError) as e:
        tilelang.compile(shift, target="hip", execution_backend="emulator")(a, b, 1)
    assert e.value.reports[0][0] == "out_of_bounds" and "test_hip.py" in e.value.reports[0][1]
    np.testing.assert_array_equal(b[:-1], a[1:])  # the in-range lanes ran
    with pytest.raises(TileLangEmulationError) as e:
        tilelang.compile(stale, target="hip", execution_backend="emulator")(np.ones(64, np.float32), np.zeros(64, np.float32))
    assert any(r[0] == "uninitialized_read" and "'S'" in r[1] for r in e.value.reports)


@pytest.mark.parametrize("reg", ["A", "B"])
def test_register_operand_is_staged_through_lds(reg):
    """A (policy FullRow) or B (FullCol, stored N x K) loaded into a fragment first: staged through LDS for MFMA."""
    rng = _rng()
    M, N, K = 64, 64, 32
    policy = T.GemmWarpPolicy.FullRow if reg == "A" else T.GemmWarpPolicy.FullCol

    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((N, K), "float16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=128) as bx:
            A_s = T.alloc_shared((M, K), "float16")
            B_s = T.alloc_shared((N, K), "float16")
            C_l = T.alloc_fragment((M, N), "float32")
            T.copy(A, A_s)
            T.copy(B, B_s)
            if reg == "A":
                A_r = T.alloc_fragment((M, K), "float16")
                T.copy(A_s, A_r)
                T.gemm(A_r, B_s, C_l, transpose_B=True, policy=policy, clear_accum=True)
            else:
                B_r = T.alloc_fragment((N, K), "float16")
                T.copy(B_s, B_r)
                T.gemm(A_s, B_r, C_l, transpose_B=True, policy=policy, clear_accum=True)
            T.copy(C_l, C)

    e = tilelang.compile(main, target="hip", execution_backend="emulator")
    assert any("in registers, staged through LDS" in c for c in e.choices), e.choices
    a, b = rng.standard_normal((M, K)).astype(np.float16), rng.standard_normal((N, K)).astype(np.float16)
    c = np.zeros((M, N), np.float32)
    e(a, b, c)
    np.testing.assert_allclose(c, f64(a) @ f64(b).T, rtol=1e-5, atol=1e-4)


# ---- must-fail: HIP-specific errors -------------------------------------------------------------------------

def test_lds_over_64kb_lists_the_buffers():
    f = kernels.matmul(512, 512, 512, 256, 128, 128, dtype="float16", threads=256)  # 64 KB + 32 KB of LDS
    with pytest.raises(TileLangResourceError) as e:
        tilelang.compile(f, target="hip", execution_backend="emulator")
    msg = str(e.value)
    assert "over the 65536-byte limit of gfx90a" in msg, msg
    assert re.search(r"A_shared\s+256x128\s+float16", msg) and re.search(r"B_shared\s+128x128\s+float16", msg), msg
    assert "kernels.py" in msg


def test_unsupported_mfma_dtype():
    with pytest.raises(TileLangUnsupportedError, match=r"T.gemm on HIP \(MFMA.*float16 or bfloat16.*got A float32") as e:
        tilelang.compile(kernels.matmul(64, 64, 64, 64, 64, 32, dtype="float32"), target="hip",
                         execution_backend="emulator")
    assert "kernels.py:" in str(e.value)  # at the T.gemm


def test_print_runs_in_the_emulator_and_is_refused_for_the_code_object(capfd):
    @T.prim_func
    def show(A: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            for i in T.Parallel(64):
                if i == 3:
                    T.print(A[i], msg="a3=")

    tilelang.compile(show, target="hip", execution_backend="emulator")(np.arange(64, dtype=np.float32))
    assert "a3=3" in capfd.readouterr().out
    with pytest.raises(TileLangUnsupportedError, match="T.print, which has no HIP lowering"):
        tilelang.compile(show, target="hip")


@pytest.mark.parametrize("k_pack,error", [(3, "takes k_pack=1 or k_pack=2; got k_pack=3"),
                                          (2, "k_pack=2 on HIP needs K to be a multiple of 32")])
def test_k_pack_is_honoured_or_rejected(k_pack, error):
    @T.prim_func
    def main(A: T.Tensor((64, 16), "float16"), B: T.Tensor((16, 48), "float16"), C: T.Tensor((64, 48), "float32")):
        with T.Kernel(1, threads=128) as bx:
            A_s = T.alloc_shared((64, 16), "float16")
            B_s = T.alloc_shared((16, 48), "float16")
            C_l = T.alloc_fragment((64, 48), "float32")
            T.copy(A, A_s)
            T.copy(B, B_s)
            T.gemm(A_s, B_s, C_l, clear_accum=True, k_pack=k_pack)
            T.copy(C_l, C)

    with pytest.raises((TileLangUnsupportedError, TileLangLayoutError), match=error) as e:
        tilelang.compile(main, target="hip", execution_backend="emulator")
    assert "test_hip.py" in str(e.value)


# ---- fp8 MFMA on gfx940 (v_mfma_f32_16x16x32_{fp8,bf8}_{fp8,bf8}) -----------------------------------------

FP8 = {"float8_e4m3fn": ml_dtypes.float8_e4m3fn, "float8_e5m2": ml_dtypes.float8_e5m2}


def _fp8(rng, shape, dtype):
    """Random fp8 values with -0 and both extremes among them: -0 (0x80) is NaN in gfx940's FNUZ formats and
    448 / 57344 are out of FNUZ E4M3's range unless re-encoded as half values, so a lowering that handed the
    OCP bytes to the MFMA as they are would fail here."""
    x = (rng.standard_normal(shape) * 3).astype(FP8[dtype])
    big = float(ml_dtypes.finfo(FP8[dtype]).max)
    x.reshape(-1)[:5] = [-0.0, big, -big, big / 2, -0.0]
    return x


@pytest.mark.parametrize("dtype,mfma,tiles,packed", [
    ("float8_e4m3fn", "v_mfma_f32_16x16x32_fp8_fp8", (64, 48, 64), True),   # 16 bytes per lane per k step
    ("float8_e5m2", "v_mfma_f32_16x16x32_bf8_bf8", (64, 48, 32), False),    # 8 bytes: one MFMA per k step
])
def test_fp8_gemm_on_gfx940(dtype, mfma, tiles, packed):
    """The reference GEMM in 8-bit floats, ragged (no size a multiple of the tile), for gfx940: the code object
    holds the fp8 MFMA and spills nothing; the emulator (FNUZ operands, from the ISA) matches NumPy."""
    rng = _rng()
    M, N, K = 100, 72, 96
    f = kernels.matmul(M, N, K, *tiles, dtype=dtype, out_dtype="float32")
    k = tilelang.compile(f, target="hip -arch=gfx940")
    check_code_object(k, mfma, arch="gfx940")
    assert "tl::fp8_to_fnuz<" in k.get_kernel_source()
    assert any(mfma in c and "re-encoded to FNUZ" in c and ("k-packed" in c) == packed for c in k.choices), k.choices
    assert k.layouts["C_local"] == "mfma_C(64x48, waves 2x1)", k.layouts  # 16x16 tiles, not 32x32
    e = tilelang.compile(f, target="hip -arch=gfx940", execution_backend="emulator")
    a, b = _fp8(rng, (M, K), dtype), _fp8(rng, (K, N), dtype)
    c = np.full((M, N), np.nan, np.float32)
    e(a, b, c)
    ref = f64(a) @ f64(b)
    np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-6 * np.abs(ref).max())


def test_fp8_gemm_accumulates_and_propagates_nan():
    """Two T.gemm into one accumulator (the second runs on C / 4 as well); a NaN in A makes its row of C NaN,
    as in NumPy."""
    rng = _rng()
    M, N, K = 48, 32, 64

    @T.prim_func
    def twice(A: T.Tensor((M, K), "float8_e4m3fn"), B: T.Tensor((K, N), "float8_e4m3fn"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=64) as bx:
            A_s = T.alloc_shared((M, K), "float8_e4m3fn")
            B_s = T.alloc_shared((K, N), "float8_e4m3fn")
            C_l = T.alloc_fragment((M, N), "float32")
            T.copy(A, A_s)
            T.copy(B, B_s)
            T.clear(C_l)
            T.gemm(A_s, B_s, C_l)
            T.gemm(A_s, B_s, C_l)
            T.copy(C_l, C)

    k = tilelang.compile(twice, target="hip -arch=gfx940")
    check_code_object(k, "v_mfma_f32_16x16x32_fp8_fp8", arch="gfx940")
    a, b = _fp8(rng, (M, K), "float8_e4m3fn"), _fp8(rng, (K, N), "float8_e4m3fn")
    a[7, 3] = np.nan
    c = np.zeros((M, N), np.float32)
    tilelang.compile(twice, target="hip -arch=gfx940", execution_backend="emulator")(a, b, c)
    ref = 2 * (f64(a) @ f64(b))
    assert np.isnan(c[7]).all() and not np.isnan(np.delete(c, 7, 0)).any()
    np.testing.assert_allclose(np.delete(c, 7, 0), np.delete(ref, 7, 0), rtol=1e-5,
                               atol=1e-6 * np.abs(np.delete(ref, 7, 0)).max())


def test_fp8_mfma_before_gfx940_says_why():
    """gfx90a has no fp8 MFMA. (Mixed fp8 formats and non-float32 accumulators are refused by the front end.)"""
    acc = "float32"

    @T.prim_func
    def main(A: T.Tensor((64, 64), "float8_e5m2"), B: T.Tensor((64, 64), "float8_e5m2"), C: T.Tensor((64, 64), acc)):
        with T.Kernel(1, threads=64) as bx:
            A_s = T.alloc_shared((64, 64), "float8_e5m2")
            B_s = T.alloc_shared((64, 64), "float8_e5m2")
            C_l = T.alloc_fragment((64, 64), acc)
            T.copy(A, A_s)
            T.copy(B, B_s)
            T.gemm(A_s, B_s, C_l, clear_accum=True)
            T.copy(C_l, C)

    with pytest.raises(TileLangUnsupportedError, match="float8_e5m2 .* on gfx90a \\(no fp8 matrix instructions before "
                                                       "gfx940: use target 'hip -arch=gfx940'\\)") as e:
        tilelang.compile(main, target="hip", execution_backend="emulator")
    assert "test_hip.py" in str(e.value)  # at the T.gemm


def test_gemm_needs_whole_waves():
    with pytest.raises(TileLangLayoutError, match="whole number of 64-thread waves"):
        tilelang.compile(kernels.matmul(64, 64, 64, 64, 64, 32, threads=96), target="hip", execution_backend="emulator")
