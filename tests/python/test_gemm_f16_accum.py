"""T.gemm with float16 A, B and a float16 accumulator (TileLang's fine-grained dequant GEMM accumulates in
float16): on CUDA, mma.sync m16n8k16 .f16.f16.f16.f16, whose accumulator elements sit where the float32
accumulator's do (PTX ISA, "Matrix Fragments for mma.m16n8k16 with floating point type"). Checked against
NumPy in float64 on seeded random inputs with ragged sizes, in the emulator on sm_80 and sm_90a and on the
CPU target, with an error bound that follows from rounding the running sum to float16; NVRTC's PTX is
checked for the instruction. HIP and Metal have no float16-accumulating matrix instruction here and say
so."""
import re

import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import TileLangUnsupportedError

SEED = 1607


def f16_gemm(M, N, K, bM=64, bN=64, bK=32, stages=2):
    @T.prim_func
    def gemm_f16acc(A: T.Tensor((M, K), "float16"), B: T.Tensor((N, K), "float16"),
                    C: T.Tensor((M, N), "float16")):
        with T.Kernel(T.ceildiv(N, bN), T.ceildiv(M, bM), threads=128) as (bx, by):
            A_s = T.alloc_shared((bM, bK), "float16")
            B_s = T.alloc_shared((bN, bK), "float16")
            C_l = T.alloc_fragment((bM, bN), "float16")
            T.clear(C_l)
            for k in T.Pipelined(T.ceildiv(K, bK), num_stages=stages):
                T.copy(A[by * bM, k * bK], A_s)
                T.copy(B[bx * bN, k * bK], B_s)
                T.gemm(A_s, B_s, C_l, transpose_B=True)
            T.copy(C_l, C[by * bM, bx * bN])

    return gemm_f16acc


def _check(k, M, N, K):
    print(f"seed {SEED}")
    rng = np.random.default_rng(SEED)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((N, K)).astype(np.float16)
    c = np.zeros((M, N), np.float16)
    k(a, b, c)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    ref = a64 @ b64.T
    # The running sum is rounded to float16 (unit roundoff 2^-11) at most once per 16 products (per mma) and
    # once at the end: |error| <= (K / 16 + 2) * 2^-11 * sum |a| |b|. A lost or doubled product is far above it.
    bound = (K / 16 + 2) * 2.0**-11 * (np.abs(a64) @ np.abs(b64).T)
    err = np.abs(c.astype(np.float64) - ref)
    assert np.all(err <= bound), f"max error {err.max()}, bound there {bound.flat[err.argmax()]}"
    assert err.max() > 0 or K < 16  # the sum really was rounded to float16


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
@pytest.mark.parametrize("M,N,K", [(64, 64, 64), (100, 72, 96)])
def test_f16_accumulator_in_the_emulator(arch, M, N, K):
    k = tilelang.compile(f16_gemm(M, N, K), target=f"cuda -arch={arch}", execution_backend="emulator")
    assert any("mma.sync m16n8k16 f16 (float16 accumulators)" in c for c in k.choices), k.choices
    _check(k, M, N, K)


def test_f16_accumulator_on_the_cpu_target():
    M, N, K = 100, 72, 96
    _check(tilelang.compile(f16_gemm(M, N, K), target="cpu"), M, N, K)


def test_f16_accumulator_ptx_uses_the_f16_mma():
    ptx = tilelang.compile(f16_gemm(128, 128, 64), target="cuda -arch=sm_80").get_ptx()
    assert re.search(r"mma\.sync\.aligned\.m16n8k16\.row\.col\.f16\.f16\.f16\.f16", ptx)
    assert not re.search(r"mma\.sync\.aligned\.m16n8k16\.row\.col\.f32", ptx)
    assert "ld.local" not in ptx


@pytest.mark.parametrize("target,unit", [("hip", "MFMA"), ("metal", "simdgroup_matrix")])
def test_f16_accumulator_refused_where_no_instruction_has_it(target, unit):
    with pytest.raises(TileLangUnsupportedError, match=unit + r".*got A float16, B float16, C float16"):
        tilelang.compile(f16_gemm(64, 64, 64), target=target, execution_backend="emulator")
