"""Atomic updates: T.atomic_add of an element or a tile."""
from .. import _ffi
from ..errors import TileLangTypeError, TileLangUnsupportedError
from . import builder
from .ast import RegionSpec, region_of
from .expr import Expr
from .expr import const as _const
from .utils import _point_region, _region


def atomic_add(dst, value, memory_order=None, return_prev=False):
    if return_prev:
        raise TileLangUnsupportedError("T.atomic_add(..., return_prev=True) is not supported: the atomic is a "
                                       "statement here and does not return the previous value")
    if memory_order not in (None, "relaxed"):
        raise TileLangUnsupportedError(f"T.atomic_add(..., memory_order={memory_order!r}) is not supported: atomics "
                                       "are relaxed; order other accesses with barriers")
    db, dmin, dext, dpoint = region_of(dst, "T.atomic_add destination")
    if isinstance(value, (_ffi.Buffer, RegionSpec)):
        sb, smin, sext, _ = region_of(value, "T.atomic_add source")
        if dpoint:
            dext = _point_region(db, dmin, sext)
        return _ffi.tile_op("atomic_add", [_region(db, dmin, dext), _region(sb, smin, sext)], [], {}, builder.span())
    if not dpoint:
        raise TileLangTypeError("a scalar T.atomic_add needs a single element as destination, e.g. C[i, j]")
    v = value if isinstance(value, Expr) else _const(value, db.dtype)
    return _ffi.tile_op("atomic_add", [_region(db, dmin, dext)], [v], {}, builder.span())
