"""CPU targets by instruction set: -mcpu / -mattr parsing, the micro-kernel family each target gets
(kernel.choices, the TL_CPU_ISA the source defines, the host-compiler flags), and numerics of every
family the host can run, forced in turn, against NumPy in float64: fp32 / fp16 / bf16 inputs, ragged
sizes, all four transposes.

AVX-512 kernels are always compiled and their object code checked for zmm FMAs (and vdpbf16ps for
bf16); they are run only on a host with avx512f -- elsewhere the test checks that calling one gives
a clear error instead of SIGILL.
"""
import os
import re
import shutil
import subprocess
import sys
import zlib

import ml_dtypes
import numpy as np
import pytest

import kernels as K
from objdump_util import objdump as _objdump
import tilelang
from tilelang.errors import TileLangArgumentError, TileLangUnsupportedError

HOST = set(tilelang.Target("cpu").features)
NP = {"float32": np.float32, "float16": np.float16, "bfloat16": ml_dtypes.bfloat16}
# (rtol, atol) of an fp32-accumulated product of exactly representable inputs, stored as float32.
TOL = {"float32": (1e-5, 1e-4), "float16": (1e-5, 1e-4), "bfloat16": (1e-5, 1e-4)}

def _runs_here(target):
    """A kernel runs on this host when the host has every feature it is compiled with (isa_check.h
    checks exactly those at call time)."""
    try:
        return set(tilelang.Target(target).features) <= HOST
    except TileLangUnsupportedError:  # x86 names on another processor family
        return False


# Each family the micro-kernels come in: (target, TL_CPU_ISA, name, runs here, dtypes whose numerics it
# checks). Targets are named by the features their kernels need, so that every family a host can run
# is run there: AVX-512F/BW/VL/DQ for the fp32 and widened-half kernels (x86-64-v4, e.g. Skylake-X,
# Zen 4), AVX512-BF16 for vdpbf16ps (Zen 4, Cooper Lake), FP16 and AMX only on Sapphire Rapids.
_FAMILIES = [
    ("cpu -mcpu=x86-64-v2", 1, "portable", ("float32", "float16", "bfloat16")),
    ("cpu -mcpu=x86-64-v3", 2, "avx2", ("float32", "float16", "bfloat16")),
    ("cpu -mcpu=x86-64-v4", 3, "avx512", ("float32", "float16", "bfloat16")),
    ("cpu -mcpu=znver4", 3, "avx512", ("bfloat16",)),
    ("cpu -mcpu=sapphirerapids", 3, "avx512", ("float32", "float16", "bfloat16")),
]
FAMILIES = [(t, level, name, _runs_here(t)) for t, level, name, _ in _FAMILIES]
DTYPES_OF = {t: d for t, _, _, d in _FAMILIES}
IS_X86 = "sse4.2" in HOST or "avx" in HOST


def _seed(*key):
    seed = zlib.crc32(repr(key).encode())
    print(f"seed {seed} for {key}")
    return np.random.default_rng(seed)




def _gemm(target, M, N, Kd, tA, tB, dtype):
    # 64x48x32 tiles: 64 rows leave tails for both the 6-row and 12-row blocks, 48 columns a
    # partial 32-column AVX-512 panel; the sizes are ragged in every dimension.
    func = K.matmul_transposed(M, N, Kd, 64, 48, 32, trans_A=tA, trans_B=tB, dtype=dtype, out_dtype="float32")
    return tilelang.compile(func, target=target)


def _check_gemm(kernel, M, N, Kd, tA, tB, dtype):
    rng = _seed("cpu-isa", str(kernel.target), M, N, Kd, tA, tB, dtype)
    A = rng.standard_normal((Kd, M) if tA else (M, Kd)).astype(NP[dtype])
    B = rng.standard_normal((N, Kd) if tB else (Kd, N)).astype(NP[dtype])
    C = np.full((M, N), np.nan, np.float32)
    kernel(A, B, C)
    a, b = A.astype(np.float64), B.astype(np.float64)
    ref = (a.T if tA else a) @ (b.T if tB else b)
    rtol, atol = TOL[dtype]
    np.testing.assert_allclose(C.astype(np.float64), ref, rtol=rtol, atol=atol * np.sqrt(Kd),
                               err_msg=f"{kernel.target} {dtype} tA={tA} tB={tB}")


# ---- target parsing ---------------------------------------------------------------------------------
@pytest.mark.skipif(not IS_X86, reason="x86 feature names")
def test_mattr_closes_over_dependencies():
    t = tilelang.Target("cpu -mcpu=x86-64 -mattr=+avx512f")
    assert {"avx512f", "avx2", "fma", "f16c", "avx", "sse4.2"} <= set(t.features)
    t = tilelang.Target("cpu -mcpu=sapphirerapids -mattr=-avx2")
    assert not any(f.startswith("avx512") or f == "avx2" for f in t.features), t.features
    assert "amx-bf16" in t.features and "fma" in t.features
    assert not {"amx-bf16", "amx-int8"} & set(tilelang.Target("cpu -mcpu=sapphirerapids -mattr=-amx-tile").features)
    assert tilelang.Target("cpu -mcpu=x86-64").features == []


@pytest.mark.parametrize("spec", ["cpu -mattr=-avx2", "cpu -mcpu=x86-64-v3 -mattr=+avx512bf16",
                                  "cpu -mcpu=sapphirerapids -mattr=-avx512fp16", "cpu -mattr=-avx512f,+f16c"])
def test_canonical_spelling_keeps_the_features(spec):
    if not IS_X86:
        pytest.skip("x86 feature names")
    t = tilelang.Target(spec)
    again = tilelang.Target(str(t))
    assert again == t and again.features == t.features, (str(t), t.features, again.features)


@pytest.mark.parametrize("spec,msg", [
    ("cpu -mattr=+avx9000", "unknown CPU feature 'avx9000' in -mattr \\(known: amx-bf16, "),
    ("cpu -mcpu=pentium9", "unknown CPU 'pentium9' \\(known: native, "),
    ("cpu -mattr=+", "unknown CPU feature ''"),
])
def test_bad_cpu_targets_say_what_is_accepted(spec, msg):
    with pytest.raises(TileLangUnsupportedError, match=msg):
        tilelang.Target(spec)


@pytest.mark.skipif(not IS_X86, reason="needs an x86 host")
def test_features_of_the_other_architecture_are_rejected():
    with pytest.raises(TileLangUnsupportedError, match="'neon' is for arm processors"):
        tilelang.Target("cpu -mattr=+neon")


# ---- the family each target gets ---------------------------------------------------------------------
@pytest.mark.skipif(not IS_X86, reason="x86 families")
@pytest.mark.parametrize("target,level,name,_runs", FAMILIES)
def test_family_choice_flags_and_instructions(target, level, name, _runs):
    k = _gemm(target, 70, 50, 40, False, False, "float32")
    assert f"#define TL_CPU_ISA {level}" in k.get_kernel_source()
    head = k.choices[0]
    assert head.startswith(f"CPU target {tilelang.Target(target)}: {name} micro-kernels"), k.choices
    assert "-march=native" not in head
    assert ("-mavx512f" in head) == (level == 3) and ("-mavx2" in head) == (level >= 2), head
    assert any(re.search(r"kernels\.py:\d+: T\.gemm float32 x float32 -> float32: " + name, c)
               for c in k.choices), k.choices
    asm = _objdump(k)
    fma_zmm = len(re.findall(r"vfmadd\w*ps\s+.*%zmm", asm))
    fma_ymm = len(re.findall(r"vfmadd\w*ps\s+.*%ymm", asm))
    print(f"{target}: {fma_zmm} zmm FMAs, {fma_ymm} ymm FMAs")
    if level == 3:
        assert fma_zmm >= 24, "the 12x32 AVX-512 block needs 24 zmm FMAs per k"
    elif level == 2:
        assert fma_zmm == 0 and fma_ymm >= 12
    else:
        assert "vfmadd" not in asm and "%ymm" not in asm, "portable code must stay within the x86-64 baseline"


@pytest.mark.skipif(not IS_X86, reason="x86 families")
def test_avx512_bf16_uses_dot_products():
    k = _gemm("cpu -mcpu=sapphirerapids", 70, 50, 41, False, True, "bfloat16")
    assert any("avx512bf16 vdpbf16ps" in c for c in k.choices), k.choices
    assert len(re.findall(r"vdpbf16ps\s+.*%zmm", _objdump(k))) >= 24
    k16 = _gemm("cpu -mcpu=sapphirerapids", 70, 50, 41, False, False, "float16")
    assert any("float16 widened by vcvtph2ps" in c for c in k16.choices), k16.choices
    assert re.search(r"vcvtph2ps\s+.*%[yz]mm", _objdump(k16))


@pytest.mark.skipif(not IS_X86, reason="x86 families")
def test_amx_tiles_for_bf16_and_int8():
    """AMX targets get the tile GEMM (gemm_amx.h) with the SIMD kernel kept as its fallback; the
    driver's numerics run on a model of the instructions in tests/cpp/test_cpu_amx.cc, and on the
    instructions themselves in test_numerics_of_each_family / test_cpu_int8.py on an AMX host."""
    def count(asm, insn):
        return len(re.findall(r"\s" + insn + r"\b", asm))

    k = _gemm("cpu -mcpu=sapphirerapids", 70, 50, 41, False, True, "bfloat16")
    assert any("amx-bf16 tdpbf16ps on 32x32 blocks" in c and "otherwise avx512bf16 vdpbf16ps" in c
               for c in k.choices), k.choices
    asm = _objdump(k)
    assert count(asm, "tdpbf16ps") >= 4 and count(asm, "ldtilecfg") >= 1 and count(asm, "tilerelease") >= 1, \
        "expected the AMX-BF16 tile loop"
    assert count(asm, "tileloadd") >= 4 and count(asm, "tilestored") >= 4
    assert "syscall@plt" in asm, "the tile state must be requested from Linux (arch_prctl)"
    assert count(asm, "vdpbf16ps") >= 24, "the AVX512-BF16 kernel stays as the fallback"

    func = K.matmul_transposed(70, 50, 41, 64, 48, 32, dtype="int8", accum_dtype="int32", out_dtype="int32")
    k8 = tilelang.compile(func, target="cpu -mcpu=sapphirerapids")
    assert any("amx-int8 tdpbssd" in c and "otherwise avx512vnni 6x16 vpdpwssd" in c for c in k8.choices), \
        k8.choices
    asm8 = _objdump(k8)
    assert count(asm8, "tdpbssd") >= 4 and count(asm8, "tdpbf16ps") == 0
    assert count(asm8, "vpdpwssd") >= 12, "the AVX512-VNNI kernel stays as the fallback"

    # Without AMX-TILE no tile instruction is emitted and the SIMD paths are named.
    plain = _gemm("cpu -mcpu=sapphirerapids -mattr=-amx-tile", 70, 50, 41, False, True, "bfloat16")
    assert not any("amx" in c for c in plain.choices if "T.gemm" in c), plain.choices
    assert count(_objdump(plain), "ldtilecfg") == 0


@pytest.mark.skipif(not IS_X86, reason="x86 families")
def test_kernel_for_a_richer_cpu_gives_an_error_not_sigill():
    if _runs_here("cpu -mcpu=sapphirerapids"):
        pytest.skip("the host has every feature of sapphirerapids: its kernels run in test_numerics_of_each_family")
    if os.environ.get("TL_CPU_HOST_LIMIT"):
        pytest.skip("TL_CPU_HOST_LIMIT only narrows what the host reports; the kernel's run-time guard reads the "
                    "real CPU, so this needs a host that really lacks the features")
    print("this host lacks some feature of sapphirerapids: calling its kernel must say which")
    k = _gemm("cpu -mcpu=sapphirerapids", 70, 50, 40, False, False, "float32")
    # In a child process, so a SIGILL would fail the test rather than kill the run.
    code = (
        "import sys, numpy as np, tilelang\n"
        f"sys.path.insert(0, {os.path.dirname(__file__)!r})\n"
        "import kernels as K\n"
        "k = tilelang.compile(K.matmul_transposed(70, 50, 40, 64, 48, 32, dtype='float32', out_dtype='float32'),"
        " target='cpu -mcpu=sapphirerapids')\n"
        "a = np.ones((70, 40), np.float32); b = np.ones((40, 50), np.float32); c = np.zeros((70, 50), np.float32)\n"
        "try:\n    k(a, b, c)\nexcept Exception as e:\n    print(type(e).__name__, e)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, (r.returncode, r.stderr[-2000:])
    assert "TileLangArgumentError" in r.stdout and "with avx512" in r.stdout and "which this CPU lacks" in r.stdout, \
        r.stdout
    assert k.target == tilelang.Target("cpu -mcpu=sapphirerapids")


# ---- numerics of every family the host runs -------------------------------------------------------------
@pytest.mark.parametrize("target,level,name,runs", FAMILIES)
@pytest.mark.parametrize("tA,tB", [(False, False), (False, True), (True, False), (True, True)])
def test_numerics_of_each_family(target, level, name, runs, tA, tB):
    if not IS_X86 and level > 1:
        pytest.skip("x86 families")
    if not runs:
        pytest.skip(f"the host lacks features of {target} (its kernels are compiled and checked in test_family_choice_*)")
    M, N, Kd = 133, 101, 75  # ragged against 64x48x32 tiles and against every register block
    dtypes = DTYPES_OF[target]
    if "float32" in dtypes:
        _check_gemm(_gemm(target, M, N, Kd, tA, tB, "float32"), M, N, Kd, tA, tB, "float32")
    # Half-precision inputs: one transpose pattern each keeps the compile count down; the packing of
    # each operand layout is covered across the four parametrizations (a family that checks bf16 only
    # checks it on all four).
    dtype = "float16" if tA == tB and "float16" in dtypes else "bfloat16"
    _check_gemm(_gemm(target, M, N, Kd, tA, tB, dtype), M, N, Kd, tA, tB, dtype)


def test_objdump_present():
    assert shutil.which("objdump"), "binutils' objdump is needed by the instruction checks"


def test_forced_target_in_compiled_kernel_is_kept():
    k = _gemm("cpu -mattr=-avx2", 33, 17, 9, False, False, "float32")
    assert str(k.target).startswith("cpu") and "avx2" not in k.target.features
    with pytest.raises(TileLangArgumentError):
        k(np.ones((3, 9), np.float32), np.ones((9, 17), np.float32), np.zeros((33, 17), np.float32))


# ---- deeper gemm tiles on the CPU (CoalesceGemmKStepsCPU) -------------------------------------------------
def _k_loop_gemm(M, N, Kd, bk, steps, touch_a=False):
    """C = A[:, :steps*bk] @ B[:steps*bk, :] with 64x64xbk tiles; touch_a also scales A_s in place."""
    import tilelang.language as T

    @T.prim_func
    def main(A: T.Tensor((M, Kd), "float32"), B: T.Tensor((Kd, N), "float32"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, 64), T.ceildiv(M, 64), threads=128) as (bx, by):
            A_s = T.alloc_shared((64, bk), "float32")
            B_s = T.alloc_shared((bk, 64), "float32")
            C_l = T.alloc_fragment((64, 64), "float32")
            T.clear(C_l)
            for k in T.Pipelined(steps, num_stages=2):
                T.copy(A[by * 64, k * bk], A_s)
                T.copy(B[k * bk, bx * 64], B_s)
                if touch_a:
                    for i, j in T.Parallel(64, bk):
                        A_s[i, j] = A_s[i, j] * 2.0
                T.gemm(A_s, B_s, C_l)
            T.copy(C_l, C[by * 64, bx * 64])

    return main


@pytest.mark.parametrize("M,N,Kd,bk,steps", [
    (100, 70, 200, 32, 7),   # ceil(200/32) = 7 steps: the last group of 4 has 3, the 4th slice is zero-filled
    (64, 64, 256, 16, 13),   # fewer steps than the tensor has: padded steps must not read the valid tail
    (65, 63, 96, 32, 3),
])
def test_k_steps_coalesced_exactly(M, N, Kd, bk, steps):
    k = tilelang.compile(_k_loop_gemm(M, N, Kd, bk, steps), target="cpu")
    U = 128 // bk
    assert any(f"T.gemm K loop: {U} steps of K={bk} per gemm call" in c for c in k.choices), k.choices
    assert f"A_s[{64 * 128}]" in k.get_kernel_source().replace(" ", "")
    rng = _seed("coalesce", M, N, Kd, bk, steps)
    A = rng.standard_normal((M, Kd)).astype(np.float32)
    B = rng.standard_normal((Kd, N)).astype(np.float32)
    C = np.full((M, N), np.nan, np.float32)
    k(A, B, C)
    kk = min(Kd, steps * bk)
    ref = A[:, :kk].astype(np.float64) @ B[:kk].astype(np.float64)
    np.testing.assert_allclose(C, ref, rtol=1e-5, atol=1e-4 * np.sqrt(kk))


@pytest.mark.parametrize("M,N,Kd,bk,steps", [
    (100, 70, 250, 32, 8),   # 8 steps = 2 groups of 4: one copy per tile, its last rows run past K = 250
    (64, 64, 300, 32, 8),    # the tensor is deeper than the loop reads
    (65, 63, 128, 16, 8),    # U = 8, one trip
])
def test_k_steps_coalesced_into_one_copy_per_tile(M, N, Kd, bk, steps):
    k = tilelang.compile(_k_loop_gemm(M, N, Kd, bk, steps), target="cpu")
    # K = 256 per gemm call where the tiles come from tile caches, 128 otherwise
    assert any(re.search(r"one copy fills each deeper tile \(rows of K=(128|256)", c) for c in k.choices), k.choices
    # One copy into each deeper tile: at most its in-bounds and its bounds-checked loop nest store
    # into it (U per-step copies store U times or more; see the next test).
    assert _tile_stores(k, "A_s") <= 2 and _tile_stores(k, "B_s") <= 2, k.get_kernel_source()
    rng = _seed("coalesce-whole", M, N, Kd, bk, steps)
    A = rng.standard_normal((M, Kd)).astype(np.float32)
    B = rng.standard_normal((Kd, N)).astype(np.float32)
    C = np.full((M, N), np.nan, np.float32)
    k(A, B, C)
    kk = min(Kd, steps * bk)
    ref = A[:, :kk].astype(np.float64) @ B[:kk].astype(np.float64)
    np.testing.assert_allclose(C, ref, rtol=1e-5, atol=1e-4 * np.sqrt(kk))


def _tile_stores(k, name):
    return len(re.findall(r"\b" + name + r"\[[^;=]*\]=[^=]", k.get_kernel_source().replace(" ", "")))


def test_k_steps_coalesced_per_step_when_the_trip_count_is_ragged():
    # 7 steps: the second group of 4 has a step past the end, which must zero-fill its slice.
    k = tilelang.compile(_k_loop_gemm(100, 70, 200, 32, 7), target="cpu")
    assert any("T.gemm K loop: 4 steps" in c for c in k.choices), k.choices
    assert not any("one copy fills" in c for c in k.choices), k.choices
    assert _tile_stores(k, "A_s") >= 4 and _tile_stores(k, "B_s") >= 4


def test_k_steps_not_coalesced_when_the_tile_is_used_elsewhere():
    k = tilelang.compile(_k_loop_gemm(64, 64, 128, 32, 4, touch_a=True), target="cpu")
    assert not any("T.gemm K loop" in c for c in k.choices), k.choices
    rng = _seed("coalesce-touch")
    A = rng.standard_normal((64, 128)).astype(np.float32)
    B = rng.standard_normal((128, 64)).astype(np.float32)
    C = np.zeros((64, 64), np.float32)
    k(A, B, C)
    np.testing.assert_allclose(C, 2 * A.astype(np.float64) @ B, rtol=1e-5, atol=1e-3)


# ---- vectorised row reductions and exp2 -------------------------------------------------------------------
def _prefers_128_bit_vectors():
    """Whether GCC's tuning for this host (-mtune=native, as the CPU target compiles) prefers 128-bit vectors."""
    try:
        out = subprocess.run(["g++", "-mtune=native", "-Q", "--help=target"], capture_output=True, text=True,
                             timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return False
    return bool(re.search(r"-mprefer-vector-width=\s+128", out))


_HOST_PREFERS_128 = _prefers_128_bit_vectors()


@pytest.mark.parametrize("M,N", [(37, 1000), (8, 4096), (5, 15)])
def test_softmax_rows_use_vector_reductions(M, N):
    k = tilelang.compile(K.softmax(M, N, 8), target="cpu")
    src = k.get_kernel_source()
    assert "tl_cpu::reduce_row<1>(" in src and "tl_cpu::reduce_row<0>(" in src, src
    if {"avx2", "fma"} <= HOST:
        asm = _objdump(k)
        # AVX2 rounds with vroundps; AVX-512 hosts (native target) with vrndscaleps, on ymm or zmm. The kernels
        # are tuned for the host (-mtune=native): where GCC's tuning prefers 128-bit vectors (AMD Zen 1), the
        # loops are vectorised on xmm.
        reg = "%[xyz]mm" if _HOST_PREFERS_128 else "%[yz]mm"
        assert re.search(r"vmaxps\s+.*" + reg, asm) and re.search(r"(vroundps|vrndscaleps)\s+.*" + reg, asm), \
            "the row max and the exp2 loop should be vectorised"
        assert "exp2f" not in asm
    rng = _seed("softmax", M, N)
    x = (rng.standard_normal((M, N)) * 4).astype(np.float32)
    x[0, :3] = [-np.inf, 60.0, -60.0]
    y = np.full_like(x, np.nan)
    k(x, y)
    xd = x.astype(np.float64)
    e = np.exp(xd - xd.max(axis=1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(axis=1, keepdims=True), rtol=2e-6, atol=1e-12)


def test_reductions_of_every_kind_against_numpy():
    import tilelang.language as T
    M, N = 19, 301

    @T.prim_func
    def red(X: T.Tensor((M, N), "float32"), O: T.Tensor((5, M), "float32")):
        with T.Kernel(1, threads=128) as _:
            x = T.alloc_fragment((M, N), "float32")
            r = T.alloc_fragment((M,), "float32")
            T.copy(X, x)
            T.reduce_sum(x, r, dim=1)
            T.copy(r, O[0, :])
            T.reduce_max(x, r, dim=1)
            T.copy(r, O[1, :])
            T.reduce_min(x, r, dim=1)
            T.copy(r, O[2, :])
            T.reduce_abssum(x, r, dim=1)
            T.copy(r, O[3, :])
            T.reduce_absmax(x, r, dim=1)
            T.copy(r, O[4, :])

    k = tilelang.compile(red, target="cpu")
    assert k.get_kernel_source().count("tl_cpu::reduce_row<") == 5
    x = _seed("reduce-kinds").standard_normal((M, N)).astype(np.float32)
    out = np.full((5, M), np.nan, np.float32)
    k(x, out)
    xd = x.astype(np.float64)
    refs = [xd.sum(1), xd.max(1), xd.min(1), np.abs(xd).sum(1), np.abs(xd).max(1)]
    for i, ref in enumerate(refs):
        np.testing.assert_allclose(out[i], ref, rtol=1e-5, atol=1e-4, err_msg=f"reduce kind {i}")


def test_exp2_is_within_one_ulp_and_keeps_special_values():
    import tilelang.language as T
    n = 1 << 16

    @T.prim_func
    def e2(X: T.Tensor((n,), "float32"), Y: T.Tensor((n,), "float32")):
        with T.Kernel(T.ceildiv(n, 1024), threads=128) as bx:
            for i in T.Parallel(1024):
                Y[bx * 1024 + i] = T.exp2(X[bx * 1024 + i])

    k = tilelang.compile(e2, target="cpu")
    rng = _seed("exp2")
    x = rng.uniform(-155, 132, n).astype(np.float32)
    x[:8] = [-np.inf, np.inf, np.nan, -149.0, -126.5, 0.0, 127.99, 1e30]
    y = np.empty_like(x)
    k(x, y)
    with np.errstate(over="ignore"):
        ref = np.exp2(x.astype(np.float64)).astype(np.float32)
    finite = np.isfinite(ref) & np.isfinite(y)
    ulp = np.abs(y[finite].view(np.int32).astype(np.int64) - ref[finite].view(np.int32).astype(np.int64))
    assert ulp.max() <= 1, (ulp.max(), x[finite][ulp.argmax()])
    assert y[0] == 0 and y[1] == np.inf and np.isnan(y[2]) and y[7] == np.inf
    assert np.array_equal(np.isinf(y), np.isinf(ref))


@pytest.mark.skipif(not shutil.which("clang++"), reason="needs clang++")
def test_clang_as_the_host_compiler(monkeypatch, tmp_path):
    # The flags are chosen per compiler (Clang rejects GCC's -fno-tree-loop-distribute-patterns).
    monkeypatch.setenv("CXX", "clang++")
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path))
    from tilelang.jit import clear_compile_memo
    clear_compile_memo()
    k = _gemm("cpu", 45, 37, 29, False, True, "float32")
    assert "clang" in k.compiled.compiler, k.compiled.compiler
    _check_gemm(k, 45, 37, 29, False, True, "float32")
    clear_compile_memo()


def test_host_limit_reports_an_older_cpu():
    """TL_CPU_HOST_LIMIT=<cpu> caps the features the host reports (the suite run as on an AVX2-only host);
    a name that is not a CPU is an error naming the known ones."""
    code = "import tilelang; print(' '.join(tilelang.Target('cpu').features))"
    env = dict(os.environ, TL_CPU_HOST_LIMIT="x86-64-v3")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    feats = set(out.split())
    host = set(tilelang.Target("cpu").features)
    assert feats <= host and "avx512f" not in feats and ("avx2" in feats) == ("avx2" in host)
    env["TL_CPU_HOST_LIMIT"] = "pentium9"
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert r.returncode != 0 and "is not a CPU name" in r.stderr
