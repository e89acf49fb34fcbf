"""Low-bit weight GEMMs written as TileLang writes them: packed bytes unpacked with shifts and masks in a
T.Parallel loop, sign extension by an arithmetic shift, per-group scales, then T.gemm. An int4 (w4a16)
and an fp4 e2m1 (with power-of-two e8m0 group scales, as MXFP4) kernel, on every backend against NumPy
in float64, with ragged M and N: the CPU target and OpenCL (PoCL) natively, the CUDA, HIP and Metal
lowerings in the emulator."""
import zlib

import ml_dtypes
import numpy as np
import pytest

import tilelang
import tilelang.language as T

M, N, K, G = 50, 72, 128, 32  # G: the scale group along K


def _rng(*key):
    seed = zlib.crc32(repr(key).encode())
    print(f"seed {seed} for {key}")
    return np.random.default_rng(seed)


def int4_gemm(M, N, K, G, bm=32, bn=32, bk=32):
    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((N, K // 2), "uint8"),
             Scale: T.Tensor((N, K // G), "float16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            A_s = T.alloc_shared((bm, bk), "float16")
            B_s = T.alloc_shared((bn, bk // 2), "uint8")
            W_s = T.alloc_shared((bn, bk), "float16")
            C_l = T.alloc_fragment((bm, bn), "float32")
            T.clear(C_l)
            for k in T.Pipelined(K // bk, num_stages=2):
                T.copy(A[by * bm, k * bk], A_s)
                T.copy(B[bx * bn, k * bk // 2], B_s)
                for i, j in T.Parallel(bn, bk):
                    nibble = (B_s[i, j // 2] >> ((j % 2) * 4)) & 0xF  # low nibble first
                    value = (T.Cast("int32", nibble) << 28) >> 28  # sign-extend 4 bits
                    W_s[i, j] = T.Cast("float16", value) * Scale[bx * bn + i, (k * bk + j) // G]
                T.gemm(A_s, W_s, C_l, transpose_B=True)
            T.copy(C_l, C[by * bm, bx * bn])

    return main


def fp4_gemm(M, N, K, G, bm=32, bn=32, bk=32, act="bfloat16"):
    """e2m1 nibbles into floating-point bits: sign to the top bit, exponent rebased to the type's bias, the
    mantissa bit to the top mantissa bit; the e8m0 group scale 2^(s - 127) built as bits from the exponent
    byte. bfloat16 activations decode straight into bfloat16; float16 ones (OpenCL, which has neither
    bfloat16 nor float16 bit casts) decode into float32 bits, converted when stored."""
    dec, raw, width, mb = ("bfloat16", "uint16", 16, 7) if act == "bfloat16" else ("float32", "uint32", 32, 23)

    @T.prim_func
    def main(A: T.Tensor((M, K), act), B: T.Tensor((N, K // 2), "uint8"),
             Scale: T.Tensor((N, K // G), "uint8"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            A_s = T.alloc_shared((bm, bk), act)
            B_s = T.alloc_shared((bn, bk // 2), "uint8")
            W_s = T.alloc_shared((bn, bk), act)
            C_l = T.alloc_fragment((bm, bn), "float32")
            T.clear(C_l)
            for k in T.Pipelined(K // bk, num_stages=2):
                T.copy(A[by * bm, k * bk], A_s)
                T.copy(B[bx * bn, k * bk // 2], B_s)
                for i, j in T.Parallel(bn, bk):
                    f4 = T.Cast(raw, (B_s[i, j // 2] >> ((j % 2) * 4)) & 0xF)
                    sign = (f4 & 8) << (width - 4)
                    exp = (f4 >> 1) & 3
                    man = f4 & 1
                    # e == 0: 0 or the subnormal 0.5 (exponent 126, no mantissa)
                    bits = T.if_then_else(exp == 0, sign | (man * (126 << mb)),
                                          sign | ((exp + 126) << mb) | (man << (mb - 1)))
                    scale = T.reinterpret(T.Cast(raw, Scale[bx * bn + i, (k * bk + j) // G]) << mb, dec)
                    W_s[i, j] = T.Cast(act, T.reinterpret(bits, dec) * scale)
                T.gemm(A_s, W_s, C_l, transpose_B=True)
            T.copy(C_l, C[by * bm, bx * bn])

    return main


E2M1 = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6])


def _packed(rng):
    nib = rng.integers(0, 16, (N, K)).astype(np.uint8)
    return nib, (nib[:, 0::2] | (nib[:, 1::2] << 4)).astype(np.uint8)


def _int4_case():
    rng = _rng("int4", M, N, K, G)
    nib, packed = _packed(rng)
    a = rng.standard_normal((M, K)).astype(np.float16)
    scale = (rng.random((N, K // G)) * 0.1 + 0.01).astype(np.float16)
    w = np.where(nib >= 8, nib.astype(np.int64) - 16, nib).astype(np.float64)
    w16 = (w * np.repeat(scale.astype(np.float64), G, axis=1)).astype(np.float16)  # the kernel rounds to fp16
    return (a, packed, scale), a.astype(np.float64) @ w16.astype(np.float64).T


def _fp4_case(act="bfloat16"):
    rng = _rng("fp4", M, N, K, G)
    nib, packed = _packed(rng)
    a = rng.standard_normal((M, K)).astype(ml_dtypes.bfloat16 if act == "bfloat16" else np.float16)
    scale = rng.integers(120, 131, (N, K // G)).astype(np.uint8)  # 2^-7 .. 2^3
    w = E2M1[nib] * np.exp2(np.repeat(scale.astype(np.float64), G, axis=1) - 127)  # exact in bfloat16
    return (a, packed, scale), a.astype(np.float64) @ w.T


CASES = {"int4": (int4_gemm, _int4_case), "fp4": (fp4_gemm, _fp4_case)}


@pytest.mark.parametrize("kind", ["int4", "fp4"])
@pytest.mark.parametrize("where", ["cpu", "opencl", "cuda", "hip", "metal"])
def test_dequant_gemm_matches_numpy(kind, where):
    make, case = CASES[kind]
    # OpenCL C has no bfloat16: the fp4 weights decode into float16 there.
    act = {"fp4": "float16"}.get(kind) if where == "opencl" else None
    func = make(M, N, K, G, act=act) if act else make(M, N, K, G)
    if act:
        case = lambda: _fp4_case(act)  # noqa: E731
    if where in ("cpu", "opencl"):
        k = tilelang.compile(func, target=where)
    else:
        k = tilelang.compile(func, target=where, execution_backend="emulator")
    args, want = case()
    c = np.full((M, N), np.nan, np.float32)
    k(*args, c)
    np.testing.assert_allclose(c, want, rtol=1e-3, atol=1e-3 * np.sqrt(K))


def test_dequant_sources_compile_for_gpus():
    """The generated CUDA (NVRTC, sm_80) and HIP (hipcc) of both kernels compile; the unpacking is shifts
    and masks, and the gemm a tensor-core one."""
    for make in (int4_gemm, fp4_gemm):
        cu = tilelang.compile(make(M, N, K, G), target="cuda -arch=sm_80").get_kernel_source()
        assert "mma" in cu and ">>" in cu and "& 15" in cu, cu
        tilelang.compile(make(M, N, K, G), target="hip")


@pytest.mark.parametrize("target", ["cuda", "opencl"])
def test_barrier_before_a_local_value_read_from_shared_memory(target):
    """Regression: InsertBarriers did not look at the value of a let (`x = S[i, j]` in a T.Parallel body),
    so a read of what a copy had just written by other threads got no barrier (wrong numbers on OpenCL and
    Metal, a race in the emulator on every GPU lowering without a cp.async pipeline)."""
    @T.prim_func
    def main(A: T.Tensor((64, 64), "float32"), B: T.Tensor((64, 64), "float32")):
        with T.Kernel(1, threads=128) as _:
            S = T.alloc_shared((64, 64), "float32")
            T.copy(A, S)
            for i, j in T.Parallel(64, 64):
                x = S[j, i]  # transposed: another thread's element
                B[i, j] = x * 2.0

    a = _rng("let-barrier").standard_normal((64, 64)).astype(np.float32)
    b = np.zeros_like(a)
    k = (tilelang.compile(main, target="cuda", execution_backend="emulator") if target == "cuda"
         else tilelang.compile(main, target="opencl"))
    k(a, b)  # the emulator raises on a race
    np.testing.assert_array_equal(b, a.T * 2)
