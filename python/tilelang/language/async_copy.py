"""TileLang's explicit cp.async names (CUDA sm_80+): T.access_ptr as the operand of T.ptx_cp_async,
T.ptx_commit_group, T.ptx_wait_group and T.cp_async_barrier_noinc (cp.async.mbarrier.arrive.noinc).
The T.copy / T.Pipelined path picks cp.async by itself; these are for kernels that schedule their copies
by hand (TileLang's pipelined sparse MLA and warp-specialised MLA decode)."""
import numbers

from .. import _ffi
from ..errors import TileLangTypeError, TileLangUnsupportedError
from . import builder
from .ast import region_of
from .dtypes import DType
from .expr import Expr
from .expr import const as _const

_MODES = {"r": 1, "w": 2, "rw": 3, 1: 1, 2: 2, 3: 3}


class AccessPtr:
    """T.access_ptr(base, mode, extent): the address of an element with its access mode and extent. Here it
    is an operand of T.ptx_cp_async only (the IR has no raw pointers)."""

    def __init__(self, elem, mode, extent):
        self.elem, self.mode, self.extent = elem, mode, extent

    def __repr__(self):
        return f"T.access_ptr({self.elem.buffer.name}, {self.mode})"


def access_ptr(base, access_type="r", *extents, offset=0, extent=None, ignore_last_ndim=0):
    """The address of `base` (an element, a tile's first element, or a buffer's) for T.ptx_cp_async, with
    its access mode ("r", "w", "rw") and the elements it covers (`extent`, or the product of `extents`)."""
    if access_type not in _MODES:
        raise TileLangTypeError(f"T.access_ptr: the access type is 'r', 'w' or 'rw' (or 1, 2, 3), got {access_type!r}")
    if ignore_last_ndim:
        raise TileLangUnsupportedError("T.access_ptr(..., ignore_last_ndim=) is not supported")
    b, mins, _, _ = region_of(base, "T.access_ptr's base")
    off = _ffi.const_int(_const(offset)) if isinstance(offset, (numbers.Integral, Expr)) else None
    if off != 0:
        raise TileLangUnsupportedError("T.access_ptr(..., offset=) other than 0 is not supported: index the element "
                                       "instead (T.access_ptr(A[i, j + k], ...))")
    n = extent
    if extents:
        if n is not None:
            raise TileLangTypeError("T.access_ptr takes the extent positionally or as extent=, not both")
        n = 1
        for e in (extents[0] if len(extents) == 1 and isinstance(extents[0], (tuple, list)) else extents):
            n = n * e
    return AccessPtr(_ffi.load(b, list(mins)), _MODES[access_type], n)


def _ptr(p, what, mode, scope):
    if not isinstance(p, AccessPtr):
        raise TileLangTypeError(f"T.ptx_cp_async: the {what} is a T.access_ptr(...), not {type(p).__name__}")
    if not p.mode & mode:
        raise TileLangTypeError(f"T.ptx_cp_async: the {what} T.access_ptr must allow "
                                f"{'writes' if mode == 2 else 'reads'} ('{'w' if mode == 2 else 'r'}')")
    if p.elem.buffer.scope != scope:
        raise TileLangTypeError(f"T.ptx_cp_async copies global to shared memory: the {what} '{p.elem.buffer.name}' is "
                                f"in {p.elem.buffer.scope} memory")
    return p


def ptx_cp_async(dst_access_ptr, src_access_ptr, num_elems, predicate=None):
    """cp.async of num_elems elements (4, 8 or 16 bytes in all) from a global element to a shared one, in the
    calling thread's open group (T.ptx_commit_group closes it); where `predicate` is false the destination is
    zero-filled. The bytes land at the T.ptx_wait_group that completes the group or, after
    T.cp_async_barrier_noinc, when the barrier's phase completes."""
    dst = _ptr(dst_access_ptr, "destination", 2, "shared")
    src = _ptr(src_access_ptr, "source", 1, "global")
    if dst.elem.buffer.dtype != src.elem.buffer.dtype:
        raise TileLangTypeError(f"T.ptx_cp_async copies bytes of one type: '{src.elem.buffer.name}' is "
                                f"{src.elem.buffer.dtype}, '{dst.elem.buffer.name}' {dst.elem.buffer.dtype}")
    n = _ffi.const_int(_const(num_elems))
    itemsize = DType(dst.elem.buffer.dtype).itemsize
    if n is None or n * itemsize not in (4, 8, 16):
        raise TileLangTypeError(f"T.ptx_cp_async copies 4, 8 or 16 bytes: {num_elems!r} elements of "
                                f"{dst.elem.buffer.dtype} are {'not a constant' if n is None else n * itemsize}")
    for p in (dst, src):
        e = _ffi.const_int(_const(p.extent)) if p.extent is not None else None
        if e is not None and e < n:
            raise TileLangTypeError(f"T.ptx_cp_async copies {n} elements but the T.access_ptr of "
                                    f"'{p.elem.buffer.name}' covers {e}")
    pred = _const(True) if predicate is None else _const(predicate)
    if pred.dtype != "bool":
        pred = pred != _const(0)
    addr = [_ffi.call("handle", "address_of", [p.elem]) for p in (dst, src)]
    return _ffi.evaluate(_ffi.call("void", "tl.ptx_cp_async", addr + [_const(n * itemsize), pred]), builder.span())


def ptx_commit_group():
    """cp.async.commit_group: closes the calling thread's group of cp.async copies."""
    return _ffi.evaluate(_ffi.call("void", "tl.cp_async_commit", []), builder.span())


def ptx_wait_group(num):
    """cp.async.wait_group num: waits until at most `num` of the calling thread's committed groups are pending
    (their bytes have landed)."""
    n = _ffi.const_int(_const(num))
    if n is None or n < 0:
        raise TileLangTypeError(f"T.ptx_wait_group takes a constant count of groups (0 or more), got {num!r}")
    return _ffi.evaluate(_ffi.call("void", "tl.cp_async_wait", [_const(n)]), builder.span())


def cp_async_barrier_noinc(barrier):
    """cp.async.mbarrier.arrive.noinc: one arrival of each executing thread on the barrier once all of its
    earlier cp.async copies have landed, counted as one of the phase's expected arrivals."""
    from .builtin import _barrier_elem
    return _ffi.evaluate(_ffi.call("void", "tl.mbarrier_cp_async_arrive_noinc",
                                   [_barrier_elem(barrier, "T.cp_async_barrier_noinc")]), builder.span())
