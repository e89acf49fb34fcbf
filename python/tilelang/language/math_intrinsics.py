"""Scalar math of the T namespace: T.exp and the other float intrinsics, T.abs / T.pow / T.max / T.min,
T.if_then_else, casts, the integer divisions, T.clamp, the extreme values of a dtype, T.infinity and T.nan.
(T.max and friends shadow the builtins inside this module on purpose.)"""
import math

from .. import _ffi
from .ast import simplify
from .dtypes import dtype_str
from .expr import Expr
from .expr import const as _const


def infinity(dtype):
    return _ffi.float_imm(dtype_str(dtype), math.inf)


def nan(dtype):
    return _ffi.float_imm(dtype_str(dtype), math.nan)


def _unary_float(name):
    def f(x):
        x = _const(x)
        if "float" not in x.dtype:
            x = _ffi.cast("float32", x)
        return _ffi.call(x.dtype, name, [x])

    f.__name__ = name
    return f


for _n in ["exp", "exp2", "log", "log2", "log10", "sqrt", "rsqrt", "tanh", "sigmoid", "erf", "floor", "ceil",
           "round", "sin", "cos", "trunc"]:
    globals()[_n] = _unary_float(_n)
del _n


def abs(x):  # noqa: A001
    x = _const(x)
    return _ffi.call(x.dtype, "abs", [x])


def pow(x, y):  # noqa: A001
    x, y = _const(x), _const(y)
    if "float" not in x.dtype:
        x = _ffi.cast("float32", x)
    return _ffi.call(x.dtype, "pow", [x, _ffi.cast(x.dtype, y) if y.dtype != x.dtype else y])


def max(a, b):  # noqa: A001
    return _ffi.binary("max", _const(a), _const(b))


def min(a, b):  # noqa: A001
    return _ffi.binary("min", _const(a), _const(b))


def if_then_else(cond, a, b):
    return _ffi.select(_const(cond), _const(a), _const(b))


def cast(x, dtype):
    return _ffi.cast(dtype_str(dtype), _const(x))


def Cast(dtype, value):  # noqa: N802 - TileLang's (TVM's) spelling: T.Cast(dtype, value)
    return _ffi.cast(dtype_str(dtype), _const(value))


def ceildiv(a, b):
    if isinstance(a, int) and isinstance(b, int):
        return -(-a // b)
    return simplify((_const(a) + _const(b) - 1) // _const(b))


def floordiv(a, b):
    return _const(a) // _const(b)


def floormod(a, b):
    return _const(a) % _const(b)


def truncdiv(a, b):
    return _ffi.binary("div", _const(a), _const(b))


def truncmod(a, b):
    return _ffi.binary("mod", _const(a), _const(b))


def max_value(dtype):
    import numpy as np
    import ml_dtypes

    d = dtype_str(dtype)
    if "float" in d:
        info = ml_dtypes.finfo(d if d not in ("float16", "float32", "float64") else np.dtype(d))
        return _const(float(info.max), d)
    return _const(int(np.iinfo(d).max), d)


def min_value(dtype):
    import numpy as np
    import ml_dtypes

    d = dtype_str(dtype)
    if "float" in d:
        info = ml_dtypes.finfo(d if d not in ("float16", "float32", "float64") else np.dtype(d))
        return _const(-float(info.max), d)
    return _const(int(np.iinfo(d).min), d)


def clamp(x, lo, hi):
    """T.clamp(x, lo, hi) = min(max(x, lo), hi)."""
    x = _const(x)
    lo = _const(lo, x.dtype) if not isinstance(lo, Expr) else lo
    hi = _const(hi, x.dtype) if not isinstance(hi, Expr) else hi
    return _ffi.binary("min", _ffi.binary("max", x, lo), hi)
