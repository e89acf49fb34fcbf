"""gfx942 (MI300X/MI300A, CDNA3): Debian's ROCm 5.2 hipcc does not know it, so the HIP backend builds it
with a newer clang (clang-19 from Debian, installed by scripts/setup.sh) and the ROCm device libraries
linked explicitly (the installed ones stop at gfx940, whose ISA-version library stands in: gfx942 runs
the gfx940 instruction set). Every kernel here is a real gfx942 code object checked for its MFMA
instructions and spills, and runs in the emulator against a float64 NumPy reference at ragged sizes."""
import os
import re
import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest

import tilelang

import kernels

GFX942 = {"kind": "hip", "arch": "gfx942"}
NP = {"float16": np.float16, "bfloat16": ml_dtypes.bfloat16}


def _rng():
    seed = int(os.environ.get("TL_TEST_SEED") or np.random.SeedSequence().entropy % 2**32)
    print("seed", seed)
    return np.random.default_rng(seed)


def _check_gfx942_object(k, mfma):
    asm = k.get_assembly()
    assert re.search(r'\.amdgcn_target "amdgcn-amd-amdhsa--gfx942', asm), asm[:400]
    assert re.search(mfma, asm), f"{mfma} missing"
    res = k.get_resource_usage()
    assert res["scratch_bytes"] == 0 and res["spill_stores"] == 0 and res["sgpr_spill_lanes"] == 0, res
    assert res["mfma_count"] > 0 and res["lds_bytes"] == res["shared_bytes"], res
    assert k.compiled.binary[:4] == b"\x7fELF" and k.compiled.binary[18] == 0xE0  # EM_AMDGPU
    assert "clang version" in k.compiled.compiler and "device libraries of gfx940 for gfx942" in k.compiled.compiler


@pytest.mark.parametrize("dtype,mfma", [("float16", r"v_mfma_f32_32x32x8_?f16"),
                                        ("bfloat16", r"v_mfma_f32_32x32x8_?bf16")])
def test_reference_gemm_for_gfx942(dtype, mfma):
    rng = _rng()
    M, N, K = 200, 136, 72  # no size a multiple of the 128x128x32 tile
    f = kernels.matmul(M, N, K, dtype=dtype, out_dtype="float32")
    _check_gfx942_object(tilelang.compile(f, target=GFX942), mfma)
    a = rng.standard_normal((M, K)).astype(NP[dtype])
    b = rng.standard_normal((K, N)).astype(NP[dtype])
    c = np.full((M, N), np.nan, np.float32)
    tilelang.compile(f, target=GFX942, execution_backend="emulator")(a, b, c)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-5 * np.abs(ref).max())


def test_flashattention_forward_for_gfx942():
    """exp2 comes from ocml (a device library linked by hand here): a missing library fails the link."""
    rng = _rng()
    B, H, S, D = 1, 2, 192, 64
    f = kernels.flashattn(B, H, S, D, True)
    _check_gfx942_object(tilelang.compile(f, target=GFX942), r"v_mfma_f32_\d+x\d+x\d+_?f16")
    q, k_, v = (rng.standard_normal((B, H, S, D)).astype(np.float16) for _ in range(3))
    o = np.full((B, H, S, D), np.nan, np.float16)
    tilelang.compile(f, target=GFX942, execution_backend="emulator")(q, k_, v, o)
    s = q.astype(np.float64) @ np.swapaxes(k_.astype(np.float64), -1, -2) / np.sqrt(D)
    s = np.where(np.tril(np.ones((S, S), bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    ref = (p / p.sum(-1, keepdims=True)) @ v.astype(np.float64)
    np.testing.assert_allclose(o.astype(np.float64), ref, atol=2e-2, rtol=2e-2)


def test_fp8_gemm_for_gfx942():
    f = kernels.matmul(100, 80, 96, 64, 48, 64, dtype="float8_e4m3fn", out_dtype="float32")
    _check_gfx942_object(tilelang.compile(f, target=GFX942), r"v_mfma_f32_16x16x32_fp8_fp8")


def test_gfx942_without_a_newer_clang_is_a_clear_error():
    code = r"""
import sys
sys.path.insert(0, %r)
import tilelang, kernels
from tilelang.errors import TileLangUnsupportedError
try:
    tilelang.compile(kernels.matmul(64, 64, 32, 64, 64, 32), target="hip -arch=gfx942")
    print("built")
except TileLangUnsupportedError as e:
    print("error:", str(e).splitlines()[0])
""" % os.path.dirname(os.path.abspath(__file__))
    env = dict(os.environ, TL_HIP_CLANG="/nonexistent/clang++", TILELANG_DISABLE_CACHE="1")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "cannot compile for gfx942" in r.stdout and "apt-get install clang-19 lld-19" in r.stdout, r.stdout
