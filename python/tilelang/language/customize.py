"""Reinterpreting values and buffers: T.reinterpret (a bit cast), T.reshape and T.view (views of a
buffer's storage, made by proxy.make_view)."""
from .. import _ffi
from ..errors import TileLangTypeError
from .dtypes import DType, dtype_str
from .expr import Expr
from .expr import const as _const
from .proxy import make_view


def reinterpret(value, dtype=None):
    """T.reinterpret(value, dtype): the bits of `value` read as a `dtype` of the same width (a bit cast,
    as TVM's tir.reinterpret); T.cast converts the value instead. The older order
    T.reinterpret(dtype, value) is accepted too: a data type is never a value."""
    if _is_dtype(value) and dtype is not None and not _is_dtype(dtype):
        value, dtype = dtype, value
    if dtype == "handle":  # TVM's null handle, the value of T.attr(reducer, "reduce_scope", ...)
        from .thread_reduce import NULL_HANDLE

        if _ffi.const_int(_const(value)) != 0:
            raise TileLangTypeError('T.reinterpret(x, dtype="handle") makes a null handle only (x = 0): this '
                                    "compiler has no raw pointers")
        return NULL_HANDLE
    if dtype is None or not _is_dtype(dtype):
        raise TileLangTypeError("T.reinterpret(value, dtype) needs a value and a data type")
    to = dtype_str(dtype)
    v = _const(value)
    from_bits, to_bits = _bits(v.dtype), _bits(to)
    if from_bits != to_bits:
        raise TileLangTypeError(f"T.reinterpret from {v.dtype} ({from_bits} bits) to {to} ({to_bits} bits): "
                                "a bit cast needs types of the same width")
    return _ffi.call(to, "tl.reinterpret", [v])


def _is_dtype(x):
    if isinstance(x, DType):
        return True
    return isinstance(x, str) and _ffi.valid_dtype(x)


def _bits(dtype):
    import re

    # float4_e2m1fn / float6_* are stored one value a byte (the code in the low bits): they reinterpret as 8 bits
    m = re.fullmatch(r"u?int(8|16|32|64)|float(16|32|64)|bfloat(16)|float8_e4m3fn|float8_e5m2|float8_e8m0fnu|float4_e2m1fn|float6_e2m3fn|float6_e3m2fn", dtype)
    if not m:
        raise TileLangTypeError(f"T.reinterpret takes 8- to 64-bit integer and float scalars, not {dtype}")
    return int(next((g for g in m.groups() if g), 8))


def _elements(shape):
    n = _const(1)
    for d in shape:
        n = n * _const(d)
    return _ffi.simplify_expr(n)


def reshape(src, shape):
    """T.reshape(buf, shape): the same elements in row-major order with another shape (a view: reads
    and writes go to `buf`). The element counts must be equal."""
    if isinstance(src, _ffi.Buffer) and not isinstance(shape, (int, Expr)):
        have, want = _ffi.const_int(_elements(src.shape)), _ffi.const_int(_elements(shape))
        if isinstance(have, int) and isinstance(want, int) and have != want:
            raise TileLangTypeError(f"T.reshape of '{src.name}' {tuple(src.shape)} ({have} elements) to "
                                    f"{tuple(shape)} ({want} elements): the element counts must be equal")
    return make_view(src, shape, None, "T.reshape")


def view(src, shape=None, dtype=None):
    """T.view(buf, shape=None, dtype=None): `buf`'s storage seen with another shape and/or a dtype of the
    same width (a bit cast, as T.reinterpret)."""
    return make_view(src, shape, dtype, "T.view")
