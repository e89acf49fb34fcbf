"""Integer bit operations (docs/semantics.md): `&`, `|`, `^`, `~`, `<<`, `>>` and the named forms
(T.shift_left, T.bitwise_*, T.popcount, T.clz, T.dp4a) on every integer dtype, on every backend
against NumPy: the CPU target and OpenCL (PoCL) run natively, the CUDA, HIP and Metal lowerings run in
the emulator, and the CUDA (NVRTC), HIP (hipcc) and Metal (clang) sources are compiled for real.
Operands are seeded random values over the whole range (negative ones included); shift counts cover
0 and width - 1, and a second kernel counts outside [0, width) (clamped, as PTX shl / shr clamp)."""
import zlib

import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import TileLangEmulationError, TileLangTypeError


DTYPES = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]
N = 100  # ragged against the 64-wide blocks
OPS = 12  # rows of the output


def _rng(*key):
    seed = zlib.crc32(repr(key).encode())
    print(f"seed {seed} for {key}")
    return np.random.default_rng(seed)


def _ops_kernel(dtype, const_shift):
    bits = np.dtype(dtype).itemsize * 8

    @T.prim_func
    def ops(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype), S: T.Tensor((N,), dtype),
            O: T.Tensor((OPS, N), dtype)):
        with T.Kernel(T.ceildiv(N, 64), threads=64) as bx:
            for i in T.Parallel(64):
                O[0, bx * 64 + i] = A[bx * 64 + i] & B[bx * 64 + i]
                O[1, bx * 64 + i] = A[bx * 64 + i] | B[bx * 64 + i]
                O[2, bx * 64 + i] = A[bx * 64 + i] ^ B[bx * 64 + i]
                O[3, bx * 64 + i] = ~A[bx * 64 + i]
                O[4, bx * 64 + i] = A[bx * 64 + i] << S[bx * 64 + i]
                O[5, bx * 64 + i] = A[bx * 64 + i] >> S[bx * 64 + i]
                O[6, bx * 64 + i] = A[bx * 64 + i] << const_shift
                O[7, bx * 64 + i] = A[bx * 64 + i] >> (bits - 1)
                O[8, bx * 64 + i] = T.shift_right(T.shift_left(A[bx * 64 + i], 1), 1)
                O[9, bx * 64 + i] = T.bitwise_xor(T.bitwise_and(A[bx * 64 + i], 0x5A), T.bitwise_not(B[bx * 64 + i]))
                O[10, bx * 64 + i] = T.popcount(A[bx * 64 + i])
                O[11, bx * 64 + i] = T.clz(A[bx * 64 + i])

    return ops


def _shl(a, s, dtype):
    bits = np.dtype(dtype).itemsize * 8
    s64 = s.astype(np.int64) if np.dtype(dtype).kind == "i" else s.astype(np.uint64).astype(np.int64)
    ok = (s64 >= 0) & (s64 < bits) if np.dtype(dtype).kind == "i" else s.astype(np.uint64) < bits
    cnt = np.where(ok, s64, 0).astype(np.uint64)
    r = (a.astype(np.uint64) << cnt).astype(dtype)  # wraps to the width, as C's conversion does
    return np.where(ok, r, np.zeros_like(a))


def _shr(a, s, dtype):
    bits = np.dtype(dtype).itemsize * 8
    signed = np.dtype(dtype).kind == "i"
    ok = ((s.astype(np.int64) >= 0) & (s.astype(np.int64) < bits)) if signed else s.astype(np.uint64) < bits
    cnt = np.where(ok, s, 0).astype(dtype)
    r = a >> cnt
    fill = np.where(a < 0, -1, 0).astype(dtype) if signed else np.zeros_like(a)
    return np.where(ok, r, fill)


def _popcount(a, dtype):
    bits = np.dtype(dtype).itemsize * 8
    u = a.view(f"uint{bits}").astype(object)
    return np.array([bin(int(x)).count("1") for x in u], dtype=dtype)


def _clz(a, dtype):
    bits = np.dtype(dtype).itemsize * 8
    u = a.view(f"uint{bits}").astype(object)
    return np.array([bits - int(x).bit_length() for x in u], dtype=dtype)


def _expected(a, b, s, dtype, const_shift):
    bits = np.dtype(dtype).itemsize * 8
    cs = np.full_like(a, const_shift)
    mask = np.array(0x5A).astype(dtype)
    return np.stack([a & b, a | b, a ^ b, ~a, _shl(a, s, dtype), _shr(a, s, dtype), _shl(a, cs, dtype),
                     _shr(a, np.full_like(a, bits - 1), dtype), _shr(_shl(a, np.ones_like(a), dtype), np.ones_like(a),
                                                                      dtype),
                     (a & mask) ^ ~b, _popcount(a, dtype), _clz(a, dtype)])


def _inputs(dtype, in_range, key):
    rng = _rng("bitwise", dtype, in_range, key)
    info = np.iinfo(dtype)
    bits = info.bits
    a = rng.integers(info.min, info.max, N, dtype=dtype, endpoint=True)
    b = rng.integers(info.min, info.max, N, dtype=dtype, endpoint=True)
    a[:4] = np.array([0, 1, info.max, info.min], dtype=dtype)
    if in_range:
        s = rng.integers(0, bits, N).astype(dtype)
        s[:3] = [0, bits - 1, 1]
    else:
        choices = [bits, bits + 3, 2 * bits - 1] + ([-1, -bits] if info.min < 0 else [info.max])
        s = np.array([choices[i % len(choices)] for i in range(N)], dtype=dtype)
    return a, b, s


def _run(k, a, b, s):
    o = np.zeros((OPS, N), a.dtype)
    k(a, b, s, o)
    return o


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("where", ["cpu", "emulator", "opencl"])
def test_operators_match_numpy(dtype, where):
    bits = np.dtype(dtype).itemsize * 8
    const_shift = bits // 2 + 1
    func = _ops_kernel(dtype, const_shift)
    k = (tilelang.compile(func, target="cuda", execution_backend="emulator") if where == "emulator" else
         tilelang.compile(func, target=where))
    a, b, s = _inputs(dtype, True, where)
    np.testing.assert_array_equal(_run(k, a, b, s), _expected(a, b, s, dtype, const_shift))


@pytest.mark.parametrize("dtype", ["int8", "uint16", "int32", "uint64"])
@pytest.mark.parametrize("where", ["cpu", "opencl", "emulator"])
def test_shift_counts_outside_the_width_are_clamped(dtype, where):
    bits = np.dtype(dtype).itemsize * 8
    func = _ops_kernel(dtype, 1)
    if where == "emulator":
        k = tilelang.compile(func, target="cuda", execution_backend="emulator",
                             pass_configs={"emulator.check_shift_counts": False})
    else:
        k = tilelang.compile(func, target=where)
    a, b, s = _inputs(dtype, False, where)
    np.testing.assert_array_equal(_run(k, a, b, s), _expected(a, b, s, dtype, 1))
    assert bits  # the clamped results above cover shl, shr.s / shr.u past the width


def test_emulator_reports_a_shift_past_the_width():
    k = tilelang.compile(_ops_kernel("int32", 1), target="cuda", execution_backend="emulator")
    a, b, s = _inputs("int32", False, "report")
    with pytest.raises(TileLangEmulationError, match=r"shift_count.*<< by 32 on int32, outside \[0, 32\)"):
        _run(k, a, b, s)


@pytest.mark.parametrize("dtype", ["int8", "uint32", "int64"])
@pytest.mark.parametrize("target", ["hip", "metal"])
def test_hip_and_metal_lowerings(dtype, target):
    """The HIP and Metal lowerings in the emulator against NumPy; their sources compiled (hipcc / clang)."""
    if target == "metal" and dtype == "int64":
        dtype = "uint16"  # MSL's long is not in every Metal version; 16-bit covers the narrow path
    bits = np.dtype(dtype).itemsize * 8
    func = _ops_kernel(dtype, bits - 1)
    e = tilelang.compile(func, target=target, execution_backend="emulator")
    a, b, s = _inputs(dtype, True, target)
    np.testing.assert_array_equal(_run(e, a, b, s), _expected(a, b, s, dtype, bits - 1))
    k = tilelang.compile(func, target=target)  # hipcc builds the code object; Metal: see below
    src = k.get_kernel_source()
    if target == "metal":
        from tilelang.jit import metal
        ok, diag = metal.check_source(src)
        assert ok, diag
        assert "popcount(" in src and "clz(" in src
    else:
        assert "__builtin_popcountll(" in src and "__builtin_clzll(" in src
    assert " << " in src and " >> " in src and " & " in src and " | " in src and " ^ " in src


def test_cuda_source_compiles_and_shifts_are_free_of_undefined_behaviour():
    k = tilelang.compile(_ops_kernel("int32", 5), target="cuda -arch=sm_80")  # NVRTC compiles it
    src = k.get_kernel_source()
    # A variable count is tested before shifting; a constant one in range shifts directly; left shifts
    # go through the unsigned type (a negative value shifted left is undefined in C++17).
    assert "(((uint32_t)(" in src and "< 32u) ?" in src, src
    assert "((uint32_t)(" in src and ") << (5)))" in src, src


@pytest.mark.parametrize("where", ["cpu", "emulator"])
def test_uint8_mask_is_bitwise_not_logical(where):
    """The issue's reproducer: T.Cast("int32", A[i] & 0xF) on A = arange(16) * 17 gave [0 1 1 1 ...]."""
    @T.prim_func
    def mask(A: T.Tensor((16,), "uint8"), B: T.Tensor((16,), "int32")):
        with T.Kernel(1, threads=16) as _:
            for i in T.Parallel(16):
                B[i] = T.Cast("int32", A[i] & 0xF) + T.Cast("int32", (A[i] >> 4) | 0) * 100

    k = (tilelang.compile(mask, target="cuda", execution_backend="emulator") if where == "emulator" else
         tilelang.compile(mask, target="cpu"))
    a = (np.arange(16) * 17).astype(np.uint8)
    b = np.zeros(16, np.int32)
    k(a, b)
    np.testing.assert_array_equal(b, (a & 0xF).astype(np.int32) + (a >> 4).astype(np.int32) * 100)


def test_booleans_stay_logical_and_floats_are_refused():
    @T.prim_func
    def logic(A: T.Tensor((8,), "int32"), B: T.Tensor((8,), "int32")):
        with T.Kernel(1, threads=8) as _:
            for i in T.Parallel(8):
                B[i] = T.if_then_else((A[i] > 2) & (A[i] < 6) | ~(A[i] != 7), 1, 0)

    k = tilelang.compile(logic, target="cpu")
    a = np.arange(8, dtype=np.int32)
    b = np.zeros(8, np.int32)
    k(a, b)
    np.testing.assert_array_equal(b, (((a > 2) & (a < 6)) | (a == 7)).astype(np.int32))
    assert " and " in logic.script() and " or " in logic.script() and "not (" in logic.script()

    with pytest.raises(TileLangTypeError, match=r"`&` needs integer \(or boolean\) operands.*float32") as e:
        @T.prim_func
        def bad(A: T.Tensor((8,), "float32"), B: T.Tensor((8,), "int32")):
            with T.Kernel(1, threads=8) as _:
                for i in T.Parallel(8):
                    B[i] = T.Cast("int32", A[i] & 1)
    assert "test_bitwise.py:" in str(e.value), "the error names the user's line"
    with pytest.raises(TileLangTypeError, match=r"`<<` needs integer operands"):
        @T.prim_func
        def bad2(A: T.Tensor((8,), "float32"), B: T.Tensor((8,), "float32")):
            with T.Kernel(1, threads=8) as _:
                for i in T.Parallel(8):
                    B[i] = A[i] << 1


def test_printed_program_reparses_to_the_same_function():
    func = _ops_kernel("uint8", 3)
    text = func.script()
    for piece in ["A[bx * 64 + i] & B[bx * 64 + i]", "~A[bx * 64 + i]", "A[bx * 64 + i] << S[bx * 64 + i]",
                  "A[bx * 64 + i] >> T.uint8(7)", "T.popcount(A[bx * 64 + i])", "T.clz(A[bx * 64 + i])"]:
        assert piece in text, text
    again = T.parse_source(text)
    assert tilelang._ffi.structural_equal(func, again)


def test_precedence_in_the_printer():
    @T.prim_func
    def prec(A: T.Tensor((8,), "int32"), B: T.Tensor((8,), "int32")):
        with T.Kernel(1, threads=8) as _:
            for i in T.Parallel(8):
                B[i] = ((A[i] | 1) & (A[i] ^ 2)) + ((A[i] + 1) << 2) - (~(A[i] >> 1)) * 3

    text = prec.script()
    assert "((A[i] | 1) & (A[i] ^ 2)) + (A[i] + 1 << 2) - ~(A[i] >> 1) * 3" in text, text
    assert tilelang._ffi.structural_equal(prec, T.parse_source(text))
    k = tilelang.compile(prec, target="cpu")
    a = _rng("prec").integers(-1000, 1000, 8).astype(np.int32)
    b = np.zeros(8, np.int32)
    k(a, b)
    np.testing.assert_array_equal(b, ((a | 1) & (a ^ 2)) + ((a + 1) << 2) - (~(a >> 1)) * 3)


def test_dp4a_and_astype_and_reinterpret_argument_orders():
    @T.prim_func
    def dot(A: T.Tensor((64,), "int8"), B: T.Tensor((64,), "int8"), C: T.Tensor((16,), "int32"),
            F: T.Tensor((16,), "float32"), G: T.Tensor((16,), "int32")):
        with T.Kernel(1, threads=16) as _:
            for i in T.Parallel(16):
                C[i] = 0
                T.dp4a(A[i * 4], B[i * 4], C[i])
                F[i] = C[i].astype("float32") * 0.5
                G[i] = T.reinterpret(F[i], "int32") ^ T.reinterpret("int32", F[i])  # both orders: 0

    rng = _rng("dp4a")
    a = rng.integers(-128, 128, 64).astype(np.int8)
    b = rng.integers(-128, 128, 64).astype(np.int8)
    want = (a.astype(np.int64) * b).reshape(16, 4).sum(axis=1)
    for k in (tilelang.compile(dot, target="cpu"),
              tilelang.compile(dot, target="cuda", execution_backend="emulator")):
        c, f, g = np.zeros(16, np.int32), np.zeros(16, np.float32), np.ones(16, np.int32)
        k(a, b, c, f, g)
        np.testing.assert_array_equal(c, want)
        np.testing.assert_array_equal(f, want.astype(np.float64) * 0.5)
        np.testing.assert_array_equal(g, 0)
    with pytest.raises(TileLangTypeError, match="T.dp4a needs int8 inputs; A"):
        @T.prim_func
        def bad(A: T.Tensor((64,), "int32"), B: T.Tensor((64,), "int8"), C: T.Tensor((16,), "int32")):
            with T.Kernel(1, threads=16) as _:
                for i in T.Parallel(16):
                    T.dp4a(A[i * 4], B[i * 4], C[i])


def test_simplifier_folds_constants_and_index_shifts():
    """before / expected in the DSL: constant folding with the clamped semantics, masks of provably
    small values, shifts of non-negative indices as arithmetic (so they fold with the rest)."""
    @T.prim_func
    def before(A: T.Tensor((256,), "int32"), B: T.Tensor((256,), "int32")):
        with T.Kernel(1, threads=64) as _:
            for i in T.serial(64):
                B[((i >> 2) << 2) + (i & 3)] = A[(i & 63) | 0] + (0xF0 >> 4) + (T.int32(-8) >> 99)
                B[(i << 2) | 3] = A[i ^ 0] + T.shift_left(1, 31)

    @T.prim_func
    def expected(A: T.Tensor((256,), "int32"), B: T.Tensor((256,), "int32")):
        with T.Kernel(1, threads=64) as _:
            for i in T.serial(64):
                B[i] = A[i] + 14
                B[i * 4 + 3] = A[i] + -2147483648

    got = tilelang._ffi.simplify_func(before)
    assert tilelang._ffi.structural_equal(got, tilelang._ffi.simplify_func(expected)), got.script()


@pytest.mark.parametrize("dtype", ["uint32", "int64", "uint64"])
def test_integer_row_max_compiles_and_matches(dtype):
    """T.reduce_max over uint32 did not compile under NVRTC (tl::shfl_xor was ambiguous for unsigned)."""
    @T.prim_func
    def red(A: T.Tensor((64, 64), dtype), B: T.Tensor((64,), dtype)):
        with T.Kernel(1, threads=128) as _:
            F = T.alloc_fragment((64, 64), dtype)
            R = T.alloc_fragment((64,), dtype)
            T.copy(A, F)
            T.reduce_max(F, R, dim=1)
            T.copy(R, B)

    info = np.iinfo(dtype)
    a = _rng("rowmax", dtype).integers(info.min, info.max, (64, 64), dtype=dtype, endpoint=True)
    tilelang.compile(red, target="cuda -arch=sm_80")  # NVRTC
    tilelang.compile(red, target="hip")  # hipcc
    for k in (tilelang.compile(red, target="cpu"), tilelang.compile(red, target="cuda", execution_backend="emulator")):
        b = np.zeros(64, dtype)
        k(a, b)
        np.testing.assert_array_equal(b, a.max(axis=1))
