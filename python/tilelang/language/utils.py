"""Helpers the op families of the T namespace share: the unsupported / not-implemented reports, shapes as
IR, tile operands as regions, dims and integer arguments. Nothing here is a T.* name."""
import builtins
import numbers

from .. import _ffi
from ..errors import TileLangPerformanceWarning, TileLangTypeError, TileLangUnsupportedError
from . import builder
from .expr import Expr
from .expr import const as _const

_bool = builtins.bool


def _unsupported(name, why, instead=None):
    msg = f"{name} is not supported by TileLang-C++ yet: {why}"
    if instead:
        msg += f"; {instead}"
    return TileLangUnsupportedError(msg)


def _hint_not_implemented(call, args, why):
    """TileLang arguments that only steer how code is scheduled (never what it computes) and that this
    compiler does not implement: a TileLangPerformanceWarning at the user's line, never silence."""
    import warnings

    sp = builder.span()
    loc = _ffi.format_span(sp).partition("\n")[0] + ": " if sp else ""
    given = ", ".join(f"{a}=" for a in args)
    msg = f"{loc}{call}({given}...) is accepted but not implemented: {why}"
    if sp:  # reported at the user's line, not at the parser's
        warnings.warn_explicit(msg, TileLangPerformanceWarning, sp[0], sp[1])
    else:
        from ..log import warn

        warn(msg, TileLangPerformanceWarning)


def _dims(shape, what):
    """A shape of positive ints and size expressions, as IR expressions."""
    if isinstance(shape, (int, Expr)):
        shape = (shape,)
    dims = []
    for d in shape:
        if isinstance(d, bool) or not isinstance(d, (int, Expr)):
            raise TileLangTypeError(f"{what}: a dimension must be an int or a size expression, not {d!r}")
        if isinstance(d, int) and d <= 0:
            raise TileLangTypeError(f"{what}: dimensions must be positive, got {d}")
        dims.append(_const(d))
    return dims


def _region(buf, mins, extents):
    return _ffi.Region(buf, list(zip(mins, extents)))


def _non_unit(extents):
    out = []
    for e in extents:
        v = _ffi.const_int(e)
        if v != 1:
            out.append(e)
    return out


def _normalize_dim(dim, rank, what, buf):
    if not isinstance(dim, int) or isinstance(dim, _bool):
        raise TileLangTypeError(f"dim of {what} must be a Python int, not {type(dim).__name__}")
    d = dim + rank if dim < 0 else dim
    if not 0 <= d < rank:
        raise TileLangTypeError(f"dim={dim} of {what} is out of range for the {rank}-d source '{buf.name}'")
    return d


def _point_region(buf, mins, other_extents):
    """A corner A[i, j]: the tile's extents come from the other operand, right-aligned (as TileLang: a (64, 1) tile
    at A[i, j] is the column A[i:i + 64, j]); only an operand of more dimensions than the buffer drops its unit
    ones to fit."""
    rank = len(mins)
    ext = [_const(1)] * rank
    other = list(other_extents)
    if len(other) > rank:
        other = _non_unit(other_extents) or other[-rank:]
    if len(other) > rank:
        raise TileLangTypeError(f"cannot copy a {len(other)}-d tile at a corner of the {rank}-d buffer '{buf.name}'")
    for i, e in enumerate(other):
        ext[rank - len(other) + i] = e
    return ext


def _int_arg(value, what):
    """A compile-time integer argument: a Python int or a constant integer expression (never a float
    truncated into one)."""
    v = _ffi.const_int(value) if isinstance(value, Expr) else value
    if isinstance(v, _bool) or not isinstance(v, numbers.Integral):  # NumPy integers are Integral
        raise TileLangTypeError(f"{what} is a constant integer, got {value!r}")
    return int(v)


def index_to_coordinates(index, shape):
    """T.index_to_coordinates(i, shape): the row-major coordinates of flat index i in a tensor of `shape`
    (the last one varies fastest), as a list; ints give ints."""
    dims = list(shape)
    if not dims:
        raise TileLangTypeError("T.index_to_coordinates needs a shape with at least one dimension")
    out = []
    rest = index
    for d in reversed(dims[1:]):
        out.append(rest % d)
        rest = rest // d
    out.append(rest)
    return out[::-1]


def linear_index(*args):
    """T.linear_index(i, j, ..., shape): the row-major flat index of coordinates (i, j, ...) in `shape`."""
    if len(args) < 2:
        raise TileLangTypeError("T.linear_index takes the coordinates and then the shape")
    *coords, shape = args
    dims = list(shape)
    if len(coords) != len(dims):
        raise TileLangTypeError(f"T.linear_index: {len(coords)} coordinates for a shape of {len(dims)} dimensions")
    flat = coords[0]
    for c, d in zip(coords[1:], dims[1:]):
        flat = flat * d + c
    return flat
