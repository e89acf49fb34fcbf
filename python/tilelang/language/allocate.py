"""On-chip and workspace allocations: T.alloc_shared / T.alloc_fragment / T.alloc_local / T.alloc_var /
T.alloc_buffer, T.alloc_barrier (Hopper mbarriers, docs/hopper.md) and T.alloc_global."""
from .. import _ffi
from ..errors import TileLangSyntaxError, TileLangTypeError
from . import builder
from .dtypes import dtype_str
from .expr import Expr
from .expr import const as _const
from .utils import _dims


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
    """A register tile spread over the block's threads. As in TileLang, `scope` is the buffer's storage: a
    shared scope ("shared" / "shared.dyn", which TileLang's cumsum example passes) allocates a shared tile."""
    _check_scope(scope, ("local.fragment", "shared", "shared.dyn"), "T.alloc_fragment")
    if scope != "local.fragment":
        return _alloc(shape, dtype, "shared", "T.alloc_fragment")
    return _alloc(shape, dtype, "local.fragment", "T.alloc_fragment")


def _placed(buf, position):
    """Records where TileLang-Ascend's explicit allocations place a tile: the attribute "ascend.position" on the
    kernel body. On Ascend the lowering puts the tile there (docs/ascend.md); other targets keep the shared /
    fragment scope the tile was allocated with."""
    ctx = builder.current()
    ctx.kernels[-1].positions.append((buf, position, ctx.span))
    return buf


def alloc_L1(shape, dtype):
    """An Ascend L1 tile (the cube's operand buffer); shared memory on other targets."""
    return _placed(_alloc(shape, dtype, "shared", "T.alloc_L1"), "L1")


def alloc_L0A(shape, dtype):
    """An Ascend L0A tile (the cube's A operand, filled from an L1 tile with T.copy); shared memory on other
    targets."""
    return _placed(_alloc(shape, dtype, "shared", "T.alloc_L0A"), "L0A")


def alloc_L0B(shape, dtype):
    """An Ascend L0B tile (the cube's B operand, filled from an L1 tile with T.copy); shared memory on other
    targets."""
    return _placed(_alloc(shape, dtype, "shared", "T.alloc_L0B"), "L0B")


def alloc_L0C(shape, dtype):
    """An Ascend L0C tile (the cube's accumulator); a fragment on other targets."""
    return _placed(_alloc(shape, dtype, "local.fragment", "T.alloc_L0C"), "L0C")


def alloc_ub(shape, dtype):
    """An Ascend Unified-Buffer tile (the vector unit's memory); shared memory on other targets."""
    return _placed(_alloc(shape, dtype, "shared", "T.alloc_ub"), "UB")


def alloc_local(shape, dtype, scope="local"):
    _check_scope(scope, ("local",), "T.alloc_local")
    return _alloc(shape, dtype, "local", "T.alloc_local")


def alloc_tmem(shape, dtype):
    """Blackwell tensor memory (the tcgen05 family: sm_100a / sm_103a / sm_110a): a [128, N] accumulator of
    T.tcgen05_gemm, read back with T.copy into a fragment. The compiler allocates its columns (N 32-bit columns,
    rounded up to a power of 2, at least 32) when the kernel starts and frees them when it ends
    (docs/blackwell.md). Other targets refuse it at compile time."""
    return _alloc(shape, dtype, "shared.tmem", "T.alloc_tmem")


def alloc_var(dtype, init=None, scope="local.var"):
    """A per-thread scalar variable. `init`: a constant is its value from the kernel's start; an expression (a
    let's value, T.atomic_load(...)) is evaluated and stored where the call stands, as in TileLang."""
    _check_scope(scope, ("local.var", "local"), "T.alloc_var")
    buf = _alloc((1,), dtype, "local.var", "T.alloc_var")
    if init is not None:
        if isinstance(init, Expr) and not isinstance(init, _ffi.IntImm | _ffi.FloatImm):
            builder.emit_before([_ffi.store(buf, _ffi.cast(buf.dtype, init), [_const(0)], builder.span())])
        else:
            builder.current().kernels[-1].var_inits.append((buf, _const(init, buf.dtype) if not isinstance(init, Expr)
                                                            else _ffi.cast(buf.dtype, init)))
    return buf


def alloc_buffer(shape, dtype, scope=None):
    """T.alloc_buffer(shape, dtype, scope): TVM's allocation. Outside `with T.Kernel` (or with scope "global")
    a global workspace (as T.alloc_global); inside a kernel shared memory unless scope says otherwise."""
    ctx = builder.current()
    if scope == "global" or (scope is None and ctx is not None and not ctx.kernels):
        return alloc_global(shape, dtype)
    scope = scope or "shared"
    _check_scope(scope, ("shared", "shared.dyn", "local.fragment", "local"), "T.alloc_buffer")
    if scope.startswith("shared"):
        return alloc_shared(shape, dtype, scope)
    if scope == "local.fragment":
        return alloc_fragment(shape, dtype)
    return alloc_local(shape, dtype)


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


def alloc_cluster_barrier(arrive_count):
    """mbarriers that other blocks of the thread-block cluster may arrive on (T.mbarrier_arrive(bar, cta_id)):
    as T.alloc_barrier, and after the inits every block of the cluster meets at a cluster barrier, so no block
    arrives on a peer's barrier before the peer initialised it (T.ClusterKernel; docs/clusters.md)."""
    buf = alloc_barrier(arrive_count)
    builder.current().kernels[-1].cluster_barriers.append(buf)
    return buf


def alloc_global(shape, dtype, scope="global"):
    """T.alloc_global(shape, dtype): global memory shared by all blocks of one launch (a workspace); written
    before the kernels of a function, shared by all of them. The compiler turns it into a hidden trailing
    parameter; each call of the kernel allocates it zero-filled (HoistWorkspaces,
    src/transform/hoist_workspaces.h). Sizes may use the kernel's symbolic sizes."""
    if scope != "global":
        raise TileLangTypeError(f"T.alloc_global: scope must be 'global', got {scope!r}")
    ctx = builder.require_context("T.alloc_global")
    dims = _dims(shape, "T.alloc_global")
    name = ctx.pending_name or "workspace"
    buf = _ffi.buffer(name, dtype_str(dtype), dims, "global", ctx.span, None, 0)
    if ctx.kernels:
        ctx.kernels[-1].allocs.append(buf)
    else:  # before the kernels: one workspace shared by every kernel of the function (see parser_control)
        ctx.function_workspaces.append(buf)
    return buf


def alloc_reducer(shape, dtype, op="sum", replication=None):
    """TileLang's reduction buffer: many threads add into its elements (`R[i] += v`, in T.Parallel loops
    whose other axes are split over threads), and T.finalize_reducer(R) makes the totals readable. Here it
    is one shared-memory copy updated with atomic adds (the barrier that orders them before later reads is
    inserted as for any shared write); TileLang keeps a copy per thread (`replication`) and combines them at
    the finalize, which is faster: a TileLangPerformanceWarning says so. op="sum" only."""
    from .utils import _hint_not_implemented

    if op != "sum":
        from ..errors import TileLangUnsupportedError
        raise TileLangUnsupportedError(f"T.alloc_reducer(op={op!r}) is not supported: only op='sum' (the max and min "
                                       "reducers are not implemented yet)")
    if replication not in (None, "all", "none"):
        raise TileLangTypeError(f"T.alloc_reducer: replication is 'all' or 'none', got {replication!r}")
    buf = _alloc(shape, dtype, "shared", "T.alloc_reducer")
    builder.current().kernels[-1].reducers[buf.name] = op
    _hint_not_implemented("T.alloc_reducer", ["replication"] if replication else [],
                          "the reducer is one shared-memory copy updated with atomic adds, not a per-thread copy "
                          "combined at T.finalize_reducer")
    return buf


# TileLang-Ascend spells the explicit scopes in lower case too
alloc_l1 = alloc_L1
alloc_l0a = alloc_L0A
alloc_l0b = alloc_L0B
alloc_l0c = alloc_L0C
