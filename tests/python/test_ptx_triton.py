"""The PTX emulator on PTX we did not write: Triton's (installed by scripts/setup.sh from PyPI), compiled for sm_80
without a GPU (tests/python/ptx_triton_kernels.py), against NumPy in float64 on seeded inputs with ragged sizes.
Triton's PTX runs on real GPUs every day, so agreement checks our instruction semantics; a disagreement is our
bug."""
import numpy as np
import pytest

import ptx_triton_kernels as tk
from tilelang.errors import TileLangUnsupportedError

SEED = 20261206


def rng(tag):
    print(f"seed {SEED} + {tag}")
    return np.random.default_rng(SEED + tag)


GEMM_SIG = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32",
            "BM": "constexpr", "BN": "constexpr", "BK": "constexpr", "MASK": "constexpr"}


@pytest.mark.parametrize("M,N,K,mask", [(128, 128, 64, False), (200, 136, 96, True)])
def test_triton_gemm_ptx_matches_numpy(M, N, K, mask):
    """Triton's sm_80 GEMM: aligned, it pipelines with cp.async (and ldmatrix / mma.sync); ragged, masked loads."""
    src, md = tk.compile_ptx(tk.gemm, GEMM_SIG, {"BM": 64, "BN": 64, "BK": 32, "MASK": mask},
                             aligned=() if mask else range(6))
    for instr in ("mma.sync.aligned.m16n8k16", "ldmatrix") + (() if mask else ("cp.async",)):
        assert instr in src, instr
    r = rng(M + N + K)
    a = r.standard_normal((M, K)).astype(np.float16)
    b = r.standard_normal((K, N)).astype(np.float16)
    c = np.zeros((M, N), np.float16)
    reports, total = tk.run(src, md, ((N + 63) // 64, (M + 63) // 64), [a, b, c, M, N, K],
                            {"a": a, "b": b, "c": c})
    assert total == 0, reports
    np.testing.assert_allclose(c.astype(np.float64), a.astype(np.float64) @ b.astype(np.float64),
                               rtol=2e-3, atol=2e-2)


def test_triton_softmax_ptx_matches_numpy():
    rows, n = 48, 200
    src, md = tk.compile_ptx(tk.softmax, {"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32", "BLOCK": "constexpr"},
                             {"BLOCK": 256})
    assert "shfl.sync" in src and "ex2.approx" in src
    x = rng(5).standard_normal((rows, n)).astype(np.float32)
    y = np.zeros_like(x)
    reports, total = tk.run(src, md, (rows,), [x, y, n], {"x": x, "y": y})
    assert total == 0, reports
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)


def test_triton_flashattention_forward_ptx_matches_numpy():
    bh, S, D = 2, 200, 64
    sig = {"q_ptr": "*fp16", "k_ptr": "*fp16", "v_ptr": "*fp16", "o_ptr": "*fp16", "S": "i32", "scale": "fp32",
           "D": "constexpr", "BM": "constexpr", "BN": "constexpr"}
    src, md = tk.compile_ptx(tk.flash_fwd, sig, {"D": D, "BM": 64, "BN": 64}, num_stages=2)
    assert "mma.sync.aligned.m16n8k16" in src
    r = rng(9)
    q, k, v = (r.standard_normal((bh, S, D)).astype(np.float16) for _ in range(3))
    o = np.zeros_like(q)
    reports, total = tk.run(src, md, ((S + 63) // 64, bh), [q, k, v, o, S, 1 / np.sqrt(D)],
                            {"q": q, "k": k, "v": v, "o": o})
    assert total == 0, reports
    s = np.einsum("bqd,bkd->bqk", q.astype(np.float64), k.astype(np.float64)) / np.sqrt(D)
    p = np.exp(s - s.max(-1, keepdims=True))
    want = np.einsum("bqk,bkd->bqd", p / p.sum(-1, keepdims=True), v.astype(np.float64))
    np.testing.assert_allclose(o.astype(np.float64), want, atol=2e-2)


def test_triton_hopper_gemm_ptx_matches_numpy():
    """Triton's sm_90 GEMM: cp.async into shared memory, fence.proxy.async, then wgmma reading both operands
    through matrix descriptors in its own swizzled layouts."""
    src, md = tk.compile_ptx(tk.gemm, GEMM_SIG, {"BM": 128, "BN": 128, "BK": 64, "MASK": False}, arch=90,
                             aligned=range(6))
    for instr in ("wgmma.mma_async.sync.aligned.m64n128k16", "wgmma.wait_group", "fence.proxy.async"):
        assert instr in src, instr
    r = rng(90)
    a = r.standard_normal((256, 192)).astype(np.float16)
    b = r.standard_normal((192, 256)).astype(np.float16)
    c = np.zeros((256, 256), np.float16)
    reports, total = tk.run(src, md, (2, 2), [a, b, c, 256, 256, 192], {"a": a, "b": b, "c": c})
    assert total == 0, reports
    np.testing.assert_allclose(c.astype(np.float64), a.astype(np.float64) @ b.astype(np.float64),
                               rtol=2e-3, atol=2e-2)


def test_an_instruction_the_emulator_does_not_know_is_named():
    from tilelang import _ffi

    ptx = (".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n  .reg .b32 %r<2>;\n"
           "  tex.1d.v4.f32.s32 {%r0, %r0, %r0, %r0}, [t, {%r1}];\n  ret;\n}\n")
    with pytest.raises(TileLangUnsupportedError, match=r"line 7: instruction 'tex' is not supported"):
        _ffi.emulate_ptx_text(ptx, "k", [1, 1, 1], [32, 1, 1], 0, [], [])
