"""tvm.tir / tvm.tirx: TVM's expression constructors and node classes as TileLang programs use them
(tir.const, tir.Cast, tir.Select, tir.reinterpret(dtype, value), tir.call_extern, tir.PrimExpr...), built on
this project's IR. Class names work both as constructors and in isinstance checks."""
from .. import _ffi
from ..language import math_intrinsics as _m
from ..language.customize import reinterpret as _reinterpret
from ..language.dtypes import dtype_str
from ..language.expr import const as _const
from ._names import unsupported_attr

PrimExpr = _ffi.Expr
Buffer = _ffi.Buffer
BufferLoad = _ffi.BufferLoad
PrimFunc = _ffi.PrimFunc
Stmt = _ffi.Stmt
Call = _ffi.CallExpr


class _NodeMeta(type):
    def __instancecheck__(cls, obj):
        return cls._is(obj)


class Var(metaclass=_NodeMeta):
    """tir.Var(name, dtype): a symbolic scalar (T.dynamic's kind of variable)."""

    def __new__(cls, name, dtype="int32"):
        return _ffi.var(str(name), dtype_str(dtype))

    @staticmethod
    def _is(obj):
        return isinstance(obj, _ffi.Var)


SizeVar = Var


class IntImm(metaclass=_NodeMeta):
    """tir.IntImm(dtype, value): an integer (or bool) constant; isinstance(x, tir.IntImm) for constants."""

    def __new__(cls, dtype, value):
        d = dtype_str(dtype)
        if "float" in d:
            raise TypeError(f"tir.IntImm takes an integer dtype, not {d} (tir.FloatImm)")
        return _ffi.int_imm(d, int(value))

    @staticmethod
    def _is(obj):
        return isinstance(obj, _ffi.IntImm)


class FloatImm(metaclass=_NodeMeta):
    """tir.FloatImm(dtype, value)."""

    def __new__(cls, dtype, value):
        return _ffi.float_imm(dtype_str(dtype), float(value))

    @staticmethod
    def _is(obj):
        return isinstance(obj, _ffi.FloatImm)


class StringImm(metaclass=_NodeMeta):
    def __new__(cls, value):
        return _ffi.string_imm(str(value))

    @staticmethod
    def _is(obj):
        return isinstance(obj, _ffi.StringImm)


def const(value, dtype=None, span=None):
    """tir.const(value, dtype): int32 / float32 by default, as TVM."""
    if isinstance(value, _ffi.Expr):
        return value if dtype is None else _ffi.cast(dtype_str(dtype), value)
    d = None if dtype is None else dtype_str(dtype)
    if d is None and isinstance(value, float):
        d = "float32"
    return _const(value, d)


def Cast(dtype, value, span=None):  # noqa: N802
    return _ffi.cast(dtype_str(dtype), _const(value))


def Select(condition, true_value, false_value, span=None):  # noqa: N802
    """Both values are evaluated (TVM's Select); if_then_else is the same here (all loads are guarded)."""
    return _ffi.select(_const(condition), _const(true_value), _const(false_value))


def if_then_else(cond, t, f, span=None):
    return _m.if_then_else(cond, t, f)


def reinterpret(dtype, value, span=None):
    """TVM's order: tir.reinterpret(dtype, value)."""
    return _reinterpret(value, dtype)


def _binary(op, doc):
    def f(a, b, span=None):
        return _ffi.binary(op, _const(a), _const(b))

    f.__doc__ = doc
    return f


Add = _binary("add", "a + b")
Sub = _binary("sub", "a - b")
Mul = _binary("mul", "a * b")
Min = _binary("min", "min(a, b)")
Max = _binary("max", "max(a, b)")
EQ = _binary("eq", "a == b")
NE = _binary("ne", "a != b")
LT = _binary("lt", "a < b")
LE = _binary("le", "a <= b")
GT = _binary("gt", "a > b")
GE = _binary("ge", "a >= b")
And = _binary("and", "logical and")
Or = _binary("or", "logical or")
min = Min  # noqa: A001
max = Max  # noqa: A001
FloorDiv = floordiv = _m.floordiv
FloorMod = floormod = _m.floormod
truncdiv = _m.truncdiv
truncmod = _m.truncmod
min_value = _m.min_value
max_value = _m.max_value
abs = _m.abs  # noqa: A001
pow = _m.pow  # noqa: A001


def Not(a, span=None):  # noqa: N802
    return _ffi.logical_not(_const(a))


def all(*args, span=None):  # noqa: A001
    """The conjunction of the conditions (tir.all(c0, c1, ...))."""
    if not args:
        return _const(True)
    out = _const(args[0])
    for a in args[1:]:
        out = _ffi.binary("and", out, _const(a))
    return out


def any(*args, span=None):  # noqa: A001
    if not args:
        return _const(False)
    out = _const(args[0])
    for a in args[1:]:
        out = _ffi.binary("or", out, _const(a))
    return out


for _n in ["exp", "exp2", "log", "log2", "log10", "sqrt", "rsqrt", "tanh", "sigmoid", "erf", "floor", "ceil",
           "round", "sin", "cos", "trunc"]:
    globals()[_n] = getattr(_m, _n)
del _n


def call_extern(dtype, func_name, *args, span=None):
    """TVM's order: tir.call_extern(dtype, "name", *args)."""
    from ..language.extern import call_extern as _call_extern

    return _call_extern(func_name, *args, dtype=dtype)


def call_intrin(dtype, op, *args, span=None):
    from ..language.builtin import call_intrin as _call_intrin

    return _call_intrin(dtype, op, *args)


def __getattr__(name):
    if name == "op":  # `from tvm.tir import op`: the operators live here too
        import sys

        return sys.modules[__name__]
    raise unsupported_attr("tvm.tir", name)
