"""gfx950 (MI350X / MI355X, CDNA4): no Debian compiler or ROCm device library knows it, so the HIP backend builds
it with the clang / LLVM 22 inside the PyPI package `ziglang` (installed by scripts/setup.sh): HIP device code to
assembly, assembled and linked by the same toolchain, with no device libraries (the header's own math,
include/tl_device/hip/math.h, measured on the host by tests/cpp/test_hip_math.cc). CDNA4's MFMAs: f16 / bf16 with
8 k a lane (v_mfma_f32_16x16x32 / 32x32x16) and fp8 reading the OCP formats as stored (v_mfma_f32_16x16x32 /
32x32x16 _fp8 / _bf8), 160 KB of LDS. Every kernel is a real gfx950 code object checked for its instructions and
spills, and runs in the emulator (whose CDNA4 MFMA semantics come from the ISA's operand layouts, hand-worked in
tests/cpp/test_emulator_hip.cc) against a float64 NumPy reference on seeded inputs at ragged sizes."""
import os
import re
import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import TileLangResourceError, TileLangUnsupportedError

import kernels

GFX950 = "hip -arch=gfx950"
NP = {"float16": np.float16, "bfloat16": ml_dtypes.bfloat16, "float8_e4m3fn": ml_dtypes.float8_e4m3fn,
      "float8_e5m2": ml_dtypes.float8_e5m2, "float32": np.float32, "float64": np.float64}


def _rng():
    seed = int(os.environ.get("TL_TEST_SEED") or np.random.SeedSequence().entropy % 2**32)
    print("seed", seed)
    return np.random.default_rng(seed)


def f64(x):
    return np.asarray(x).astype(np.float64)


def check_gfx950_object(k, mfma=None):
    """A gfx950 code object (an AMDGPU ELF linked by ld.lld) holding `mfma` (a regex), with no spills, its LDS the
    planned one and its resources read from the assembly."""
    asm = k.get_assembly()
    assert re.search(r'\.amdgcn_target "amdgcn-amd-amdhsa--gfx950', asm), asm[:400]
    res = k.get_resource_usage()
    assert res["scratch_bytes"] == 0 and res["spill_stores"] == 0 and res["sgpr_spill_lanes"] == 0, res
    assert res["lds_bytes"] == res["shared_bytes"], res
    assert res["vgprs"] > 0 and res["sgprs"] > 0, res  # LLVM 22 prints TotalNumSgprs only
    if mfma:
        assert re.search(mfma, asm), f"{mfma} missing"
        assert res["mfma_count"] > 0
    assert k.compiled.binary[:4] == b"\x7fELF" and k.compiled.binary[18] == 0xE0  # EM_AMDGPU
    assert k.compiled.binary[16] == 3  # ET_DYN: linked, loadable
    assert "clang version 22" in k.compiled.compiler and "no device libraries" in k.compiled.compiler
    return res


# ---- target ---------------------------------------------------------------------------------------------

def test_target_values():
    t = tilelang.Target(GFX950)
    assert (t.kind, t.arch, t.smem_limit, t.warp_size) == ("hip", "gfx950", 160 * 1024, 64)
    assert str(t) == GFX950
    with pytest.raises(Exception, match=r"gfx951 is not known \(gfx90a, gfx940, gfx941, gfx942, gfx950\)"):
        tilelang.Target("hip -arch=gfx951")


def test_without_ziglang_building_is_a_clear_error_and_the_emulator_still_runs():
    code = r"""
import sys
sys.path.insert(0, %r)
import numpy as np, tilelang, kernels
from tilelang.errors import TileLangUnsupportedError
f = kernels.matmul(64, 64, 32, 64, 64, 32, dtype="float16", out_dtype="float32")
try:
    tilelang.compile(f, target="hip -arch=gfx950")
    print("built")
except TileLangUnsupportedError as e:
    print("error:", str(e).splitlines()[0])
a = np.ones((64, 32), np.float16); b = np.ones((32, 64), np.float16); c = np.zeros((64, 64), np.float32)
tilelang.compile(f, target="hip -arch=gfx950", execution_backend="emulator")(a, b, c)
print("emulated", c[0, 0])
""" % os.path.dirname(os.path.abspath(__file__))
    env = dict(os.environ, TL_ZIG="/nonexistent/zig", TILELANG_DISABLE_CACHE="1")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "error: target 'hip -arch=gfx950': building for it needs clang 22" in r.stdout, r.stdout
    assert "'ziglang' provides (`pip install ziglang`" in r.stdout, r.stdout
    assert "emulated 32.0" in r.stdout, r.stdout


# ---- GEMMs on CDNA4's MFMAs -----------------------------------------------------------------------------

@pytest.mark.parametrize("dtype,tiles,mfma,layout", [
    ("float16", (128, 128, 32), r"v_mfma_f32_32x32x16_f16", "mfma_C(128x128, waves 1x2, 32x32 tiles)"),
    ("bfloat16", (128, 128, 32), r"v_mfma_f32_32x32x16_bf16", "mfma_C(128x128, waves 1x2, 32x32 tiles)"),
    ("float16", (64, 48, 64), r"v_mfma_f32_16x16x32_f16", "mfma_C(64x48, waves 2x1)"),
    ("bfloat16", (64, 48, 32), r"v_mfma_f32_16x16x32_bf16", "mfma_C(64x48, waves 2x1)"),
])
def test_reference_gemm(dtype, tiles, mfma, layout):
    """Ragged sizes (no size a multiple of the tile); 32x32 tiles where a wave's share allows, else 16x16. A lane's
    8 k values of one MFMA are one 16-byte LDS read: no k-packing needed (it doubled the read on CDNA3)."""
    rng = _rng()
    M, N, K = 200, 136, 96
    f = kernels.matmul(M, N, K, *tiles, dtype=dtype, out_dtype="float32")
    k = tilelang.compile(f, target=GFX950)
    check_gfx950_object(k, mfma)
    assert k.layouts["C_local"] == layout, k.layouts
    shape = re.search(r"\d+x\d+x\d+", mfma).group(0)
    assert any(f"v_mfma_f32_{shape}_" in c and "k-packed" not in c for c in k.choices), k.choices
    assert "ds_read_b128" in k.get_assembly()
    e = tilelang.compile(f, target=GFX950, execution_backend="emulator")
    a = rng.standard_normal((M, K)).astype(NP[dtype])
    b = rng.standard_normal((K, N)).astype(NP[dtype])
    c = np.full((M, N), np.nan, np.float32)
    e(a, b, c)
    ref = f64(a) @ f64(b)
    np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-5 * np.abs(ref).max())
    # the 8-k operand reads keep the LDS swizzle conflict-free (every access the emulator counted)
    assert all(x["extra_cycles"] == 0 for x in e.last_bank_conflicts.values()), e.last_bank_conflicts


def test_k_pack_2_reads_two_chunks():
    """k_pack=2 (TileLang's MFMA option) on CDNA4: a lane's 16 k values of two MFMAs are two 16-byte reads."""
    rng = _rng()
    M, N, K = 96, 64, 128

    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, 64), T.ceildiv(M, 64), threads=128) as (bx, by):
            A_s = T.alloc_shared((64, 64), "float16")
            B_s = T.alloc_shared((64, 64), "float16")
            C_l = T.alloc_fragment((64, 64), "float32")
            T.clear(C_l)
            for ko in T.Pipelined(T.ceildiv(K, 64), num_stages=1):
                T.copy(A[by * 64, ko * 64], A_s)
                T.copy(B[ko * 64, bx * 64], B_s)
                T.gemm(A_s, B_s, C_l, k_pack=2)
            T.copy(C_l, C[by * 64, bx * 64])

    k = tilelang.compile(main, target=GFX950)
    check_gfx950_object(k, r"v_mfma_f32_32x32x16_f16")
    assert any("k-packed: 32-byte operand reads" in c for c in k.choices), k.choices
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c = np.full((M, N), np.nan, np.float32)
    tilelang.compile(main, target=GFX950, execution_backend="emulator")(a, b, c)
    np.testing.assert_allclose(c, f64(a) @ f64(b), rtol=1e-5, atol=1e-4)


def test_k_pack_2_is_met_by_the_wide_reads_where_k_allows_one_step():
    """TileLang's AMD fp8 GEMM example asks for k_pack=2 with 64 x 64 x 128 tiles: on gfx950 its fp8 MFMA is
    16x16x128 (one 32-byte read a lane and MFMA), and K = 128 is one such step, so two a read cannot be packed.
    Before, that was a layout error; now k_pack=2 is met by the wide reads, the choice table says so, and the
    numbers match NumPy (ragged M, N). A 16-bit gemm whose reads are narrower still refuses it
    (test_hip.py::test_k_pack_is_honoured_or_rejected)."""
    rng = _rng()
    M, N, K = 200, 136, 256

    @T.prim_func
    def main(A: T.Tensor((M, K), "float8_e4m3fn"), B: T.Tensor((N, K), "float8_e4m3fn"),
             C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, 64), T.ceildiv(M, 64), threads=256) as (bx, by):
            A_s = T.alloc_shared((64, 128), "float8_e4m3fn")
            B_s = T.alloc_shared((64, 128), "float8_e4m3fn")
            C_l = T.alloc_fragment((64, 64), "float32")
            T.clear(C_l)
            for ko in T.Pipelined(T.ceildiv(K, 128), num_stages=0):
                T.copy(A[by * 64, ko * 128], A_s)
                T.copy(B[bx * 64, ko * 128], B_s)
                T.gemm(A_s, B_s, C_l, transpose_B=True, k_pack=2, policy=T.GemmWarpPolicy.FullRow)
            T.copy(C_l, C[by * 64, bx * 64])

    k = tilelang.compile(main, target=GFX950)
    check_gfx950_object(k, r"v_mfma_f32_16x16x128_f8f6f4")
    assert any("k_pack=2: K = 128 is one 128-deep step too few for two a read; a lane's 32 bytes an MFMA are one "
               "wide read already" in c for c in k.choices), k.choices
    a, b = _fp8(rng, (M, K), "float8_e4m3fn"), _fp8(rng, (N, K), "float8_e4m3fn")
    c = np.full((M, N), np.nan, np.float32)
    tilelang.compile(main, target=GFX950, execution_backend="emulator")(a, b, c)
    ref = f64(a) @ f64(b).T
    np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-6 * np.abs(ref).max())


FP8 = ("float8_e4m3fn", "float8_e5m2")


def _fp8(rng, shape, dtype):
    """Random 8-bit floats with -0 and both extremes among them (-0 is NaN and 448 / 57344 are out of range in
    CDNA3's FNUZ formats: CDNA4 must read the OCP bytes as they are)."""
    x = (rng.standard_normal(shape) * 3).astype(NP[dtype])
    big = float(ml_dtypes.finfo(NP[dtype]).max)
    x.reshape(-1)[:5] = [-0.0, big, -big, big / 2, -0.0]
    return x


@pytest.mark.parametrize("at,bt,tiles,mfma", [
    # K tiles a multiple of the f8f6f4 depth (64 for 32x32 tiles, 128 for 16x16): twice the fp8 rate, 32 bytes a
    # lane; cbsz / blgp name the first operand's / the second's format (1 = E5M2). The MFMA computes the
    # transposed tile (B^T A^T): its first operand is B.
    ("float8_e4m3fn", "float8_e4m3fn", (128, 128, 64), r"v_mfma_f32_32x32x64_f8f6f4 [^\n]*\]\n"),
    ("float8_e4m3fn", "float8_e5m2", (128, 128, 64), r"v_mfma_f32_32x32x64_f8f6f4 .* cbsz:1\n"),
    ("float8_e5m2", "float8_e4m3fn", (64, 48, 128), r"v_mfma_f32_16x16x128_f8f6f4 .* blgp:1\n"),
    # otherwise the 8-k fp8 shapes
    ("float8_e5m2", "float8_e5m2", (64, 48, 32), r"v_mfma_f32_16x16x32_bf8_bf8"),
    ("float8_e4m3fn", "float8_e5m2", (128, 128, 32), r"v_mfma_f32_32x32x16_bf8_fp8"),
])
def test_fp8_gemm_reads_ocp_bytes(at, bt, tiles, mfma):
    """No FNUZ re-encoding and no accumulator scaling on gfx950 (CDNA3's path), 32x32x16 allowed."""
    rng = _rng()
    M, N, K = 200, 136, 128

    @T.prim_func
    def main(A: T.Tensor((M, K), at), B: T.Tensor((K, N), bt), C: T.Tensor((M, N), "float32")):
        bm, bn, bk = tiles
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            A_s = T.alloc_shared((bm, bk), at)
            B_s = T.alloc_shared((bk, bn), bt)
            C_l = T.alloc_fragment((bm, bn), "float32")
            T.clear(C_l)
            for ko in T.Pipelined(T.ceildiv(K, bk), num_stages=2):
                T.copy(A[by * bm, ko * bk], A_s)
                T.copy(B[ko * bk, bx * bn], B_s)
                T.gemm(A_s, B_s, C_l)
            T.copy(C_l, C[by * bm, bx * bn])

    k = tilelang.compile(main, target=GFX950)
    check_gfx950_object(k, mfma)
    assert "fp8_to_fnuz" not in k.get_kernel_source()
    name = re.match(r"v_mfma\w+", mfma).group(0)
    assert any(name in c and "OCP E4M3 / E5M2 operands read as stored" in c for c in k.choices), k.choices
    e = tilelang.compile(main, target=GFX950, execution_backend="emulator")
    a, b = _fp8(rng, (M, K), at), _fp8(rng, (K, N), bt)
    c = np.full((M, N), np.nan, np.float32)
    e(a, b, c)
    ref = f64(a) @ f64(b)
    np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-6 * np.abs(ref).max())


# ---- the other kernels the backends are tested on -------------------------------------------------------

@pytest.mark.parametrize("causal", [False, True])
def test_flashattention_forward(causal):
    """exp2 is the backend's own v_exp_f32 lowering (no ocml to link): the link with --no-undefined proves nothing
    is left to a library."""
    rng = _rng()
    B, H, S, D = 1, 2, 192, 64
    f = kernels.flashattn(B, H, S, D, causal, block_M=64, block_N=64, dtype="float16")
    k = tilelang.compile(f, target=GFX950)
    check_gfx950_object(k, r"v_mfma_f32_32x32x16_f16")
    assert "v_exp_f32" in k.get_assembly()
    q, kk, v = (rng.standard_normal((B, H, S, D)).astype(np.float16) for _ in range(3))
    o = np.full_like(q, np.nan)
    e = tilelang.compile(f, target=GFX950, execution_backend="emulator")
    e(q, kk, v, o)
    # P staged through LDS (the half-swapped tile) and the Q / K / V reads stay conflict-free with 8-k reads
    assert all(x["extra_cycles"] == 0 for x in e.last_bank_conflicts.values()), e.last_bank_conflicts
    s = f64(q) @ np.swapaxes(f64(kk), -1, -2) / np.sqrt(D)
    if causal:
        s = np.where(np.tril(np.ones((S, S), bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    np.testing.assert_allclose(f64(o), (p / p.sum(-1, keepdims=True)) @ f64(v), rtol=1e-2, atol=2e-3)


def test_softmax_and_rmsnorm_ragged_rows():
    rng = _rng()
    M, N = 70, 128
    x = rng.standard_normal((M, N)).astype(np.float32)
    for name, f, ref in [
        ("softmax", kernels.softmax(M, N, 8),
         lambda v: np.exp(v - v.max(1, keepdims=True)) / np.exp(v - v.max(1, keepdims=True)).sum(1, keepdims=True)),
        ("rmsnorm", kernels.rms_norm(M, N, 4), lambda v: v / np.sqrt((v ** 2).mean(1, keepdims=True) + 1e-12)),
    ]:
        check_gfx950_object(tilelang.compile(f, target=GFX950))
        y = np.full_like(x, np.nan)
        tilelang.compile(f, target=GFX950, execution_backend="emulator")(x, y)
        np.testing.assert_allclose(y, ref(f64(x)), rtol=1e-5, atol=1e-7, err_msg=name)


def _math_kernel(dtype, n=256):
    @T.prim_func
    def main(A: T.Tensor((n,), dtype), B: T.Tensor((n,), dtype), Out: T.Tensor((11, n), dtype)):
        with T.Kernel(1, threads=128) as bx:
            for i in T.Parallel(n):
                Out[0, i] = T.exp(A[i])
                Out[1, i] = T.log(B[i])
                Out[2, i] = T.sin(A[i])
                Out[3, i] = T.cos(A[i])
                Out[4, i] = T.tanh(A[i])
                Out[5, i] = T.erf(A[i])
                Out[6, i] = T.pow(B[i], A[i])
                Out[7, i] = T.exp2(A[i]) + T.log2(B[i])
                Out[8, i] = T.log10(B[i]) + T.sqrt(B[i])
                Out[9, i] = T.rsqrt(B[i])
                Out[10, i] = T.sigmoid(A[i])
    return main


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_math_without_device_libraries(dtype):
    """Every elementwise function the language offers, in float32 and float64, links with nothing undefined (the
    float64 exp / log / sin / cos and tanh / erf / pow are math.h's, whose accuracy tests/cpp/test_hip_math.cc
    measures on the host) and runs in the emulator against NumPy."""
    rng = _rng()
    f = _math_kernel(dtype)
    k = tilelang.compile(f, target=GFX950)
    check_gfx950_object(k)
    src = k.get_kernel_source()
    assert "__ocml" not in src
    a = rng.uniform(-3, 3, 256).astype(NP[dtype])
    b = rng.uniform(0.1, 5, 256).astype(NP[dtype])
    out = np.full((11, 256), np.nan, NP[dtype])
    tilelang.compile(f, target=GFX950, execution_backend="emulator")(a, b, out)
    from math import erf
    A, B = f64(a), f64(b)
    ref = [np.exp(A), np.log(B), np.sin(A), np.cos(A), np.tanh(A), np.vectorize(erf)(A), B ** A,
           np.exp2(A) + np.log2(B), np.log10(B) + np.sqrt(B), 1 / np.sqrt(B), 1 / (1 + np.exp(-A))]
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(f64(out), np.array(ref), rtol=tol, atol=tol)


def test_lds_limit_is_160kb():
    """128 KB of operand tiles (two stages of 128x128 A and B): over CDNA3's 64 KB, within CDNA4's 160 KB; 192 KB is
    over both, listed per buffer."""
    f = kernels.matmul(512, 512, 512, 128, 128, 128, dtype="float16", threads=256)
    k = tilelang.compile(f, target=GFX950)
    assert check_gfx950_object(k, r"v_mfma_f32_32x32x16_f16")["lds_bytes"] == 128 * 1024
    with pytest.raises(TileLangResourceError, match="65536-byte limit of gfx942"):
        tilelang.compile(f, target="hip -arch=gfx942", execution_backend="emulator")
    with pytest.raises(TileLangResourceError) as e:
        tilelang.compile(kernels.matmul(512, 512, 512, 256, 128, 128, dtype="float16", threads=256),
                         target=GFX950, execution_backend="emulator")
    assert "over the 163840-byte limit of gfx950" in str(e.value) and re.search(r"A_shared\s+256x128", str(e.value))


def test_fp8_before_gfx940_still_says_why():
    with pytest.raises(TileLangUnsupportedError, match="gfx940 / gfx941 / gfx942 / gfx950"):
        tilelang.compile(kernels.matmul(64, 64, 64, 64, 64, 32, dtype="float8_e4m3fn", out_dtype="float32"),
                         target="hip", execution_backend="emulator")
