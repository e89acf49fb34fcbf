"""Regression tests for the defects found by fuzzing (issue 20) and for the determinism and scalar-ABI
items of issue 10. Each test is named after the defect it pins down.

Numeric checks compare with NumPy in float64 on seeded inputs (the seed is printed).
"""
import json
import os
import subprocess
import sys
import sys as _sys
import warnings

import numpy as np
import pytest

import kernels as K
import tilelang
import tilelang.language as T
from tilelang import _ffi
from tilelang.errors import TileLangArgumentError, TileLangPerformanceWarning


HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
kernel_mod = _sys.modules["tilelang.jit.kernel"]


# ---------------------------------------------------------------------------------------------
# issue 10 item 5: the simplifier ordered terms by a hash of node addresses, so the same program
# gave different source in different processes.

_SOURCES = r"""
import hashlib, json, sys
sys.path.insert(0, sys.argv[1])
from tilelang import _ffi
# Shift the heap differently in each process so that any order taken from addresses shows.
junk = [_ffi.var("i", "int32") for _ in range(int(sys.argv[2]))]
import kernels as K
out = {}
for name, f in K.all_kernels() + [("axpb", K.axpb())]:
    out[name + ":cpu"] = _ffi.codegen(f, "cpu")
    out[name + ":cuda sm_80"] = _ffi.codegen(f, "cuda -arch=sm_80")
print(json.dumps(out))
"""


def _sources_in_new_process(junk, seed):
    env = dict(os.environ, PYTHONHASHSEED=str(seed))
    r = subprocess.run([sys.executable, "-c", _SOURCES, HERE, str(junk)], capture_output=True, text=True, env=env,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_nondeterministic_source():
    a = _sources_in_new_process(0, 1)
    b = _sources_in_new_process(3917, 2)
    assert a.keys() == b.keys() and len(a) == 2 * (len(K.all_kernels()) + 1)
    differ = [k for k in a if a[k] != b[k]]
    assert not differ, f"generated source differs between processes for {differ}"


def test_simplifier_order_ignores_addresses():
    # Two distinct vars that print alike: the order follows the program, whatever their addresses.
    for _ in range(20):
        i, j = _ffi.var("i", "int32"), _ffi.var("i", "int32")
        e = _ffi.binary("add", _ffi.binary("mul", i, _ffi.int_imm("int32", 64)), j)
        assert _ffi.print_expr(_ffi.simplify_expr(e)) == _ffi.print_expr(e)


# ---------------------------------------------------------------------------------------------
# issue 10 item 6 / issue 20: every scalar crossed into the kernel as a double.

def _store_scalar(dtype, out_dtype=None):
    out_dtype = out_dtype or dtype

    @T.prim_func
    def store_scalar(O: T.Tensor((1,), out_dtype), s: dtype):
        with T.Kernel(1, threads=32) as bx:
            O[0] = s

    return store_scalar


_EXACT = [("int64", 2**53 + 1), ("int64", 2**63 - 1), ("int64", -2**63), ("uint64", 2**64 - 1),
          ("uint32", 2**32 - 1), ("int8", -128), ("uint8", 255), ("int16", -32768), ("float64", 0.1),
          ("float32", 0.1), ("float16", 1.0 + 2**-10 + 2**-12), ("bfloat16", 3.14159)]


def _np(dtype):
    return kernel_mod._np_dtype(dtype)


def _store_all_scalars():
    """One kernel with a scalar parameter of every type in _EXACT, each stored to its own output."""
    from tilelang.language.parser import parse_source

    outs = ", ".join(f"O{i}: T.Tensor((1,), \"{d}\")" for i, (d, _) in enumerate(_EXACT))
    scalars = ", ".join(f"s{i}: T.{d}" for i, (d, _) in enumerate(_EXACT))
    body = "".join(f"        O{i}[0] = s{i}\n" for i in range(len(_EXACT)))
    return parse_source("import tilelang.language as T\n\n\n@T.prim_func\n"
                        f"def store_all({outs}, {scalars}):\n    with T.Kernel(1, threads=32) as bx:\n" + body)


@pytest.mark.parametrize("backend", ["cpu", "emulator"])
def test_lossy_scalar_abi(backend):
    func = _store_all_scalars()
    if backend == "cpu":
        k = tilelang.compile(func, target="cpu")
    else:
        k = tilelang.compile(func, target="cuda -arch=sm_80", execution_backend="emulator")
    outs = [np.zeros(1, _np(d)) for d, _ in _EXACT]
    k(*outs, *[v for _, v in _EXACT])
    for (dtype, value), o in zip(_EXACT, outs):
        want = np.array([value]).astype(_np(dtype))  # the value rounded once, to the declared type
        assert o.tobytes() == want.tobytes(), (backend, dtype, value, o, want)


def test_lossy_scalar_abi_cuda_packing():
    """The CUDA launcher's argument slots hold each scalar as the kernel declares it (no GPU needed)."""
    for dtype, value in _EXACT:
        k = tilelang.compile(_store_scalar(dtype), target="cuda -arch=sm_80", execution_backend="emulator")
        args = [kernel_mod._to_arg(np.zeros(1, _np(dtype)), k.func, 0)[0], kernel_mod._to_arg(value, k.func, 1)[0]]
        slots = k.compiled.pack_args(args)
        assert len(slots) == 16
        want = np.array([value]).astype(_np(dtype)).tobytes()
        assert slots[8:8 + len(want)] == want and slots[8 + len(want):] == bytes(8 - len(want)), (dtype, slots.hex())
        # the kernel declares the parameter with that type
        decl = {"int64": "int64_t", "uint64": "uint64_t", "uint32": "uint32_t", "int8": "int8_t", "uint8": "uint8_t",
                "int16": "int16_t", "float64": "double", "float32": "float", "float16": "half_t",
                "bfloat16": "bfloat16_t"}[dtype]
        assert f"{decl} s" in k.get_kernel_source(), k.get_kernel_source()


@pytest.mark.parametrize("dtype,value,msg", [
    ("int64", 2**63, "out of its range"), ("int32", 2**31, "out of its range"), ("uint64", -1, "out of its range"),
    ("uint64", 2**64, "out of its range"), ("int64", 10**400, "out of its range"),
    ("float16", 70000.0, "out of its range"), ("float32", 1e39, "out of its range"),
    ("float32", 10**400, "out of its range"), ("int32", 1.5, "pass an integer")])
def test_lossy_scalar_abi_out_of_range(dtype, value, msg):
    k = tilelang.compile(_store_scalar(dtype), target="cpu")
    with pytest.raises(TileLangArgumentError, match=msg) as e:
        k(np.zeros(1, _np(dtype)), value)
    assert "'s'" in str(e.value)


# ---------------------------------------------------------------------------------------------
# Hangs and crashes.

def test_divmod_by_huge_constant_does_not_loop():
    # The remainder split tried every divisor below c: `% 2**34` took 38 s, 2**40 never finished.
    import time

    x, y = _ffi.var("x", "int64"), _ffi.var("y", "int64")
    for c in (2**34, 2**40, 2**61 - 1, 3 * 2**45):
        e = _ffi.binary("floormod", _ffi.binary("add", _ffi.binary("mul", x, _ffi.int_imm("int64", 6)),
                                                _ffi.binary("mul", y, _ffi.int_imm("int64", 2**35))),
                        _ffi.int_imm("int64", c))
        t0 = time.time()
        _ffi.simplify_expr(e, [(x, 0, 2**20), (y, 0, 2**20)])
        _ffi.simplify_expr(_ffi.binary("floordiv", e, _ffi.int_imm("int64", c)))
        assert time.time() - t0 < 2.0, c


def test_divmod_remainder_split_still_simplifies():
    # The faster divisor search keeps the rewrite it exists for: (l*2 + v) // 4 -> l // 2.
    l, v = _ffi.var("l", "int32"), _ffi.var("v", "int32")
    e = _ffi.binary("add", _ffi.binary("mul", l, _ffi.int_imm("int32", 2)), v)
    d = _ffi.simplify_expr(_ffi.binary("floordiv", e, _ffi.int_imm("int32", 4)), [(l, 0, 100), (v, 0, 1)])
    m = _ffi.simplify_expr(_ffi.binary("floormod", e, _ffi.int_imm("int32", 4)), [(l, 0, 100), (v, 0, 1)])
    assert _ffi.print_expr(d) == "l // 2"
    assert _ffi.print_expr(m) == "l % 2 * 2 + v"


def test_cpu_large_tile_on_heap():
    # An 8 MiB shared tile segfaulted (worker stacks); now it lives on the heap and computes.
    n = 2 * 1024 * 1024

    @T.prim_func
    def big_tile(A: T.Tensor((1000,), "float32"), B: T.Tensor((1000,), "float32")):
        with T.Kernel(T.ceildiv(1000, 128), threads=128) as bx:
            S = T.alloc_shared((n,), "float32")
            for i in T.Parallel(128):
                if bx * 128 + i < 1000:
                    S[n - 128 + i] = A[bx * 128 + i]
            for i in T.Parallel(128):
                if bx * 128 + i < 1000:
                    B[bx * 128 + i] = S[n - 128 + i] * 2.0

    k = tilelang.compile(big_tile, target="cpu")
    assert "HeapTile" in k.get_kernel_source()
    seed = 20
    print("seed", seed)
    a = np.random.default_rng(seed).standard_normal(1000).astype(np.float32)
    b = np.zeros(1000, np.float32)
    k(a, b)
    np.testing.assert_allclose(b.astype(np.float64), a.astype(np.float64) * 2.0, rtol=1e-6)


def _copy_kernel():
    @T.prim_func
    def copy_kernel(A: T.Tensor((128,), "float32"), B: T.Tensor((128,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            for i in T.Parallel(128):
                B[i] = A[i] + 1.0

    return copy_kernel


@pytest.mark.parametrize("backend", ["cpu", "emulator"])
def test_readonly_output_is_rejected(backend, tmp_path):
    k = tilelang.compile(_copy_kernel(), target="cpu") if backend == "cpu" else \
        tilelang.compile(_copy_kernel(), target="cuda -arch=sm_80", execution_backend="emulator")
    a = np.arange(128, dtype=np.float32)
    frozen = np.zeros(128, np.float32)
    frozen.setflags(write=False)
    path = tmp_path / "out.bin"
    np.zeros(128, np.float32).tofile(path)
    for out in (frozen, np.frombuffer(bytes(512), np.float32), np.memmap(path, np.float32, mode="r", shape=(128,))):
        with pytest.raises(TileLangArgumentError, match="'B'.*read-only"):
            k(a, out)
        assert not np.asarray(out).any()
    ro_in = a.copy()
    ro_in.setflags(write=False)  # a read-only input is fine
    b = np.zeros(128, np.float32)
    k(ro_in, b)
    np.testing.assert_array_equal(b, a + 1)


def test_out_idx_duplicates_and_scalars_rejected():
    with pytest.raises(TileLangArgumentError, match="twice"):
        tilelang.compile(_copy_kernel(), target="cpu", out_idx=[1, -1])
    with pytest.raises(TileLangArgumentError, match="scalar"):
        tilelang.compile(K.axpb(), target="cpu", out_idx=[3])
    k = tilelang.compile(_copy_kernel(), target="cpu", out_idx=[1])
    np.testing.assert_array_equal(k(np.ones(128, np.float32)), np.full(128, 2, np.float32))


_CACHE_CHILD = r"""
import sys
sys.path.insert(0, sys.argv[1])
import numpy as np, tilelang
import test_regressions_fuzz as R
k = tilelang.compile(R._scaled_kernel(float(sys.argv[2])), target="cpu")
b = np.zeros(128, np.float32)
k(np.ones(128, np.float32), b)
print(k.from_cache, float(b[0]))
"""


def _scaled_kernel(c):
    @T.prim_func
    def scaled(A: T.Tensor((128,), "float32"), B: T.Tensor((128,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            for i in T.Parallel(128):
                B[i] = A[i] * c

    return scaled


def _cache_child(cache, c):
    env = dict(os.environ, TILELANG_CACHE_DIR=str(cache))
    env.pop("TILELANG_DISABLE_CACHE", None)
    r = subprocess.run([sys.executable, "-c", _CACHE_CHILD, HERE, str(c)], capture_output=True, text=True, env=env,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    from_cache, value = r.stdout.split()
    return from_cache == "True", float(value)


def test_cache_entries_validated_by_type_size_and_key(tmp_path):
    cache = tmp_path / "cache"
    assert _cache_child(cache, 3.0) == (False, 3.0)
    assert _cache_child(cache, 5.0) == (False, 5.0)
    entries = sorted(p for p in cache.iterdir() if (p / "kernel.so").exists())
    assert len(entries) == 2
    # A FIFO in place of the library would block a reader forever; a symlink to /dev/zero would read
    # without limit. Both must be detected and the entry rebuilt.
    for e in entries:
        (e / "kernel.so").unlink()
        os.mkfifo(e / "kernel.so")
    assert _cache_child(cache, 3.0) == (False, 3.0)
    for e in entries:
        meta = e / "kernel.meta"
        if meta.exists():
            meta.unlink()
        os.symlink("/dev/zero", meta)
    assert _cache_child(cache, 5.0) == (False, 5.0)
    assert _cache_child(cache, 5.0) == (True, 5.0)
    assert _cache_child(cache, 3.0)[1] == 3.0
    # Another entry's files copied into an entry must not load the other kernel.
    a, b = entries
    for name in ("kernel.so", "kernel.meta"):
        (b / name).unlink()
        (b / name).write_bytes((a / name).read_bytes())
    assert _cache_child(cache, 3.0)[1] == 3.0
    assert _cache_child(cache, 5.0)[1] == 5.0


@pytest.mark.parametrize("backend", ["cpu", "emulator"])
def test_integer_division_by_zero_gives_zero(backend):
    @T.prim_func
    def divide(A: T.Tensor((128,), "int32"), B: T.Tensor((128,), "int32"), d: T.int32):
        with T.Kernel(2, threads=128) as bx:
            for i in T.Parallel(64):
                B[bx * 64 + i] = (bx * 64 + A[bx * 64 + i]) % d + A[bx * 64 + i] // d

    k = tilelang.compile(divide, target="cpu") if backend == "cpu" else \
        tilelang.compile(divide, target="cuda -arch=sm_80", execution_backend="emulator")
    a = np.arange(128, dtype=np.int32) - 64
    b = np.full(128, 7, np.int32)
    k(a, b, 0)  # used to kill the process with SIGFPE / SIGILL
    assert (b == 0).all()
    k(a, b, -3)
    ref = (np.arange(128) // 64 * 64 + a) % -3 + a // -3
    np.testing.assert_array_equal(b, ref)


def test_dynamic_size_over_int32_is_an_error():
    k = tilelang.compile(K.axpb(), target="cpu")
    tiny = np.zeros(4, np.float32)
    huge = np.lib.stride_tricks.as_strided(tiny, shape=(2**31 + 16,), strides=(4,))  # never touched
    with pytest.raises(TileLangArgumentError, match="symbol 'n' of type int32, which cannot hold 2147483664"):
        k(huge, huge, 1.0, 1)


def _inc_int64(block=1024):
    n = T.dynamic("n", "int64")

    @T.prim_func
    def inc(A: T.Tensor((n,), "int8"), B: T.Tensor((n,), "int8")):
        with T.Kernel(T.ceildiv(n, block), threads=128) as bx:
            for i in T.Parallel(block):
                B[bx * block + i] = A[bx * block + i] + T.int8(1)

    return inc


def test_int64_sizes_index_in_int64_on_every_target():
    """A grid or loop over an int64 size gives int64 indices: `bx * 1024 + i` wrapped at 32 bits past
    2^31 elements and the CPU kernel wrote before the array (a segfault)."""
    f = _inc_int64()
    assert "int64_t bx" in tilelang.compile(f, target="cpu").get_kernel_source()
    cuda = tilelang.compile(f, target="cuda -arch=sm_80", execution_backend="emulator").get_kernel_source()
    assert "const int64_t bx = (int64_t)blockIdx.x;" in cuda, cuda
    # the emulator agrees on a small size (int64 arithmetic, guards)
    e = tilelang.compile(f, target="cuda", execution_backend="emulator")
    a = np.arange(3000, dtype=np.int64).astype(np.int8)
    b = np.zeros_like(a)
    e(a, b)
    np.testing.assert_array_equal(b, (a + 1).astype(np.int8))


def test_int64_size_past_2_31_elements_runs_on_the_cpu():
    n = 2**31 + 16  # 2 GiB of int8 each (A stays untouched zero pages)
    k = tilelang.compile(_inc_int64(), target="cpu")
    a = np.zeros(n, np.int8)
    a[-5:] = 7
    b = np.zeros(n, np.int8)
    k(a, b)
    assert b[0] == 1 and b[2**31 - 1] == 1 and b[2**31] == 1 and list(b[-6:]) == [1, 8, 8, 8, 8, 8]
    assert int(np.count_nonzero(b != 1)) == 5
    del a, b


def test_byte_strides_not_multiple_of_itemsize_rejected():
    k = tilelang.compile(_copy_kernel(), target="cpu")
    raw = np.zeros(6 * 128, np.uint8)
    odd = np.ndarray((128,), np.float32, buffer=raw, strides=(6,))  # 6-byte steps between float32s
    with pytest.raises(TileLangArgumentError, match="not multiples of its item size"):
        k(odd, np.zeros(128, np.float32))


@pytest.mark.parametrize("backend", ["cpu", "emulator"])
def test_empty_inputs_run(backend):
    k = tilelang.compile(K.axpb(), target="cpu") if backend == "cpu" else \
        tilelang.compile(K.axpb(), target="cuda -arch=sm_80", execution_backend="emulator")
    k(np.zeros(0, np.float32), np.zeros(0, np.float32), 1.0, 2)


# ---------------------------------------------------------------------------------------------
# Silent wrong results: one semantics for conversions and narrow integers on every backend
# (docs/semantics.md), checked against NumPy.

def _both(func):
    return [tilelang.compile(func, target="cpu"),
            tilelang.compile(func, target="cuda -arch=sm_80", execution_backend="emulator")]


def test_int4_to_float_sign_extends():
    import ml_dtypes

    @T.prim_func
    def widen(A: T.Tensor((16,), "int4"), B: T.Tensor((16,), "uint4"), O: T.Tensor((32,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(16):
                O[i] = T.cast(A[i], "float32")
                O[16 + i] = T.cast(B[i], "float32")

    a = np.arange(-8, 8).astype(ml_dtypes.int4)
    b = np.arange(16).astype(ml_dtypes.uint4)
    for k in _both(widen):
        o = np.zeros(32, np.float32)
        k(a, b, o)
        np.testing.assert_array_equal(o, np.concatenate([np.arange(-8, 8), np.arange(16)]).astype(np.float32))


def test_narrow_integer_arithmetic_wraps_like_c():
    import ml_dtypes

    @T.prim_func
    def narrow(A: T.Tensor((64,), "int8"), B: T.Tensor((64,), "int8"), U: T.Tensor((64,), "uint4"),
               O: T.Tensor((64,), "int8"), P: T.Tensor((64,), "uint4")):
        with T.Kernel(1, threads=64) as bx:
            for i in T.Parallel(64):
                O[i] = A[i] * B[i] + A[i]
                P[i] = U[i] * U[i] + 3

    seed = 21
    print("seed", seed)
    rng = np.random.default_rng(seed)
    a = rng.integers(-128, 128, 64).astype(np.int8)
    b = rng.integers(-128, 128, 64).astype(np.int8)
    u = rng.integers(0, 16, 64)
    ref_o = ((a.astype(np.int64) * b + a + 128) % 256 - 128).astype(np.int8)
    ref_p = (u * u + 3) % 16
    for k in _both(narrow):
        o, p = np.zeros(64, np.int8), np.zeros(64, ml_dtypes.uint4)
        k(a, b, u.astype(ml_dtypes.uint4), o, p)
        np.testing.assert_array_equal(o, ref_o)
        np.testing.assert_array_equal(p.astype(np.int64), ref_p)


def test_narrow_division_of_a_wrapped_sum_is_not_rewritten():
    # Found by the OpenCL fuzz test (seed 784867): (b + b) // 16 on int8 was simplified to b // 8, but b + b wraps
    # at 8 bits first (b = 67: 134 -> -122, // 16 = -8, not 8), on every target. Before: b // 8. Expected: the
    # division stays on the wrapped sum; with operands whose sum cannot wrap, and for int32, it still simplifies.
    b = _ffi.var("b", "int8")
    two = _ffi.binary("add", b, b)
    e = _ffi.binary("floordiv", two, _ffi.int_imm("int8", 16))
    assert _ffi.print_expr(_ffi.simplify_expr(e)) == "b * T.int8(2) // T.int8(16)"
    assert _ffi.print_expr(_ffi.simplify_expr(e, [(b, 0, 50)])) == "b // T.int8(8)"
    i = _ffi.var("i", "int32")
    e32 = _ffi.binary("floordiv", _ffi.binary("add", i, i), _ffi.int_imm("int32", 16))
    assert _ffi.print_expr(_ffi.simplify_expr(e32)) == "i // 8"

    @T.prim_func
    def f(A: T.Tensor((128,), "int8"), B: T.Tensor((128,), "int8"), O: T.Tensor((128,), "int8")):
        with T.Kernel(1, threads=128) as bx:
            for i in T.Parallel(128):
                O[i] = (B[i] + B[i]) // T.int8(16) + (A[i] * T.int8(3)) % T.int8(7)

    seed = 784867
    print("seed", seed)
    rng = np.random.default_rng(seed)
    a = rng.integers(-128, 128, 128).astype(np.int8)
    bb = rng.integers(-128, 128, 128).astype(np.int8)
    w = lambda v: (v + 128) % 256 - 128  # noqa: E731
    ref = w(w(2 * bb.astype(np.int64)) // 16 + w(3 * a.astype(np.int64)) % 7).astype(np.int8)
    for k in _both(f):
        o = np.zeros(128, np.int8)
        k(a, bb, o)
        np.testing.assert_array_equal(o, ref)


def test_float_to_int_saturates_on_every_backend():
    @T.prim_func
    def convert(A: T.Tensor((8,), "float32"), O: T.Tensor((8,), "uint8"), P: T.Tensor((8,), "int8"),
                Q: T.Tensor((8,), "int32")):
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(8):
                O[i] = T.cast(A[i], "uint8")
                P[i] = T.cast(A[i], "int8")
                Q[i] = T.cast(A[i], "int32")

    a = np.array([300, -5, 255.7, 1e10, -1e10, 3.5, np.nan, -2.9], np.float32)
    a64 = a.astype(np.float64)
    sat = lambda lo, hi: np.where(np.isnan(a64), 0, np.clip(np.trunc(np.nan_to_num(a64)), lo, hi)).astype(np.int64)
    for k in _both(convert):
        o, p, q = np.zeros(8, np.uint8), np.zeros(8, np.int8), np.zeros(8, np.int32)
        k(a, o, p, q)
        np.testing.assert_array_equal(o, sat(0, 255))
        np.testing.assert_array_equal(p, sat(-128, 127))
        np.testing.assert_array_equal(q, sat(-2**31, 2**31 - 1))


def test_int_constants_from_floats_and_infinity():
    @T.prim_func
    def consts(O: T.Tensor((4,), "int32"), W: T.Tensor((4,), "int64")):
        with T.Kernel(4, threads=32) as bx:
            O[bx] = T.int32(7.9) + bx
            if bx == 3:
                O[3] = T.infinity("int32")
            W[bx] = bx * 10**12  # 64-bit arithmetic, not a 32-bit wrap

    for k in _both(consts):
        o, w = np.zeros(4, np.int32), np.zeros(4, np.int64)
        k(o, w)
        np.testing.assert_array_equal(o, [7, 8, 9, 2**31 - 1])
        np.testing.assert_array_equal(w, np.arange(4) * 10**12)


def test_fill_and_atomic_add_of_floats_into_int_buffers():
    @T.prim_func
    def fill_int(O: T.Tensor((4,), "int32")):
        with T.Kernel(1, threads=32) as bx:
            F = T.alloc_fragment((4,), "int32")
            T.fill(F, 2.0)
            for i in T.Parallel(4):
                O[i] = F[i]
            T.atomic_add(O[0], 1.0)

    for k in _both(fill_int):
        o = np.zeros(4, np.int32)
        k(o)
        np.testing.assert_array_equal(o, [3, 2, 2, 2])


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_narrow_float_with_python_float_compiles_and_computes(dtype):
    @T.prim_func
    def mixed(A: T.Tensor((64,), dtype), O: T.Tensor((64,), dtype), x: dtype):
        with T.Kernel(1, threads=64) as bx:
            for i in T.Parallel(64):
                O[i] = T.max(A[i], 0.5) + T.min(x, 2.0) + T.if_then_else(i > 31, A[i], 0.25)

    seed = 22
    print("seed", seed)
    a = np.random.default_rng(seed).standard_normal(64).astype(_np(dtype))
    af = a.astype(np.float64)
    ref = np.maximum(af, 0.5) + min(1.5, 2.0) + np.where(np.arange(64) > 31, af, 0.25)
    for k in _both(mixed) + [tilelang.compile(mixed, target="cuda -arch=sm_80")]:  # NVRTC must accept it too
        if k.execution_backend == "cuda":
            continue
        o = np.zeros(64, _np(dtype))
        k(a, o, 1.5)
        np.testing.assert_allclose(o.astype(np.float64), ref, rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_cpu_cumsum_of_narrow_floats(dtype):
    k = tilelang.compile(K.cumsum(64, 48, 32, 32, dtype=dtype), target="cpu")
    seed = 23
    print("seed", seed)
    a = np.random.default_rng(seed).standard_normal((64, 48)).astype(_np(dtype))
    b = np.zeros((64, 48), _np(dtype))
    k(a, b)
    ref = np.concatenate([np.cumsum(a[r:r + 32].astype(np.float64), axis=0) for r in (0, 32)])
    np.testing.assert_allclose(b.astype(np.float64), ref, rtol=5e-2, atol=0.15)


def test_cuda_accepts_float_modulo_and_narrow_atomics():
    """Programs NVRTC used to reject: % on floats, T.atomic_add into 8/16/64-bit integers."""
    @T.prim_func
    def fmod(A: T.Tensor((128,), "float32"), O: T.Tensor((128,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            for i in T.Parallel(128):
                O[i] = A[i] % 3.0

    k = tilelang.compile(fmod, target="cuda -arch=sm_80")
    assert k.get_ptx()
    a = np.linspace(-7, 7, 128).astype(np.float32)
    o = np.zeros(128, np.float32)
    tilelang.compile(fmod, target="cuda -arch=sm_80", execution_backend="emulator")(a, o)
    np.testing.assert_allclose(o, np.mod(a.astype(np.float64), 3.0), atol=1e-5)
    for dtype in ("int8", "uint8", "int16", "int64", "uint32"):
        @T.prim_func
        def count(O: T.Tensor((4,), dtype)):
            with T.Kernel(1, threads=128) as bx:
                for i in T.Parallel(128):
                    T.atomic_add(O[i % 4], 1)

        assert tilelang.compile(count, target="cuda -arch=sm_80").get_ptx()
        o = np.zeros(4, _np(dtype))
        tilelang.compile(count, target="cuda -arch=sm_80", execution_backend="emulator")(o)
        np.testing.assert_array_equal(o, np.full(4, 32))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_narrow_float_min_max_of_float_subexpressions(dtype):
    """Found by the fuzzer (seeds 112, 124): g++ rejected min_(half_t, float) when one operand was an
    arithmetic result (computed in float)."""
    @T.prim_func
    def minmax(A: T.Tensor((100,), dtype), B: T.Tensor((100,), dtype), O: T.Tensor((100,), dtype)):
        with T.Kernel(1, threads=128) as bx:
            for i in T.Parallel(128):
                if i < 100:
                    O[i] = T.min(T.max(A[i], B[i]), A[i] - B[i]) + T.max(T.abs(B[i]), A[i] + A[i]) + A[i] % 0.75

    seed = 24
    print("seed", seed)
    rng = np.random.default_rng(seed)
    a, b = (rng.uniform(-2, 2, 100).astype(_np(dtype)) for _ in range(2))
    x, y = a.astype(np.float64), b.astype(np.float64)
    ref = np.minimum(np.maximum(x, y), x - y) + np.maximum(np.abs(y), 2 * x) + np.mod(x, 0.75)
    for k in _both(minmax):
        o = np.zeros(100, _np(dtype))
        k(a, b, o)
        np.testing.assert_allclose(o.astype(np.float64), ref, rtol=3e-2, atol=6e-2)


# ---------------------------------------------------------------------------------------------
# issue 39: a T.copy whose global side starts before the tensor (a negative row or column at run
# time: `B[bx - 1, :]`) wrote before the tensor on the CPU target (glibc aborted at exit): tile copies
# guarded only the end of the tensor. The kernels run in a child process, so a crash fails the test,
# on tensors that are views into larger arrays whose margins must stay untouched.

_NEG_COPY_CHILD = r"""
import json, sys
import numpy as np
import tilelang
import tilelang.language as T

PAD = 4096
out = {}


def guarded(shape, fill):
    big = np.full(int(np.prod(shape)) + 2 * PAD, fill, np.float32)
    return big, big[PAD:PAD + int(np.prod(shape))].reshape(shape)


def margins_intact(big, fill):
    return bool((big[:PAD] == fill).all() and (big[-PAD:] == fill).all())


# rows shifted up by one: block bx stores row bx into row bx - 1 (block 0 into row -1, dropped)
@T.prim_func
def shift_rows(A: T.Tensor((8, 64), "float32"), B: T.Tensor((8, 64), "float32")):
    with T.Kernel(8, threads=64) as bx:
        cols = T.alloc_shared((64,), "float32")
        T.copy(A[bx, :], cols)
        T.copy(cols, B[bx - 1, :])


# 16x16 tiles that start 1 row and 3 columns before their block's: loads and stores before the tensor
@T.prim_func
def shifted_tiles(A: T.Tensor((32, 64), "float32"), B: T.Tensor((32, 64), "float32")):
    with T.Kernel(4, 2, threads=64) as (bx, by):
        t = T.alloc_shared((16, 16), "float32")
        T.copy(A[by * 16 - 1, bx * 16 - 3], t)
        T.copy(t, B[by * 16 - 1, bx * 16 - 3])


# a gemm whose B tiles (packed into panels by their copies) start 5 rows and 7 columns before the tensor
@T.prim_func
def shifted_gemm(A: T.Tensor((256, 512), "float32"), B: T.Tensor((512, 256), "float32"),
                 C: T.Tensor((256, 256), "float32")):
    with T.Kernel(2, 2, threads=128) as (bx, by):
        A_s = T.alloc_shared((128, 64), "float32")
        B_s = T.alloc_shared((64, 128), "float32")
        C_l = T.alloc_fragment((128, 128), "float32")
        T.clear(C_l)
        for k in T.Pipelined(8, num_stages=2):
            T.copy(A[by * 128, k * 64], A_s)
            T.copy(B[k * 64 - 5, bx * 128 - 7], B_s)
            T.gemm(A_s, B_s, C_l)
        T.copy(C_l, C[by * 128, bx * 128])


# the same with B stored N x K (transpose_B): its tiles start 7 rows (N) and 5 columns (K) before it
@T.prim_func
def shifted_gemm_t(A: T.Tensor((256, 512), "float32"), B: T.Tensor((256, 512), "float32"),
                   C: T.Tensor((256, 256), "float32")):
    with T.Kernel(2, 2, threads=128) as (bx, by):
        A_s = T.alloc_shared((128, 64), "float32")
        B_s = T.alloc_shared((128, 64), "float32")
        C_l = T.alloc_fragment((128, 128), "float32")
        T.clear(C_l)
        for k in T.Pipelined(8, num_stages=2):
            T.copy(A[by * 128, k * 64], A_s)
            T.copy(B[bx * 128 - 7, k * 64 - 5], B_s)
            T.gemm(A_s, B_s, C_l, transpose_B=True)
        T.copy(C_l, C[by * 128, bx * 128])


rng = np.random.default_rng(39)
a = np.arange(8 * 64, dtype=np.float32).reshape(8, 64)
big, b = guarded((8, 64), -7.0)
tilelang.compile(shift_rows, target="cpu")(a, b)
ref = np.full((8, 64), -7.0, np.float32)
ref[:-1] = a[1:]
out["shift_rows"] = [bool(np.array_equal(b, ref)), margins_intact(big, -7.0)]

a = rng.standard_normal((32, 64)).astype(np.float32)
big, b = guarded((32, 64), -7.0)
tilelang.compile(shifted_tiles, target="cpu")(a, b)
ref = np.full((32, 64), -7.0, np.float32)
ref[:31, :61] = a[:31, :61]  # the last row and the last 3 columns lie in no tile
out["shifted_tiles"] = [bool(np.array_equal(b, ref)), margins_intact(big, -7.0)]

k = tilelang.compile(shifted_gemm, target="cpu")
a = rng.standard_normal((256, 512)).astype(np.float32)
bbig, b = guarded((512, 256), 1e30)
b[:] = rng.standard_normal((512, 256))
cbig, c = guarded((256, 256), -7.0)
k(a, b, c)
shifted = np.zeros((512, 256))
shifted[5:, 7:] = b[:-5, :-7]
err = float(np.abs(c - a.astype(np.float64) @ shifted).max())
out["shifted_gemm"] = [err < 1e-3, margins_intact(cbig, -7.0), "pack_b_tile" in k.get_kernel_source(), err]

k = tilelang.compile(shifted_gemm_t, target="cpu")
bt = np.ascontiguousarray(b.T)  # 256 x 512
cbig, c = guarded((256, 256), -7.0)
k(a, bt, c)
shifted = np.zeros((256, 512))
shifted[7:, 5:] = bt[:-7, :-5]
err = float(np.abs(c - a.astype(np.float64) @ shifted.T).max())
out["shifted_gemm_t"] = [err < 1e-3, margins_intact(cbig, -7.0), "pack_b_tile<true>" in k.get_kernel_source(), err]
print(json.dumps(out))
"""


def test_copy_starting_before_the_tensor_is_guarded_on_the_cpu(tmp_path):
    script = tmp_path / "negative_copies.py"  # a file: the front end reads the kernels' source
    script.write_text(_NEG_COPY_CHILD)
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, f"the child process died (exit {r.returncode}):\n{r.stdout}\n{r.stderr}"
    got = json.loads(r.stdout.strip().splitlines()[-1])
    assert got["shift_rows"] == [True, True], got
    assert got["shifted_tiles"] == [True, True], got
    assert got["shifted_gemm"][:3] == [True, True, True], got
    assert got["shifted_gemm_t"][:3] == [True, True, True], got


@pytest.mark.parametrize("target", ["cuda -arch=sm_80", "cuda -arch=sm_90a", "hip", "opencl", "metal"])
def test_copy_starting_before_the_tensor_is_guarded_on_gpu_lowerings(target):
    """The same copies through the GPU lowerings, in the emulator (which reports any access outside a
    tensor): synchronous copies, cp.async (float16, a column start that is a multiple of 8) and TMA."""
    @T.prim_func
    def shifted(A: T.Tensor((32, 64), "float16"), B: T.Tensor((32, 64), "float16")):
        with T.Kernel(4, 2, threads=64) as (bx, by):
            t = T.alloc_shared((16, 16), "float16")
            T.copy(A[by * 16 - 1, bx * 16 - 8], t)
            T.copy(t, B[by * 16 - 1, bx * 16 - 8])

    @T.prim_func
    def shift_rows(A: T.Tensor((8, 64), "float32"), B: T.Tensor((8, 64), "float32")):
        with T.Kernel(8, threads=64) as bx:
            cols = T.alloc_fragment((64,), "float32")
            T.copy(A[bx, :], cols)
            T.copy(cols, B[bx - 1, :])

    a = np.random.default_rng(39).standard_normal((32, 64)).astype(np.float16)
    b = np.full((32, 64), -7.0, np.float16)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TileLangPerformanceWarning)
        k = tilelang.compile(shifted, target=target, execution_backend="emulator")
        k(a, b)
        path = {"cuda -arch=sm_80": "16-byte cp.async", "cuda -arch=sm_90a": "TMA ("}.get(target)
        assert path is None or any(path in c for c in k.choices), k.choices
        ref = np.full((32, 64), -7.0, np.float16)
        ref[:31, :56] = a[:31, :56]
        np.testing.assert_array_equal(b, ref)
        a2 = np.arange(8 * 64, dtype=np.float32).reshape(8, 64)
        b2 = np.full((8, 64), -7.0, np.float32)
        tilelang.compile(shift_rows, target=target, execution_backend="emulator")(a2, b2)
    ref2 = np.full((8, 64), -7.0, np.float32)
    ref2[:-1] = a2[1:]
    np.testing.assert_array_equal(b2, ref2)


@pytest.mark.parametrize("target", ["cuda -arch=sm_80", "cuda -arch=sm_90a", "hip", "cpu"])
def test_provably_dead_kernel_body_compiles(target):
    """issue 39 (open since the first campaign): `if i >= 64:` inside T.Parallel(64) is never taken; the
    simplifier removed the whole kernel, and the GPU pipelines then said 'kernel has no T.Kernel scope'.
    The dead branch disappears and the kernel (which does nothing) compiles and runs."""
    @T.prim_func
    def dead(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            for i in T.Parallel(64):
                if i >= 64:
                    B[i] = A[i]

    kw = {} if target == "cpu" else {"execution_backend": "emulator"}
    if target != "cpu":
        src = tilelang.compile(dead, target=target).get_kernel_source()
        assert "__global__" in src, src
    k = tilelang.compile(dead, target=target, **kw)
    b = np.full(64, 3.0, np.float32)
    k(np.arange(64, dtype=np.float32), b)
    np.testing.assert_array_equal(b, np.full(64, 3.0, np.float32))
