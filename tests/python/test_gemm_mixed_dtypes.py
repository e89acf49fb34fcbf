"""T.gemm with operands of two dtypes (TileLang accepts e.g. float16 A with float32 B): the operand whose dtype
is not the common one is converted exactly into a tile of that dtype before each gemm, with a
TileLangPerformanceWarning at the gemm's line. Before: the same gemm was a type error. Checked against NumPy
in float64 on seeded random inputs with ragged sizes, on the CPU target and in the sm_80 emulator (where a
float32 gemm is tf32: B's rounding to 10 mantissa bits sets the tolerance)."""
import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import TileLangPerformanceWarning, TileLangTypeError

SEED = 77


def mixed_gemm(M, N, K, a_dtype, b_dtype, a_in_regs=False, bM=64, bN=64, bK=32):
    @T.prim_func
    def gemm_mixed(A: T.Tensor((M, K), a_dtype), B: T.Tensor((K, N), b_dtype), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, bN), T.ceildiv(M, bM), threads=128) as (bx, by):
            A_s = T.alloc_shared((bM, bK), a_dtype)
            A_r = T.alloc_fragment((bM, bK), a_dtype)
            B_s = T.alloc_shared((bK, bN), b_dtype)
            C_l = T.alloc_fragment((bM, bN), "float32")
            T.clear(C_l)
            for k in T.Pipelined(T.ceildiv(K, bK), num_stages=1):
                T.copy(A[by * bM, k * bK], A_s)
                T.copy(B[k * bK, bx * bN], B_s)
                if a_in_regs:
                    T.copy(A_s, A_r)
                    T.gemm(A_r, B_s, C_l)
                else:
                    T.gemm(A_s, B_s, C_l)
            T.copy(C_l, C[by * bM, bx * bN])

    return gemm_mixed


def _inputs(M, N, K, a_dtype, b_dtype):
    print(f"seed {SEED}")
    rng = np.random.default_rng(SEED)

    def gen(shape, dt):
        if dt == "int8":
            return rng.integers(-8, 8, shape).astype(np.int8)
        if dt == "bfloat16":
            import ml_dtypes
            return rng.standard_normal(shape).astype(ml_dtypes.bfloat16)
        return rng.standard_normal(shape).astype(dt)

    return gen((M, K), a_dtype), gen((K, N), b_dtype)


CASES = [("float16", "float32", False), ("float16", "float32", True), ("float32", "float16", False), ("int8", "float16", True),
         ("bfloat16", "float16", False), ("int8", "float16", False)]


@pytest.mark.parametrize("target", ["cpu", "cuda -arch=sm_80"])
@pytest.mark.parametrize("a_dtype,b_dtype,a_in_regs", CASES)
def test_mixed_dtype_gemm_converts_with_a_warning(target, a_dtype, b_dtype, a_in_regs):
    M, N, K = 100, 72, 96
    a, b = _inputs(M, N, K, a_dtype, b_dtype)
    kw = {} if target == "cpu" else {"execution_backend": "emulator"}
    with pytest.warns(TileLangPerformanceWarning, match=r"test_gemm_mixed_dtypes.py:\d+:\d+: T.gemm operands "
                      r"differ in dtype .* converted into a (float32|float16) tile before every gemm"):
        k = tilelang.compile(mixed_gemm(M, N, K, a_dtype, b_dtype, a_in_regs), target=target, **kw)
    c = np.zeros((M, N), np.float32)
    k(a, b, c)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    ref = a64 @ b64
    scale = np.abs(a64) @ np.abs(b64)
    wide = "float32" in (a_dtype, b_dtype) or {a_dtype, b_dtype} == {"bfloat16", "float16"}
    # CPU: float32 accumulation. Emulator: a float32 gemm runs on tf32 (operands rounded to 2^-11 relative).
    rel = 2.0**-20 if target == "cpu" or not wide else 2.0**-10
    err = np.abs(c - ref)
    assert np.all(err <= rel * scale + 1e-5), f"max error {err.max()}"


@pytest.mark.parametrize("a_dtype,b_dtype,c_dtype,message", [
    ("float16", "float32", "float16", "accumulator"),  # the common float32 needs a float32 accumulator
    ("int8", "int32", "int32", "no common dtype"),
])
def test_mixes_that_are_refused(a_dtype, b_dtype, c_dtype, message):
    with pytest.raises(TileLangTypeError, match=message):
        @T.prim_func
        def bad(A: T.Tensor((64, 64), a_dtype), B: T.Tensor((64, 64), b_dtype), C: T.Tensor((64, 64), c_dtype)):
            with T.Kernel(1, threads=128):
                A_s = T.alloc_shared((64, 64), a_dtype)
                B_s = T.alloc_shared((64, 64), b_dtype)
                C_l = T.alloc_fragment((64, 64), c_dtype)
                T.gemm(A_s, B_s, C_l)
        tilelang.compile(bad, target="cpu")


@pytest.mark.parametrize("target", ["cpu", "cuda -arch=sm_80"])
def test_int4_gemm_is_widened_to_int8(target):
    """T.gemm on int4 tiles (TileLang's int4 GEMM example): before, "T.gemm does not support int4 inputs". Both
    operands are widened exactly to int8 tiles and multiplied on the int8 path (mma.sync m16n8k32 s8), with a
    warning; int4 tensors hold one value per byte here (ml_dtypes' storage, docs/semantics.md)."""
    import ml_dtypes

    M, N, K = 96, 64, 128

    @T.prim_func
    def gemm_s4(A: T.Tensor((M, K), "int4"), B: T.Tensor((N, K), "int4"), C: T.Tensor((M, N), "int32")):
        with T.Kernel(T.ceildiv(N, 64), T.ceildiv(M, 64), threads=128) as (bx, by):
            A_s = T.alloc_shared((64, 64), "int4")
            B_s = T.alloc_shared((64, 64), "int4")
            C_l = T.alloc_fragment((64, 64), "int32")
            T.clear(C_l)
            for k in T.Pipelined(K // 64, num_stages=2):
                T.copy(A[by * 64, k * 64], A_s)
                T.copy(B[bx * 64, k * 64], B_s)
                T.gemm(A_s, B_s, C_l, transpose_B=True)
            T.copy(C_l, C[by * 64, bx * 64])

    print(f"seed {SEED}")
    rng = np.random.default_rng(SEED)
    a = rng.integers(-8, 8, (M, K)).astype(ml_dtypes.int4)
    b = rng.integers(-8, 8, (N, K)).astype(ml_dtypes.int4)
    kw = {} if target == "cpu" else {"execution_backend": "emulator"}
    k = tilelang.compile(gemm_s4, target=target, **kw)
    if target != "cpu":
        assert any("mma.sync m16n8k32 s8" in c for c in k.choices), k.choices
        ptx = tilelang.compile(gemm_s4, target=target).get_ptx()  # NVRTC compiles the int4 tiles
        assert "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32" in ptx
    c = np.zeros((M, N), np.int32)
    k(a, b, c)
    np.testing.assert_array_equal(c.astype(np.int64), a.astype(np.int64) @ b.astype(np.int64).T)
    # TileLang's storage: int8 tensors holding two values a byte (low nibble first) for the T.int4 parameters,
    # as its example's pack_int4 makes them; before: "expects dtype int4 but got int8"
    def pack(x):
        v = x.astype(np.int16) & 0xF
        return (v[:, 0::2] | (v[:, 1::2] << 4)).astype(np.uint8).view(np.int8)

    c2 = np.zeros((M, N), np.int32)
    k(pack(a), pack(b), c2)
    np.testing.assert_array_equal(c2, c)
    k_out = tilelang.compile(gemm_s4, out_idx=-1, target=target, **kw)  # the output allocated for the caller
    np.testing.assert_array_equal(k_out(pack(a), pack(b)), c)


@pytest.mark.parametrize("dtype", ["int4", "uint4"])
def test_packed_int4_outputs_are_packed_back(dtype):
    """A kernel writing a T.int4 / T.uint4 tensor passed packed (two values a byte) writes the caller's bytes."""
    import ml_dtypes

    @T.prim_func
    def negate(A: T.Tensor((8, 32), dtype), B: T.Tensor((8, 32), dtype)):
        with T.Kernel(1, threads=64):
            for i, j in T.Parallel(8, 32):
                B[i, j] = A[i, 31 - j]

    lo, hi = (-8, 8) if dtype == "int4" else (0, 16)
    a = np.random.default_rng(SEED).integers(lo, hi, (8, 32))
    packed_a = ((a[:, 0::2] & 0xF) | ((a[:, 1::2] & 0xF) << 4)).astype(np.uint8)
    b = np.zeros((8, 16), np.uint8)
    tilelang.compile(negate, target="cpu")(packed_a, b)
    want = a[:, ::-1]
    got = np.stack([b & 0xF, b >> 4], axis=-1).reshape(8, 32).astype(np.int64)
    if dtype == "int4":
        got = (got ^ 8) - 8
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(packed_a, ((a[:, 0::2] & 0xF) | ((a[:, 1::2] & 0xF) << 4)))  # input untouched
    assert getattr(ml_dtypes, dtype)  # the one-value-a-byte form stays accepted (above)
