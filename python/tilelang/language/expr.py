"""Python operators on IR expressions, and conversion of Python values to IR."""
from .. import _ffi
from ..errors import TileLangTypeError

Expr = _ffi.Expr
Buffer = _ffi.Buffer


def const(value, dtype=None):
    """Converts a Python scalar (or an Expr) to an IR expression."""
    if isinstance(value, Expr):
        return value if dtype is None else _ffi.cast(dtype, value)
    if isinstance(value, bool):
        return _ffi.int_imm(dtype or "bool", int(value))
    if isinstance(value, int):
        if dtype is None:
            dtype = "int32" if -(2**31) <= value < 2**31 else "int64"
        if "float" in dtype:
            return _ffi.float_imm(dtype, float(value))
        return _ffi.int_imm(dtype, value)
    if isinstance(value, float):
        return _ffi.float_imm(dtype or "float32", value)
    try:  # numpy scalars
        import numpy as np

        if isinstance(value, np.generic):
            return const(value.item(), dtype)
    except ImportError:  # pragma: no cover
        pass
    raise TileLangTypeError(f"cannot use a value of Python type {type(value).__name__} in a kernel expression")


def is_ir(x):
    return isinstance(x, Expr)


def _bin(op):
    def f(a, b):
        return _ffi.binary(op, const(a), const(b))

    def r(a, b):
        return _ffi.binary(op, const(b), const(a))

    return f, r


for _name, _op in [("add", "add"), ("sub", "sub"), ("mul", "mul"), ("floordiv", "floordiv"), ("mod", "floormod")]:
    _f, _r = _bin(_op)
    setattr(Expr, f"__{_name}__", _f)
    setattr(Expr, f"__r{_name}__", _r)


def _is_bool(x):
    return isinstance(x, bool) or (isinstance(x, Expr) and x.dtype == "bool")


def _bitwise(py, logical, bitwise):
    """`&`, `|`, `^` as TileLang gives them: logical on two booleans, bitwise on integers."""

    def op(a, b):
        if _is_bool(a) and _is_bool(b):
            return _ffi.binary(logical, const(a), const(b))
        a, b = const(a), const(b)
        for x in (a, b):
            if "float" in x.dtype:
                raise TileLangTypeError(
                    f"`{py}` needs integer (or boolean) operands; `{_ffi.print_expr(x)}` is {x.dtype}: "
                    "cast it with T.Cast, or reinterpret its bits with T.reinterpret")
        return _ffi.binary(bitwise, a, b)

    return op


def _shift(py, name):
    def op(a, b):
        a, b = const(a), const(b)
        for x in (a, b):
            if "int" not in x.dtype or x.dtype == "bool":
                raise TileLangTypeError(f"`{py}` needs integer operands; `{_ffi.print_expr(x)}` is {x.dtype}")
        return _ffi.binary(name, a, b)

    return op


for _name, _py, _logical, _bitw in [("and", "&", "and", "bitwise_and"), ("or", "|", "or", "bitwise_or"),
                                     ("xor", "^", "ne", "bitwise_xor")]:
    _f = _bitwise(_py, _logical, _bitw)
    setattr(Expr, f"__{_name}__", _f)
    setattr(Expr, f"__r{_name}__", (lambda f: lambda a, b: f(b, a))(_f))
for _name, _py, _op in [("lshift", "<<", "shift_left"), ("rshift", ">>", "shift_right")]:
    _f = _shift(_py, _op)
    setattr(Expr, f"__{_name}__", _f)
    setattr(Expr, f"__r{_name}__", (lambda f: lambda a, b: f(b, a))(_f))


def _invert(a):
    """`~x`: logical not on a boolean, bitwise not on an integer."""
    if a.dtype == "bool":
        return _ffi.logical_not(a)
    if "float" in a.dtype:
        raise TileLangTypeError(f"`~` needs an integer or boolean operand; `{_ffi.print_expr(a)}` is {a.dtype}")
    return _ffi.bit_not(a)


def _truediv(a, b):
    a, b = const(a), const(b)
    return _ffi.binary("div", a, b)


Expr.__truediv__ = _truediv
Expr.__rtruediv__ = lambda a, b: _truediv(b, a)
for _name, _op in [("lt", "lt"), ("le", "le"), ("gt", "gt"), ("ge", "ge"), ("eq", "eq"), ("ne", "ne")]:
    setattr(Expr, f"__{_name}__", _bin(_op)[0])
Expr.__hash__ = object.__hash__
def _neg(a):
    # A negated literal is a literal (so `-T.infinity("float32")` parses back to the constant it prints).
    if isinstance(a, _ffi.FloatImm):
        return _ffi.float_imm(a.dtype, -a.value)
    return _ffi.binary("sub", _zero_like(a), a)


Expr.__neg__ = _neg
Expr.__pos__ = lambda a: a
Expr.__invert__ = _invert
Expr.__repr__ = lambda a: _ffi.print_expr(a)
Expr.__str__ = lambda a: _ffi.print_expr(a)


def _bool(a):
    v = _ffi.const_int(a)
    if v is not None:
        return bool(v)
    raise TileLangTypeError(
        f"the kernel expression `{_ffi.print_expr(a)}` has no value while the program is parsed; "
        "use it in an `if` on its own (which becomes a run-time branch) or T.if_then_else(...)")


Expr.__bool__ = _bool


def _zero_like(a):
    return _ffi.float_imm(a.dtype, 0.0) if "float" in a.dtype else _ffi.int_imm(a.dtype, 0)
