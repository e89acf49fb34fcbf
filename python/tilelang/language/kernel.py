"""The launch: T.Kernel, the block's and thread's indices (T.get_block_binding, T.get_thread_binding, ...)
and warp-group regions (T.ws / T.WarpSpecialize)."""
from .. import _ffi
from ..errors import TileLangSyntaxError, TileLangTypeError, TileLangUnsupportedError
from . import builder
from .ast import KernelSpec
from .expr import Expr
from .expr import const as _const
from .utils import _hint_not_implemented


def Kernel(*grid, threads=128, prelude=None, is_cpu=False, cluster_dims=None):
    spec = _kernel_spec(grid, threads, prelude, is_cpu)
    if cluster_dims is not None:
        spec.cluster = _cluster_dims(cluster_dims, spec.grid)
    return spec


def ClusterKernel(*grid, cluster_dims, threads=128, prelude=None):
    """T.ClusterKernel(*grid, cluster_dims=2 | (x, y, z), threads=...): T.Kernel whose blocks are launched in
    thread-block clusters (CUDA sm_90+): the blocks of one cluster are resident at once on one GPC, can wait
    for each other (T.cluster_sync, T.alloc_cluster_barrier with T.mbarrier_arrive(bar, cta_id)) and know
    their rank in it (T.block_rank_in_cluster). Each grid dimension must be a multiple of the cluster's; at
    most 8 blocks a cluster (the portable size). Other targets refuse it."""
    spec = _kernel_spec(grid, threads, prelude, False)
    spec.cluster = _cluster_dims(cluster_dims, spec.grid)
    return spec


def _cluster_dims(dims, grid):
    d = list(dims) if isinstance(dims, (list, tuple)) else [dims]
    if not 1 <= len(d) <= 3 or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in d):
        raise TileLangSyntaxError(f"cluster_dims= takes a positive int or a list of at most 3 positive ints, got "
                                  f"{dims!r}")
    d += [1] * (3 - len(d))
    if d[0] * d[1] * d[2] > 8:
        raise TileLangSyntaxError(f"cluster_dims={tuple(d)} asks for {d[0] * d[1] * d[2]} blocks a cluster; at most 8 "
                                  "(the portable cluster size of sm_90 and sm_100)")
    for i, (g, c) in enumerate(zip(list(grid) + [_const(1)] * 3, d)):
        gv = _ffi.const_int(g)
        if c > 1 and i >= len(grid):
            raise TileLangSyntaxError(f"cluster_dims={tuple(d)} clusters along grid dimension {'xyz'[i]}, which the "
                                      f"kernel does not have (its grid has {len(grid)} dimension(s))")
        if gv is not None and gv % c:
            raise TileLangSyntaxError(f"grid dimension {'xyz'[i]} is {gv}, not a multiple of the cluster's {c} "
                                      f"(cluster_dims={tuple(d)}): a cluster launch needs whole clusters")
    return tuple(d)


def _kernel_spec(grid, threads, prelude, is_cpu):
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


def get_thread_binding(dim=0):
    """T.get_thread_binding(dim): the thread's index along dim of T.Kernel(threads=...) (threadIdx.x/y/z).
    Statements that use it run once per thread (outside T.Parallel; see docs/thread_ir.md)."""
    ctx = builder.require_context("T.get_thread_binding")
    if not ctx.kernels:
        raise TileLangSyntaxError("T.get_thread_binding must be called inside a `with T.Kernel(...)` block")
    threads = ctx.kernels[-1].threads
    if not isinstance(dim, int) or not 0 <= dim < len(threads):
        raise TileLangTypeError(f"T.get_thread_binding({dim!r}): the kernel has {len(threads)} thread "
                                f"dimension(s) {tuple(threads)}")
    idx = _ffi.call("int32", "tl.thread_idx", [])
    below = 1
    for t in threads[:dim]:
        below *= t
    if below > 1:
        idx = _ffi.binary("floordiv", idx, _const(below))
    if dim < len(threads) - 1:
        idx = _ffi.binary("floormod", idx, _const(threads[dim]))
    return idx


def get_block_binding(dim=0):
    """T.get_block_binding(dim): the block's index along dim of T.Kernel's grid (blockIdx.x/y/z), the var
    `with T.Kernel(...) as (bx, by)` binds."""
    ctx = builder.require_context("T.get_block_binding")
    if not ctx.kernels:
        raise TileLangSyntaxError("T.get_block_binding must be called inside a `with T.Kernel(...)` block")
    blocks = ctx.kernels[-1].block_vars
    if not isinstance(dim, int) or isinstance(dim, bool) or not 0 <= dim < len(blocks):
        raise TileLangTypeError(f"T.get_block_binding({dim!r}): the kernel has {len(blocks)} grid dimension(s)")
    return blocks[dim]


def get_block_bindings():
    ctx = builder.require_context("T.get_block_bindings")
    return list(ctx.kernels[-1].block_vars) if ctx.kernels else []


def get_thread_bindings():
    ctx = builder.require_context("T.get_thread_bindings")
    n = len(ctx.kernels[-1].threads) if ctx.kernels else 1
    return [get_thread_binding(d) for d in range(n)]


class WsSpec:
    """What T.ws returns: the parser turns `with T.ws(i, ...):` into a block run by warp groups i, ... only."""

    def __init__(self, groups):
        self.groups = groups


def ws(*warp_group_idx):
    """`with T.ws(0):` / `with T.ws(1, 2):` (TileLang's T.ws, alias T.WarpSpecialize): the block runs only on
    the threads of the named warp groups (linear thread index // 128), e.g. a producer warp group issuing
    T.tma_copy and consumers waiting on mbarriers. Each warp group is one fiber in the emulator, so waits on
    arrivals of another warp group complete (docs/warp_specialization.md)."""
    ctx = builder.require_context("T.ws")
    if not ctx.kernels:
        raise TileLangSyntaxError("T.ws must be used inside a `with T.Kernel(...)` block")
    groups = []
    for g in warp_group_idx:
        v = _ffi.const_int(g) if isinstance(g, Expr) else g
        if isinstance(v, (list, tuple)):
            groups.extend(v)
        else:
            groups.append(v)
    threads = 1
    for t in ctx.kernels[-1].threads:
        threads *= t
    n = threads // 128
    if not groups or any(not isinstance(g, int) or isinstance(g, bool) for g in groups):
        raise TileLangTypeError(f"T.ws takes constant warp-group indices, got {warp_group_idx!r}")
    if threads % 128 or any(not 0 <= g < n for g in groups):
        raise TileLangTypeError(f"T.ws{tuple(groups)}: the block has {threads} threads, i.e. {n} whole warp "
                                f"group(s) of 128 (indices 0..{n - 1})")
    return WsSpec(sorted(set(groups)))


WarpSpecialize = ws
