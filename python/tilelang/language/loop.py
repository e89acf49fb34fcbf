"""Kernel loops: T.Parallel, T.Pipelined, T.serial (and `range`), T.unroll, T.vectorized, T.grid,
T.thread_binding and T.Persistent. Each returns a spec the parser turns into loops."""
import builtins

from .. import _ffi
from ..errors import TileLangSyntaxError, TileLangTypeError, TileLangUnsupportedError
from . import builder
from .ast import LoopSpec, simplify
from .expr import Expr
from .expr import const as _const
from .math_intrinsics import ceildiv
from .math_intrinsics import max  # noqa: A004 - T.max: the extent of a stepped loop is an IR max
from .utils import _bool, _hint_not_implemented


def _range_args(args, what):
    if len(args) == 1:
        start, stop = 0, args[0]
    elif len(args) == 2:
        start, stop = args
    else:
        raise TileLangSyntaxError(f"{what} takes (stop) or (start, stop)")
    for b in (start, stop):  # loop variables are int32
        v = _ffi.const_int(b) if isinstance(b, Expr) else b
        if isinstance(v, int) and not -2**31 <= v < 2**31:
            raise TileLangTypeError(f"{what}: the bound {v} does not fit the loop variable's type int32")
    return _const(start), simplify(_const(stop) - _const(start))


def Parallel(*extents, coalesced_width=None, loop_layout=None, prefer_async=None, annotations=None):
    if not extents:
        raise TileLangSyntaxError("T.Parallel needs at least one extent")
    ranges = []
    for e in extents:
        v = _ffi.const_int(e) if isinstance(e, Expr) else e
        if v is None and isinstance(e, Expr) and ("int" in e.dtype):
            # known at run time (a T.dynamic size, a value read from memory): on the GPU targets the nest
            # becomes a guarded partition over the block's threads (PartitionDynamicParallel)
            ranges.append((_const(0), e))
            continue
        if not isinstance(v, int) or isinstance(v, bool):
            raise TileLangTypeError(f"T.Parallel extents are integers, got `{e}`")
        if v <= 0:
            raise TileLangTypeError(f"T.Parallel extents must be positive, got {v}")
        if v >= 2**31:
            raise TileLangTypeError(f"T.Parallel extent {v} does not fit the loop variable's type int32")
        ranges.append((_const(0), _const(v)))
    if coalesced_width is not None:
        _hint_not_implemented("T.Parallel", ["coalesced_width"], "vector widths are chosen by the compiler")
    if loop_layout is not None:
        _hint_not_implemented("T.Parallel", ["loop_layout"], "the nest is partitioned by the layout the compiler "
                              "infers (T.annotate_layout on a fragment it writes steers it)")
    if prefer_async:  # TileLang's request for cp.async outside pipelines: the copies here stay synchronous
        _hint_not_implemented("T.Parallel", ["prefer_async"], "the element copies of this nest are synchronous "
                              "loads and stores (complete before the next statement), so the program's own "
                              "T.ptx_commit_group / T.ptx_wait_group around them wait for nothing")
    return LoopSpec("parallel", ranges, _annotations(annotations, "T.Parallel"))


def parallel(start, stop=None, *, annotations=None):
    """TVM's one-axis parallel loop as TileLang programs write it (`for i in T.parallel(n)`): T.Parallel(n);
    nested ones form a parallel nest. A start other than 0 is not supported."""
    if stop is not None:
        s = _ffi.const_int(start) if isinstance(start, Expr) else start
        if s != 0:
            raise TileLangUnsupportedError(f"T.parallel({start}, {stop}): a parallel loop from a start other than 0 "
                                           "is not supported; loop over the extent and add the start")
        start = stop
    return Parallel(start, annotations=annotations)


_MAX_STAGES = 32


def Pipelined(*args, num_stages=0, order=None, stage=None, sync=None, group=None, annotations=None):
    if not isinstance(num_stages, int) or num_stages < 0:
        raise TileLangSyntaxError(f"num_stages must be a non-negative compile-time int, got {num_stages!r}")
    if num_stages > _MAX_STAGES:  # every stage is a copy of the pipelined tiles; fail fast on absurd depths
        raise TileLangSyntaxError(f"num_stages={num_stages} is more than the {_MAX_STAGES} stages a pipeline may have")
    mn, ext = _range_args(args, "T.Pipelined")
    custom = [k for k, v in (("order", order), ("stage", stage), ("sync", sync), ("group", group)) if v is not None]
    if custom:
        _hint_not_implemented("T.Pipelined", custom, "user-given pipeline schedules are not implemented; the "
                              "compiler plans the stages (num_stages is honoured)")
    ann = _annotations(annotations, "T.Pipelined")
    ann["num_stages"] = _const(num_stages)
    return LoopSpec("pipelined", [(mn, ext)], ann)


def _stepped(kind, args, what, annotations=None):
    """A loop (start, stop, step): `extent` iterations of i, the user's variable is start + i * step."""
    start, stop, step = args
    if not isinstance(step, int) or isinstance(step, _bool) or step == 0:
        raise TileLangSyntaxError(f"the step of {what} must be a non-zero Python int, got {step!r}")
    if step > 0:
        ext = ceildiv(_const(stop) - _const(start), step)
    else:
        ext = ceildiv(_const(start) - _const(stop), -step)
    ext = simplify(max(_const(ext), 0)) if not isinstance(ext, int) else _const(builtins.max(ext, 0))
    return LoopSpec(kind, [(_const(0), ext)], _annotations(annotations, what), steps=[(_const(start), step)])


def serial(*args, annotations=None):
    if len(args) == 3:
        return _stepped("serial", args, "T.serial", annotations)
    mn, ext = _range_args(args, "T.serial")
    return LoopSpec("serial", [(mn, ext)], _annotations(annotations, "T.serial"))


Serial = serial  # TileLang's T.Serial


def unroll(*args, explicit=False, annotations=None):
    if explicit:
        _hint_not_implemented("T.unroll", ["explicit"], "the loop is unrolled by the backend's compiler")
    if len(args) == 3:
        return _stepped("unroll", args, "T.unroll", annotations)
    mn, ext = _range_args(args, "T.unroll")
    return LoopSpec("unroll", [(mn, ext)], _annotations(annotations, "T.unroll"))


def vectorized(*args, annotations=None):
    mn, ext = _range_args(args, "T.vectorized")
    return LoopSpec("vectorized", [(mn, ext)], _annotations(annotations, "T.vectorized"))


def _annotations(ann, what):
    """Loop annotations are kept on the loop (IR values; the lowering reads the keys it knows)."""
    if ann is None:
        return {}
    if not isinstance(ann, dict) or not all(isinstance(k, str) for k in ann):
        raise TileLangTypeError(f"{what}(annotations=...) takes a dict from strings to values")
    # a string value (the loop's T.WSID) is kept as a string
    return {k: _ffi.string_imm(v) if isinstance(v, str) else _const(v) for k, v in ann.items()}


def grid(*extents):
    return LoopSpec("serial", [(_const(0), _const(e)) for e in extents])


_THREAD_TAGS = {"threadIdx.x": 0, "threadIdx.y": 1, "threadIdx.z": 2}


def thread_binding(start, stop=None, thread="threadIdx.x", annotations=None):
    """`for tx in T.thread_binding(128, thread="threadIdx.x"):` -- the loop is the block's threads: its var is
    the thread index (start + index), and a loop shorter than the thread count runs on the first threads."""
    if stop is None:
        start, stop = 0, start
    if thread not in _THREAD_TAGS:
        raise TileLangTypeError(f"T.thread_binding: thread must be one of {sorted(_THREAD_TAGS)}, got {thread!r} "
                                "(block indices come from T.Kernel)")
    if annotations:
        raise TileLangTypeError("T.thread_binding: annotations are not supported")
    ctx = builder.require_context("T.thread_binding")
    dim = _THREAD_TAGS[thread]
    threads = ctx.kernels[-1].threads if ctx.kernels else []
    extent = _ffi.const_int(_ffi.simplify_expr(_const(stop) - _const(start)))
    if dim >= len(threads) or not isinstance(extent, int) or extent > threads[dim]:
        raise TileLangTypeError(f"T.thread_binding over {extent} {thread} threads, but the kernel has threads="
                                f"{tuple(threads)}")
    spec = LoopSpec("thread_binding", [(_const(start), _const(extent))])
    spec.thread_dim = dim
    spec.thread_count = threads[dim]
    return spec


class PersistentSpec:
    """T.Persistent(domain, wave_size, index, group_size=8): a persistent kernel's loop over the tiles of `domain`
    (a list of tile counts). Block `index` of `wave_size` blocks visits tile ids t = w * wave_size + index for
    w = 0, 1, ...; a tile id is read in the mixed radix (groups of the last dimension, the other dimensions, the
    position in the group), so consecutive ids walk down `group_size` columns of the last dimension before moving
    on (L2 reuse), as TileLang orders them. Ids past the padded domain and coordinates past the last extent are
    skipped. The parser builds the loop (parser_control.stmt_For)."""

    def __init__(self, domain, wave_size, index, group_size=8):
        if not isinstance(domain, (list, tuple)) or not domain:
            raise TileLangTypeError("T.Persistent(domain, wave_size, index): domain is a non-empty list of tile counts")
        self.domain = [_const(d) for d in domain]
        self.wave_size = _const(wave_size)
        self.index = _const(index)
        last = self.domain[-1]
        g = _const(group_size if group_size is not None else 1)
        lc, gc = _ffi.const_int(last), _ffi.const_int(g)
        if lc is not None and gc is not None:
            self.group = _const(builtins.max(1, builtins.min(gc, lc)))
        else:
            from .math_intrinsics import min as _min
            self.group = simplify(max(_min(g, last), 1))
        # the grouped domain: (groups of the last dimension, domain[:-1]..., position in the group)
        self.grouped = [ceildiv(last, self.group)] + self.domain[:-1] + [self.group]
        padded = self.grouped[0]
        for e in self.grouped[1:]:
            padded = padded * e
        self.padded = simplify(_const(padded))
        self.waves = simplify(_const(ceildiv(self.padded, self.wave_size)))

    def coordinates(self, w):
        """(tile coordinates, in-range condition) of wave w."""
        t = w * self.wave_size + self.index
        rem, idx = t, [None] * len(self.grouped)
        for i in range(len(self.grouped) - 1, 0, -1):
            idx[i] = rem % self.grouped[i]
            rem = rem // self.grouped[i]
        idx[0] = rem
        coords = [simplify(_const(e)) for e in idx[1:-1]] + [simplify(_const(idx[0] * self.group + idx[-1]))]
        ok = _ffi.binary("and", _ffi.binary("lt", _const(t), self.padded),
                         _ffi.binary("lt", coords[-1], self.domain[-1]))
        return coords, ok


def Persistent(domain, wave_size, index, group_size=8):
    return PersistentSpec(domain, wave_size, index, group_size)
