"""Filling tiles: T.fill and T.clear."""
from .. import _ffi
from . import builder
from .ast import region_of
from .expr import Expr
from .expr import const as _const
from .utils import _region


def fill(buffer, value):
    b, mins, exts, point = region_of(buffer, "T.fill destination")
    v = value if isinstance(value, Expr) else _const(value, b.dtype)
    return _ffi.tile_op("fill", [_region(b, mins, exts)], [v], {}, builder.span())


def clear(buffer):
    b = region_of(buffer, "T.clear destination")[0]
    return fill(buffer, 0.0 if ("float" in b.dtype) else 0)
