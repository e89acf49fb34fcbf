"""fp8 (float8_e4m3fn / float8_e5m2) on CUDA, the emulator and the CPU target (issue 12 item 4, issue 13
item 3): element-wise kernels (copy, cast, scale) and T.gemm with fp8 A [M, K] and B [N, K] and a float32
accumulator, on mma.sync m16n8k32 (sm_89+) or wgmma m64nNk32 (sm_90a). NVRTC compiles the CUDA source and
the PTX is checked; numbers come from the emulator (whose fp8 mma / wgmma semantics are written from the
PTX ISA) and the CPU target, against NumPy in float64 on inputs quantised to fp8 with ml_dtypes (so the
reference is exact up to the float32 accumulation), ragged sizes and 1-3 stages included."""
import os
import re
import shutil
import subprocess

import ml_dtypes
import numpy as np
import pytest

import kernels
import tilelang
import tilelang.language as T
from tilelang.errors import TileLangPerformanceWarning, TileLangTypeError, TileLangUnsupportedError


E4M3, E5M2 = "float8_e4m3fn", "float8_e5m2"
NP = {E4M3: ml_dtypes.float8_e4m3fn, E5M2: ml_dtypes.float8_e5m2, "float16": np.float16, "float32": np.float32,
      "bfloat16": ml_dtypes.bfloat16}
MAX = {E4M3: 448.0, E5M2: 57344.0}
PTX = {E4M3: "e4m3", E5M2: "e5m2"}
SM89 = "cuda -arch=sm_89"
SM90A = "cuda -arch=sm_90a"


def _rng():
    seed = int(os.environ.get("TL_TEST_SEED") or np.random.SeedSequence().entropy % 2**32)
    print("seed", seed)
    return np.random.default_rng(seed)


def _sat(x, dtype):
    """x rounded to the fp8 dtype as CUDA converts (round to nearest even, saturating at the largest finite
    value; NaN stays NaN): clamp first, then ml_dtypes' rounding."""
    x = np.asarray(x, np.float64)
    return np.where(np.isnan(x), np.nan, np.clip(x, -MAX[dtype], MAX[dtype])).astype(NP[dtype])


def fp8_gemm(M, N, K, a_dtype=E4M3, b_dtype=E4M3, bM=64, bN=64, bK=64, stages=2, threads=128, trans_A=False,
             trans_B=True):
    """C (float32) = op(A) @ op(B) on 8-bit operands (kernels.matmul_transposed: errors point into kernels.py)."""
    return kernels.matmul_transposed(M, N, K, bM, bN, bK, trans_A, trans_B, dtype=a_dtype, b_dtype=b_dtype,
                                     accum_dtype="float32", out_dtype="float32", num_stages=stages,
                                     threads=threads)


def _inputs(rng, M, N, K, a_dtype, b_dtype):
    a = _sat(rng.standard_normal((M, K)) * 4, a_dtype)
    b = _sat(rng.standard_normal((N, K)) * 4, b_dtype)
    return a, b, a.astype(np.float64) @ b.astype(np.float64).T


def _check(c, want, K):
    # fp8 products are exact; the only error is float32 accumulation over K terms.
    np.testing.assert_allclose(c.astype(np.float64), want, rtol=0, atol=2e-6 * K * np.abs(want).max() + 1e-6)


# ---------------------------------------------------------------------------------------- element-wise


def fp8_elementwise(n, src, dst, scale=1.0):
    @T.prim_func
    def cast_scale(X: T.Tensor((n,), src), Y: T.Tensor((n,), dst), Z: T.Tensor((n,), src)):
        with T.Kernel(T.ceildiv(n, 128), threads=128) as bx:
            for i in T.Parallel(128):
                Y[bx * 128 + i] = T.Cast(dst, X[bx * 128 + i] * scale)
                Z[bx * 128 + i] = X[bx * 128 + i]

    return cast_scale


def _all_fp8(dtype):
    return np.arange(256, dtype=np.uint8).view(NP[dtype])


@pytest.mark.parametrize("src,dst,scale", [("float32", E4M3, 1.0), ("float32", E5M2, 1.0), (E4M3, "float32", 1.0),
                                           (E5M2, "float32", 1.0), (E4M3, E5M2, 1.0), (E5M2, E4M3, 4.0),
                                           ("float16", E4M3, 0.5), (E4M3, "bfloat16", 1.0)])
@pytest.mark.parametrize("target", ["emulator", "cpu"])
def test_fp8_cast_copy_scale(src, dst, scale, target):
    rng = _rng()
    if src.startswith("float8"):
        x = np.concatenate([_all_fp8(src), _all_fp8(src)[:100]])
    else:  # around every fp8 rounding boundary, past the largest value, and specials
        v = rng.standard_normal(300) * np.exp2(rng.integers(-20, 18, 300))
        with np.errstate(over="ignore"):
            x = np.concatenate([v, [0.0, -0.0, 448.0, 464.0, 465.0, -1e9, 57344.0, 61440.0, 2**-10, 2**-9 * 1.5,
                                    np.inf, -np.inf, np.nan]]).astype(NP[src])
    n = len(x)
    func = fp8_elementwise(n, src, dst, scale)
    if target == "cpu":
        k = tilelang.compile(func, target="cpu")
    else:
        k = tilelang.compile(func, target=SM89, execution_backend="emulator")
    y = np.zeros(n, NP[dst])
    z = np.zeros(n, NP[src])
    k(x, y, z)
    # a plain copy keeps every value (infinities included; the emulator does not keep NaN payloads)
    assert np.array_equal(z.astype(np.float64), x.astype(np.float64), equal_nan=True)
    prod = x.astype(np.float64) * np.float64(np.float32(scale))
    if src in ("float32", "float16", "bfloat16"):  # the product is computed in float32
        prod = prod.astype(np.float32).astype(np.float64)
    # CUDA and the emulator saturate; the CPU target rounds as ml_dtypes does (overflow -> NaN / inf)
    want = _sat(prod, dst) if dst.startswith("float8") and target != "cpu" else prod.astype(NP[dst])
    got, want = y.astype(np.float64), want.astype(np.float64)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(got[~np.isnan(got)], want[~np.isnan(want)])


@pytest.mark.parametrize("arch", ["sm_80", "sm_89", "sm_90a"])
def test_fp8_elementwise_compiles_for_cuda(arch):
    """Conversions compile everywhere: cvt.rn.satfinite / cvt.rn.f16x2.e4m3x2 on sm_89+, integer code on sm_80."""
    k = tilelang.compile(fp8_elementwise(1000, "float32", E4M3, 2.0), target=f"cuda -arch={arch}")
    ptx = k.get_ptx()
    assert ("cvt.rn.satfinite.e4m3x2.f32" in ptx) == (arch != "sm_80"), arch
    assert "tl::float8_e4m3_t" in k.get_kernel_source()
    back = tilelang.compile(fp8_elementwise(1000, E4M3, "float32", 1.0), target=f"cuda -arch={arch}").get_ptx()
    assert ("cvt.rn.f16x2.e4m3x2" in back) == (arch != "sm_80"), arch


SOFT_DRIVER = r"""
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#define __device__
#define __forceinline__ inline
static unsigned __float_as_uint(float f) { unsigned u; std::memcpy(&u, &f, 4); return u; }
static float __uint_as_float(unsigned u) { float f; std::memcpy(&f, &u, 4); return f; }
static int __float2int_rn(float f) { return (int)std::nearbyint(f); }
namespace tl {
%s
}
int main() {
  float f;
  unsigned b;
  while (std::fread(&f, 4, 1, stdin) == 1) {
    unsigned char q[2] = {tl::detail::fp8_from_float_soft<4, 3>(f), tl::detail::fp8_from_float_soft<5, 2>(f)};
    std::fwrite(q, 1, 2, stdout);
  }
  for (b = 0; b < 256; ++b) {
    float d[2] = {tl::detail::fp8_to_float_soft<4, 3>((unsigned char)b),
                  tl::detail::fp8_to_float_soft<5, 2>((unsigned char)b)};
    std::fwrite(d, 4, 2, stdout);
  }
  return 0;
}
"""


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")
def test_sm80_software_conversions_match_cuda_rounding(tmp_path):
    """sm_80 has no fp8 cvt: the header's integer conversions, compiled for the host, against round-to-nearest-
    even with saturation (what cvt.rn.satfinite and __nv_fp8 do) on floats near every fp8 value and boundary."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    header = open(os.path.join(root, "include", "tl_device", "cuda", "common.h")).read()
    m = re.search(r"namespace detail \{\ntemplate <int E, int M>\n.*?\}  // namespace detail\n", header, re.S)
    assert m, "the fp8 conversion block of common.h"
    src = tmp_path / "soft.cc"
    src.write_text(SOFT_DRIVER % m.group(0))
    exe = tmp_path / "soft"
    subprocess.run(["g++", "-O1", "-std=c++17", str(src), "-o", str(exe)], check=True)
    rng = _rng()
    vals = []
    for dt in (E4M3, E5M2):
        v = _all_fp8(dt).astype(np.float64)
        v = v[np.isfinite(v)]
        nxt = np.sort(np.unique(np.abs(v)))
        mids = (nxt[1:] + nxt[:-1]) / 2  # exact ties
        vals += [v, mids, -mids, np.nextafter(mids.astype(np.float32), np.float32(np.inf)),
                 np.nextafter(mids.astype(np.float32), np.float32(-np.inf))]
    vals += [rng.standard_normal(20000) * np.exp2(rng.integers(-24, 20, 20000)),
             [np.inf, -np.inf, np.nan, 1e30, -1e30, 0.0, -0.0, 1e-40, 464.0, 61440.0, 61439.0]]
    x = np.concatenate([np.asarray(a, np.float64) for a in vals]).astype(np.float32)
    out = subprocess.run([str(exe)], input=x.tobytes(), capture_output=True, check=True).stdout
    q = np.frombuffer(out[:2 * len(x)], np.uint8).reshape(-1, 2)
    back = np.frombuffer(out[2 * len(x):], np.float32).reshape(256, 2)
    for col, dt in ((0, E4M3), (1, E5M2)):
        got = q[:, col].copy().view(NP[dt]).astype(np.float64)
        want = _sat(x.astype(np.float64), dt).astype(np.float64)
        assert np.array_equal(np.isnan(got), np.isnan(want)), dt
        ok = ~np.isnan(want)
        np.testing.assert_array_equal(got[ok], want[ok], err_msg=dt)
        # the sign of zero survives
        assert np.array_equal(np.signbit(got[ok & (want == 0)]), np.signbit(x[ok & (want == 0)])), dt
    for col, dt in ((0, E4M3), (1, E5M2)):
        ref = _all_fp8(dt).astype(np.float32)
        assert np.array_equal(np.isnan(back[:, col]), np.isnan(ref)), dt
        np.testing.assert_array_equal(back[~np.isnan(ref), col], ref[~np.isnan(ref)], err_msg=dt)


# ---------------------------------------------------------------------------------------- gemm: mma.sync


@pytest.mark.parametrize("M,N,K,stages,ab", [(128, 128, 128, 2, (E4M3, E4M3)), (100, 72, 160, 3, (E5M2, E5M2)),
                                             (64, 64, 64, 1, (E4M3, E5M2)), (72, 40, 96, 2, (E5M2, E4M3))])
def test_fp8_gemm_mma_sync_in_the_emulator(M, N, K, stages, ab):
    rng = _rng()
    a, b, want = _inputs(rng, M, N, K, *ab)
    k = tilelang.compile(fp8_gemm(M, N, K, *ab, stages=stages), target=SM89, execution_backend="emulator")
    assert any(f"mma.sync m16n8k32 {PTX[ab[0]]}_{PTX[ab[1]]}" in c for c in k.choices), k.choices
    c = np.full((M, N), np.nan, np.float32)
    k(a, b, c)
    _check(c, want, K)


@pytest.mark.parametrize("ab", [(E4M3, E4M3), (E4M3, E5M2), (E5M2, E4M3), (E5M2, E5M2)])
@pytest.mark.parametrize("arch", ["sm_89", "sm_90"])
def test_fp8_gemm_compiles_to_fp8_mma_sync(ab, arch):
    # 256 threads for a 128x128 tile: with 128 threads the accumulators alone take 128 registers per
    # thread, and on sm_90 the TMA pipeline's bookkeeping then tips the kernel into spills.
    k = tilelang.compile(fp8_gemm(256, 128, 256, *ab, bM=128, bN=128, stages=3, threads=256),
                         target=f"cuda -arch={arch}")
    ptx = k.get_ptx()
    assert re.search(rf"mma\.sync\.aligned\.m16n8k32\.row\.col\.f32\.{PTX[ab[0]]}\.{PTX[ab[1]]}\.f32", ptx)
    assert "ldmatrix.sync.aligned.m8n8.x4.shared.b16" in ptx and "ld.local" not in ptx
    res = k.get_resource_usage()
    assert res["spill_stores"] == 0 and res["spill_loads"] == 0 and res["stack_bytes"] == 0, res


@pytest.mark.parametrize("ab", [(E4M3, E4M3), (E5M2, E4M3)])
def test_fp8_gemm_on_the_cpu(ab):
    M, N, K = 96, 80, 160
    rng = _rng()
    a, b, want = _inputs(rng, M, N, K, *ab)
    c = np.zeros((M, N), np.float32)
    tilelang.compile(fp8_gemm(M, N, K, *ab), target="cpu")(a, b, c)
    _check(c, want, K)


# ---------------------------------------------------------------------------------------- gemm: wgmma


@pytest.mark.parametrize("bM,bN,bK,threads,M,N,K,stages,ab", [
    (64, 64, 64, 128, 100, 72, 224, 2, (E4M3, E4M3)),        # 64-byte rows: 64B swizzle
    (128, 128, 128, 128, 200, 136, 288, 3, (E4M3, E5M2)),    # 128B swizzle, two m64 instructions
    (128, 64, 32, 256, 128, 64, 96, 1, (E5M2, E5M2)),        # 32B swizzle, two warp groups
    (64, 256, 128, 128, 64, 256, 128, 2, (E5M2, E4M3)),      # m64n256k32
])
def test_fp8_gemm_wgmma_in_the_emulator(bM, bN, bK, threads, M, N, K, stages, ab):
    rng = _rng()
    a, b, want = _inputs(rng, M, N, K, *ab)
    func = fp8_gemm(M, N, K, *ab, bM=bM, bN=bN, bK=bK, stages=stages, threads=threads)
    k = tilelang.compile(func, target=SM90A, execution_backend="emulator")
    assert any("wgmma.mma_async m64n" in c and f"k32 {PTX[ab[0]]}_{PTX[ab[1]]}" in c for c in k.choices), k.choices
    c = np.full((M, N), np.nan, np.float32)
    k(a, b, c)
    _check(c, want, K)
    g = tilelang.compile(func, target=SM90A)
    ptx = g.get_ptx()
    assert re.search(rf"wgmma\.mma_async\.sync\.aligned\.m64n\d+k32\.f32\.{PTX[ab[0]]}\.{PTX[ab[1]]}", ptx)
    assert "mma.sync" not in ptx
    res = g.get_resource_usage()
    assert res["spill_stores"] == 0 and res["spill_loads"] == 0 and res["stack_bytes"] == 0, res


def test_fp8_gemm_that_cannot_use_wgmma_falls_back_to_mma_sync():
    """A 64-thread block is not a warp group: fp8 mma.sync on sm_90a, with the reason at the gemm's line."""
    with pytest.warns(TileLangPerformanceWarning, match="not wgmma"):
        k = tilelang.compile(fp8_gemm(128, 64, 128, E5M2, E4M3, threads=64), target=SM90A)
    ptx = k.get_ptx()
    assert "mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e4m3.f32" in ptx and "wgmma.mma_async" not in ptx
    assert any("kernels.py" in w and "warp group" in w for w in k.warnings), k.warnings
    rng = _rng()
    a, b, want = _inputs(rng, 128, 64, 128, E5M2, E4M3)
    c = np.full((128, 64), np.nan, np.float32)
    with pytest.warns(TileLangPerformanceWarning, match="not wgmma"):
        e = tilelang.compile(fp8_gemm(128, 64, 128, E5M2, E4M3, threads=64), target=SM90A, execution_backend="emulator")
    e(a, b, c)
    _check(c, want, 128)


# ---------------------------------------------------------------------------------------- errors


def test_fp8_gemm_needs_sm89():
    with pytest.raises(TileLangUnsupportedError, match=r"fp8 T.gemm needs sm_89 or newer.*the target is sm_80") as e:
        tilelang.compile(fp8_gemm(64, 64, 64), target="cuda -arch=sm_80")
    assert "kernels.py:" in str(e.value)


@pytest.mark.parametrize("ta,tb,stages", [(False, False, 2), (True, True, 3), (True, False, 1)])
@pytest.mark.parametrize("target", [SM89, SM90A])
def test_fp8_gemm_other_transposes_go_through_shared_memory(ta, tb, stages, target):
    """ldmatrix cannot transpose 8-bit elements and wgmma reads them K-major only: an operand stored MN-major
    is copied into a K-major shared tile first (then mma.sync on sm_89, wgmma on sm_90a), with a performance
    warning at the gemm's line."""
    rng = _rng()
    M, N, K = 112, 80, 160  # ragged (not multiples of the 64 tile), rows of whole 16-byte chunks for cp.async
    a, b, want = _inputs(rng, M, N, K, E4M3, E5M2)
    func = fp8_gemm(M, N, K, E4M3, E5M2, stages=stages, trans_A=ta, trans_B=tb)
    with pytest.warns(TileLangPerformanceWarning, match=r"kernels.py:\d+: 8-bit T.gemm operand .*transposed "
                                                        r"through shared memory"):
        k = tilelang.compile(func, target=target, execution_backend="emulator")
    c = np.full((M, N), np.nan, np.float32)
    k(np.ascontiguousarray(a.T) if ta else a, b if tb else np.ascontiguousarray(b.T), c)
    _check(c, want, K)
    with pytest.warns(TileLangPerformanceWarning):
        g = tilelang.compile(func, target=target)
    if target == SM90A:  # wgmma reads the K-major copies
        assert any("wgmma.mma_async m64n" in c and "K-major" in c for c in k.choices), k.choices
        assert re.search(r"wgmma\.mma_async\.sync\.aligned\.m64n\d+k32\.f32\.e4m3\.e5m2", g.get_ptx())
    else:
        assert re.search(r"mma\.sync\.aligned\.m16n8k32\.row\.col\.f32\.e4m3\.e5m2\.f32", g.get_ptx())
    res = g.get_resource_usage()
    assert res["spill_stores"] == 0 and res["spill_loads"] == 0 and res["stack_bytes"] == 0, res


@pytest.mark.parametrize("ta,tb,bM,bN", [(True, False, 128, 64), (False, False, 64, 128)])
def test_fp8_wgmma_k_major_copies_with_two_warp_groups(ta, tb, bM, bN):
    """Two warp groups (along M, then along N) read the K-major copies; the next k step overwrites them only
    after both groups' wgmmas completed (the emulator reports an operand overwritten before its wait)."""
    rng = _rng()
    M, N, K = 192, 192, 192
    a, b, want = _inputs(rng, M, N, K, E5M2, E4M3)
    func = fp8_gemm(M, N, K, E5M2, E4M3, bM=bM, bN=bN, stages=2, threads=256, trans_A=ta, trans_B=tb)
    with pytest.warns(TileLangPerformanceWarning, match="transposed through shared memory"):
        k = tilelang.compile(func, target=SM90A, execution_backend="emulator")
    assert any("wgmma.mma_async m64n64k32 e5m2_e4m3" in c and ("2x1" in c or "1x2" in c) for c in k.choices), k.choices
    c = np.full((M, N), np.nan, np.float32)
    k(np.ascontiguousarray(a.T) if ta else a, b if tb else np.ascontiguousarray(b.T), c)
    _check(c, want, K)


def _small_gemm(a_dtype, b_dtype, acc_dtype, a_scope):
    """A 64^3 gemm with A in `a_scope` ("shared" or "fragment"); used by the rejection tests."""
    alloc_a = T.alloc_shared if a_scope == "shared" else T.alloc_fragment

    @T.prim_func
    def main(A: T.Tensor((64, 64), a_dtype), B: T.Tensor((64, 64), b_dtype), C: T.Tensor((64, 64), acc_dtype)):
        with T.Kernel(1, threads=128) as _:
            A_t = alloc_a((64, 64), a_dtype)
            B_s = T.alloc_shared((64, 64), b_dtype)
            C_l = T.alloc_fragment((64, 64), acc_dtype)
            T.copy(A, A_t)
            T.copy(B, B_s)
            T.gemm(A_t, B_s, C_l, transpose_B=True, clear_accum=True)
            T.copy(C_l, C)

    return main


def test_fp8_gemm_with_a_in_registers():
    """Was "fp8 T.gemm on CUDA takes A and B from shared memory"; the fragment now holds the m16n8k32 bytes
    (tests/python/test_gemm_int8_register_operands.py has the layout tables)."""
    rng = _rng()
    a, b, want = _inputs(rng, 64, 64, 64, E4M3, E5M2)
    k = tilelang.compile(_small_gemm(E4M3, E5M2, "float32", "fragment"), target=SM89, execution_backend="emulator")
    assert any("m16n8k32 e4m3_e5m2" in c and "A in registers" in c for c in k.choices), k.choices
    c = np.zeros((64, 64), np.float32)
    k(a, b, c)
    _check(c, want, 64)


@pytest.mark.parametrize("ab", [(E4M3, E5M2), (E5M2, E5M2)])
def test_fp8_wgmma_with_a_in_registers(ab):
    """Before: "fp8 wgmma with A in registers is not implemented" (sm_90a fell back to mma.sync). Expected:
    wgmma .f32.<a>.<b> with A from four .b32 registers (16 fp8 elements a thread per k32 step) and the
    scale immediates but no transpose one, matching NumPy in the emulator."""
    rng = _rng()
    a, b, want = _inputs(rng, 64, 64, 64, *ab)
    f = _small_gemm(ab[0], ab[1], "float32", "fragment")
    k = tilelang.compile(f, target=SM90A)
    assert any("wgmma.mma_async m64n64k32" in c and "A in registers" in c for c in k.choices), k.choices
    assert re.search(rf"wgmma\.mma_async\.sync\.aligned\.m64n64k32\.f32\.{PTX[ab[0]]}\.{PTX[ab[1]]} "
                     r"\{[^}]*\}, \{%r\d+, %r\d+, %r\d+, %r\d+\}, %rd\d+, p, 1, 1;", k.get_ptx())
    c = np.zeros((64, 64), np.float32)
    tilelang.compile(f, target=SM90A, execution_backend="emulator")(a, b, c)
    _check(c, want, 64)


@pytest.mark.parametrize("a_dtype,b_dtype,acc,a_scope,err,msg", [
    (E4M3, E4M3, "float16", "shared", TileLangTypeError, r"float16 but float8_e4m3fn inputs need float32"),
    ("float16", "int32", "float32", "shared", TileLangTypeError, r"no common dtype"),
])
def test_unsupported_fp8_and_mixed_gemms_are_rejected_at_the_gemm(a_dtype, b_dtype, acc, a_scope, err, msg):
    """Raised when the function is parsed (dtype rules) or compiled (fp8 operand rules); the error points at
    the T.gemm line in _small_gemm (this file), not at the compiler."""
    with pytest.raises(err, match=msg) as e:
        tilelang.compile(_small_gemm(a_dtype, b_dtype, acc, a_scope), target=SM89)
    assert "test_fp8_gemm.py:" in str(e.value)


def test_fp8_elementwise_builds_for_hip():
    """fp8 storage types on HIP (include/tl_device/hip/fp8.h); fp8 MFMA gemm is tested in test_hip.py."""
    k = tilelang.compile(fp8_elementwise(256, "float32", E4M3), target="hip -arch=gfx90a")
    src = k.get_kernel_source()
    assert "fp8" in src.lower() or "float8" in src.lower(), src
