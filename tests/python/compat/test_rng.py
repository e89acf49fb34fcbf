"""TileLang's random numbers (T.rng_init, T.rng_rand, T.rng_rand_float; curand's Philox4_32_10 stream,
docs/semantics.md "Random numbers") against a NumPy Philox written here, independently of the compiler and
first checked against Random123's known-answer vectors. TileLang's own patterns (a T.Parallel loop over a
ragged size, one draw per block, an init inside a guard with a shared-memory T.cumsum before the draw, the
default subsequence) run on the CPU target, in the emulator (CUDA sm_80) and on OpenCL (PoCL); the main one
also in the HIP, Metal and sm_90a emulators, and the CUDA (NVRTC), HIP (hipcc) and Metal (clang) sources
compile. Integers and uniform floats are bit-exact; normals (log, sqrt, sin, cos differ per backend) within a
tolerance. Where nvcc is installed, NVIDIA's own curand_kernel.h, built for the host, is a second reference."""
import re
import warnings
import zlib

import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import (TileLangPerformanceWarning, TileLangSyntaxError, TileLangTypeError,
                             TileLangUnsupportedError)

WHERE = ["cpu", "emulator", "opencl"]
U32 = np.uint32


def _compile(func, where, **kw):
    if where == "emulator":
        return tilelang.compile(func, target="cuda -arch=sm_80", execution_backend="emulator", **kw)
    if where in ("hip", "metal", "sm_90a"):
        target = "cuda -arch=sm_90a" if where == "sm_90a" else where
        return tilelang.compile(func, target=target, execution_backend="emulator", **kw)
    return tilelang.compile(func, target=where, **kw)


def _seed(*key):
    seed = zlib.crc32(repr(key).encode())
    print(f"seed {seed} for {key}")
    return seed


# ---- the reference: Philox4x32-10 and curand's state, in NumPy ---------------------------------------------------

def philox_block(ctr, key):
    """Philox4x32-10 of counters ctr (4 words, ctr[0] least significant; arrays or scalars) under key (2 words)."""
    c = [np.asarray(x).astype(np.uint64) for x in ctr]
    k = [np.asarray(x).astype(np.uint64) for x in key]
    for r in range(10):
        if r:
            k = [(k[0] + 0x9E3779B9) & 0xFFFFFFFF, (k[1] + 0xBB67AE85) & 0xFFFFFFFF]
        p0 = c[0] * np.uint64(0xD2511F53)  # < 2^64: no wrap
        p1 = c[2] * np.uint64(0xCD9E8D57)
        c = [(p1 >> np.uint64(32)) ^ c[1] ^ k[0], p1 & np.uint64(0xFFFFFFFF),
             (p0 >> np.uint64(32)) ^ c[3] ^ k[1], p0 & np.uint64(0xFFFFFFFF)]
    return [x.astype(U32) for x in c]


KAT = [((0, 0, 0, 0), (0, 0), (0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8)),
       ((0xffffffff,) * 4, (0xffffffff, 0xffffffff), (0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd)),
       ((0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344), (0xa4093822, 0x299f31d0),
        (0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1))]


class Curand:
    """One thread's curandStatePhilox4_32_10_t after curand_init(seed, seq, off), drawn as curand's device
    functions draw (curand, curand_uniform(_double), curand_normal(_double))."""

    def __init__(self, seed, seq=0, off=0):
        seed, seq, off = seed % 2**64, seq % 2**64, off % 2**64
        self.key = (seed & 0xFFFFFFFF, seed >> 32)
        self.ctr = seq << 64 | off >> 2  # the 128-bit counter
        self.pos = off & 3
        self.cached = {32: None, 64: None}
        self._fill()

    def _fill(self):
        words = [(self.ctr >> (32 * i)) & 0xFFFFFFFF for i in range(4)]
        self.out = [int(x) for x in philox_block(words, self.key)]

    def rand(self):
        r = self.out[self.pos]
        self.pos += 1
        if self.pos == 4:
            self.ctr = (self.ctr + 1) % 2**128
            self._fill()
            self.pos = 0
        return r

    def uniform(self, bits=32):
        if bits == 32:
            return np.float32(self.rand()) * np.float32(2.0 ** -32) + np.float32(2.0 ** -33)
        return np.float64(self.rand()) * 2.0 ** -32 + 2.0 ** -32  # Philox's double: one draw

    def uniform53(self):
        z = self.rand() ^ (self.rand() << 21)
        return np.float64(z) * 2.0 ** -53 + 2.0 ** -54

    def normal(self, bits=32):
        if self.cached[bits] is not None:
            v, self.cached[bits] = self.cached[bits], None
            return v
        if bits == 32:
            u = np.float64(self.uniform(32))
            step = np.float32(2 * np.pi) * np.float32(2.0 ** -32)
            angle = np.float64(np.float32(self.rand()) * step + step / np.float32(2))
        else:
            u = self.uniform53()
            angle = np.pi * (np.float64(self.rand() ^ (self.rand() << 21)) * 2.0 ** -52 + 2.0 ** -53)
        s = np.sqrt(-2.0 * np.log(u))
        self.cached[bits] = s * np.cos(angle)
        return s * np.sin(angle)


def test_reference_matches_the_known_answer_vectors():
    for ctr, key, expected in KAT:
        assert [int(x) for x in philox_block(ctr, key)] == list(expected), (ctr, key)
    s = Curand(0)  # counter 0, key 0: curand's first four values are the first vector's block
    assert [s.rand() for _ in range(4)] == list(KAT[0][2])


# ---- kernels ------------------------------------------------------------------------------------------------------

def draws_after_init(n, seed, seq, off):
    """One thread: T.rng_init(seed, seq, off), then n draws in a serial loop."""

    @T.prim_func
    def k(A: T.Tensor((n,), "uint32")):
        with T.Kernel(1, threads=1) as _:
            T.rng_init(seed, seq, off)
            for i in T.serial(n):
                A[i] = T.rng_rand()

    return k


def draws_after_init_from_arguments(n):
    """The same with seed, subsequence and offset as uint64 kernel arguments (the expression path)."""

    @T.prim_func
    def k(A: T.Tensor((n,), "uint32"), seed: T.uint64, seq: T.uint64, off: T.uint64):
        with T.Kernel(1, threads=1) as _:
            T.rng_init(seed, seq, off)
            for i in T.serial(n):
                A[i] = T.rng_rand()

    return k


def parallel_draws(M, seed, per_block=128):
    """The pattern of TileLang's random-number example, written here: each block's one thread starts its stream
    at the block's first element (offset block * per_block, plus its thread index, 0) and fills the block's
    slice of the output from a two-dimensional T.Parallel loop, skipping positions past M."""

    @T.prim_func
    def k(Out: T.Tensor((M,), "uint32")):
        with T.Kernel(T.ceildiv(M, per_block), threads=1) as blk:
            T.rng_init(seed, 0, blk * per_block + T.get_thread_binding() * per_block)
            for row, col in T.Parallel(1, per_block):
                pos = (blk + row) * per_block + col
                if pos < M:
                    Out[pos] = T.rng_rand()

    return k


def stream_1d(M, seed):
    """What parallel_draws writes: element idx is word idx % 4 of Philox(counter idx // 4, key seed), i.e. Triton's
    randint4x(seed, idx // 4)."""
    idx = np.arange(M)
    zero = np.zeros(M, np.uint32)
    blocks = philox_block([idx // 4, zero, zero, zero], [seed & 0xFFFFFFFF, seed >> 32])
    return np.choose(idx % 4, blocks).astype(U32)


def first_draw_per_block(M, seed, drawer=5):
    """Every thread of a block initialises at offset `block`; one of them (not thread 0) stores its first draw."""
    @T.prim_func
    def k(Out: T.Tensor((M,), "uint32")):
        with T.Kernel(M, threads=32) as blk:
            T.rng_init(seed, 0, blk)
            if T.get_thread_binding() == drawer:
                Out[blk] = T.rng_rand()

    return k


def guarded_init_with_a_scan(M, seed, threads=32):
    """T.rng_init under a run-time guard, then a shared-memory T.cumsum (barriers around it) before the draw: the
    state must stay visible across the barriers the scan adds. Count[b] checks the scan itself."""
    @T.prim_func
    def k(Out: T.Tensor((M,), "uint32"), Count: T.Tensor((M,), "int32"), n: T.int32):
        with T.Kernel(M, threads=threads) as blk:
            ones = T.alloc_shared((threads,), "int32")
            if blk < n:
                T.rng_init(seed, 0, blk)
                ones[T.get_thread_binding()] = 1
                T.cumsum(ones, dim=0)
                if T.get_thread_binding() == 0:
                    Out[blk] = T.rng_rand()
                    Count[blk] = ones[threads - 1]

    return k


# ---- integers -----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("where", WHERE)
def test_known_answers_through_a_kernel(where):
    """seed 0, seq 0, off 0: the first four draws are the first known-answer block; then the next blocks."""
    a = np.zeros(10, U32)
    _compile(draws_after_init(10, 0, 0, 0), where)(a)
    assert [int(x) for x in a[:4]] == list(KAT[0][2])
    ref = Curand(0)
    np.testing.assert_array_equal(a, [ref.rand() for _ in range(10)])


@pytest.mark.parametrize("where", WHERE)
def test_keys_subsequences_and_offsets(where):
    """The third vector's key and high counter words (seed and seq past 2^32), offsets that start mid-block and
    one whose counter's low word wraps after two draws (the carry into the next word)."""
    (c0, c1, c2, c3), (k0, k1), _ = KAT[2]
    seed, seq = k1 << 32 | k0, c3 << 32 | c2
    cases = [(seed, seq, 4 * c0 + 1), (seed, seq, 4 * (2**32 - 1) + 2), (2**64 - 1, 2**64 - 1, 2**64 - 1),
             (-1, 5, 7)]  # a negative seed is taken modulo 2^64, as curand_init's unsigned long long
    n = 9
    runs = [_compile(draws_after_init(n, *c), where) for c in cases]
    by_args = _compile(draws_after_init_from_arguments(n), where)
    for (sd, sq, off), k in zip(cases, runs):
        ref = Curand(sd, sq, off)
        expected = [ref.rand() for _ in range(n)]
        a = np.zeros(n, U32)
        k(a)
        np.testing.assert_array_equal(a, expected, err_msg=f"seed={sd} seq={sq} off={off}")
        b = np.zeros(n, U32)
        by_args(b, sd % 2**64, sq % 2**64, off % 2**64)
        np.testing.assert_array_equal(b, expected, err_msg=f"arguments seed={sd} seq={sq} off={off}")


@pytest.mark.parametrize("seed", [42, 123, 0])
@pytest.mark.parametrize("where", WHERE)
def test_parallel_draws_are_the_philox_stream(where, seed):
    M = 1000  # ragged against the 128 values per block
    a = np.zeros(M, U32)
    _compile(parallel_draws(M, seed), where)(a)
    np.testing.assert_array_equal(a, stream_1d(M, seed))


@pytest.mark.parametrize("where", ["hip", "metal", "sm_90a"])
def test_parallel_draws_in_the_other_emulators(where):
    M, seed = 1000, 42
    a = np.zeros(M, U32)
    _compile(parallel_draws(M, seed), where)(a)
    np.testing.assert_array_equal(a, stream_1d(M, seed))


@pytest.mark.parametrize("target", ["cuda -arch=sm_80", "hip", "metal"])
def test_sources_compile(target):
    """NVRTC, hipcc and clang (MSL syntax) accept the generated code: 64-bit products, shifts, selects, and the
    floats' log / sqrt / sin / cos (float64 ones except on Metal, which has no double precision)."""
    funcs = [parallel_draws(1000, 42), float_draws(300, 5, wide=target != "metal")]
    for func in funcs:
        src = tilelang.compile(func, target=target).get_kernel_source()
        assert "rng_ctr0" in src and "rng_out3" in src and ">> " in src, src
        if target == "metal":
            from tilelang.jit import metal

            ok, diag = metal.check_source(src)
            assert ok, diag


@pytest.mark.parametrize("where", WHERE)
def test_one_draw_per_block(where):
    M, seed = 64, 42
    a = np.zeros(M, U32)
    _compile(first_draw_per_block(M, seed), where)(a)
    np.testing.assert_array_equal(a, stream_1d(M, seed))  # block bx starts at offset bx


@pytest.mark.parametrize("where", WHERE)
def test_init_inside_a_guard_with_a_cumsum_before_the_draw(where):
    M, seed, n = 64, 42, 37
    sentinel = 0xDEADBEEF
    a, count = np.full(M, sentinel, U32), np.zeros(M, np.int32)
    _compile(guarded_init_with_a_scan(M, seed), where)(a, count, n)
    np.testing.assert_array_equal(a[:n], stream_1d(M, seed)[:n])
    assert (a[n:] == sentinel).all(), "blocks outside the guard must not write"
    assert (count[:n] == 32).all() and not count[n:].any()


@pytest.mark.parametrize("where", WHERE)
def test_default_subsequence_is_the_thread_index_in_the_launch(where):
    """seq=None: thread tx of block (bx, by) draws subsequence tx + (bx + by * 3) * 8."""
    @T.prim_func
    def k(A: T.Tensor((6, 8, 2), "uint32")):
        with T.Kernel(3, 2, threads=8) as (bx, by):
            tx = T.get_thread_binding()
            T.rng_init(1234)
            A[bx + by * 3, tx, 0] = T.rng_rand()
            A[bx + by * 3, tx, 1] = T.rng_rand()

    a = np.zeros((6, 8, 2), U32)
    _compile(k, where)(a)
    expected = np.zeros_like(a)
    for b in range(6):
        for t in range(8):
            ref = Curand(1234, t + b * 8)
            expected[b, t] = [ref.rand(), ref.rand()]
    np.testing.assert_array_equal(a, expected)


def ordered_draws(n):
    """Draws in program order: several per iteration of a T.Parallel loop, two in one expression, one bound to
    a name and used twice, one under a condition; then a T.serial loop continues the same stream."""

    @T.prim_func
    def k(A: T.Tensor((n, 4), "uint32"), B: T.Tensor((n,), "uint32")):
        with T.Kernel(1, threads=1) as _:
            T.rng_init(77, 3, 5)
            for i in T.Parallel(n):
                A[i, 0] = T.rng_rand()
                A[i, 1] = T.rng_rand() - T.rng_rand() * 3
                x = T.rng_rand()
                A[i, 2] = x ^ (x >> 7)
                if i % 3 == 1:
                    A[i, 3] = T.rng_rand()
                else:
                    A[i, 3] = 0
            for i in T.serial(n):
                B[i] = T.rng_rand()

    return k


@pytest.mark.parametrize("where", WHERE)
def test_draws_keep_program_order(where):
    """A lowering that vectorised or reordered the loop's draws would fail this element by element."""
    n = 37
    a, b = np.zeros((n, 4), U32), np.zeros(n, U32)
    _compile(ordered_draws(n), where)(a, b)
    ref = Curand(77, 3, 5)
    expected = np.zeros_like(a)
    for i in range(n):
        expected[i, 0] = ref.rand()
        first = ref.rand()
        expected[i, 1] = (first - ref.rand() * 3) % 2**32
        x = ref.rand()
        expected[i, 2] = x ^ (x >> 7)
        expected[i, 3] = ref.rand() if i % 3 == 1 else 0
    np.testing.assert_array_equal(a, expected)
    np.testing.assert_array_equal(b, [ref.rand() for _ in range(n)])


@pytest.mark.parametrize("where", WHERE)
def test_draws_in_conditions(where):
    """An `if` condition draws before the `if`; an `elif` condition only when the `if` was not taken."""
    n = 40

    @T.prim_func
    def k(A: T.Tensor((n,), "int32"), B: T.Tensor((n,), "uint32")):
        with T.Kernel(1, threads=1) as _:
            T.rng_init(5, 1, 2)
            for i in T.serial(n):
                if T.rng_rand() % 2 == 0:
                    A[i] = 1
                elif T.rng_rand() % 3 == 0:
                    A[i] = 2
                else:
                    A[i] = 3
                B[i] = T.rng_rand()

    a, b = np.zeros(n, np.int32), np.zeros(n, U32)
    _compile(k, where)(a, b)
    ref = Curand(5, 1, 2)
    expected_a, expected_b = [], []
    for _ in range(n):
        expected_a.append(1 if ref.rand() % 2 == 0 else 2 if ref.rand() % 3 == 0 else 3)
        expected_b.append(ref.rand())
    np.testing.assert_array_equal(a, expected_a)
    np.testing.assert_array_equal(b, expected_b)
    assert set(expected_a) == {1, 2, 3}


@pytest.mark.parametrize("loop", ["serial", "pipelined"])
@pytest.mark.parametrize("where", WHERE)
def test_draws_around_a_copy_in_a_pipelined_loop(where, loop):
    """A copy between two draws in a pipelined loop: the pipeliner moves the copy into stages; the draws stay in
    order."""
    n = 8

    @T.prim_func
    def k(source: T.Tensor((n,), "int32"), R: T.Tensor((2 * n,), "uint32"), C: T.Tensor((n,), "int32")):
        with T.Kernel(1, threads=1):
            shared = T.alloc_shared((1,), "int32")
            T.rng_init(42, 0, 0)
            for i in T.Pipelined(n, num_stages=3) if loop == "pipelined" else T.serial(n):
                R[2 * i] = T.rng_rand()
                T.copy(source[i], shared)
                R[2 * i + 1] = T.rng_rand()
                C[i] = shared[0]

    src = np.arange(n, dtype=np.int32) * 3
    r, c = np.zeros(2 * n, U32), np.zeros(n, np.int32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TileLangPerformanceWarning)  # a one-element copy is not a cp.async
        _compile(k, where)(src, r, c)
    ref = Curand(42)
    np.testing.assert_array_equal(r, [ref.rand() for _ in range(2 * n)])
    np.testing.assert_array_equal(c, src)


@T.macro
def _two_draws(A, i):
    A[i, 0] = T.rng_rand()
    A[i, 1] = T.rng_rand()


@T.macro
def _mixed_draw():
    return T.rng_rand() ^ 5


@pytest.mark.parametrize("where", ["cpu", "emulator"])
def test_draws_in_macros_discarded_draws_and_a_second_init(where):
    """Draws inside a statement macro and a value macro, a draw whose value is discarded (the stream still
    advances), and a second T.rng_init that restarts the stream and forgets a cached normal value."""
    @T.prim_func
    def k(A: T.Tensor((4, 3), "uint32"), N: T.Tensor((2,), "float32")):
        with T.Kernel(1, threads=1) as _:
            T.rng_init(9)
            for i in T.serial(4):
                T.rng_rand()
                _two_draws(A, i)
                A[i, 2] = _mixed_draw()
            T.rng_init(11)
            N[0] = T.rng_rand_float(dist="normal")  # its pair's second value is cached ...
            T.rng_init(11)
            N[1] = T.rng_rand_float(dist="normal")  # ... and forgotten by the init: the same value again

    a, nrm = np.zeros((4, 3), U32), np.zeros(2, "float32")
    _compile(k, where)(a, nrm)
    ref = Curand(9)
    expected = []
    for _ in range(4):
        ref.rand()
        expected.append([ref.rand(), ref.rand(), ref.rand() ^ 5])
    np.testing.assert_array_equal(a, expected)
    assert nrm[0] == nrm[1]
    np.testing.assert_allclose(nrm[0], Curand(11).normal(32), rtol=2e-5, atol=2e-5)


def test_draws_in_an_eager_function():
    """The same pattern in TileLang's eager style (a @tilelang.jit body that allocates its output with T.empty)."""
    @tilelang.jit(target="cpu")
    def eager_draws(M=1024, seed=42):
        Out = T.empty((M,), "uint32")
        with T.Kernel(T.ceildiv(M, 128), threads=1) as blk:
            T.rng_init(seed, 0, blk * 128)
            for row, col in T.Parallel(1, 128):
                if blk * 128 + col < M:
                    Out[blk * 128 + row * 128 + col] = T.rng_rand()
        return Out

    np.testing.assert_array_equal(eager_draws(1000, 7), stream_1d(1000, 7))


def test_printed_program_reparses():
    func = ordered_draws(5)
    text = func.script()
    assert "rng_out0" in text and "rng_pos" in text
    assert tilelang._ffi.structural_equal(func, T.parse_source(text))


# ---- floats -------------------------------------------------------------------------------------------------------

def float_draws(M, seed, wide=True):
    """Per block, 128 uniforms (float32, float64) and normals (float32, float64);
    with wide=False the float64 outputs get float32 draws (for Metal)."""
    bits = 64 if wide else 32

    kinds = [dict(), dict(bit=bits), dict(dist="normal"), dict(bit=bits, dist="normal")]

    @T.prim_func
    def k(Uniform32: T.Tensor((M,), "float32"), UniformWide: T.Tensor((M,), f"float{bits}"),
          Normal32: T.Tensor((M,), "float32"), NormalWide: T.Tensor((M,), f"float{bits}")):
        with T.Kernel(T.ceildiv(M, 128), threads=1) as blk:
            T.rng_init(seed, 0, blk * 128)
            for out, kind in list(zip((Uniform32, UniformWide, Normal32, NormalWide), kinds)):  # kind after kind
                for e in T.Parallel(128):
                    if blk * 128 + e < M:
                        out[blk * 128 + e] = T.rng_rand_float(**kind)

    return k


def float_reference(M, seed, wide=True):
    bits = 64 if wide else 32
    out = [np.zeros(M, dt) for dt in ("float32", f"float{bits}", "float32", f"float{bits}")]
    for blk in range(0, M, 128):
        ref = Curand(seed, 0, blk)
        n = min(128, M - blk)
        for arr, draw in zip(out, [lambda: ref.uniform(32), lambda: ref.uniform(bits), lambda: ref.normal(32),
                                   lambda: ref.normal(bits)]):
            arr[blk:blk + n] = [draw() for _ in range(n)]
    return out


def _check_floats(got, expected):
    (b, c, d, e), (rb, rc, rd, re_) = got, expected
    np.testing.assert_array_equal(b, rb)  # (0, 1]: one rounding of float(r) * 2^-32 + 2^-33
    np.testing.assert_array_equal(c, rc)  # float64: r * 2^-32 + 2^-32, exact
    assert (b > 0).all() and (b <= 1).all() and (c > 0).all() and (c <= 1).all()
    np.testing.assert_allclose(d, rd, rtol=2e-5, atol=2e-5)  # float32 log / sqrt / sin / cos per backend
    tol = 1e-12 if e.dtype == np.float64 else 2e-5
    np.testing.assert_allclose(e, re_, rtol=tol, atol=tol)


@pytest.mark.parametrize("where", WHERE + ["hip", "metal", "sm_90a"])
def test_uniform_and_normal_floats(where):
    M = 300
    seed = _seed("floats", where) % 2**40
    wide = where != "metal"  # no float64 on Metal
    out = [np.zeros(M, dt) for dt in ("float32", "float64" if wide else "float32") * 2]
    _compile(float_draws(M, seed, wide), where)(*out)
    _check_floats(out, float_reference(M, seed, wide))


@pytest.mark.parametrize("where", ["cpu", "emulator"])
def test_normal_sample_is_standard(where):
    """Many normals of both widths from one thread each: sample mean near 0, standard deviation near 1, and the
    cached second value of each pair is used (the sequence alternates sin and cos halves)."""
    M = 4096
    seed = _seed("normal-sample", where) % 2**40
    d, e = np.zeros(M, "float32"), np.zeros(M, "float64")

    @T.prim_func
    def k(D: T.Tensor((M,), "float32"), E: T.Tensor((M,), "float64")):
        with T.Kernel(M // 512, threads=1) as bx:
            T.rng_init(seed, bx)
            for i in T.serial(512):
                D[bx * 512 + i] = T.rng_rand_float(dist="normal")
                E[bx * 512 + i] = T.rng_rand_float(64, "normal")

    _compile(k, where)(d, e)
    for x in (d, e):
        assert abs(x.mean()) < 0.06 and 0.95 < x.std() < 1.05, (x.mean(), x.std())
    ref = Curand(seed, 1)
    expected = np.array([[ref.normal(32), ref.normal(64)] for _ in range(512)])
    np.testing.assert_allclose(d[512:1024], expected[:, 0], rtol=2e-5, atol=2e-5)
    np.testing.assert_allclose(e[512:1024], expected[:, 1], rtol=1e-12, atol=1e-12)


_CURAND_ON_THE_HOST = r"""
// curand's own device functions, compiled for the host (their host branches: logf / sinf / cosf, sin / cos)
#include <cuda_runtime.h>
#define QUALIFIERS static __forceinline__ __host__ __device__
#include <curand_kernel.h>
#include <cstdio>
int main() {
  const unsigned long long cases[][3] = {CASES};
  curandStatePhilox4_32_10_t s;
  for (const auto& c : cases) {
    curand_init(c[0], c[1], c[2], &s);
    for (int i = 0; i < 6; ++i) printf("%u ", curand(&s));
    for (int i = 0; i < 3; ++i) printf("%a ", curand_uniform(&s));
    for (int i = 0; i < 3; ++i) printf("%a ", curand_uniform_double(&s));
    for (int i = 0; i < 3; ++i) {  // one call per statement: the order of a call's arguments is unspecified
      float n = curand_normal(&s);
      double m = curand_normal_double(&s);
      printf("%a %a %u ", n, m, curand(&s));
    }
    printf("\n");
  }
}
"""

_HOST_CASES = [(42, 0, 0), (KAT[2][1][1] << 32 | KAT[2][1][0], 2**64 - 1, 4 * (2**32 - 1) + 2), (7, 3, 2**64 - 3)]


def _nvcc():
    import os
    import shutil

    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH") or "/usr/local/cuda"
    found = shutil.which("nvcc") or os.path.join(home, "bin", "nvcc")
    return found if os.path.isfile(found) else None


@pytest.fixture(scope="module")
def curand_rows(tmp_path_factory):
    """What curand's own code gives for _HOST_CASES, one row of words per case."""
    import subprocess

    if _nvcc() is None:
        pytest.skip("needs nvcc (the CUDA toolkit) to build curand's headers for the host")
    d = tmp_path_factory.mktemp("curand")
    cases = ", ".join("{%dull, %dull, %dull}" % tuple(v % 2**64 for v in c) for c in _HOST_CASES)
    (d / "curand_host.cu").write_text(_CURAND_ON_THE_HOST.replace("CASES", cases))
    subprocess.run([_nvcc(), "-o", str(d / "curand_host"), str(d / "curand_host.cu")], check=True,
                   capture_output=True)
    out = subprocess.run([str(d / "curand_host")], check=True, capture_output=True, text=True).stdout
    return [line.split() for line in out.splitlines()]


@pytest.mark.parametrize("where", ["cpu", "emulator"])
def test_matches_curand_built_for_the_host(where, curand_rows):
    """NVIDIA's curand_kernel.h built for the host by nvcc (no GPU needed) against the kernels: integers and
    uniforms bit for bit, normals to the float functions' accuracy. Per case: 6 draws, 3 float32 and 3 float64
    uniforms, then 3 rounds of (float32 normal, float64 normal, draw)."""
    rows = curand_rows

    def kernel(seed, seq, off):
        @T.prim_func
        def k(U: T.Tensor((9,), "uint32"), F: T.Tensor((6,), "float32"), D: T.Tensor((6,), "float64")):
            with T.Kernel(1, threads=1) as _:
                T.rng_init(seed, seq, off)
                for i in T.serial(6):
                    U[i] = T.rng_rand()
                for i in T.serial(3):
                    F[i] = T.rng_rand_float()
                for i in T.serial(3):
                    D[i] = T.rng_rand_float(64)
                for i in T.serial(3):
                    F[3 + i] = T.rng_rand_float(dist="normal")
                    D[3 + i] = T.rng_rand_float(64, "normal")
                    U[6 + i] = T.rng_rand()

        return k

    for case, row in zip(_HOST_CASES, rows):
        u, f, d = np.zeros(9, U32), np.zeros(6, "float32"), np.zeros(6, "float64")
        _compile(kernel(*case), where)(u, f, d)
        np.testing.assert_array_equal(u[:6], [int(x) for x in row[:6]], err_msg=str(case))
        np.testing.assert_array_equal(f[:3], [np.float32(float.fromhex(x)) for x in row[6:9]], err_msg=str(case))
        np.testing.assert_array_equal(d[:3], [float.fromhex(x) for x in row[9:12]], err_msg=str(case))
        rounds = [row[12 + 3 * i:15 + 3 * i] for i in range(3)]
        np.testing.assert_allclose(f[3:], [float.fromhex(r[0]) for r in rounds], rtol=2e-6, atol=2e-6)
        np.testing.assert_allclose(d[3:], [float.fromhex(r[1]) for r in rounds], rtol=1e-13, atol=1e-13)
        np.testing.assert_array_equal(u[6:], [int(r[2]) for r in rounds], err_msg=str(case))
        ref = Curand(*case)  # and the NumPy reference agrees with both
        assert [ref.rand() for _ in range(6)] == [int(x) for x in row[:6]]


def test_float64_draws_are_refused_on_metal():
    with pytest.raises(TileLangUnsupportedError, match="float64"):
        tilelang.compile(float_draws(128, 1), target="metal")


# ---- errors -------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("generator", ["curandStateXORWOW_t", "curandStateMRG32k3a_t"])
def test_other_curand_generators_are_refused_at_the_line(generator):
    with pytest.raises(TileLangUnsupportedError, match=re.escape(generator) + ".*Philox4_32_10") as e:
        @T.prim_func
        def k(A: T.Tensor((8,), "uint32")):
            with T.Kernel(1, threads=8) as _:
                T.rng_init(42, generator=generator)
                A[0] = T.rng_rand()
    assert "test_rng.py:" in str(e.value) and "T.rng_init(42, generator=generator)" in str(e.value)


def test_unknown_generator_and_arguments():
    with pytest.raises(TileLangTypeError, match=r"unknown generator 'philox'.*curandStatePhilox4_32_10_t"):
        @T.prim_func
        def k(A: T.Tensor((8,), "uint32")):
            with T.Kernel(1, threads=8) as _:
                T.rng_init(42, generator="philox")
    with pytest.raises(TileLangTypeError, match=r"T.rng_init: seed is an integer.*float32"):
        @T.prim_func
        def k2(A: T.Tensor((8,), "float32")):
            with T.Kernel(1, threads=8) as _:
                T.rng_init(A[0])
    with pytest.raises(TileLangTypeError, match=r"bit is 32 \(float32\) or 64.*dist='normal'"):
        @T.prim_func
        def k3(A: T.Tensor((8,), "float32")):
            with T.Kernel(1, threads=8) as _:
                T.rng_init(42)
                A[0] = T.rng_rand_float("normal")
    with pytest.raises(TileLangTypeError, match=r"dist is 'uniform' or 'normal', got 'gauss'"):
        @T.prim_func
        def k4(A: T.Tensor((8,), "float32")):
            with T.Kernel(1, threads=8) as _:
                T.rng_init(42)
                A[0] = T.rng_rand_float(dist="gauss")


@pytest.mark.parametrize("draw", ["T.rng_rand()", "T.rng_rand_float()", "T.rng_rand_float(64, 'normal')"])
def test_draw_without_init_is_an_error_at_its_line(draw):
    text = ("@T.prim_func\n"
            "def k(A: T.Tensor((8,), 'float64')):\n"
            "    with T.Kernel(1, threads=8) as _:\n"
            f"        A[0] = {draw}\n")
    with pytest.raises(TileLangSyntaxError, match=r"requires a preceding `T.rng_init\(...\)`") as e:
        T.parse_source(text)
    assert ":4:" in str(e.value) and draw in str(e.value)


def test_a_draw_in_a_while_condition_is_refused():
    with pytest.raises(TileLangSyntaxError, match="`while` condition cannot draw random numbers") as e:
        @T.prim_func
        def k(A: T.Tensor((8,), "uint32")):
            with T.Kernel(1, threads=1) as _:
                T.rng_init(42)
                i = T.alloc_var("int32", init=0)
                while T.rng_rand() % 4 != 0:
                    i = i + 1
                A[0] = i
    assert "test_rng.py:" in str(e.value)
