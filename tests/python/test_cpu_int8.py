"""int8 x int8 -> int32 T.gemm on the CPU target: the AVX2 vpmaddwd kernel (include/tl_device/cpu/
gemm_int8.h) and the portable reference loop (forced with -mattr=-avx2) against NumPy in int64, exactly,
on every transpose and ragged sizes; the AVX2 path's object code is checked for vpmaddwd."""
import re
import zlib

import numpy as np
import pytest

import kernels as K
from objdump_util import objdump as _objdump
import tilelang

HOST = set(tilelang.Target("cpu").features)
AVX2 = {"avx2", "fma"} <= HOST


def _seed(*key):
    seed = zlib.crc32(repr(key).encode())
    print(f"seed {seed} for {key}")
    return np.random.default_rng(seed)


def _int8_gemm(target, M, N, Kd, tA, tB, bk=32):
    # 64x48 tiles: tails of the 6-row block and a partial 16-column panel; odd K gets a zero partner.
    func = K.matmul_transposed(M, N, Kd, 64, 48, bk, trans_A=tA, trans_B=tB, dtype="int8",
                               accum_dtype="int32", out_dtype="int32")
    return tilelang.compile(func, target=target)


def _run(k, M, N, Kd, tA, tB, extreme=False):
    rng = _seed("cpu-int8", str(k.target), M, N, Kd, tA, tB, extreme)
    if extreme:  # every product is (-128)^2: the largest pair sums vpmaddwd forms
        A = np.full((Kd, M) if tA else (M, Kd), -128, np.int8)
        B = np.full((N, Kd) if tB else (Kd, N), -128, np.int8)
    else:
        A = rng.integers(-128, 128, (Kd, M) if tA else (M, Kd), dtype=np.int8)
        B = rng.integers(-128, 128, (N, Kd) if tB else (Kd, N), dtype=np.int8)
    C = np.full((M, N), 12345, np.int32)  # the kernel must overwrite every element
    k(A, B, C)
    a, b = A.astype(np.int64), B.astype(np.int64)
    want = (a.T if tA else a) @ (b.T if tB else b)
    np.testing.assert_array_equal(C.astype(np.int64), want, err_msg=f"{k.target} tA={tA} tB={tB}")


VNNI_TARGET = "cpu -mcpu=x86-64-v4 -mattr=+avx512vnni"
VNNI = set(tilelang.Target(VNNI_TARGET).features) <= set(tilelang.Target("cpu").features)
AMX = {"amx-int8", "avx512f", "avx512bw", "avx512fp16", "avx512bf16"} <= set(tilelang.Target("cpu").features)
TARGETS = [pytest.param("cpu -mattr=-avx2", id="portable"),
           pytest.param("cpu", id="host", marks=pytest.mark.skipif(not AVX2, reason="needs AVX2"))]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("tA,tB", [(False, False), (False, True), (True, False), (True, True)])
@pytest.mark.parametrize("M,N,Kd", [(70, 50, 45), (64, 96, 128), (7, 17, 3)])
def test_int8_gemm_exact(target, tA, tB, M, N, Kd):
    _run(_int8_gemm(target, M, N, Kd, tA, tB), M, N, Kd, tA, tB)


@pytest.mark.parametrize("target", TARGETS)
def test_int8_gemm_extreme_values(target):
    _run(_int8_gemm(target, 66, 40, 300, False, False), 66, 40, 300, False, False, extreme=True)


@pytest.mark.skipif(not AVX2, reason="needs AVX2")
def test_int8_gemm_uses_vpmaddwd_and_says_so():
    # -amx-tile as well: on an AMX host (Sapphire Rapids) AMX-INT8 does not need AVX-512, and the
    # tdpbssd path would be chosen with vpmaddwd only as its fallback
    k = _int8_gemm("cpu -mattr=-avx512f,-amx-tile", 64, 64, 64, False, False)
    assert any("int8 x int8 -> int32: avx2 6x16 vpmaddwd micro-kernel" in c for c in k.choices), k.choices
    assert not any("tdpbssd" in c for c in k.choices), k.choices
    asm = _objdump(k)
    assert re.search(r"vpmaddwd\s+.*%ymm", asm), "expected ymm vpmaddwd in the int8 gemm"
    portable = _int8_gemm("cpu -mattr=-avx2", 64, 64, 64, False, False)
    assert any("reference loop" in c for c in portable.choices), portable.choices


def test_int8_gemm_uses_vnni_where_present():
    k = _int8_gemm(VNNI_TARGET, 64, 64, 64, False, False)
    assert any("int8 x int8 -> int32: avx512vnni 6x16 vpdpwssd micro-kernel" in c for c in k.choices), k.choices
    asm = _objdump(k)
    assert len(re.findall(r"vpdpwssd\s+.*%ymm", asm)) >= 12, "expected the 6x16 block's vpdpwssd"
    assert not re.search(r"vpmaddwd\s+.*%ymm", asm)


@pytest.mark.parametrize("target,name,runs", [("cpu -mcpu=sapphirerapids", "amx tdpbssd", AMX),
                                              (VNNI_TARGET, "avx512vnni vpdpwssd", VNNI)])
def test_int8_gemm_exact_on_amx_and_vnni(target, name, runs):
    """The hardware int8 paths run where the host has them (elsewhere their object code is checked:
    test_int8_gemm_uses_vnni_where_present, test_cpu_isa.py::test_amx_tiles_for_bf16_and_int8)."""
    if not runs:
        pytest.skip(f"the host lacks {name}")
    for tA, tB in [(False, False), (False, True), (True, False), (True, True)]:
        for M, N, Kd in [(70, 50, 45), (64, 96, 128), (7, 17, 3)]:
            _run(_int8_gemm(target, M, N, Kd, tA, tB), M, N, Kd, tA, tB)
    _run(_int8_gemm(target, 66, 40, 300, False, False), 66, 40, 300, False, False, extreme=True)
