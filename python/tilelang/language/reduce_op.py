"""Reductions and scans along one dimension of a tile: T.reduce_sum / _max / _min / _abssum / _absmax and
T.cumsum."""
from .. import _ffi
from ..errors import TileLangTypeError
from . import builder
from .ast import region_of
from .utils import _bool, _normalize_dim, _region


def _reduce(kind):
    def f(src, dst, dim=-1, clear=True):
        sb, smin, sext, _ = region_of(src, f"T.reduce_{kind} source")
        db, dmin, dext, _ = region_of(dst, f"T.reduce_{kind} destination")
        d = _normalize_dim(dim, len(sext), f"T.reduce_{kind}", sb)  # shapes are checked in C++ (src/op)
        if sb.scope == "local.fragment" and db.scope in ("shared", "shared.dyn"):
            return _into_shared(kind, src, dst, db, dext, d, clear)
        return _ffi.tile_op(f"reduce_{kind}", [_region(sb, smin, sext), _region(db, dmin, dext)], [],
                            {"dim": d, "clear": int(_bool(clear))}, builder.span())

    f.__name__ = f"reduce_{kind}"
    return f


def _into_shared(kind, src, dst, db, dext, dim, clear):
    """A fragment reduced into shared memory (TileLang accepts it): into a fragment of the destination's shape,
    then copied there (after loading the destination's old values first when clear=False)."""
    from .allocate import alloc_fragment
    from .copy_op import copy

    ctx = builder.current()
    saved = ctx.pending_name
    ctx.pending_name = f"{db.name}_reduced"
    try:
        tmp = alloc_fragment(tuple(dext), db.dtype)
    finally:
        ctx.pending_name = saved
    stmts = [] if _bool(clear) else [copy(dst, tmp)]
    stmts.append(_reduce(kind)(src, tmp, dim, clear))
    stmts.append(copy(tmp, dst))
    return _ffi.seq(stmts, builder.span())


reduce_sum = _reduce("sum")
reduce_max = _reduce("max")
reduce_min = _reduce("min")
reduce_abssum = _reduce("abssum")
reduce_absmax = _reduce("absmax")


def cumsum(src, dst=None, dim=0, reverse=False):
    sb, smin, sext, _ = region_of(src, "T.cumsum source")
    if dst is None:
        dst = src
    db, dmin, dext, _ = region_of(dst, "T.cumsum destination")
    d = _normalize_dim(dim, len(sext), "T.cumsum", sb)
    return _ffi.tile_op("cumsum", [_region(sb, smin, sext), _region(db, dmin, dext)], [],
                        {"dim": d, "reverse": int(_bool(reverse))}, builder.span())


def finalize_reducer(reducer):
    """Makes a T.alloc_reducer buffer's totals readable. Its updates are atomic adds to one shared copy, so
    there is nothing to combine; the barrier before the next read is inserted as for any shared write."""
    ctx = builder.current()
    name = getattr(reducer, "name", None)
    if not isinstance(reducer, _ffi.Buffer) or ctx is None or not ctx.kernels or \
            name not in ctx.kernels[-1].reducers:
        raise TileLangTypeError("T.finalize_reducer takes a buffer from T.alloc_reducer")
    return None
