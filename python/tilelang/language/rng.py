"""Random numbers as TileLang writes them (curand's device API): T.rng_init, T.rng_rand and T.rng_rand_float,
with the Philox4_32_10 generator. No target has to know about them: the front end lowers them to integer
arithmetic on per-thread local variables (xor, shifts, a 32x32 -> 64-bit multiply through uint64), so the CPU,
every GPU backend and the emulator run the same stream. docs/semantics.md ("Random numbers") defines it."""
import math
import numbers
import struct

from .. import _ffi
from ..errors import TileLangSyntaxError, TileLangTypeError
from . import builder
from .ast import simplify
from .expr import Expr
from .expr import const as _const
from .math_intrinsics import cos, log, sin, sqrt
from .utils import _unsupported

PHILOX = "curandStatePhilox4_32_10_t"
_NOT_IMPLEMENTED = ("curandStateXORWOW_t", "curandStateMRG32k3a_t")
_ROUND_MULTIPLIERS = (0xD2511F53, 0xCD9E8D57)
_KEY_INCREMENTS = (0x9E3779B9, 0xBB67AE85)  # added to the key between rounds
_ROUNDS = 10
_U32 = (1 << 32) - 1
_U64 = (1 << 64) - 1


def _u32(v):
    return _ffi.int_imm("uint32", v & _U32)


def _u64(v):
    return _ffi.int_imm("uint64", v & _U64)


def _f(dtype, v):
    return _ffi.float_imm(dtype, v)


def _ld(buf):
    return _ffi.load(buf, [_const(0)])


def _pick(index, values):
    """values[index] for a small run-time index, as a chain of selects (registers, not an indexed array)."""
    out = values[-1]
    for i in range(len(values) - 2, -1, -1):
        out = _ffi.select(index == _const(i), values[i], out)
    return out


class _Generator:
    """One kernel's Philox state, per thread: the 128-bit counter, the 64-bit key, the block of four outputs
    and the position of the next one in it (plus, per float width, the second value of the last Box-Muller
    pair). Declared at kernel scope, so a T.rng_init under a branch is seen by the draws after it however the
    lowering splits that branch."""

    def __init__(self, frame, span):
        self.frame, self.span = frame, span
        self.ctr = [self._var(f"rng_ctr{i}", "uint32") for i in range(4)]
        self.key = [self._var(f"rng_key{i}", "uint32") for i in range(2)]
        self.out = [self._var(f"rng_out{i}", "uint32") for i in range(4)]
        self.pos = self._var("rng_pos", "int32")
        self.prod = [self._var(f"rng_prod{i}", "uint64") for i in range(2)]  # mulhilo's 64-bit products
        self.has_cached = {bits: self._var(f"rng_has_normal{bits}", "int32") for bits in (32, 64)}
        self.cached = {}  # bits -> the cached normal value (made by the first normal draw of that width)
        self.results = 0

    def _var(self, name, dtype):
        buf = _ffi.buffer(name, dtype, [_const(1)], "local.var", self.span, None, 0)
        self.frame.allocs.append(buf)
        return buf

    def result(self, dtype):
        """A fresh local for one draw's value: two draws in one expression each keep their own."""
        self.results += 1
        return self._var(f"rng_r{self.results - 1}", dtype)

    def cached_normal(self, bits):
        if bits not in self.cached:
            self.cached[bits] = self._var(f"rng_normal{bits}", f"float{bits}")
        return self.cached[bits]

    def st(self, buf, value):
        return _ffi.store(buf, value, [_const(0)], builder.span() or self.span)

    def philox(self, out):
        """out += the statements that set the output block to Philox4x32-10(counter, key)."""
        o, (p0, p1) = self.out, self.prod
        m0, m1 = (_u64(m) for m in _ROUND_MULTIPLIERS)
        out.extend(self.st(o[i], _ld(self.ctr[i])) for i in range(4))
        for r in range(_ROUNDS):
            # the key of round r: the key plus r times the increments (mod 2^32)
            k0, k1 = (_ld(k) + _u32(r * w) if r else _ld(k) for k, w in zip(self.key, _KEY_INCREMENTS))
            out += [self.st(p0, _ffi.cast("uint64", _ld(o[0])) * m0),
                    self.st(p1, _ffi.cast("uint64", _ld(o[2])) * m1),
                    self.st(o[0], _ffi.cast("uint32", _ld(p1) >> _u64(32)) ^ _ld(o[1]) ^ k0),
                    self.st(o[1], _ffi.cast("uint32", _ld(p1))),
                    self.st(o[2], _ffi.cast("uint32", _ld(p0) >> _u64(32)) ^ _ld(o[3]) ^ k1),
                    self.st(o[3], _ffi.cast("uint32", _ld(p0)))]

    def next_block(self, out):
        """out += counter + 1 (128 bits, carries rippling up), then the output block of the new counter."""
        c = self.ctr
        out.append(self.st(c[0], _ld(c[0]) + _u32(1)))
        wrapped = None
        for i in range(1, 4):
            w = _ld(c[i - 1]) == _u32(0)
            wrapped = w if wrapped is None else _ffi.binary("and", wrapped, w)
            out.append(self.st(c[i], _ld(c[i]) + _ffi.select(wrapped, _u32(1), _u32(0))))
        self.philox(out)

    def draw(self, out):
        """out += one curand(&state); returns the uint32 drawn (a load of the fresh local holding it)."""
        r = self.result("uint32")
        out.append(self.st(r, _pick(_ld(self.pos), [_ld(o) for o in self.out])))
        out.append(self.st(self.pos, _ld(self.pos) + _const(1)))
        refill = []
        self.next_block(refill)
        refill.append(self.st(self.pos, _const(0)))
        sp = builder.span() or self.span
        out.append(_ffi.if_(_ld(self.pos) == _const(4), _ffi.seq(refill, sp), None, sp))
        return _ld(r)


def _generator(what):
    ctx = builder.require_context(what)
    if not ctx.kernels:
        raise TileLangSyntaxError(f"{what} must be called inside a `with T.Kernel(...)` block")
    return ctx.kernels[-1]


def _unsigned64(x, what):
    """A 64-bit unsigned value as curand_init's unsigned long long parameters take it: a Python int modulo
    2^64, or an integer expression converted as C converts it (a signed one sign-extended) to uint64."""
    if isinstance(x, numbers.Integral) and not isinstance(x, bool):
        return int(x) & _U64
    if not isinstance(x, Expr) or x.dtype == "bool" or "int" not in x.dtype:
        raise TileLangTypeError(f"T.rng_init: {what} is an integer (a Python int or an integer expression), "
                                f"got {x!r}" + (f" of type {x.dtype}" if isinstance(x, Expr) else ""))
    if x.dtype == "uint64":
        return x
    return _ffi.cast("uint64", x if x.dtype.startswith("uint") else _ffi.cast("int64", x))


def _words(v):
    """The (low, high) 32-bit words of a value from _unsigned64."""
    if isinstance(v, int):
        return _u32(v), _u32(v >> 32)
    return _ffi.cast("uint32", v), _ffi.cast("uint32", v >> _u64(32))


def _default_sequence(frame):
    """TileLang's subsequence when none is given: the thread's index in the whole launch (the linear thread
    index plus the linear block index times the threads of a block)."""
    block, stride = None, _const(1, "int64")
    for v, extent in zip(frame.block_vars, frame.grid):
        term = _ffi.cast("int64", v) * stride
        block = term if block is None else block + term
        stride = stride * _ffi.cast("int64", extent)
    tid = _ffi.call("int32", "tl.thread_idx", [])
    return simplify(_ffi.cast("int64", tid) + block * _const(math.prod(frame.threads), "int64"))


def rng_init(seed, seq=None, off=0, generator=PHILOX):
    """T.rng_init(seed, seq=None, off=0): every thread that runs it starts its own Philox4_32_10 stream, as
    curand_init(seed, subsequence=seq, offset=off, &state) does: key = seed, counter = seq * 2^64 + off / 4, the
    next value word off % 4 of that counter's block. seq defaults to the thread's index in the launch. A
    statement; T.rng_rand / T.rng_rand_float later in the kernel draw from the stream."""
    if not isinstance(generator, str):
        raise TileLangTypeError(f"T.rng_init: generator is the name of a curand state type, got {generator!r}")
    if generator in _NOT_IMPLEMENTED:
        raise _unsupported(f"T.rng_init(generator={generator!r})", "only the Philox4_32_10 generator is "
                           "implemented", f"use generator={PHILOX!r} (the default)")
    if generator != PHILOX:
        known = ", ".join(repr(g) for g in (PHILOX, *_NOT_IMPLEMENTED))
        raise TileLangTypeError(f"T.rng_init: unknown generator {generator!r}; curand's generators are {known} "
                                f"(only {PHILOX!r} is supported)")
    frame = _generator("T.rng_init")
    key = _words(_unsigned64(seed, "seed"))
    hi = _words(_unsigned64(_default_sequence(frame) if seq is None else seq, "seq"))
    off = _unsigned64(off, "off")
    if isinstance(off, int):
        lo, pos = _words(off >> 2), _const(off & 3)
    else:
        lo, pos = _words(off >> _u64(2)), _ffi.cast("int32", off & _u64(3))
    if frame.rng is None:
        frame.rng = _Generator(frame, builder.span())
    g = frame.rng
    # The counter starts at 0: the subsequence sets its high 64 bits, off / 4 its low ones (no carries).
    out = [g.st(b, v) for b, v in zip(g.key + g.ctr, key + lo + hi)]
    out.append(g.st(g.pos, pos))
    out += [g.st(f, _const(0)) for f in g.has_cached.values()]
    g.philox(out)
    return _ffi.seq(out, builder.span())


def _drawing(what):
    g = _generator(what).rng
    if g is None:
        raise TileLangSyntaxError(f"{what} requires a preceding `T.rng_init(...)` in this kernel (it sets up "
                                  "the thread's generator)")
    return g


def rng_rand():
    """T.rng_rand(): the thread's next uint32 (curand(&state)). The generator advances where the expression
    is evaluated: before the statement that holds it, in program order."""
    g = _drawing("T.rng_rand()")
    out = []
    value = g.draw(out)
    builder.emit_before(out)
    return value


def _uniform(g, out, bits):
    """A uniform value in (0, 1] of one draw r, as curand_uniform (float32: r * 2^-32 + 2^-33) and Philox's
    curand_uniform_double (float64: r * 2^-32 + 2^-32, only 32 random bits) compute it."""
    dt = f"float{bits}"
    x = _ffi.cast(dt, g.draw(out))
    return x * _f(dt, 2.0 ** -32) + _f(dt, 2.0 ** -33 if bits == 32 else 2.0 ** -32)


def _uniform53(g, out):
    """A float64 uniform in (0, 1) of two draws x, y (curand's 53-bit one, _curand_uniform_double_hq)."""
    z = _ffi.cast("uint64", g.draw(out)) ^ (_ffi.cast("uint64", g.draw(out)) << _u64(21))
    return _ffi.cast("float64", z) * _f("float64", 2.0 ** -53) + _f("float64", 2.0 ** -54)


def _normal(g, out, bits):
    """A standard normal value (curand_normal(_double)): Box-Muller on a pair of uniforms gives two; the first
    is returned and the second kept for the next normal draw of the same width."""
    dt = f"float{bits}"
    r, has, cached = g.result(dt), g.has_cached[bits], g.cached_normal(bits)
    pair = []
    if bits == 32:
        u = _uniform(g, pair, 32)
        step = _to_float32(2 * math.pi) * 2.0 ** -32  # curand's 2pi / 2^32 in float32 (exact: a power of 2 apart)
        angle = _ffi.cast(dt, g.draw(pair)) * _f(dt, step) + _f(dt, step / 2)
    else:  # curand_normal_double: four draws, two 53-bit uniforms
        u = _uniform53(g, pair)
        z = _ffi.cast("uint64", g.draw(pair)) ^ (_ffi.cast("uint64", g.draw(pair)) << _u64(21))
        half_turns = _ffi.cast(dt, z) * _f(dt, 2.0 ** -52) + _f(dt, 2.0 ** -53)  # in (0, 2]
        angle = half_turns * _f(dt, math.pi)
    pair += [g.st(r, sqrt(_f(dt, -2.0) * log(u))),
             g.st(cached, cos(angle) * _ld(r)),
             g.st(r, sin(angle) * _ld(r)),
             g.st(has, _const(1))]
    reuse = [g.st(r, _ld(cached)), g.st(has, _const(0))]
    sp = builder.span() or g.span
    out.append(_ffi.if_(_ld(has) == _const(0), _ffi.seq(pair, sp), _ffi.seq(reuse, sp), sp))
    return _ld(r)


def _to_float32(v):
    """v rounded to the nearest float32."""
    return struct.unpack("f", struct.pack("f", v))[0]


def rng_rand_float(bit=32, dist="uniform"):
    """T.rng_rand_float(bit=32, dist="uniform"): the thread's next float32 (bit=32) or float64 (bit=64), uniform
    in (0, 1] or standard normal, as curand_uniform / curand_uniform_double / curand_normal /
    curand_normal_double compute them from the stream (docs/semantics.md)."""
    if isinstance(bit, Expr):
        bit = _ffi.const_int(bit) or bit
    if not isinstance(bit, int) or isinstance(bit, bool) or bit not in (32, 64):
        hint = f"; the distribution is the second argument: T.rng_rand_float(dist={bit!r})" \
            if bit in ("uniform", "normal") else ""
        raise TileLangTypeError(f"T.rng_rand_float: bit is 32 (float32) or 64 (float64), got {bit!r}{hint}")
    if not isinstance(dist, str) or dist not in ("uniform", "normal"):
        raise TileLangTypeError(f"T.rng_rand_float: dist is 'uniform' or 'normal', got {dist!r}")
    g = _drawing("T.rng_rand_float()")
    out = []
    value = _uniform(g, out, bit) if dist == "uniform" else _normal(g, out, bit)
    builder.emit_before(out)
    return value
