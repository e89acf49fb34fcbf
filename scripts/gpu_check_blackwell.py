"""The Blackwell cases of the GPU gate (scripts/gpu_check.py runs them on a GPU of compute capability 10.x / 11.x,
the tcgen05 family: sm_100a, sm_103a, sm_110a, or 12.x: sm_120a, sm_121a). Each case checks on hardware what the
emulators take from the PTX ISA, and what they assume where the ISA text available here is silent (docs/blackwell.md
lists those): tcgen05.mma's instruction descriptors and data paths, the 2-CTA pair, the scale-factor placements in
tensor memory (1X, 2X, 4X), the padded fp4 / fp6 shared forms, tf32 truncation; on sm_120a the block-scaled
mma.sync fragments, selectors and sub-byte byte containers.

A case is plain data and NumPy (no torch): make(rng) returns (program, inputs, output index, float64 reference,
relative tolerance); fp4 operands are passed two values a byte (int8), as device tensors carry them. The gate
compiles the program for the GPU's target, moves the inputs to the device, runs and compares; its dry run
(tests/python/test_gpu_check.py) runs every case of both families in the emulator."""
import os
import sys

import ml_dtypes
import numpy as np
import tilelang.language as T
from tilelang.jit.kernel import pack_fp6

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests", "python"))
import test_blockscaled_gemm as sm120  # noqa: E402
import test_tcgen05 as tc  # noqa: E402
import test_tcgen05_2cta as pair  # noqa: E402
import test_tcgen05_blockscaled as bs  # noqa: E402
import test_tcgen05_fp4 as fp4  # noqa: E402

F4 = ml_dtypes.float4_e2m1fn
E4M3 = ml_dtypes.float8_e4m3fn


def family(capability):
    """'tcgen05' (10.x, 11.x), 'sm120' (12.x) or None for a compute capability (major, minor)."""
    major = capability[0]
    return "tcgen05" if major in (10, 11) else "sm120" if major == 12 else None


def target(capability):
    """The arch-specific target of a Blackwell GPU: cuda -arch=sm_<major><minor>a."""
    return f"cuda -arch=sm_{capability[0]}{capability[1]}a"


DRY_TARGET = {"tcgen05": "cuda -arch=sm_100a", "sm120": "cuda -arch=sm_120a"}


def _e8m0(rng, rows, groups):
    return rng.integers(121, 133, (rows, groups)).astype(np.uint8)  # 2^-6 .. 2^5


def _f16_gemm(rng):
    M, N, K = 256, 200, 192
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((N, K)).astype(np.float16)
    ref = a.astype(np.float64) @ b.astype(np.float64).T
    return tc.tc_gemm(M, N, K, out="float32"), [a, b, np.zeros((M, N), np.float32)], 2, ref, 1e-3


def _tf32_gemm(rng):
    M, N, K = 256, 136, 96
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal((N, K)).astype(np.float32)
    ref = tc._tf32(a).astype(np.float64) @ tc._tf32(b).astype(np.float64).T  # the emulators' truncation
    return tc.tc_gemm(M, N, K, bK=32, dtype="float32"), [a, b, np.zeros((M, N), np.float32)], 2, ref, 1e-5


def _pair_gemm(rng):
    M, N, K = 256, 256, 192
    a = rng.standard_normal((M, K)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((K, N)).astype(ml_dtypes.bfloat16)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    return pair.pair_gemm(M, N, K), [a, b, np.zeros((M, N), np.float32)], 2, ref, 1e-3


def _pair_ts(rng):
    N, D = 64, 64
    p = rng.standard_normal((256, N)).astype(np.float16)
    v = rng.standard_normal((N, D)).astype(np.float16)
    return pair.pair_ts(N, D), [p, v, np.zeros((256, D), np.float32)], 2, p.astype(np.float64) @ v.astype(np.float64), 1e-5


def _scaled(prog, a, b, sa8, sb8, gran, pass_a, pass_b):
    c = np.zeros((a.shape[0], b.shape[0]), np.float32)
    return prog, [pass_a, pass_b, bs.pack_scales(sa8), bs.pack_scales(sb8), c], 4, \
        bs.reference(a, b, sa8, sb8, True, gran), 1e-5


def _mxfp8(rng):
    M, N, K, gran = 128, 128, 512, 128
    a = rng.standard_normal((M, K)).astype(E4M3)
    b = rng.standard_normal((N, K)).astype(ml_dtypes.float8_e5m2)
    sa8, sb8 = _e8m0(rng, M, 4), _e8m0(rng, N, 4)
    return _scaled(bs.mxfp8_gemm(M, N, K, "float8_e4m3fn", "float8_e5m2", True), a, b, sa8, sb8, gran, a, b)


def _mxfp4_kind_mxf4(rng):
    M, N, K, gran = 128, 128, 512, 32
    a, b = fp4._values(rng, (M, K), F4), fp4._values(rng, (N, K), F4)
    sa8, sb8 = _e8m0(rng, M, K // gran), _e8m0(rng, N, K // gran)
    prog = bs.mxfp8_gemm(M, N, K, "float4_e2m1fn", "float4_e2m1fn", True, gran=gran)
    return _scaled(prog, a, b, sa8, sb8, gran, fp4._packed(a), fp4._packed(b))


def _mxfp4_padded_x_fp8(rng):
    M, N, K, gran = 128, 128, 512, 128
    a, b = fp4._values(rng, (M, K), F4), rng.standard_normal((N, K)).astype(E4M3)
    sa8, sb8 = _e8m0(rng, M, 4), _e8m0(rng, N, 4)
    prog = bs.mxfp8_gemm(M, N, K, "float4_e2m1fn", "float8_e4m3fn", True)
    return _scaled(prog, a, b, sa8, sb8, gran, fp4._packed(a), b)


def _mxfp6_padded_x_fp8(rng):
    M, N, K, gran = 128, 128, 512, 128
    a, b = (rng.standard_normal((M, K)) * 2).astype(ml_dtypes.float6_e2m3fn), rng.standard_normal((N, K)).astype(E4M3)
    sa8, sb8 = _e8m0(rng, M, 4), _e8m0(rng, N, 4)
    prog = bs.mxfp8_gemm(M, N, K, "float6_e2m3fn", "float8_e4m3fn", True)
    return _scaled(prog, a, b, sa8, sb8, gran, pack_fp6(a), b)  # the launcher's packing


def _nvfp4_tcgen05(rng):
    M, N, K = 128, 128, 256
    a, b = fp4._values(rng, (M, K), F4), fp4._values(rng, (N, K), F4)
    sa8, sa = fp4._ue4m3(rng, (M, K // 16))
    sb8, sb = fp4._ue4m3(rng, (N, K // 16))
    c = np.zeros((M, N), np.float32)
    return fp4.nvfp4_gemm(M, N, K), [fp4._packed(a), fp4._packed(b), bs.pack_scales(sa8), bs.pack_scales(sb8), c], \
        4, fp4._nvfp4_reference(a, b, sa, sb), 1e-5


def _sm120_nvfp4(rng):
    M, N, K, bm, bn, bk = 200, 72, 256, 128, 64, 128
    ca, cb, sa, sb, ref = sm120._nvfp4_inputs(rng, M, N, K)
    return sm120.nvfp4_gemm(M, N, K, bm, bn, bk, rowmajor=True), \
        [sm120._packed(ca), sm120._packed(cb), sm120.rowmajor_words(sa), sm120.rowmajor_words(sb),
         np.zeros((M, N), np.float32)], 4, ref, 1e-5


def _sm120_mxfp4(rng):
    M, N, K = 200, 136, 256
    ca, cb, sa, sb, ref = sm120._mxfp4_nt_inputs(rng, M, N, K)
    return sm120.mxfp4_nt_gemm(M, N, K, 128, 64, 128, threads=128), \
        [sm120._packed(ca), sm120._packed(cb), sa, sb, np.zeros((M, N), np.float32)], 4, ref, 1e-5


def _sm120_mxfp8(rng):
    M, N, K = 72, 100, 256
    a, b, sa, sb, ref = sm120._inputs(rng, M, N, K, "float8_e4m3fn", "float8_e5m2", 64)
    prog = sm120.blockscaled_gemm(M, N, K, 64, 64, 128, at="float8_e4m3fn", bt="float8_e5m2", g=64)
    return prog, [a, b, sa, sb, np.zeros((M, N), np.float32)], 4, ref, 1e-5


def mx_from_f16(M, N, K, at, bt, bm=64, bn=64, bk=128, g=32):
    """A sm_120a block-scaled GEMM whose MX operand tiles (one value a byte) are converted from float16 tensors by
    T.copy (values the MX type holds exactly), so a device run needs no fp4 / fp6 tensors: A [M, K], B [N, K],
    E8M0 scales per g."""

    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((N, K), "float16"), SA: T.Tensor((M, K // g), "uint8"),
             SB: T.Tensor((N, K // g), "uint8"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            A_s = T.alloc_shared((bm, bk), at)
            B_s = T.alloc_shared((bn, bk), bt)
            SA_s = T.alloc_shared((bm, bk // g), "uint8")
            SB_s = T.alloc_shared((bn, bk // g), "uint8")
            C_l = T.alloc_fragment((bm, bn), "float32")
            T.clear(C_l)
            for ko in T.Pipelined(T.ceildiv(K, bk), num_stages=1):
                T.copy(A[by * bm, ko * bk], A_s)
                T.copy(B[bx * bn, ko * bk], B_s)
                T.copy(SA[by * bm, ko * (bk // g)], SA_s)
                T.copy(SB[bx * bn, ko * (bk // g)], SB_s)
                T.mma_gemm_blockscaled(A_s, B_s, C_l, SA_s, SB_s, transpose_B=True, k_start=ko * bk,
                                       sf_a_granularity_k=g, sf_b_granularity_k=g)
            T.copy(C_l, C[by * bm, bx * bn])

    return main


def _sm120_sub_byte(at, bt):
    """fp4 / fp6 operands of kind::mxf8f6f4 in their byte containers (fp6 bits 0-5, fp4 bits 2-5: CUTLASS's rule,
    which the emulators follow)."""
    def make(rng):
        M, N, K, g = 136, 72, 256, 32
        a = (rng.standard_normal((M, K)) * 2).astype(getattr(ml_dtypes, at)).astype(np.float16)
        b = (rng.standard_normal((N, K)) * 2).astype(getattr(ml_dtypes, bt)).astype(np.float16)
        sa, sb = _e8m0(rng, M, K // g), _e8m0(rng, N, K // g)
        ref = (a.astype(np.float64) * np.repeat(2.0 ** (sa - 127.0), g, 1)) @ \
            (b.astype(np.float64) * np.repeat(2.0 ** (sb - 127.0), g, 1)).T
        return mx_from_f16(M, N, K, at, bt), [a, b, sa, sb, np.zeros((M, N), np.float32)], 4, ref, 1e-5
    return make


CASES = {
    "tcgen05": [
        ("tcgen05 kind::f16 GEMM 256x200x192", _f16_gemm),
        ("tcgen05 kind::tf32 GEMM 256x136x96 (truncation assumed)", _tf32_gemm),
        ("tcgen05 cta_group::2 bf16 GEMM 256x256x192", _pair_gemm),
        ("tcgen05 cta_group::2 with A in tensor memory (P @ V)", _pair_ts),
        ("MXFP8 kind::mxf8f6f4 scale_vec::1X 128x128x512", _mxfp8),
        ("MXFP4 x MXFP8, fp4 padded (16U4_ALIGN16B), kind::mxf8f6f4", _mxfp4_padded_x_fp8),
        ("MXFP6 x MXFP8, fp6 padded (16U6_ALIGN16B, bit order assumed), kind::mxf8f6f4", _mxfp6_padded_x_fp8),
        ("MXFP4 kind::mxf4 scale_vec::2X 128x128x512", _mxfp4_kind_mxf4),
        ("NVFP4 kind::mxf4nvf4 block16 128x128x256", _nvfp4_tcgen05),
    ],
    "sm120": [
        ("NVFP4 mma.sync kind::mxf4nvf4 4X 200x72x256", _sm120_nvfp4),
        ("MXFP4 mma.sync kind::mxf4 2X 200x136x256", _sm120_mxfp4),
        ("MXFP8 mma.sync kind::mxf8f6f4 1X 72x100x256", _sm120_mxfp8),
        ("fp4 x e4m3 mma.sync kind::mxf8f6f4 (fp4 in bits 2-5 assumed)", _sm120_sub_byte("float4_e2m1fn", "float8_e4m3fn")),
        ("e2m3 x e3m2 mma.sync kind::mxf8f6f4 (fp6 in bits 0-5 assumed)", _sm120_sub_byte("float6_e2m3fn", "float6_e3m2fn")),
    ],
}
