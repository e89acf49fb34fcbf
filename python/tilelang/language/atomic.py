"""Atomic updates: T.atomic_add, T.atomic_max and T.atomic_min of an element or a tile."""
from .. import _ffi
from ..errors import TileLangTypeError, TileLangUnsupportedError
from . import builder
from .ast import RegionSpec, region_of
from .expr import Expr
from .expr import const as _const
from .utils import _point_region, _region


_FETCH_DTYPES = ("int32", "uint32", "int64", "uint64", "float32", "float64")


# An ordered read-modify-write is a relaxed one between fences (C++'s fence-atomic synchronisation): a release
# (or stronger) order puts a fence before it, an acquire (or stronger) one a fence after it.
_RMW_ORDERS = (None, "relaxed", "consume", "acquire", "release", "acq_rel", "seq_cst")


def _rmw_fences(name, memory_order):
    """(fences before, fences after) an atomic read-modify-write with `memory_order`, as tl.memory_fence calls."""
    if memory_order not in _RMW_ORDERS:
        raise TileLangTypeError(f"{name}: memory_order is one of {', '.join(repr(o) for o in _RMW_ORDERS[1:])}; "
                                f"got {memory_order!r}")
    if memory_order in (None, "relaxed"):
        return [], []
    order = _ORDERS["acquire" if memory_order == "consume" else memory_order]
    fence = lambda o: _ffi.evaluate(_ffi.call("void", "tl.memory_fence", [_const(o)]), builder.span())  # noqa: E731
    before = [fence(5 if order == 5 else 3)] if order in (3, 4, 5) else []
    after = [fence(5 if order == 5 else 2)] if order in (2, 4, 5) else []
    return before, after


def _fetch_add(name, dst, value, memory_order):
    """T.atomic_add(element, value, return_prev=True): the element's value before the add, as an expression."""
    before, after = _rmw_fences(name, memory_order)
    if isinstance(value, (_ffi.Buffer, RegionSpec)):
        raise TileLangTypeError(f"{name}(..., return_prev=True) returns one element's previous value: give a "
                                "single element and a scalar value")
    db, dmin, _, dpoint = region_of(dst, f"{name} destination")
    if not dpoint:
        raise TileLangTypeError(f"{name}(..., return_prev=True) needs a single element as destination, e.g. C[i]")
    if db.dtype not in _FETCH_DTYPES:
        raise TileLangUnsupportedError(f"{name}(..., return_prev=True) updates 32- and 64-bit elements "
                                       f"({', '.join(_FETCH_DTYPES)}); '{db.name}' is {db.dtype}")
    v = _ffi.cast(db.dtype, value) if isinstance(value, Expr) else _const(value, db.dtype)
    addr = _ffi.call("handle", "address_of", [_ffi.load(db, list(dmin))])
    fetch = _ffi.call(db.dtype, "atomic_fetch_add", [addr, v])
    # The atomic happens once, before the statement that uses its value: the previous value goes into a register
    # of the thread (a T.alloc_var), which the statement reads (an expression would repeat the atomic wherever
    # a lowering copies it).
    from .allocate import alloc_var

    prev = alloc_var(db.dtype)
    builder.emit_before(before + [_ffi.store(prev, fetch, [_const(0)], builder.span())] + after)
    return _ffi.load(prev, [_const(0)])


def _atomic(kind, dst, value, memory_order, return_prev, use_tma=False):
    name = f"T.atomic_{kind}"
    if return_prev and kind == "add" and not use_tma:
        return _fetch_add(name, dst, value, memory_order)
    if return_prev:
        raise TileLangUnsupportedError(f"{name}(..., return_prev=True) is not supported: {name} is a statement "
                                       "here and does not return the previous value (T.atomic_add does)")
    before, after = _rmw_fences(name, memory_order)
    db, dmin, dext, dpoint = region_of(dst, f"{name} destination")
    if (before or after) and (isinstance(value, (_ffi.Buffer, RegionSpec)) or not dpoint):
        raise TileLangUnsupportedError(f"{name}(..., memory_order={memory_order!r}) of a tile is not supported: "
                                       "ordered atomics take one element (tile atomics are relaxed; order the "
                                       "accesses with barriers)")
    if isinstance(value, (_ffi.Buffer, RegionSpec)):
        sb, smin, sext, _ = region_of(value, f"{name} source")
        if dpoint:
            dext = _point_region(db, dmin, sext)
        return _ffi.tile_op(f"atomic_{kind}", [_region(db, dmin, dext), _region(sb, smin, sext)], [],
                            {"use_tma": 1} if use_tma else {}, builder.span())
    if use_tma:
        raise TileLangTypeError(f"{name}(..., use_tma=True) adds a tile: give the value as a buffer region")
    if not dpoint:
        raise TileLangTypeError(f"a scalar {name} needs a single element as destination, e.g. C[i, j]")
    v = value if isinstance(value, Expr) else _const(value, db.dtype)
    op = _ffi.tile_op(f"atomic_{kind}", [_region(db, dmin, dext)], [v], {}, builder.span())
    return _ffi.seq(before + [op] + after, builder.span()) if before or after else op


def atomic_add(dst, value, memory_order=None, return_prev=False, use_tma=False):
    """dst += value atomically (a tile: element by element), relaxed. return_prev=True (one 32- or 64-bit element):
    an expression, the element's value before this add (CUDA, HIP, the CPU). use_tma=True (a shared tile into global
    memory): TMA reductions on sm_90 / sm_90a (cp.reduce.async.bulk.tensor .add), element-wise atomics with a
    warning where TMA cannot do it. memory_order (one element): "release" orders the thread's earlier accesses before
    the add, "acquire" its later ones after it, "acq_rel" / "seq_cst" both (a fence before and / or after a relaxed
    add: CUDA, HIP, the CPU; Metal and OpenCL refuse it)."""
    return _atomic("add", dst, value, memory_order, return_prev, bool(use_tma))


def atomic_max(dst, value, memory_order=None, return_prev=False):
    """dst = max(dst, value) atomically, relaxed: the element becomes value where value compares
    greater, so a NaN never replaces an element (32- and 64-bit elements)."""
    return _atomic("max", dst, value, memory_order, return_prev)


def atomic_min(dst, value, memory_order=None, return_prev=False):
    """dst = min(dst, value) atomically, relaxed (as atomic_max, with less)."""
    return _atomic("min", dst, value, memory_order, return_prev)


def _atomic_vector(n, dst, value, return_prev):
    name = f"T.atomic_addx{n}"
    if return_prev:
        raise TileLangUnsupportedError(f"{name}(..., return_prev=True) is not supported: the atomic is a statement "
                                       "here and does not return the previous values")
    db, dmin, _, dpoint = region_of(dst, f"{name} destination")
    sb, smin, _, spoint = region_of(value, f"{name} value")
    if not (dpoint and spoint):
        raise TileLangTypeError(f"{name} takes the first of {n} consecutive elements of each side, e.g. "
                                f"{name}(dst[i, j * {n}], src[k, j * {n}])")
    ops = []
    for k in range(n):  # each element atomically, as the vector form is per element on the GPU too
        v = _ffi.load(sb, list(smin[:-1]) + [smin[-1] + k])
        ops.append(_ffi.tile_op("atomic_add", [_region(db, list(dmin[:-1]) + [dmin[-1] + k], [_const(1)] * len(dmin))],
                                [v], {}, builder.span()))
    return _ffi.seq(ops, builder.span())


def atomic_addx2(dst, value, return_prev=False):
    """TileLang's paired atomic add: dst[..., j + k] += value[..., j + k] for k = 0, 1, each element atomically."""
    return _atomic_vector(2, dst, value, return_prev)


def atomic_addx4(dst, value, return_prev=False):
    """TileLang's quad atomic add: dst[..., j + k] += value[..., j + k] for k = 0..3, each element atomically."""
    return _atomic_vector(4, dst, value, return_prev)


# C++'s memory_order numbering (std::memory_order, __ATOMIC_*): the code generators pass it through.
_ORDERS = {"relaxed": 0, "consume": 1, "acquire": 2, "release": 3, "acq_rel": 4, "seq_cst": 5}
_LOAD_ORDERS = ("relaxed", "consume", "acquire", "seq_cst")
_STORE_ORDERS = ("relaxed", "release", "seq_cst")


def _atomic_element(name, ref, memory_order, allowed):
    if memory_order not in allowed:
        raise TileLangTypeError(f"T.{name}: memory_order is one of {', '.join(repr(o) for o in allowed)}; got "
                                f"{memory_order!r}")
    if isinstance(ref, _ffi.Buffer):  # TileLang passes a one-element buffer too
        n = _ffi.const_int(ref.shape[0]) if len(ref.shape) == 1 else None
        if n != 1:
            raise TileLangTypeError(f"T.{name} takes one element (e.g. {ref.name}[i]), not the buffer '{ref.name}'")
        ref = _ffi.load(ref, [_const(0)])
    if not isinstance(ref, _ffi.BufferLoad):
        raise TileLangTypeError(f"T.{name} takes an element of a global or shared buffer, e.g. flags[i]")
    b = ref.buffer
    if b.scope not in ("global", "shared"):
        raise TileLangTypeError(f"T.{name}: '{b.name}' is in {b.scope} memory, which only its own thread sees; an "
                                "atomic access needs a global or shared buffer")
    if b.dtype not in ("int32", "uint32", "int64", "uint64", "float32", "float64"):
        raise TileLangTypeError(f"T.{name} takes 32- and 64-bit elements (int32, uint32, int64, uint64, float32, "
                                f"float64); '{b.name}' is {b.dtype}")
    # consume is acquire, as every C++ compiler implements it
    order = _ORDERS["acquire" if memory_order == "consume" else memory_order]
    return ref, order


def atomic_load(src, memory_order="seq_cst"):
    """The element's value, read atomically with the given ordering (relaxed, consume, acquire or seq_cst):
    acquire orders this thread's later accesses after it, seq_cst is acquire in one total order."""
    ref, order = _atomic_element("atomic_load", src, memory_order, _LOAD_ORDERS)
    return _ffi.call(ref.buffer.dtype, "tl.atomic_load", [_ffi.call("handle", "address_of", [ref]), _const(order)])


def atomic_store(dst, src, memory_order="seq_cst"):
    """Writes the value to the element atomically with the given ordering (relaxed, release or seq_cst):
    release orders this thread's earlier accesses before it."""
    ref, order = _atomic_element("atomic_store", dst, memory_order, _STORE_ORDERS)
    v = _ffi.cast(ref.buffer.dtype, _const(src))
    return _ffi.evaluate(_ffi.call("void", "tl.atomic_store", [_ffi.call("handle", "address_of", [ref]), v,
                                                                _const(order)]), builder.span())
