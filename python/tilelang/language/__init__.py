"""The T namespace of the DSL: `import tilelang.language as T`."""
import builtins
import enum
import numbers

_bool = builtins.bool

from .. import _ffi
from ..errors import TileLangPerformanceWarning, TileLangSyntaxError, TileLangTypeError, TileLangUnsupportedError
from . import builder
from .ast import AttrSpec, DType, KernelSpec, LoopSpec, RegionSpec, TensorFactory, TensorSpec, dtype_str, region_of, simplify
from .expr import Expr, infinity, nan
from .expr import const as _const
from .parser import prim_func, parse_source  # noqa: F401

Buffer = TensorFactory()
Tensor = TensorFactory()


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
PrimFunc = _ffi.PrimFunc

# ---- data types ------------------------------------------------------------------------------
_DTYPES = ["float16", "bfloat16", "float32", "float64", "float8_e4m3fn", "float8_e5m2", "int4", "int8", "int16",
           "int32", "int64", "uint8", "uint16", "uint32", "uint64", "bool"]
for _d in _DTYPES:
    globals()[_d] = DType(_d)
float8_e4m3 = DType("float8_e4m3fn")
del _d


def dynamic(name, dtype="int32"):
    """A symbolic size, bound when the kernel is called: T.dynamic("m"). It is made outside the
    @T.prim_func (module level, a factory) and used in a parameter's shape, which a call binds; one made
    inside the body would be bound by nothing."""
    ctx = builder.current()
    if ctx is not None and ctx.in_prim_func_body:
        raise TileLangSyntaxError(
            f"T.dynamic({name!r}) inside a @T.prim_func body: nothing binds a size made here. Create it outside "
            f"the function (`{name} = T.dynamic({name!r})` at module level or in the factory) and use it in a "
            "parameter's shape, e.g. `A: T.Tensor((" + str(name) + ", 64), T.float32)`")
    return _ffi.var(name, dtype_str(dtype))


symbolic = dynamic


# ---- launch and allocation ---------------------------------------------------------------------
def Kernel(*grid, threads=128, prelude=None, is_cpu=False):
    if not grid:
        grid = (1,)  # TileLang's T.Kernel(threads=...) with no grid: one block
    if len(grid) > 3:
        raise TileLangSyntaxError(f"T.Kernel takes at most 3 grid dimensions, got {len(grid)}")
    for g in grid:
        if isinstance(g, int) and g <= 0:
            raise TileLangSyntaxError(f"grid dimension must be positive, got {g}")
        if not isinstance(g, (int, Expr)):
            raise TileLangTypeError(f"grid dimension must be an integer expression, not {type(g).__name__}")
    ths = threads if isinstance(threads, (list, tuple)) else [threads]
    if not 1 <= len(ths) <= 3:
        raise TileLangSyntaxError("threads= takes an int or a list of at most 3 ints")
    for t in ths:
        if not isinstance(t, int) or t <= 0:
            raise TileLangSyntaxError(f"threads= must be positive compile-time integers, got {t!r}")
    if prelude is not None:
        raise TileLangUnsupportedError("T.Kernel(prelude=...): source text injected into the generated code is not "
                                       "supported (the compiler writes all of the kernel's code)")
    if is_cpu:
        _hint_not_implemented("T.Kernel", ["is_cpu"], "the target decides where a kernel runs; compile it with "
                              "target='cpu' to run it on the CPU")
    total = 1
    for t in ths:
        total *= t
    if total > 1024:
        raise TileLangSyntaxError(f"a block may have at most 1024 threads, T.Kernel asks for {total}")
    return KernelSpec([_const(g) for g in grid], [_const(t) for t in ths])


def _alloc(shape, dtype, scope, what, data=None, byte_offset=0):
    ctx = builder.require_context(what)
    if not ctx.kernels:
        raise TileLangSyntaxError(f"{what} must be called inside a `with T.Kernel(...)` block")
    if isinstance(shape, (int, Expr)):
        shape = (shape,)
    dims = []
    for d in shape:
        v = _ffi.const_int(d) if isinstance(d, Expr) else d
        if not isinstance(v, int):
            raise TileLangTypeError(f"the shape of {what} must be compile-time constants, but dimension "
                                    f"`{d}` is only known at run time")
        if v <= 0:
            raise TileLangTypeError(f"the shape of {what} must be positive, got {v}")
        dims.append(_const(v))
    name = ctx.pending_name or scope.split(".")[0] + "_buf"
    if data is not None and not isinstance(data, _ffi.Buffer):
        raise TileLangTypeError(f"{what}(data=...) takes the buffer whose storage this one views")
    buf = _ffi.buffer(name, dtype_str(dtype), dims, scope, ctx.span, data, int(byte_offset))
    ctx.kernels[-1].allocs.append(buf)
    return buf


def _check_scope(scope, allowed, what):
    """A scope argument we accept must be one we implement (never silently ignored)."""
    if scope not in allowed:
        raise TileLangTypeError(f"{what}: unknown or unsupported scope {scope!r}; use one of "
                                + ", ".join(repr(a) for a in allowed))


def alloc_shared(shape, dtype, scope="shared.dyn", data=None, byte_offset=0):
    """A shared-memory tile. `data=`/`byte_offset=` make it a view of another shared buffer's bytes
    (the form PlanSharedMemory produces; printed IR re-parses through it)."""
    _check_scope(scope, ("shared.dyn", "shared"), "T.alloc_shared")
    return _alloc(shape, dtype, "shared", "T.alloc_shared", data, byte_offset)


def alloc_fragment(shape, dtype, scope="local.fragment"):
    _check_scope(scope, ("local.fragment",), "T.alloc_fragment")
    return _alloc(shape, dtype, "local.fragment", "T.alloc_fragment")


def alloc_local(shape, dtype, scope="local"):
    _check_scope(scope, ("local",), "T.alloc_local")
    return _alloc(shape, dtype, "local", "T.alloc_local")


def alloc_var(dtype, init=None, scope="local.var"):
    _check_scope(scope, ("local.var", "local"), "T.alloc_var")
    buf = _alloc((1,), dtype, "local.var", "T.alloc_var")
    if init is not None:
        builder.current().kernels[-1].var_inits.append((buf, _const(init, buf.dtype) if not isinstance(init, Expr)
                                                        else _ffi.cast(buf.dtype, init)))
    return buf


# ---- Hopper mbarriers (docs/hopper.md) ------------------------------------------------------------------
def alloc_barrier(arrive_count):
    """mbarriers in shared memory, one per arrive count (an int or a list): `bars = T.alloc_barrier([128, 1])`.
    Each is initialised with its count at the start of the kernel (by one thread, before any use)."""
    counts = list(arrive_count) if isinstance(arrive_count, (list, tuple)) else [arrive_count]
    for c in counts:
        v = _ffi.const_int(c) if isinstance(c, Expr) else c
        if not isinstance(v, int) or not 1 <= v <= (1 << 20) - 1:
            raise TileLangTypeError(f"T.alloc_barrier arrive counts are constants from 1 to 2^20 - 1, got {c!r}")
    if not counts:
        raise TileLangTypeError("T.alloc_barrier needs at least one arrive count")
    buf = _alloc((len(counts),), "uint64", "shared", "T.alloc_barrier")
    frame = builder.current().kernels[-1]
    for i, c in enumerate(counts):
        init = _ffi.call("void", "tl.mbarrier_init", [_ffi.load(buf, [_const(i)]), _const(int(c))])
        frame.prologue.append(_ffi.evaluate(init, builder.span()))
    return buf


def _barrier_elem(bar, what):
    if isinstance(bar, _ffi.Buffer):  # T.alloc_barrier(c) of one barrier stands for it; a list does not
        n = _ffi.const_int(bar.shape[0]) if len(bar.shape) == 1 else None
        if n is not None and n > 1 and bar.dtype == "uint64" and bar.scope == "shared":
            raise TileLangTypeError(f"{what} takes one barrier, but '{bar.name}' is the list of {n} barriers from "
                                    f"T.alloc_barrier; pick one: {bar.name}[i]")
        bar = _ffi.load(bar, [_const(0)])
    b = bar.buffer if isinstance(bar, _ffi.BufferLoad) else None
    if b is None or b.dtype != "uint64" or b.scope != "shared":
        raise TileLangTypeError(f"{what} takes a barrier from T.alloc_barrier (e.g. bars[0])")
    return bar


def _barrier_call(op, args):
    return _ffi.evaluate(_ffi.call("void", op, args), builder.span())


def mbarrier_arrive(bar):
    """Every executing thread arrives once on the barrier (mbarrier.arrive)."""
    return _barrier_call("tl.mbarrier_arrive", [_barrier_elem(bar, "T.mbarrier_arrive")])


def mbarrier_expect_tx(bar, nbytes):
    """Adds nbytes to the barrier's expected transaction count (mbarrier.expect_tx)."""
    return _barrier_call("tl.mbarrier_expect_tx", [_barrier_elem(bar, "T.mbarrier_expect_tx"), _const(nbytes)])


def mbarrier_wait_parity(bar, parity):
    """Waits until the barrier's phase with this parity has completed (mbarrier.try_wait.parity)."""
    v = _ffi.const_int(parity) if isinstance(parity, Expr) else parity
    if isinstance(parity, Expr) and v is None:
        if not parity.dtype.startswith(("int", "uint", "bool")):
            raise TileLangTypeError(f"T.mbarrier_wait_parity: the parity is an integer (0 or 1), not a {parity.dtype} "
                                    "value")
        p = parity
    elif isinstance(v, numbers.Integral) and v in (0, 1):  # bool too
        p = _const(int(v))
    else:
        raise TileLangTypeError(f"T.mbarrier_wait_parity: the parity of a phase is 0 or 1 (PTX mbarrier.try_wait."
                                f"parity), got {parity!r}; for a phase counter k pass k % 2")
    return _barrier_call("tl.mbarrier_wait_parity", [_barrier_elem(bar, "T.mbarrier_wait_parity"), p])


barrier_arrive = mbarrier_arrive
barrier_wait = mbarrier_wait_parity


def fence_proxy_async():
    """Orders this thread's generic-proxy shared-memory writes before later async-proxy (TMA, wgmma) reads."""
    return _barrier_call("tl.fence_proxy_async", [])


def set_max_nreg(reg_count, is_inc):
    """setmaxnreg (sm_90a): the executing warp group raises (is_inc=1) or lowers (0) its per-thread register
    budget to reg_count (24..256, a multiple of 8). Warp-group collective."""
    n = _ffi.const_int(reg_count) if isinstance(reg_count, Expr) else reg_count
    if not isinstance(n, int) or not 24 <= n <= 256 or n % 8:
        raise TileLangTypeError(f"T.set_max_nreg: reg_count is a constant from 24 to 256, a multiple of 8; got {reg_count!r}")
    inc = _ffi.const_int(is_inc) if isinstance(is_inc, Expr) else is_inc
    if not isinstance(inc, numbers.Integral) or inc not in (0, 1):  # bool too
        raise TileLangTypeError(f"T.set_max_nreg: is_inc is 1 (raise the budget: setmaxnreg.inc) or 0 (lower it: "
                                f".dec), got {is_inc!r}")
    return _barrier_call("tl.set_max_nreg", [_const(n), _const(int(inc))])



def alloc_buffer(shape, dtype, scope="shared"):
    _check_scope(scope, ("shared", "shared.dyn", "local.fragment", "local"), "T.alloc_buffer")
    if scope.startswith("shared"):
        return alloc_shared(shape, dtype, scope)
    if scope == "local.fragment":
        return alloc_fragment(shape, dtype)
    return alloc_local(shape, dtype)


# ---- loops ---------------------------------------------------------------------------------------
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


def Parallel(*extents, coalesced_width=None, annotations=None):
    if not extents:
        raise TileLangSyntaxError("T.Parallel needs at least one extent")
    ranges = []
    for e in extents:
        v = _ffi.const_int(e) if isinstance(e, Expr) else e
        if not isinstance(v, int):
            raise TileLangTypeError(f"T.Parallel extents must be compile-time constants, but `{e}` is only known "
                                    "at run time; loop over T.ceildiv(n, block) blocks and guard the tail instead")
        if v <= 0:
            raise TileLangTypeError(f"T.Parallel extents must be positive, got {v}")
        if v >= 2**31:
            raise TileLangTypeError(f"T.Parallel extent {v} does not fit the loop variable's type int32")
        ranges.append((_const(0), _const(v)))
    if coalesced_width is not None:
        _hint_not_implemented("T.Parallel", ["coalesced_width"], "vector widths are chosen by the compiler")
    return LoopSpec("parallel", ranges, _annotations(annotations, "T.Parallel"))


_MAX_STAGES = 32


def Pipelined(*args, num_stages=0, order=None, stage=None, sync=None, group=None):
    if not isinstance(num_stages, int) or num_stages < 0:
        raise TileLangSyntaxError(f"num_stages must be a non-negative compile-time int, got {num_stages!r}")
    if num_stages > _MAX_STAGES:  # every stage is a copy of the pipelined tiles; fail fast on absurd depths
        raise TileLangSyntaxError(f"num_stages={num_stages} is more than the {_MAX_STAGES} stages a pipeline may have")
    mn, ext = _range_args(args, "T.Pipelined")
    custom = [k for k, v in (("order", order), ("stage", stage), ("sync", sync), ("group", group)) if v is not None]
    if custom:
        _hint_not_implemented("T.Pipelined", custom, "user-given pipeline schedules are not implemented; the "
                              "compiler plans the stages (num_stages is honoured)")
    return LoopSpec("pipelined", [(mn, ext)], {"num_stages": _const(num_stages)})


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
    return {k: _const(v) for k, v in ann.items()}


# ---- IR-level forms (what the printer writes for lowered IR, so every pass's output re-parses) ----
def call_intrin(dtype, op, *args):
    """A call of a builtin of the lower IR with its result type: T.call_intrin("int32", "tl.thread_idx")."""
    dt = dtype if dtype in ("void", "handle") else dtype_str(dtype)
    return _ffi.call(dt, op, [_ffi.string_imm(a) if isinstance(a, str) else _const(a) for a in args])


def attr(node, key, value):
    """`with T.attr(buffer_or_None, "key", value):` records a fact one pass leaves for the next
    (docs/thread_ir.md lists the keys)."""
    if node is not None and not isinstance(node, _ffi.Buffer):
        raise TileLangTypeError("T.attr takes a buffer or None as its node")
    if not isinstance(key, str):
        raise TileLangTypeError("T.attr takes a string key")
    return AttrSpec(node, key, _ffi.string_imm(value) if isinstance(value, str) else _const(value))


def grid(*extents):
    return LoopSpec("serial", [(_const(0), _const(e)) for e in extents])


# ---- tile operations -----------------------------------------------------------------------------
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
    """A corner A[i, j]: the tile's extents come from the other operand, aligned at the end."""
    rank = len(mins)
    ext = [_const(1)] * rank
    other = _non_unit(other_extents) or list(other_extents)
    if len(other) > rank:
        raise TileLangTypeError(f"cannot copy a {len(other)}-d tile at a corner of the {rank}-d buffer '{buf.name}'")
    for i, e in enumerate(other):
        ext[rank - len(other) + i] = e
    return ext


def copy(src, dst, disable_tma=False, coalesced_width=None, eviction_policy=None, loop_layout=None):
    sb, smin, sext, spoint = region_of(src, "T.copy source")
    db, dmin, dext, dpoint = region_of(dst, "T.copy destination")
    hints = [k for k, v in (("coalesced_width", coalesced_width), ("eviction_policy", eviction_policy),
                            ("loop_layout", loop_layout)) if v is not None]
    if hints:
        _hint_not_implemented("T.copy", hints, "the copy's vector width, cache policy and thread mapping are "
                              "chosen by the compiler")
    if spoint and dpoint:
        raise TileLangTypeError("T.copy needs at least one side to be a buffer or a slice; both are single elements")
    if spoint:
        sext = _point_region(sb, smin, dext)
    if dpoint:
        dext = _point_region(db, dmin, sext)
    return _ffi.tile_op("copy", [_region(sb, smin, sext), _region(db, dmin, dext)], [],
                        {"disable_tma": int(_bool(disable_tma))}, builder.span())


def tma_copy(src, dst, barrier=None, eviction_policy=None, annotations=None):
    """TileLang's explicit TMA load (sm_90+): one thread arrives on `barrier` with the tile's bytes as the
    phase's transaction count (mbarrier.arrive.expect_tx) and issues the cp.async.bulk.tensor copies; nothing
    waits. Allocate the barrier with an arrive count of 1 (`T.alloc_barrier(1)`) and wait with
    `T.mbarrier_wait_parity(bar, phase)` before reading `dst`. Global -> shared only (no TMA stores)."""
    if barrier is None:
        raise TileLangTypeError("T.tma_copy(src, dst, barrier=bars[i]) needs the mbarrier its load completes on")
    if eviction_policy is not None or annotations:
        raise TileLangUnsupportedError("T.tma_copy: eviction_policy and annotations are not implemented")
    sb, smin, sext, spoint = region_of(src, "T.tma_copy source")
    db, dmin, dext, dpoint = region_of(dst, "T.tma_copy destination")
    if spoint and dpoint:
        raise TileLangTypeError("T.tma_copy needs at least one side to be a buffer or a slice")
    if spoint:
        sext = _point_region(sb, smin, dext)
    if dpoint:
        dext = _point_region(db, dmin, sext)
    bar = _barrier_elem(barrier, "T.tma_copy")
    return _ffi.tile_op("tma_copy", [_region(sb, smin, sext), _region(db, dmin, dext)], [bar], {}, builder.span())


class GemmWarpPolicy(enum.IntEnum):
    Square = 0
    FullRow = 1
    FullCol = 2


def _int_arg(value, what):
    """A compile-time integer argument: a Python int or a constant integer expression (never a float
    truncated into one)."""
    v = _ffi.const_int(value) if isinstance(value, Expr) else value
    if isinstance(v, _bool) or not isinstance(v, numbers.Integral):  # NumPy integers are Integral
        raise TileLangTypeError(f"{what} is a constant integer, got {value!r}")
    return int(v)


def gemm(A, B, C, transpose_A=False, transpose_B=False, policy=GemmWarpPolicy.Square, clear_accum=False, k_pack=1,
         wg_wait=0, _require_wgmma=False):
    wg_wait = _int_arg(wg_wait, "T.gemm wg_wait")
    ra = region_of(A, "T.gemm operand A")
    rb = region_of(B, "T.gemm operand B")
    rc = region_of(C, "T.gemm operand C")
    for (buf, _, _, point), nm in zip((ra, rb, rc), "ABC"):
        if point:
            raise TileLangTypeError(f"T.gemm operand {nm} must be a tile, not a single element of '{buf.name}'")
    return _ffi.tile_op("gemm", [_region(*ra[:3]), _region(*rb[:3]), _region(*rc[:3])], [],
                        {"transpose_A": int(_bool(transpose_A)), "transpose_B": int(_bool(transpose_B)),
                         "policy": int(policy), "clear_accum": int(_bool(clear_accum)), "k_pack": int(k_pack),
                         "wg_wait": int(wg_wait), "require_wgmma": int(_require_wgmma)},
                        builder.span())


def wgmma_gemm(A, B, C, transpose_A=False, transpose_B=False, policy=GemmWarpPolicy.Square, clear_accum=False,
               k_pack=1, wg_wait=0):
    """T.gemm that must run on wgmma (sm_90a): a compile error, not a fallback, when it cannot."""
    return gemm(A, B, C, transpose_A, transpose_B, policy, clear_accum, k_pack, wg_wait, _require_wgmma=True)


def wait_wgmma(n=0):
    """Waits until at most n of the warp group's committed wgmma groups are pending (after
    T.gemm(..., wg_wait=-1)); nothing on targets whose gemm is synchronous."""
    return _ffi.tile_op("wait_wgmma", [], [], {"n": _int_arg(n, "T.wait_wgmma(n)")}, builder.span())


def fill(buffer, value):
    b, mins, exts, point = region_of(buffer, "T.fill destination")
    v = value if isinstance(value, Expr) else _const(value, b.dtype)
    return _ffi.tile_op("fill", [_region(b, mins, exts)], [v], {}, builder.span())


def clear(buffer):
    b = region_of(buffer, "T.clear destination")[0]
    return fill(buffer, 0.0 if ("float" in b.dtype) else 0)


def _reduce(kind):
    def f(src, dst, dim=-1, clear=True):
        sb, smin, sext, _ = region_of(src, f"T.reduce_{kind} source")
        db, dmin, dext, _ = region_of(dst, f"T.reduce_{kind} destination")
        d = _normalize_dim(dim, len(sext), f"T.reduce_{kind}", sb)  # shapes are checked in C++ (src/op)
        return _ffi.tile_op(f"reduce_{kind}", [_region(sb, smin, sext), _region(db, dmin, dext)], [],
                            {"dim": d, "clear": int(_bool(clear))}, builder.span())

    f.__name__ = f"reduce_{kind}"
    return f


reduce_sum = _reduce("sum")
reduce_max = _reduce("max")
reduce_min = _reduce("min")
reduce_abssum = _reduce("abssum")
reduce_absmax = _reduce("absmax")


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


def cumsum(src, dst=None, dim=0, reverse=False):
    sb, smin, sext, _ = region_of(src, "T.cumsum source")
    if dst is None:
        dst = src
    db, dmin, dext, _ = region_of(dst, "T.cumsum destination")
    d = _normalize_dim(dim, len(sext), "T.cumsum", sb)
    return _ffi.tile_op("cumsum", [_region(sb, smin, sext), _region(db, dmin, dext)], [],
                        {"dim": d, "reverse": int(_bool(reverse))}, builder.span())


# ---- expressions ------------------------------------------------------------------------------------
def _unary_float(name):
    def f(x):
        x = _const(x)
        if "float" not in x.dtype:
            x = _ffi.cast("float32", x)
        return _ffi.call(x.dtype, name, [x])

    f.__name__ = name
    return f


for _n in ["exp", "exp2", "log", "log2", "log10", "sqrt", "rsqrt", "tanh", "sigmoid", "erf", "floor", "ceil",
           "round", "sin", "cos", "trunc"]:
    globals()[_n] = _unary_float(_n)


def abs(x):  # noqa: A001
    x = _const(x)
    return _ffi.call(x.dtype, "abs", [x])


def pow(x, y):  # noqa: A001
    x, y = _const(x), _const(y)
    if "float" not in x.dtype:
        x = _ffi.cast("float32", x)
    return _ffi.call(x.dtype, "pow", [x, _ffi.cast(x.dtype, y) if y.dtype != x.dtype else y])


def max(a, b):  # noqa: A001
    return _ffi.binary("max", _const(a), _const(b))


def min(a, b):  # noqa: A001
    return _ffi.binary("min", _const(a), _const(b))


def if_then_else(cond, a, b):
    return _ffi.select(_const(cond), _const(a), _const(b))


def cast(x, dtype):
    return _ffi.cast(dtype_str(dtype), _const(x))


def ceildiv(a, b):
    if isinstance(a, int) and isinstance(b, int):
        return -(-a // b)
    return simplify((_const(a) + _const(b) - 1) // _const(b))


def floordiv(a, b):
    return _const(a) // _const(b)


def floormod(a, b):
    return _const(a) % _const(b)


def truncdiv(a, b):
    return _ffi.binary("div", _const(a), _const(b))


def truncmod(a, b):
    return _ffi.binary("mod", _const(a), _const(b))


def max_value(dtype):
    import numpy as np
    import ml_dtypes

    d = dtype_str(dtype)
    if "float" in d:
        info = ml_dtypes.finfo(d if d not in ("float16", "float32", "float64") else np.dtype(d))
        return _const(float(info.max), d)
    return _const(int(np.iinfo(d).max), d)


def min_value(dtype):
    import numpy as np
    import ml_dtypes

    d = dtype_str(dtype)
    if "float" in d:
        info = ml_dtypes.finfo(d if d not in ("float16", "float32", "float64") else np.dtype(d))
        return _const(-float(info.max), d)
    return _const(int(np.iinfo(d).min), d)


def print(obj, msg=""):  # noqa: A001
    """T.print(x): prints a value at run time (CPU target: to stdout)."""
    if isinstance(obj, Expr):
        return _ffi.evaluate(_ffi.call("int32", "print", [_ffi.string_imm(str(msg)), obj]), builder.span())
    raise TileLangTypeError("T.print takes a scalar expression")


def device_assert(cond, msg=""):
    return _ffi.evaluate(_ffi.call("int32", "device_assert", [_const(cond), _ffi.string_imm(str(msg))]),
                         builder.span())


def use_swizzle(panel_size=8, order="row", enable=True):
    """Block rasterisation for L2 reuse, as in TileLang: blocks are handed out panel by panel, a panel
    being `panel_size` rows of the grid (order="row") or columns (order="col"), and inside a panel one
    column (row) after another. The mapping is a bijection of the block indices (pass RasterizeBlocks)."""
    if not enable:
        return None
    if isinstance(panel_size, builtins.bool) or not isinstance(panel_size, builtins.int) or panel_size < 1:
        raise TileLangTypeError(f"T.use_swizzle(panel_size=...) takes a positive int, got {panel_size!r}")
    if order not in ("row", "col", "column"):
        raise TileLangTypeError(f"T.use_swizzle(order=...) is 'row' or 'col', got {order!r}")
    ctx = builder.current()
    if ctx is not None:
        sp = builder.span()
        ctx.attrs["tl.use_swizzle"] = f"panel={panel_size} order={order[:3]} at {sp[0]}:{sp[1]}" if sp else \
            f"panel={panel_size} order={order[:3]}"
    return None


def annotate_layout(layouts):
    """Explicit layouts for buffers, as {buffer: layout}, honoured by the GPU lowerings:
    - a shared tile with a T.Layout (logical index -> physical index, any rank): every access of the tile goes
      through it and the tile occupies its physical extent (padding included); copies stay 16-byte cp.async only
      where the layout keeps 16 bytes of a row together, TMA and wgmma (which read only their own swizzles) are
      not used for it (with a warning), and a T.gemm operand whose rows it breaks up is first copied into a tile
      of the compiler's layout;
    - tilelang.layout.make_swizzled_layout(buf): the compiler's own swizzle, whatever the target's is;
    - a fragment with a T.Fragment: layout inference starts from it, and an op needing another layout is a
      layout-conflict error naming this line.
    The CPU target has no layouts to choose: the annotation does not change its code (results never depend on
    a layout). Each layout is traced from its Python functions and checked over the whole tile here."""
    from ..layout import Layout, LayoutTraceError, _UserFragment, trace

    if not isinstance(layouts, dict):
        raise TileLangTypeError(f"T.annotate_layout takes a dict {{buffer: layout}}, got {type(layouts).__name__}")
    ctx = builder.require_context("T.annotate_layout")
    if not ctx.kernels:
        raise TileLangSyntaxError("T.annotate_layout must be called inside a `with T.Kernel(...)` block")
    frame = ctx.kernels[-1]
    sp = builder.span()
    for buf, layout in layouts.items():
        if not isinstance(buf, _ffi.Buffer):
            raise TileLangTypeError(f"T.annotate_layout: the keys are buffers, got {type(buf).__name__} {buf!r}")
        if layout is None:
            raise TileLangTypeError(f"T.annotate_layout: the layout of '{buf.name}' is None; pass a T.Layout, "
                                    "a T.Fragment or tilelang.layout.make_swizzled_layout(buffer)")
        if buf.scope == "shared":
            if not isinstance(layout, Layout):
                raise TileLangTypeError(f"T.annotate_layout: '{buf.name}' is a shared tile; it takes a T.Layout "
                                        f"(logical -> physical index), not a {type(layout).__name__}")
            if layout.compiler_swizzle or _layout_difference(buf, layout) is None:
                continue  # the compiler's own swizzle: nothing to change
        elif buf.scope == "local.fragment" or buf.scope == "fragment":
            if isinstance(layout, Layout) and not isinstance(layout, _UserFragment):
                raise TileLangTypeError(f"T.annotate_layout: '{buf.name}' is a fragment; it takes a T.Fragment "
                                        "(element -> thread, register), not a T.Layout")
            if not isinstance(layout, _UserFragment):
                value = layout.value(f"T.annotate_layout") if hasattr(layout, "value") else None
                if value is None:
                    raise TileLangTypeError(f"T.annotate_layout: the layout of fragment '{buf.name}' is a "
                                            f"{type(layout).__name__}, not a T.Fragment")
                frame.layouts.append((buf, value, sp))
                continue
        else:
            raise TileLangTypeError(f"T.annotate_layout: '{buf.name}' is a {buf.scope} buffer; layouts apply to "
                                    "shared tiles (T.alloc_shared) and fragments (T.alloc_fragment)")
        shape = [_ffi.const_int(d) for d in buf.shape]
        if any(d is None for d in shape):
            raise TileLangTypeError(f"T.annotate_layout: '{buf.name}' has a symbolic shape")
        if tuple(layout.shape) != tuple(shape):
            raise TileLangTypeError(f"T.annotate_layout: the layout given for '{buf.name}' is over shape "
                                    f"{tuple(layout.shape)}, but the buffer's shape is {tuple(shape)}")
        try:
            value = trace(layout, buf, sp)
        except LayoutTraceError as e:
            raise builder.error_at(sp, f"T.annotate_layout: the layout of '{buf.name}' cannot be compiled: {e}",
                                   TileLangTypeError) from None
        for prev, _, _ in frame.layouts:
            if prev.name == buf.name:
                raise TileLangTypeError(f"T.annotate_layout: '{buf.name}' already has a layout")
        frame.layouts.append((buf, value, sp))
    return None


def _layout_difference(buf, layout):
    """None when `layout` is, element for element, the XOR swizzle this compiler gives `buf` on sm_80; else why
    it is not."""
    shape = [_ffi.const_int(d) for d in buf.shape]
    if len(shape) != 2 or any(d is None for d in shape) or list(layout.shape) != shape:
        return f"the layout's shape {list(layout.shape)} is not the tile's constant 2-d shape {shape}"
    rows, cols = shape
    elem_bytes = DType(buf.dtype).itemsize
    for i in range(rows):
        for j in range(cols):
            off = _ffi.swizzled_offset(i, j, cols, elem_bytes)
            want = (off // cols, off % cols)
            try:
                got = layout.map_forward_index([i, j])
            except Exception:  # noqa: BLE001 - a layout of another rank: not the swizzle
                return "it is not the compiler's swizzle"
            if tuple(got) != want:
                return f"it maps [{i}, {j}] to {list(got)}; the compiler's swizzle puts it at {list(want)}"
    return None


# ---- TileLang compatibility (see compat.py and README.md "TileLang compatibility") -------------------
from .compat import (Cast, HOPPER_ONLY as _HOPPER_ONLY, Macro, access_ptr, alloc_global, assume, call_extern,  # noqa: E402,F401
                     c2d_im2col, clamp, disable_warp_group_reg_alloc, get_block_binding, get_block_bindings,
                     get_thread_binding, get_thread_bindings, im2col,
                     macro, make_tensor, ptr, reinterpret, reshape, sync_threads, thread_binding, view, ws,
                     FragmentBuffer, LocalBuffer, SharedBuffer,
                     WarpSpecialize)
from . import compat as _compat  # noqa: E402
from .bitwise import (bitwise_and, bitwise_not, bitwise_or, bitwise_xor, clz, dp4a, popcount,  # noqa: E402,F401
                      shift_left, shift_right)
from ..layout import Fragment, Layout  # noqa: E402,F401

for _n in _HOPPER_ONLY:
    globals()[_n] = _compat._hopper_only(_n)
del _n


def const(names, dtype="int32"):
    """M, N = T.const("M, N"): sizes of an eager @tilelang.jit function, bound from its tensor arguments'
    shapes when it is called (see tilelang/jit/eager.py)."""
    from ..jit.eager import const_

    return const_(names, dtype)


def empty(shape, dtype="float32"):
    """C = T.empty(shape, dtype): an output of an eager @tilelang.jit function, allocated on each call
    and returned by `return C`."""
    from ..jit.eager import empty as _empty

    return _empty(shape, dtype)


def annotate_pass_configs(configs):
    """Pass configs for an eager @tilelang.jit function, from inside its body (the decorator's
    pass_configs take precedence)."""
    ctx = builder.current()
    st = getattr(ctx, "eager", None) if ctx is not None else None
    if st is None:
        raise TileLangSyntaxError("T.annotate_pass_configs is supported in the body of an eager @tilelang.jit "
                                  "function; pass pass_configs= to tilelang.compile otherwise")
    if not isinstance(configs, dict):
        raise TileLangTypeError("T.annotate_pass_configs takes a dict")
    st.pass_configs.update(configs)


def __getattr__(name):
    # Names that would shadow Python builtins inside this module (float, int, ...) are served here.
    if name == "dtype":
        return DType  # T.dtype("float16") == T.float16; isinstance(T.float16, T.dtype)
    if name in _compat.DTYPE_ALIASES:
        return DType(_compat.DTYPE_ALIASES[name])
    if name in _compat.UNSUPPORTED_DTYPES:
        return _compat._Unsupported_DType(name, _compat.UNSUPPORTED_DTYPES[name])
    raise AttributeError(f"module 'tilelang.language' has no attribute '{name}'")


# x.astype(dtype), as on TileLang's (TVM's) expressions: a value conversion, like T.cast.
Expr.astype = lambda self, dtype: _ffi.cast(dtype_str(dtype), self)

# print(func) and func.script() show the function in the DSL, like TileLang's PrimFunc.
PrimFunc.__str__ = lambda self: _ffi.print_func(self)
PrimFunc.script = lambda self, *args, **kwargs: _ffi.print_func(self)
