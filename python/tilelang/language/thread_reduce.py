"""TVM's low-level cross-thread reduction as TileLang programs write it:

    with T.attr(T.comm_reducer(lambda x, y: x + y, [T.cast(0, acc)]), "reduce_scope",
                T.reinterpret(T.uint64(0), dtype="handle")):
        T.evaluate(T.tvm_thread_allreduce(T.uint32(1), value, True, result[0], tk, dtype="handle"))

Every thread contributes `value` (the reducer's identity where the condition is false); each thread of a
group of threads that differ only along the listed thread axes gets the group's combination in `result`.
Lowered in the front end to a shared-memory exchange every backend runs: one slot per thread, the
barrier the compiler inserts for the shared write, and a combination in thread order (so the result is
the same on every backend and in every thread of a group)."""
from .. import _ffi
from ..errors import TileLangSyntaxError, TileLangTypeError, TileLangUnsupportedError
from . import builder
from .expr import Expr
from .expr import const as _const


class CommReducer:
    """T.comm_reducer(combiner, identities): a commutative reduction of one value (combiner(x, y))."""

    def __init__(self, combiner, identity):
        if not callable(combiner):
            raise TileLangTypeError("T.comm_reducer takes a combining function (lambda x, y: ...) first")
        ids = list(identity) if isinstance(identity, (list, tuple)) else [identity]
        if len(ids) != 1:
            raise TileLangUnsupportedError(f"T.comm_reducer over {len(ids)} values at once: only single-value "
                                           "reductions (one identity) are supported")
        self.combiner = combiner
        self.identity = _const(ids[0])


def comm_reducer(combiner, identity, span=None):
    return CommReducer(combiner, identity)


class NullHandle:
    """T.reinterpret(T.uint64(0), dtype="handle"): the placeholder value of T.attr(..., "reduce_scope", ...)."""


NULL_HANDLE = NullHandle()


class ReduceScopeSpec:
    """What T.attr(reducer, "reduce_scope", ...) returns: the parser parses its body with the reducer current."""

    def __init__(self, reducer):
        self.reducer = reducer


def _thread_axis(e, threads, lets):
    """Which thread axis (0, 1, 2) the expression `e` is: T.get_thread_binding(d) or a name bound to it."""
    from .kernel import get_thread_binding

    for _ in range(4):
        for d in range(len(threads)):
            if _ffi.structural_equal_expr(e, get_thread_binding(d)):
                return d
        if len(threads) == 1 and _ffi.structural_equal_expr(e, _ffi.call("int32", "tl.thread_idx", [])):
            return 0
        nxt = None
        if isinstance(e, _ffi.Var):
            for var, val in reversed(lets):
                if isinstance(var, _ffi.Var) and _ffi.structural_equal_expr(var, e):
                    nxt = val
                    break
        if nxt is None:
            break
        e = nxt
    raise TileLangTypeError(f"T.tvm_thread_allreduce reduces over thread axes: pass T.get_thread_binding(d) (or "
                            f"a name bound to it), got {e}")


def tvm_thread_allreduce(*args, dtype="handle"):
    """T.tvm_thread_allreduce(count, value, cond, result_elem, *thread_axes): see the module doc."""
    ctx = builder.require_context("T.tvm_thread_allreduce")
    scope = getattr(ctx, "reduce_scope", None)
    if scope is None:
        raise TileLangSyntaxError('T.tvm_thread_allreduce goes inside `with T.attr(T.comm_reducer(...), '
                                  '"reduce_scope", ...):`, which gives its combining function')
    reducer, lets = scope
    if len(args) < 5:
        raise TileLangTypeError("T.tvm_thread_allreduce(count, value, cond, result, *thread_axes) needs at least "
                                "one thread axis to reduce over")
    count, value, cond, result = args[0], args[1], args[2], args[3]
    axes_e = args[4:]
    n = _ffi.const_int(_const(count))
    if n != 1:
        raise TileLangUnsupportedError(f"T.tvm_thread_allreduce of {count} values at once: only one value is "
                                       "supported")
    if not isinstance(result, _ffi.BufferLoad) or result.buffer.scope not in ("local", "local.var"):
        raise TileLangTypeError("T.tvm_thread_allreduce writes its result into an element of a T.alloc_local "
                                "buffer (e.g. C_reduced[0])")
    threads = ctx.kernels[-1].threads
    if not threads or any(not isinstance(t, int) for t in threads):
        raise TileLangTypeError("T.tvm_thread_allreduce needs T.Kernel(threads=...) with constant thread counts")
    axes = sorted({_thread_axis(_const(a), threads, lets) for a in axes_e})
    v = _const(value)
    out_dt = result.buffer.dtype
    if v.dtype != out_dt:
        v = _ffi.cast(out_dt, v)
    ident = reducer.identity if reducer.identity.dtype == out_dt else _ffi.cast(out_dt, reducer.identity)
    c = _const(cond)
    if _ffi.const_int(c) != 1:
        v = _ffi.select(c if c.dtype == "bool" else c != _const(0), v, ident)

    from .allocate import _alloc
    from .kernel import get_thread_binding

    total = 1
    for t in threads:
        total *= t
    saved = ctx.pending_name
    ctx.pending_name = "red_buf"
    try:
        slots = _alloc((total,), out_dt, "shared", "T.tvm_thread_allreduce")
    finally:
        ctx.pending_name = saved
    sp = builder.span()
    tid = _ffi.call("int32", "tl.thread_idx", [])
    stmts = [_ffi.store(slots, v, [tid], sp)]
    # The partner of step r: this thread's coordinates with the reduced axes replaced by r's digits.
    coords = [get_thread_binding(d) for d in range(len(threads))]
    extent = 1
    for d in axes:
        extent *= threads[d]
    r = _ffi.var("red_r", "int32")
    digits, rest = {}, r
    for i, d in enumerate(axes):
        digits[d] = rest if i == len(axes) - 1 else _ffi.binary("floormod", rest, _const(threads[d]))
        rest = _ffi.binary("floordiv", rest, _const(threads[d]))
    partner, stride = _const(0), 1
    for d in range(len(threads)):
        partner = partner + (digits[d] if d in digits else coords[d]) * _const(stride)
        stride *= threads[d]
    acc = result.buffer
    acc_idx = list(result.indices)
    stmts.append(_ffi.store(acc, ident, acc_idx, sp))
    combined = reducer.combiner(_ffi.load(acc, acc_idx), _ffi.load(slots, [partner]))
    if not isinstance(combined, Expr):
        combined = _const(combined)
    if combined.dtype != out_dt:
        combined = _ffi.cast(out_dt, combined)
    body = _ffi.store(acc, combined, acc_idx, sp)
    stmts.append(_ffi.for_(r, _const(0), _const(extent), "serial", body, {}, sp))
    return _ffi.seq(stmts, sp)
