"""Metal 4 (MSL 4.0, apple10 GPUs): T.gemm on MetalPerformancePrimitives' matmul2d with cooperative tensors,
behind the target feature "metal4" (TileLang's target key). No Metal compiler or GPU here: every kernel's MSL
passes the clang check against our declarations of the tensor-operation API
(include/tl_device/metal_check/mpp_check.h), and runs in the emulator, whose cooperative tensors place their
elements in a deliberately scrambled order (src/emulator/intrinsics_metal.cc), against NumPy in float64.
"""
import re

import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import TileLangError, TileLangUnsupportedError

import kernels
from test_metal import _rng, attention, clang_check, f64, randn

METAL4 = "metal -mattr=+metal4"


def metal4(func, **kw):
    """Compiles for Metal 4; the MSL must pass the clang check (also for the emulated kernels)."""
    k = tilelang.compile(func, target=METAL4, **kw)
    rc, err = clang_check(k.get_kernel_source())
    assert rc == 0, "the generated MSL does not pass the clang check:\n" + err + "\n" + k.get_kernel_source()
    return k


def emu4(func):
    metal4(func)
    return metal4(func, execution_backend="emulator")


def choice(k):
    (c,) = [c for c in k.choices if "T.gemm" in c]
    return c


# ---- the target ---------------------------------------------------------------------------------------------

def test_metal4_target_spellings():
    for spec in (METAL4, {"kind": "metal", "keys": ["metal", "gpu", "metal4"]}, "metal -mattr=metal4"):
        t = tilelang.Target(spec)
        assert t.kind == "metal" and "metal4" in t.features and str(t) == METAL4, spec
    plain = tilelang.Target({"kind": "metal", "keys": ["metal", "gpu"]})
    assert "metal4" not in plain.features and str(plain) == "metal"
    assert "metal4" not in tilelang.Target("metal -mattr=+metal4,-metal4").features
    with pytest.raises(TileLangError, match=r"unknown Metal feature 'metal5'.*metal4"):
        tilelang.Target("metal -mattr=+metal5")
    with pytest.raises(TileLangUnsupportedError, match=r"target key\(s\) \['tensorcore'\] are not known"):
        tilelang.Target({"kind": "metal", "keys": ["metal", "tensorcore"]})
    with pytest.raises(TileLangUnsupportedError, match=r"'metal4'.*kind 'cuda'"):
        tilelang.Target({"kind": "cuda", "keys": ["cuda", "metal4"]})


# ---- code generation -------------------------------------------------------------------------------------

def test_gemm_lowers_to_matmul2d_on_cooperative_tensors():
    """Before: T.gemm on Metal is simdgroup_matrix 8x8 code. Expected with metal4: matmul2d(16, 32, 16) run by
    each SIMD-group on cooperative tensors, the accumulator in destination cooperative tensors loaded before
    the K loop and stored after it (the loop touches it only through T.gemm), and no simdgroup matrices."""
    f = kernels.matmul(128, 128, 128, 64, 64, 32, dtype="float16")
    k = metal4(f)
    src = k.get_kernel_source()
    assert "#include <MetalPerformancePrimitives/MetalPerformancePrimitives.h>" in src
    assert "mpp::tensor_ops::matmul2d<" in src and "metal::execution_simdgroup" in src
    assert "get_destination_cooperative_tensor" in src and "get_left_input_cooperative_tensor" in src
    assert "decltype(tl::coop<16, 32, 16, false, false, half, float>::dest()) C_coop" in src
    assert "simdgroup_multiply_accumulate" not in src and "simdgroup_float8x8" not in src
    loop = src.index("for (int32_t k = 0;")
    end = src.index("end tile op 3", loop)  # the gemm's op inside the loop (its hoisted moves are outside)
    assert src.index(".load(tl::tg_view((&C_stage") < loop < src.index(".run(A_coop") < end
    assert src.index(".store(tl::tg_view((&C_stage") > end
    assert src[loop:end].count("threadgroup_barrier(") == 2  # around the operand copies only
    assert re.search(r"Metal 4 matmul2d\(16, 32, 16\) on cooperative tensors, float16 -> float32, SIMD-groups 2x2",
                     choice(k))
    plain = tilelang.compile(f, target="metal")
    assert "simdgroup_multiply_accumulate" in plain.get_kernel_source() and "simdgroup_matrix 8x8" in choice(plain)


def test_staging_writes_of_one_gemm_share_a_barrier():
    """The accumulator's staging writes before the K loop are one op's writes: one barrier before the
    cooperative tensors read them, not one after every write (on both Metal paths)."""
    f = kernels.matmul(128, 128, 128, 64, 64, 32, dtype="float16")
    for target, load in ((METAL4, ".load(tl::tg_view((&C_stage"), ("metal", "simdgroup_load(C_simd")):
        src = tilelang.compile(f, target=target).get_kernel_source()
        pre = src[:src.index(load)]
        first = pre.index("C_stage")
        assert pre[first:].count("threadgroup_barrier(") == 1, target


def test_clang_check_catches_misused_tensor_operations():
    src = metal4(kernels.matmul(64, 64, 32, 64, 64, 32, dtype="float16")).get_kernel_source()
    # an accumulator type the API's table does not have for half operands
    rc, err = clang_check(src.replace("half, float>::dest()", "half, int32_t>::dest()"))
    assert rc != 0 and "combination of element types" in err
    # the same for a left operand (its template names the destination's element type too)
    rc, err = clang_check(src.replace("half, float>::left()", "half, int32_t>::left()"))
    assert rc != 0 and "combination of element types" in err
    # a cooperative tensor run by an operation with another descriptor
    rc, err = clang_check(src.replace("tl::mm_op<16, 32, 16, false, false>().run(",
                                      "tl::mm_op<16, 32, 8, false, false>().run("))
    assert rc != 0 and "cooperative tensor of this operation" in err
    # a float destination loaded from a half tile
    rc, err = clang_check(re.sub(r"(C_coop_\d+\[\d+\])\.load\(tl::tg_view\(\(&(C_stage_\d+)\[",
                                 r"\1.load(tl::tg_view(((threadgroup half*)&\2[", src, count=1))
    assert rc != 0 and "its own element type" in err
    rc, err = clang_check(src.replace("get_left_input_cooperative_tensor", "get_left_cooperative_tensor"))
    assert rc != 0 and "get_left_cooperative_tensor" in err


# ---- kernels in the emulator against NumPy -----------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_reference_gemm(dtype):
    rng = _rng()
    M, N, K = 256, 256, 128
    k = emu4(kernels.matmul(M, N, K, 128, 128, 32 if dtype == "float16" else 16, dtype=dtype, num_stages=2))
    assert "Metal 4 matmul2d" in choice(k)
    a, b = randn(rng, (M, K), dtype), randn(rng, (K, N), dtype)
    c = np.full((M, N), np.nan, dtype)
    k(a, b, c)
    tol = (2e-3, 4e-2) if dtype == "float16" else (1e-5, 1e-4)
    np.testing.assert_allclose(f64(c), f64(a) @ f64(b), rtol=tol[0], atol=tol[1])


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_ragged_gemm(dtype):
    rng = _rng()
    M, N, K = 100, 72, 88  # no size a multiple of the 64x64x32 tile; K steps of 8 (88 = 2*32 + 24)
    k = emu4(kernels.matmul(M, N, K, 64, 64, 32, dtype=dtype, out_dtype="float32"))
    np_dt = np.float32 if dtype == "float32" else np.float16
    a, b = randn(rng, (M, K), np_dt), randn(rng, (K, N), np_dt)
    if dtype == "bfloat16":
        import ml_dtypes
        a, b = a.astype(ml_dtypes.bfloat16), b.astype(ml_dtypes.bfloat16)
    c = np.full((M, N), np.nan, np.float32)
    k(a, b, c)
    np.testing.assert_allclose(c, f64(a) @ f64(b), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("bm,bn,bk,threads,desc", [(16, 64, 24, 128, "16, 16, 8"), (32, 8, 32, 32, "16, 8, 16")])
def test_narrow_tiles_take_smaller_descriptors(bm, bn, bk, threads, desc):
    """SIMD-groups with 16 or 8 accumulator columns take matmul2d(16, 16 / 8, k); a K tile that is not a multiple
    of 16 takes k = 8."""
    rng = _rng()
    M, N, K = 48, 40, 72
    k = emu4(kernels.matmul(M, N, K, bm, bn, bk, dtype="float16", out_dtype="float32", threads=threads))
    assert f"matmul2d({desc})" in choice(k)
    a, b = randn(rng, (M, K), np.float16), randn(rng, (K, N), np.float16)
    c = np.full((M, N), np.nan, np.float32)
    k(a, b, c)
    np.testing.assert_allclose(c, f64(a) @ f64(b), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("trans_A,trans_B", [(True, False), (False, True), (True, True)])
def test_transposed_gemm(trans_A, trans_B):
    rng = _rng()
    M, N, K = 96, 80, 48
    k = emu4(kernels.matmul_transposed(M, N, K, 64, 64, 16, trans_A=trans_A, trans_B=trans_B, dtype="float32",
                                       out_dtype="float32"))
    assert f"tl::coop<16, 32, 16, {str(trans_A).lower()}, {str(trans_B).lower()}" in k.get_kernel_source()
    a = randn(rng, (K, M) if trans_A else (M, K))
    b = randn(rng, (N, K) if trans_B else (K, N))
    c = np.full((M, N), np.nan, np.float32)
    k(a, b, c)
    ref = (f64(a).T if trans_A else f64(a)) @ (f64(b).T if trans_B else f64(b))
    np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("reg,trans", [("A", False), ("B", False), ("B", True)])
def test_gemm_register_operands(reg, trans):
    from test_emulator import _register_operand_gemm
    rng = _rng()
    M, N, K = 64, 64, 32
    k = emu4(_register_operand_gemm(M, N, K, reg, trans))
    a = randn(rng, (M, K), np.float16)
    b = randn(rng, (N, K) if trans else (K, N), np.float16)
    c = np.full((M, N), np.nan, np.float32)
    k(a, b, c)
    np.testing.assert_allclose(c, f64(a) @ (f64(b).T if trans else f64(b)), rtol=1e-5, atol=1e-4)


def test_int8_gemm_is_exact_in_int32():
    """matmul2d takes int8 x int8 into int32 (the simdgroup path cannot: a clear error names metal4)."""
    rng = _rng()
    M, N, K = 80, 64, 96
    f = kernels.matmul(M, N, K, 64, 64, 32, dtype="int8", accum_dtype="int32", out_dtype="int32")
    with pytest.raises(TileLangUnsupportedError, match=r"int8 needs Metal 4: -mattr=\+metal4"):
        tilelang.compile(f, target="metal")
    k = emu4(f)
    a = rng.integers(-128, 128, (M, K), dtype=np.int8)
    b = rng.integers(-128, 128, (K, N), dtype=np.int8)
    c = np.full((M, N), -1, np.int32)
    k(a, b, c)
    np.testing.assert_array_equal(c, a.astype(np.int64) @ b.astype(np.int64))
    assert "tl::coop<16, 32, 16, false, false, int8_t, int32_t>" in k.get_kernel_source()


@pytest.mark.parametrize("D,causal", [(64, False), (64, True), (128, True)])
def test_flashattention_64x64_fits_and_matches(D, causal):
    """TileLang's usual FlashAttention tile (64x64, fp16) at head dims 64 and 128 on cooperative tensors: Q's
    loads go before the loop into left-operand cooperative tensors (Q_shared is then dead in the loop and shares
    K's and V's bytes), the accumulator staging is listed in the shared-memory table, the total fits 32 KB."""
    rng = _rng()
    B, H, S = 1, 2, 192
    f = kernels.flashattn(B, H, S, D, causal, block_M=64, block_N=64, dtype="float16")
    k = emu4(f)
    rep = k.get_shared_memory_report()
    total = int(re.search(r"total (\d+) bytes", rep).group(1))
    assert total <= 32768 and "C_stage" in rep, rep
    off = {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\w+)\s.*\s(\d+)$", rep, re.M)}
    assert off["K_shared"] == off["V_shared"] == off["Q_shared"], rep
    assert re.search(r"A_coop_\d+_all\[%d\]" % (D // 16), k.get_kernel_source())  # Q: one per 16-wide K step
    q, kk, v = (randn(rng, (B, H, S, D), np.float16) for _ in range(3))
    o = np.full_like(q, np.nan)
    k(q, kk, v, o)
    np.testing.assert_allclose(f64(o), attention(q, kk, v, causal), rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("name", ["matmul_tAB", "flashattn16"])
def test_every_pass_output_reparses(name):
    """The Metal 4 pipeline's IR after every pass (the tl.coop_* calls included) prints and re-parses equal."""
    from tilelang import _ffi
    func = dict(kernels.all_kernels(), flashattn16=kernels.flashattn(1, 2, 128, 32, True, 64, 32))[name]
    passes = 0
    for pass_name, f in _ffi.lower_trace_funcs(func, METAL4):
        text = _ffi.print_func(f)
        assert _ffi.structural_equal(f, T.parse_source(text)), f"{name}: the IR after {pass_name} differs"
        passes += "tl.coop_mma" in text
    assert passes > 0


def test_every_test_kernel_compiles_to_checked_msl():
    """Every kernel of the shared test set (GEMMs of every layout, FlashAttention, reductions, copies) compiles for
    Metal 4 and passes the clang check."""
    built = 0
    for name, f in kernels.all_kernels():
        metal4(f)
        built += 1
    assert built >= 10
