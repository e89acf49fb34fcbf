"""float32 T.gemm on CUDA runs on TF32 tensor cores (issue 12), as in TileLang: mma.sync m16n8k8
.f32.tf32.tf32.f32 on sm_80+ (sm_90a too: no tf32 wgmma yet, reported), each operand element rounded to tf32
by cvt.rna.tf32.f32 (10-bit mantissa, round to nearest, ties away from zero) as it is loaded from shared
memory. NVRTC compiles the kernels and the PTX and the SASS (cuobjdump, installed by setup.sh) are checked;
numbers come from the emulator (its m16n8k8 tf32 fragments and cvt.rna are written from the PTX ISA) against
NumPy in float64: exactly the tf32-rounded product up to float32 accumulation, and within the tf32 bound of
the float64 product of the unrounded inputs."""
import os

import numpy as np
import pytest

import kernels
import tilelang
import tilelang.language as T
from tilelang.errors import TileLangLayoutError, TileLangPerformanceWarning
from tilelang.tools.sass import find_cuobjdump


SM80 = "cuda -arch=sm_80"
SM90A = "cuda -arch=sm_90a"
MMA = "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"


def _rng():
    seed = int(os.environ.get("TL_TEST_SEED") or np.random.SeedSequence().entropy % 2**32)
    print("seed", seed)
    return np.random.default_rng(seed)


def tf32(x):
    """x (float32) rounded as cvt.rna.tf32.f32 does (PTX ISA): keep 10 mantissa bits, nearest, ties away."""
    x = np.asarray(x, np.float32)
    u = x.view(np.uint32).astype(np.uint64)
    r = ((u + 0x1000) & ~np.uint64(0x1FFF)).astype(np.uint32).view(np.float32)
    return np.where(np.isfinite(x), r, x)


def tf32_gemm(M, N, K, bM=64, bN=64, bK=32, stages=2, threads=128, trans_A=False, trans_B=False):
    """C = op(A) @ op(B), all float32 (kernels.matmul_transposed: errors point into kernels.py)."""
    return kernels.matmul_transposed(M, N, K, bM, bN, bK, trans_A, trans_B, dtype="float32", accum_dtype="float32",
                                     num_stages=stages, threads=threads)


def _check(c, a, b):
    """a [M, K], b [K, N] as multiplied. Against the tf32-rounded product the only error is float32
    accumulation (one rounding per m16n8k8 step and per K tile); against the float64 product of the
    unrounded inputs each product may be off by 2u + u^2 relative, u = 2^-11 (two rounded factors)."""
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    mag = np.abs(a64) @ np.abs(b64)
    K = a.shape[1]
    exact_tf32 = tf32(a).astype(np.float64) @ tf32(b).astype(np.float64)
    acc_err = (K / 8 + 2) * 2.0**-24 * mag * 1.01
    assert np.all(np.abs(c - exact_tf32) <= acc_err + 1e-30), np.max(np.abs(c - exact_tf32) - acc_err)
    tf32_err = (2.0**-10 + 2.0**-22) * mag + acc_err
    assert np.all(np.abs(c - a64 @ b64) <= tf32_err)
    return np.max(np.abs(c - a64 @ b64) / np.maximum(mag, 1e-30))


# ---------------------------------------------------------------------------------------- numbers


@pytest.mark.parametrize("trans_A", [False, True])
@pytest.mark.parametrize("trans_B", [False, True])
@pytest.mark.parametrize("M,N,K,stages", [(100, 72, 88, 2), (64, 64, 32, 1)])
def test_tf32_gemm_in_the_emulator(M, N, K, stages, trans_A, trans_B):
    rng = _rng()
    a = rng.uniform(-1, 1, (M, K)).astype(np.float32)
    b = rng.uniform(-1, 1, (K, N)).astype(np.float32)
    k = tilelang.compile(tf32_gemm(M, N, K, stages=stages, trans_A=trans_A, trans_B=trans_B), target=SM80,
                         execution_backend="emulator")
    assert any("mma.sync m16n8k8 tf32" in c for c in k.choices), k.choices
    c = np.full((M, N), np.nan, np.float32)
    k(np.ascontiguousarray(a.T) if trans_A else a, np.ascontiguousarray(b.T) if trans_B else b, c)
    rel = _check(c, a, b)
    # tf32 is really in effect: a float32 gemm would be ~1e-7 off relative to sum |a||b|, tf32 ~1e-4
    assert rel > 2.0**-16, rel


def test_tf32_rounding_is_to_nearest_ties_away():
    """C = A @ I gives A rounded to tf32: hand-picked ties, halfway-minus-one-ulp, carries into the exponent,
    signs, subnormals."""
    vals = np.array([1 + 2.0**-11, -(1 + 2.0**-11), 1 + 2.0**-11 - 2.0**-23, 1 + 3 * 2.0**-11,
                     2 - 2.0**-11, 2 - 2.0**-12, 1e-40, -3e-39, 0.1, -0.0, 3.0, 65504.0 + 16, 1 + 2.0**-13], np.float32)
    want = np.array([1 + 2.0**-10, -(1 + 2.0**-10), 1.0, 1 + 2 * 2.0**-10, 2.0, 2.0], np.float64)
    a = np.zeros((16, 8), np.float32)
    a.flat[:len(vals)] = vals
    eye = np.eye(8, dtype=np.float32)
    k = tilelang.compile(tf32_gemm(16, 8, 8, bM=16, bN=8, bK=8, stages=1, threads=32), target=SM80,
                         execution_backend="emulator")
    c = np.zeros((16, 8), np.float32)
    k(a, eye, c)
    np.testing.assert_array_equal(c.flat[:6], want)
    np.testing.assert_array_equal(c, tf32(a))


def test_tf32_gemm_falls_back_to_mma_sync_on_sm90a():
    rng = _rng()
    M, N, K = 72, 64, 64
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal((K, N)).astype(np.float32)
    with pytest.warns(TileLangPerformanceWarning, match="not wgmma"):
        k = tilelang.compile(tf32_gemm(M, N, K), target=SM90A, execution_backend="emulator")
    c = np.full((M, N), np.nan, np.float32)
    k(a, b, c)
    _check(c, a, b)


def test_float32_gemm_on_the_cpu_is_exact_float32():
    """The CPU target multiplies float32 in float32 (no tf32): a documented difference from CUDA."""
    rng = _rng()
    M, N, K = 50, 40, 72
    a = rng.uniform(-1, 1, (M, K)).astype(np.float32)
    b = rng.uniform(-1, 1, (K, N)).astype(np.float32)
    c = np.zeros((M, N), np.float32)
    tilelang.compile(tf32_gemm(M, N, K), target="cpu")(a, b, c)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=0, atol=K * 2.0**-23)


# ---------------------------------------------------------------------------------------- code


@pytest.mark.parametrize("arch", ["sm_80", "sm_86", "sm_90a"])
@pytest.mark.parametrize("trans_A,trans_B", [(False, False), (True, True)])
def test_tf32_gemm_compiles_to_tf32_mma_sync(arch, trans_A, trans_B):
    f = tf32_gemm(256, 256, 256, bM=128, bN=128, bK=32, stages=3, threads=256, trans_A=trans_A, trans_B=trans_B)
    if arch == "sm_90a":
        with pytest.warns(TileLangPerformanceWarning, match="not wgmma"):
            k = tilelang.compile(f, target=f"cuda -arch={arch}")
    else:
        k = tilelang.compile(f, target=f"cuda -arch={arch}")
    ptx = k.get_ptx()
    # one k8 step of a 64x32 warp tile: 4x4 mmas, 4x4 + 4x2 operand registers rounded once each
    assert ptx.count(MMA) >= 16 * 4, ptx.count(MMA)
    assert ptx.count("cvt.rna.tf32.f32") >= 24 * 4
    assert "ldmatrix" not in ptx and "ld.local" not in ptx
    res = k.get_resource_usage()
    assert res["spill_stores"] == 0 and res["spill_loads"] == 0 and res["stack_bytes"] == 0, res
    assert find_cuobjdump() is not None, ("no cuobjdump/nvdisasm for the SASS check (scripts/setup.sh installs "
                                          "them: pip install nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm)")
    sass = k.get_sass()
    assert "HMMA.1688.F32.TF32" in sass


# ---------------------------------------------------------------------------------------- errors


def test_tf32_gemm_needs_k_multiple_of_8():
    with pytest.raises(TileLangLayoutError, match=r"multiple of 8 \(mma.sync m16n8k8 tf32\); K = 12") as e:
        tilelang.compile(tf32_gemm(64, 64, 12, bK=12), target=SM80)
    assert "kernels.py:" in str(e.value)


def test_tf32_gemm_with_a_in_registers_copied_from_global():
    """Was rejected ("tf32 ... A and B from shared memory"); A now takes the m16n8k8 .tf32 fragment layout
    (tests/python/test_gemm_tf32_register_operands.py has the tables)."""
    @T.prim_func
    def reg_a(A: T.Tensor((64, 32), "float32"), B: T.Tensor((32, 64), "float32"), C: T.Tensor((64, 64), "float32")):
        with T.Kernel(1, threads=128) as bx:
            A_f = T.alloc_fragment((64, 32), "float32")
            B_s = T.alloc_shared((32, 64), "float32")
            C_l = T.alloc_fragment((64, 64), "float32")
            T.copy(A, A_f)
            T.copy(B, B_s)
            T.clear(C_l)
            T.gemm(A_f, B_s, C_l)
            T.copy(C_l, C)

    k = tilelang.compile(reg_a, target=SM80, execution_backend="emulator")
    assert any("tf32" in c and "A in registers" in c for c in k.choices), k.choices
    rng = _rng()
    a = rng.standard_normal((64, 32)).astype(np.float32)
    b = rng.standard_normal((32, 64)).astype(np.float32)
    c = np.zeros((64, 64), np.float32)
    k(a, b, c)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    assert np.all(np.abs(c - a64 @ b64) <= (2 * 2.0**-11 + 32 * 2.0**-24) * (np.abs(a64) @ np.abs(b64)))


def test_tileLang_tfloat32_dtype_is_float32_storage_on_tf32_tensor_cores():
    """TileLang programs declare tf32 operands as T.tfloat32 (float32 storage, tf32 multiply): here that is
    float32, whose T.gemm on CUDA runs on TF32 tensor cores; the CPU target multiplies float32 exactly."""
    M, N, K = 70, 40, 64

    gemm = kernels.matmul_transposed(M, N, K, 32, 32, 32, dtype=T.tfloat32, b_dtype="tfloat32", accum_dtype=T.float32,
                                     out_dtype=T.float32)
    assert T.tfloat32 == T.float32 and T.dtype("tfloat32").bits == 32
    rng = _rng()
    a = rng.uniform(-1, 1, (M, K)).astype(np.float32)
    b = rng.uniform(-1, 1, (K, N)).astype(np.float32)
    k = tilelang.compile(gemm, target=SM80, execution_backend="emulator")
    assert any("mma.sync m16n8k8 tf32" in c for c in k.choices), k.choices
    c = np.full((M, N), np.nan, np.float32)
    k(a, b, c)
    assert _check(c, a, b) > 2.0**-16  # tf32 rounding really happened
    cpu = tilelang.compile(gemm, target="cpu")
    c2 = np.full((M, N), np.nan, np.float32)
    cpu(a, b, c2)
    np.testing.assert_allclose(c2, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-5, atol=1e-5)
