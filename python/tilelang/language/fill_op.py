"""Filling tiles: T.fill and T.clear."""
from .. import _ffi
from . import builder
from .ast import region_of
from .expr import Expr
from .expr import const as _const
from .utils import _region
from .ws_schedule import with_ws_id


def fill(buffer, value, annotations=None):
    b, mins, exts, point = region_of(buffer, "T.fill destination")
    v = value if isinstance(value, Expr) else _const(value, b.dtype)
    return with_ws_id(_ffi.tile_op("fill", [_region(b, mins, exts)], [v], {}, builder.span()), annotations, "T.fill")


def clear(buffer, annotations=None):
    b = region_of(buffer, "T.clear destination")[0]
    return with_ws_id(fill(buffer, 0.0 if ("float" in b.dtype) else 0), annotations, "T.clear")
