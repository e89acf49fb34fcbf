"""Integer bit operations of the T namespace: TVM's named forms (T.shift_left, T.bitwise_and, ...),
T.popcount / T.clz, and T.dp4a. The operators `&`, `|`, `^`, `~`, `<<`, `>>` on expressions (expr.py)
build the same IR; docs/semantics.md gives their meaning on every backend."""
from .. import _ffi
from ..errors import TileLangTypeError
from . import builder
from .ast import region_of
from .dtypes import dtype_str
from .expr import const as _const


def _int(x, what, dtype=None):
    v = _const(x, dtype_str(dtype) if dtype is not None else None)
    if v.dtype == "bool" or "int" not in v.dtype:
        raise TileLangTypeError(f"{what} needs integer operands; `{_ffi.print_expr(v)}` is {v.dtype}")
    return v


def _pair(a, b, dtype):
    """Two operands: a Python int adopts the other's type (or `dtype` when given)."""
    if dtype is not None:
        t = dtype_str(dtype)
        a, b = _const(a, t), _const(b, t)
    return a, b


def _named(name, py, op):
    def f(x, y, dtype=None, span=None):
        x, y = _pair(x, y, dtype)
        return _ffi.binary(op, _int(x, f"T.{name}"), _int(y, f"T.{name}"))

    f.__name__ = name
    f.__doc__ = f"T.{name}(x, y): `x {py} y` on integers (docs/semantics.md)."
    return f


shift_left = _named("shift_left", "<<", "shift_left")
shift_right = _named("shift_right", ">>", "shift_right")
bitwise_and = _named("bitwise_and", "&", "bitwise_and")
bitwise_or = _named("bitwise_or", "|", "bitwise_or")
bitwise_xor = _named("bitwise_xor", "^", "bitwise_xor")


def bitwise_not(x, span=None):
    """T.bitwise_not(x): `~x` on an integer (every bit flipped)."""
    return _ffi.bit_not(_int(x, "T.bitwise_not"))


def popcount(x):
    """T.popcount(x): the number of set bits of x in its own type's width, of x's type."""
    v = _int(x, "T.popcount")
    return _ffi.call(v.dtype, "popcount", [v])


def clz(x):
    """T.clz(x): the number of leading zero bits of x in its own type's width (the width for 0)."""
    v = _int(x, "T.clz")
    return _ffi.call(v.dtype, "clz", [v])


def dp4a(A, B, C):
    """T.dp4a(A[i], B[j], C[k]): C[k] += the dot product of the four int8 values A[i..i+3] and B[j..j+3]
    (the last index steps), in int32 -- CUDA's __dp4a on packed bytes. A statement, as in TileLang."""
    ops = []
    for x, what, dt in ((A, "A", "int8"), (B, "B", "int8"), (C, "C", "int32")):
        buf, mins, _, _ = region_of(x, f"T.dp4a {what}")
        if buf.dtype != dt:
            kind = "an int32 accumulator" if what == "C" else "int8 inputs"
            raise TileLangTypeError(f"T.dp4a needs {kind}; {what} ({buf.name}) is {buf.dtype}")
        ops.append((buf, list(mins)))
    (ab, am), (bb, bm), (cb, cm) = ops
    acc = _ffi.load(cb, cm)
    for i in range(4):
        a = _ffi.load(ab, am[:-1] + [am[-1] + i])
        b = _ffi.load(bb, bm[:-1] + [bm[-1] + i])
        acc = acc + _ffi.cast("int32", a) * _ffi.cast("int32", b)
    return _ffi.store(cb, acc, cm, builder.span())
