"""Statements that are one call of a builtin: mbarrier operations (docs/hopper.md), fences, register
budgets, block barriers, T.call_intrin / T.attr (the printer's forms of lowered IR), T.print,
T.device_assert and T.assume."""
import numbers

from .. import _ffi
from ..errors import TileLangTypeError, TileLangUnsupportedError
from . import builder
from .ast import AttrSpec
from .dtypes import dtype_str
from .expr import Expr
from .expr import const as _const


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


def _is_cluster_barrier(bar):
    """Whether the barrier element `bar` comes from T.alloc_cluster_barrier in the enclosing kernel."""
    frame = builder.current().kernels if builder.current() else None
    return bool(frame) and any(bar.buffer is b for b in getattr(frame[-1], "cluster_barriers", []))


def mbarrier_arrive(mbarrier, cta_id=None):
    """Every executing thread arrives once on the barrier (mbarrier.arrive). With cta_id: on the barrier of the
    same name in block `cta_id` of the thread-block cluster (T.block_rank_in_cluster numbering; a barrier from
    T.alloc_cluster_barrier), with release semantics at cluster scope: the thread's earlier writes are seen by
    the threads that wait on that barrier."""
    bar = _barrier_elem(mbarrier, "T.mbarrier_arrive")
    if cta_id is None:
        return _barrier_call("tl.mbarrier_arrive", [bar])
    frame = builder.require_context("T.mbarrier_arrive").kernels
    if not frame or not any(bar.buffer is b for b in getattr(frame[-1], "cluster_barriers", [])):
        raise TileLangTypeError(f"T.mbarrier_arrive(..., cta_id): '{bar.buffer.name}' is not a cluster barrier; "
                                "allocate it with T.alloc_cluster_barrier so every block of the cluster initialises "
                                "it before a peer arrives on it")
    cta = _const(cta_id)
    if not cta.dtype.startswith(("int", "uint")):
        raise TileLangTypeError(f"T.mbarrier_arrive(..., cta_id): the block rank is an integer, not {cta.dtype}")
    return _barrier_call("tl.mbarrier_arrive_cluster", [bar, _ffi.cast("int32", cta) if cta.dtype != "int32" else cta])


def block_rank_in_cluster():
    """T.block_rank_in_cluster(): the block's rank in its thread-block cluster (%cluster_ctarank: x fastest,
    0 .. cluster size - 1); 0 in a kernel launched without clusters."""
    return _ffi.call("int32", "tl.cluster_ctarank", [])


def cluster_sync():
    """T.cluster_sync(): a barrier of every thread of every block of the cluster (barrier.cluster.arrive +
    wait); writes before it, to global or shared memory, are seen by every thread of the cluster after it."""
    return _barrier_call("tl.cluster_sync", [])


def cluster_arrive():
    """T.cluster_arrive(): the arrive half of T.cluster_sync (barrier.cluster.arrive, release); T.cluster_wait
    completes it."""
    return _barrier_call("tl.cluster_arrive", [])


def cluster_arrive_relaxed():
    """T.cluster_arrive_relaxed(): barrier.cluster.arrive.relaxed: an arrival that orders no memory."""
    return _barrier_call("tl.cluster_arrive_relaxed", [])


def _clc_result(result, what):
    """The first element of a 16-byte cluster-launch-control response in shared memory."""
    from .ast import RegionSpec
    if isinstance(result, RegionSpec):
        res = _ffi.load(result.buffer, list(result.mins))
    elif isinstance(result, _ffi.Buffer):
        res = _ffi.load(result, [_const(0) for _ in result.shape])
    elif isinstance(result, _ffi.BufferLoad):
        res = result
    else:
        raise TileLangTypeError(f"{what} takes the 16-byte response buffer (e.g. T.alloc_shared((4,), 'uint32')), "
                                f"not {type(result).__name__}")
    b = res.buffer
    if b.scope != "shared" or b.dtype not in ("uint32", "int32", "uint64", "int64"):
        raise TileLangTypeError(f"{what}: the response is 16 bytes of shared memory (4 x uint32 or 2 x uint64), not "
                                f"'{b.name}' ({b.scope} {b.dtype})")
    return res


def clc_try_cancel(result, mbarrier):
    """T.clc_try_cancel(result, bar): asks to cancel the launch of a cluster that has not started yet
    (clusterlaunchcontrol.try_cancel, sm_100+); asynchronous: the 16-byte response lands in `result` and
    completes 16 transaction bytes on `bar` (arrive on it with T.mbarrier_arrive_expect_tx(bar, 16), then wait).
    T.clc_is_canceled / T.clc_get_first_ctaid_x/y/z read the response."""
    return _barrier_call("tl.clc_try_cancel", [_clc_result(result, "T.clc_try_cancel"),
                                              _barrier_elem(mbarrier, "T.clc_try_cancel")])


def clc_try_cancel_multicast(result, mbarrier):
    """T.clc_try_cancel_multicast(result, bar): T.clc_try_cancel whose response lands in `result` and completes
    `bar` in every block of the cluster (.multicast::cluster::all; sm_100a / sm_110a)."""
    return _barrier_call("tl.clc_try_cancel_multicast", [_clc_result(result, "T.clc_try_cancel_multicast"),
                                                        _barrier_elem(mbarrier, "T.clc_try_cancel_multicast")])


def clc_is_canceled(result):
    """1 when the response of a T.clc_try_cancel says a cluster was cancelled (this block should run its work),
    else 0 (clusterlaunchcontrol.query_cancel.is_canceled)."""
    return _ffi.call("int32", "tl.clc_is_canceled", [_clc_result(result, "T.clc_is_canceled")])


def _clc_ctaid(dim):
    def f(result):
        return _ffi.call("uint32", f"tl.clc_get_first_ctaid_{dim}",
                         [_clc_result(result, f"T.clc_get_first_ctaid_{dim}")])

    f.__name__ = f.__qualname__ = f"clc_get_first_ctaid_{dim}"
    f.__doc__ = (f"The {dim} block index of the first block of the cluster a successful T.clc_try_cancel cancelled "
                 "(clusterlaunchcontrol.query_cancel.get_first_ctaid); undefined after a failed one.")
    return f


clc_get_first_ctaid_x = _clc_ctaid("x")
clc_get_first_ctaid_y = _clc_ctaid("y")
clc_get_first_ctaid_z = _clc_ctaid("z")


def cluster_wait():
    """T.cluster_wait(): waits until every thread of the cluster has arrived (barrier.cluster.wait, acquire)."""
    return _barrier_call("tl.cluster_wait", [])


def mbarrier_expect_tx(mbarrier, tx):
    """Adds tx bytes to the barrier's expected transaction count (mbarrier.expect_tx)."""
    return _barrier_call("tl.mbarrier_expect_tx", [_barrier_elem(mbarrier, "T.mbarrier_expect_tx"), _const(tx)])


def mbarrier_arrive_expect_tx(mbarrier, tx):
    """One arrival of each executing thread that also adds tx bytes to the phase's expected transaction
    count (mbarrier.arrive.expect_tx)."""
    return _barrier_call("tl.mbarrier_arrive_expect_tx",
                         [_barrier_elem(mbarrier, "T.mbarrier_arrive_expect_tx"), _const(tx)])


def mbarrier_wait_parity(mbarrier, parity):
    """Waits until the barrier's phase with this parity has completed (mbarrier.try_wait.parity)."""
    bar = mbarrier
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


def barrier_arrive(mbarrier):
    """T.mbarrier_arrive under TileLang's other name."""
    return mbarrier_arrive(mbarrier)


def barrier_wait(mbarrier, parity):
    """T.mbarrier_wait_parity under TileLang's other name."""
    return mbarrier_wait_parity(mbarrier, parity)




def tma_store_arrive():
    """Commits the thread's outstanding TMA stores into a bulk group (cp.async.bulk.commit_group)."""
    return _barrier_call("tl.tma_store_commit", [])


def tma_store_wait(count=0, read=True):
    """Waits until the thread's committed TMA store groups have read their shared memory
    (cp.async.bulk.wait_group.read 0). Only count=0 is implemented; read=False (waiting for the global writes too)
    is waited for the same way here, which is stronger."""
    n = _ffi.const_int(count) if isinstance(count, Expr) else count
    if n != 0:
        raise TileLangUnsupportedError(f"T.tma_store_wait(count={count!r}): only count=0 (wait for every group) is "
                                       "implemented")
    return _barrier_call("tl.tma_store_wait", [])


def shuffle_elect(thread_extent):
    """True for one thread of each group of `thread_extent` threads (the group's first), 0: one thread of the
    block (thread 0). TileLang elects a lane of the group's first warp with elect.sync; here the group's first
    thread, which is one such lane."""
    n = _ffi.const_int(thread_extent) if isinstance(thread_extent, Expr) else thread_extent
    if not isinstance(n, int) or n < 0 or (n and n % 32):
        raise TileLangTypeError(f"T.shuffle_elect: thread_extent is 0 or a positive multiple of 32, got "
                                f"{thread_extent!r}")
    from .kernel import get_thread_binding

    tx = get_thread_binding()
    return tx == 0 if n == 0 else tx % n == 0


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


def sync_grid():
    """T.sync_grid(): a barrier of the whole grid: every thread of every block arrives before any goes on, and
    global writes before it are seen after it (CUDA: cooperative groups' grid sync; the kernel is then launched
    cooperatively, so its grid must fit on the device at once, e.g. one block per SM). Other targets refuse it."""
    return _ffi.evaluate(_ffi.call("void", "tl.sync_grid", []), builder.span())


def sync_threads(barrier_id=None, arrive_count=None):
    """T.sync_threads(): a barrier for every thread of the block (__syncthreads()); the compiler still
    inserts the barriers its shared-memory analysis needs.
    T.sync_threads(barrier_id, arrive_count): a named barrier (PTX `bar.sync id, count`) that `arrive_count`
    threads (whole warps) wait at, e.g. the threads under `if tx < 256:`; ids 1..15 (0 is __syncthreads'). It
    may sit under a condition on the thread index, which must be the same for the whole region (CUDA; the
    CPU target runs such a region's phases for the threads the condition selects; HIP, Metal and OpenCL have
    no named barriers). Without arrive_count it waits for every thread of the block."""
    if barrier_id is None:
        if arrive_count is not None:
            raise TileLangTypeError("T.sync_threads(arrive_count=...) needs a barrier_id")
        return _ffi.evaluate(_ffi.call("void", "tl.syncthreads", []), builder.span())
    bid = _ffi.const_int(barrier_id) if isinstance(barrier_id, Expr) else barrier_id
    if isinstance(bid, bool) or not isinstance(bid, numbers.Integral) or not 0 <= bid < 16:
        raise TileLangTypeError(f"T.sync_threads: barrier_id is a constant from 0 to 15 (a named barrier), got "
                                f"{barrier_id!r}")
    ctx = builder.current()
    threads = 1
    for t in (ctx.kernels[-1].threads if ctx is not None and ctx.kernels else []):
        threads *= t
    count = threads if arrive_count is None else \
        (_ffi.const_int(arrive_count) if isinstance(arrive_count, Expr) else arrive_count)
    if isinstance(count, bool) or not isinstance(count, numbers.Integral) or count <= 0 or count % 32 or \
            (threads > 1 and count > threads):
        raise TileLangTypeError(f"T.sync_threads: arrive_count is a constant multiple of 32 (whole warps) of at "
                                f"most the block's {threads} threads, got {arrive_count!r}")
    if bid == 0 and count == threads:
        return _ffi.evaluate(_ffi.call("void", "tl.syncthreads", []), builder.span())
    if bid == 0:
        raise TileLangTypeError("T.sync_threads: barrier 0 is __syncthreads' (every thread); give a partial "
                                "barrier an id from 1 to 15")
    return _ffi.evaluate(_ffi.call("void", "tl.named_barrier_sync", [_const(int(bid)), _const(int(count))]),
                         builder.span())


def annotate_producer_reg_dealloc(reg_count=24):
    """TileLang's hint for a hand-specialised producer warp group: lower its register budget to reg_count
    where it is written (setmaxnreg.dec, as T.set_max_nreg(reg_count, 0))."""
    return set_max_nreg(reg_count, 0)


def annotate_consumer_reg_alloc(reg_count=240):
    """TileLang's hint for hand-specialised consumer warp groups: raise their register budget to reg_count
    where it is written (setmaxnreg.inc, as T.set_max_nreg(reg_count, 1))."""
    return set_max_nreg(reg_count, 1)


def no_set_max_nreg():
    """TileLang's other name of T.disable_warp_group_reg_alloc()."""
    return disable_warp_group_reg_alloc()


def disable_warp_group_reg_alloc():
    """TileLang's opt-out of register reallocation between warp groups: the automatic warp
    specialisation on sm_90a (docs/warp_specialization.md) then emits no setmaxnreg. Elsewhere nothing
    reallocates registers, so it has no effect."""
    ctx = builder.current()
    if ctx is not None and ctx.kernels:
        ctx.kernels[-1].no_reg_alloc = True
    return None


def call_intrin(dtype, op, *args):
    """A call of a builtin of the lower IR with its result type: T.call_intrin("int32", "tl.thread_idx")."""
    dt = dtype if dtype in ("void", "handle") else dtype_str(dtype)
    return _ffi.call(dt, op, [_ffi.string_imm(a) if isinstance(a, str) else _const(a) for a in args])


def attr(node, key, value):
    """`with T.attr(buffer_or_None, "key", value):` records a fact one pass leaves for the next
    (docs/thread_ir.md lists the keys)."""
    from .thread_reduce import CommReducer, NullHandle, ReduceScopeSpec

    if isinstance(node, CommReducer):
        if key != "reduce_scope":
            raise TileLangTypeError(f'T.attr with a T.comm_reducer takes the key "reduce_scope", got {key!r}')
        return ReduceScopeSpec(node)
    if isinstance(value, NullHandle):
        raise TileLangTypeError('a null handle (T.reinterpret(..., dtype="handle")) is only the value of '
                                'T.attr(T.comm_reducer(...), "reduce_scope", ...)')
    if node is not None and not isinstance(node, _ffi.Buffer):
        raise TileLangTypeError("T.attr takes a buffer or None as its node")
    if not isinstance(key, str):
        raise TileLangTypeError("T.attr takes a string key")
    return AttrSpec(node, key, _ffi.string_imm(value) if isinstance(value, str) else _const(value))


def print(obj, msg=""):  # noqa: A001
    """T.print(x): prints a value at run time (CPU target: to stdout)."""
    if isinstance(obj, Expr):
        return _ffi.evaluate(_ffi.call("int32", "print", [_ffi.string_imm(str(msg)), obj]), builder.span())
    raise TileLangTypeError("T.print takes a scalar expression")


def device_assert(cond, msg=""):
    return _ffi.evaluate(_ffi.call("int32", "device_assert", [_const(cond), _ffi.string_imm(str(msg))]),
                         builder.span())


def assume(cond):
    """T.assume(cond): a fact the program promises. The compiler does not use it for simplification
    yet; dropping a promise never changes a correct program's results."""
    c = _const(cond)
    if c.dtype != "bool":
        raise TileLangTypeError(f"T.assume takes a condition, got a {c.dtype} expression")
    return None


def evaluate(value):
    """T.evaluate(expr): the expression as a statement (a call evaluated for its effect). A statement passed
    in (what a statement-valued T.* call returns) is returned as it is."""
    if isinstance(value, Expr):
        return _ffi.evaluate(value, builder.span())
    if isinstance(value, _ffi.Stmt):
        return value
    raise TileLangTypeError(f"T.evaluate takes a kernel expression, not {type(value).__name__}")


_FULL_WARP_MASK = 0xFFFFFFFF


def _vote(op, name, predicate, mask):
    pred = _const(predicate)
    if pred.dtype != "bool":
        if not pred.dtype.startswith(("int", "uint")):
            raise TileLangTypeError(f"T.{name}: the predicate is a condition or an integer (non-zero: true), not a "
                                    f"{pred.dtype} value")
        pred = pred != _const(0)
    m = _const(mask)
    if not m.dtype.startswith(("int", "uint")):
        raise TileLangTypeError(f"T.{name}: the lane mask is an integer (bit l: lane l of the warp), not a {m.dtype} "
                                "value")
    mv = _ffi.const_int(m)
    if mv is not None and not 0 <= mv <= _FULL_WARP_MASK:
        raise TileLangTypeError(f"T.{name}: the lane mask is 32 bits (0 .. 0xFFFFFFFF), got {mask!r}")
    return _ffi.call("int32", op, [_ffi.cast("uint32", m), pred])


def any_sync(predicate, mask=_FULL_WARP_MASK):
    """Non-zero (int32) where the predicate holds on any lane of the calling warp in `mask` (CUDA
    __any_sync; HIP: over the wave of 64, full mask only; Metal: simd_any). Warp-collective: every lane
    in the mask executes it."""
    return _vote("tl.any_sync", "any_sync", predicate, mask)


def all_sync(predicate, mask=_FULL_WARP_MASK):
    """Non-zero (int32) where the predicate holds on every lane of the calling warp in `mask` (CUDA
    __all_sync; HIP: the wave of 64; Metal: simd_all)."""
    return _vote("tl.all_sync", "all_sync", predicate, mask)


def tvm_warp_shuffle(mask, value, lane, width, warp_size):
    """TVM's warp shuffle as TileLang programs call it: `value` of lane `lane` of the calling thread's group
    of `width` lanes (CUDA __shfl_sync(mask, value, lane, width); Metal simd_shuffle; HIP over the wave's
    bpermute). `warp_size` is the logical warp's size (32, 64 on HIP's waves, or fewer for a smaller block)."""
    v = _const(value)
    if not v.dtype.startswith(("int", "uint", "float")) or v.dtype in ("float16", "bfloat16") or \
            v.dtype.startswith("float8"):
        raise TileLangTypeError(f"T.tvm_warp_shuffle shuffles 32- and 64-bit values, not {v.dtype}")
    w = _ffi.const_int(_const(width))
    if w is None or w <= 0 or w & (w - 1) or w > 64:
        raise TileLangTypeError(f"T.tvm_warp_shuffle: the width is a constant power of two up to the warp size, "
                                f"got {width!r}")
    # TVM's warp_size is the logical warp the shuffle serves (a block of 8 threads passes 8); the shuffle
    # itself is over `width` lanes, so warp_size only has to be a power of two that holds the width
    ws = _ffi.const_int(_const(warp_size))
    if ws is None or ws <= 0 or ws & (ws - 1) or ws > 64 or w > ws:
        raise TileLangTypeError(f"T.tvm_warp_shuffle: the warp size is a constant power of two up to 32 (64 on "
                                f"AMD) and at least the width, got {warp_size!r}")
    m = _const(mask)
    mv = _ffi.const_int(m)
    if mv is not None and not 0 <= mv <= _FULL_WARP_MASK:
        raise TileLangTypeError(f"T.tvm_warp_shuffle: the lane mask is 32 bits, got {mask!r}")
    return _ffi.call(v.dtype, "tl.shfl_sync", [_ffi.cast("uint32", m), v, _ffi.cast("int32", _const(lane)),
                                               _const(w)])
