"""Reductions and scans along one dimension of a tile: T.reduce_sum / _max / _min / _abssum / _absmax and
T.cumsum."""
from .. import _ffi
from ..errors import TileLangTypeError
from . import builder
from .ast import region_of
from .utils import _bool, _normalize_dim, _region


def _reduce(kind):
    def f(src, dst, dim=-1, clear=True, annotations=None):
        if annotations:  # {T.WSID: id}: the op's name in a warp-specialisation schedule
            from .ws_schedule import with_ws_id
            return with_ws_id(f(src, dst, dim, clear), annotations, f"T.reduce_{kind}")
        sb, smin, sext, _ = region_of(src, f"T.reduce_{kind} source")
        db, dmin, dext, _ = region_of(dst, f"T.reduce_{kind} destination")
        d = _normalize_dim(dim, len(sext), f"T.reduce_{kind}", sb)  # shapes are checked in C++ (src/op)
        shared = ("shared", "shared.dyn")
        if (sb.scope == "local.fragment" and db.scope in shared) or (sb.scope in shared and
                                                                      db.scope in shared + ("local.fragment",)):
            return _through_fragments(kind, src, dst, sb, sext, db, dext, d, clear)
        return _ffi.tile_op(f"reduce_{kind}", [_region(sb, smin, sext), _region(db, dmin, dext)], [],
                            {"dim": d, "clear": int(_bool(clear))}, builder.span())

    f.__name__ = f"reduce_{kind}"
    return f


def _through_fragments(kind, src, dst, sb, sext, db, dext, dim, clear):
    """A reduction with a shared-memory source or destination (TileLang accepts both): the source copied into a
    fragment of its shape, the reduction into a fragment of the destination's shape, then copied there (after
    loading the destination's old values first when clear=False)."""
    from .allocate import alloc_fragment
    from .copy_op import copy

    ctx = builder.current()

    def fragment(like, shape, suffix):
        saved = ctx.pending_name
        ctx.pending_name = f"{like.name}_{suffix}"
        try:
            return alloc_fragment(tuple(shape), like.dtype)
        finally:
            ctx.pending_name = saved

    shared = ("shared", "shared.dyn")
    stmts = []
    s2, d2 = src, dst
    if sb.scope in shared:
        s2 = fragment(sb, sext, "frag")
        stmts.append(copy(src, s2))
    if db.scope in shared:
        d2 = fragment(db, dext, "reduced")
        if not _bool(clear):
            stmts.append(copy(dst, d2))
    stmts.append(_reduce(kind)(s2, d2, dim, clear))
    if d2 is not dst:
        stmts.append(copy(d2, dst))
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
