"""Copies of tiles: T.copy, T.tma_copy (sm_90+) and the im2col gather of a convolution (T.c2d_im2col)."""
from .. import _ffi
from ..errors import TileLangTypeError, TileLangUnsupportedError
from . import builder
from .ast import region_of
from .builtin import _barrier_elem, _is_cluster_barrier
from .expr import Expr
from .expr import const as _const
from .ws_schedule import with_ws_id
from .utils import _bool, _hint_not_implemented, _point_region, _region


def _copy_regions(sb, smin, sext, spoint, db, dmin, dext, dpoint, both_points_message):
    """The source and destination regions of a copy: a single element on one side takes the other side's
    extent (T.copy(A[i, j], B) copies B's shape from A[i, j])."""
    if spoint and dpoint:
        raise TileLangTypeError(both_points_message)
    if spoint:
        sext = _point_region(sb, smin, dext)
    if dpoint:
        dext = _point_region(db, dmin, sext)
    return [_region(sb, smin, sext), _region(db, dmin, dext)]


def copy(src, dst, disable_tma=False, coalesced_width=None, eviction_policy=None, loop_layout=None, annotations=None):
    sb, smin, sext, spoint = region_of(src, "T.copy source")
    db, dmin, dext, dpoint = region_of(dst, "T.copy destination")
    hints = [k for k, v in (("coalesced_width", coalesced_width), ("eviction_policy", eviction_policy),
                            ("loop_layout", loop_layout)) if v is not None]
    if hints:
        _hint_not_implemented("T.copy", hints, "the copy's vector width, cache policy and thread mapping are "
                              "chosen by the compiler")
    regions = _copy_regions(sb, smin, sext, spoint, db, dmin, dext, dpoint,
                            "T.copy needs at least one side to be a buffer or a slice; both are single elements")
    return with_ws_id(_ffi.tile_op("copy", regions, [], {"disable_tma": int(_bool(disable_tma))}, builder.span()),
                      annotations, "T.copy")


def tma_copy(src, dst, barrier=None, eviction_policy=None, annotations=None):
    """TileLang's explicit TMA load (sm_90+): one thread adds the tile's bytes to `barrier`'s expected
    transactions (mbarrier.expect_tx, no arrival) and issues the cp.async.bulk.tensor copies; nothing waits. The
    program arrives on the barrier (T.mbarrier_arrive, by as many threads as its arrive count) and waits with
    `T.mbarrier_wait_parity(bar, phase)` before reading `dst`. Global -> shared only (no TMA stores).

    With a barrier from T.alloc_cluster_barrier (TileLang's 2-CTA loads, the tcgen05 family): both blocks of a
    CTA pair (ranks 2i, 2i + 1) load into their own `dst`, and both copies complete on the barrier of the pair's
    even block, which alone expects their bytes (twice the tile's); the odd block's barrier is not touched."""
    if barrier is None:
        raise TileLangTypeError("T.tma_copy(src, dst, barrier=bars[i]) needs the mbarrier its load completes on")
    if eviction_policy is not None:
        raise TileLangUnsupportedError("T.tma_copy: eviction_policy is not implemented")
    sb, smin, sext, spoint = region_of(src, "T.tma_copy source")
    db, dmin, dext, dpoint = region_of(dst, "T.tma_copy destination")
    regions = _copy_regions(sb, smin, sext, spoint, db, dmin, dext, dpoint,
                            "T.tma_copy needs at least one side to be a buffer or a slice")
    bar = _barrier_elem(barrier, "T.tma_copy")
    attrs = {"cluster_barrier": 1} if _is_cluster_barrier(bar) else {}
    return with_ws_id(_ffi.tile_op("tma_copy", regions, [bar], attrs, builder.span()), annotations, "T.tma_copy")


def _tma4(what, glob, tile, col, rows, barrier, swizzle, eviction_policy, annotations):
    """The tile op of T.tma_gather4 / T.tma_scatter4: (global, tile) regions, the whole buffers."""
    import warnings

    from ..errors import TileLangPerformanceWarning

    rows = list(rows) if isinstance(rows, (list, tuple)) else None
    if rows is None or len(rows) != 4:
        raise TileLangTypeError(f"T.{what}: rows is a list of exactly four row indices")
    for b, side in ((glob, "global tensor"), (tile, "[4, K] shared tile")):
        if not isinstance(b, _ffi.Buffer):
            raise TileLangTypeError(f"T.{what}: the {side} must be a buffer, not a slice ({b!r})")
    if eviction_policy not in (None, "evict_normal"):
        raise TileLangUnsupportedError(f"T.{what}: eviction_policy={eviction_policy!r} is not implemented (the "
                                       "default, evict_normal, is)")
    if swizzle not in (None, "none", 0):
        warnings.warn(f"T.{what}: swizzle={swizzle!r} is ignored (TileLang deprecates it too); the [4, K] tile is "
                      "row-major", TileLangPerformanceWarning, stacklevel=3)
    regions = [_region(b, [_const(0)] * len(b.shape), list(b.shape)) for b in (glob, tile)]
    if what == "tma_scatter4":
        regions.reverse()  # (source, destination): the tile, then the tensor
    exprs = [_const(col)] + [_const(r) for r in rows]
    if what == "tma_gather4":
        if barrier is None:
            raise TileLangTypeError("T.tma_gather4(src, dst, col, rows, barrier=bars[i]) needs the mbarrier its load "
                                    "completes on")
        exprs.append(_barrier_elem(barrier, "T.tma_gather4"))
    return with_ws_id(_ffi.tile_op(what, regions, exprs, {}, builder.span()), annotations, f"T.{what}")


def tma_gather4(src, dst, col, rows, *, barrier=None, swizzle=None, eviction_policy=None, annotations=None):
    """TileLang's TMA tile::gather4 load (the tcgen05 family, sm_100a): rows rows[0..3] of the 2-d global tensor
    `src`, columns [col, col + K), into the row-major [4, K] shared tile `dst` (out-of-range rows and columns read as
    zero), completing `barrier`'s transaction bytes (T.tma_gather4_bytes(K, dtype)). As in TileLang, every thread
    that reaches it issues it: guard it with `if T.shuffle_elect(n):` and arm the barrier with
    T.mbarrier_expect_tx first."""
    return _tma4("tma_gather4", src, dst, col, rows, barrier, swizzle, eviction_policy, annotations)


def tma_scatter4(src, dst, col, rows, *, swizzle=None, eviction_policy=None, annotations=None):
    """TileLang's TMA tile::scatter4 store (the tcgen05 family): the row-major [4, K] shared tile `src` into rows
    rows[0..3] of the 2-d global tensor `dst`, columns [col, col + K) (what falls outside the tensor is not
    written). Part of the issuing thread's bulk group: T.tma_store_arrive() commits it, T.tma_store_wait() waits;
    the tile's writers fence (T.fence_proxy_async) and synchronise before it. Guard it with T.shuffle_elect."""
    return _tma4("tma_scatter4", dst, src, col, rows, None, swizzle, eviction_policy, annotations)


def tma_gather4_bytes(K_box, dtype):
    """The bytes a T.tma_gather4 of four rows of K_box elements moves (TileLang's helper for mbarrier_expect_tx):
    4 K_box elements, fp4 counted at 4 bits."""
    import re

    from .dtypes import dtype_str
    m = re.match(r"[a-z]+?(\d+)", dtype_str(dtype))  # float16 -> 16, bfloat16 -> 16, float4_e2m1fn -> 4
    if not m:
        raise TileLangTypeError(f"T.tma_gather4_bytes: {dtype!r} is not a numeric dtype")
    return (4 * int(K_box) * int(m.group(1)) + 7) // 8


def c2d_im2col(img, col, nhw_step, c_step, kernel, stride, dilation, pad, eviction_policy=None):
    """T.c2d_im2col(img, col, nhw_step, c_step, kernel, stride, dilation, pad): the im2col tile of a 2-D
    convolution. img is (N, H, W, C) in global memory, col a (block_M, block_K) tile; col[i, j] is the
    input element that row m = nhw_step * block_M + i (an output pixel n, oh, ow) and column
    k = c_step * block_K + j (a filter tap kh, kw and a channel c) of the im2col matrix read, or 0 in the
    padding. Lowered to a T.Parallel gather on every target (TileLang uses TMA im2col on Hopper)."""
    if eviction_policy is not None:
        raise TileLangTypeError("T.c2d_im2col: eviction_policy is not supported")
    if not isinstance(img, _ffi.Buffer) or len(img.shape) != 4 or img.scope != "global":
        raise TileLangTypeError("T.c2d_im2col: img must be an (N, H, W, C) tensor")
    if not isinstance(col, _ffi.Buffer) or len(col.shape) != 2 or col.scope == "global":
        raise TileLangTypeError("T.c2d_im2col: col must be a 2-D shared or fragment tile")
    for name, v in (("kernel", kernel), ("stride", stride), ("dilation", dilation), ("pad", pad)):
        if not isinstance(v, int) or isinstance(v, bool) or v < (0 if name == "pad" else 1):
            raise TileLangTypeError(f"T.c2d_im2col: {name} must be a {'non-negative' if name == 'pad' else 'positive'} "
                                    f"int, got {v!r}")
    b = _ffi.binary
    N, H, W, C = (_const(d) for d in img.shape)
    K, S, D, P = kernel, stride, dilation, pad
    OH = b("add", b("floordiv", _const(-D * (K - 1) - 1 + 2 * P) + H, _const(S)), _const(1))
    OW = b("add", b("floordiv", _const(-D * (K - 1) - 1 + 2 * P) + W, _const(S)), _const(1))
    bm, bk = col.shape
    i, j = _ffi.var("i", "int32"), _ffi.var("j", "int32")
    k = b("add", b("mul", _const(c_step), bk), j)
    m = b("add", b("mul", _const(nhw_step), bm), i)
    ohw = b("mul", OH, OW)
    h = b("sub", b("add", b("mul", b("floordiv", b("floormod", m, ohw), OW), _const(S)),
                   b("mul", b("floordiv", k, b("mul", _const(K), C)), _const(D))), _const(P))
    w = b("sub", b("add", b("mul", b("floormod", m, OW), _const(S)),
                   b("mul", b("floormod", b("floordiv", k, C), _const(K)), _const(D))), _const(P))
    inside = b("and", b("and", b("ge", h, _const(0)), b("ge", w, _const(0))), b("and", b("lt", h, H), b("lt", w, W)))
    value = _ffi.select(inside, _ffi.load(img, [b("floordiv", m, ohw), h, w, b("floormod", k, C)]),
                        _const(0, img.dtype))
    if col.dtype != img.dtype:
        value = _ffi.cast(col.dtype, value)
    span = builder.span()
    body = _ffi.store(col, value, [i, j], span)
    return _ffi.for_(i, _const(0), bm, "parallel", _ffi.for_(j, _const(0), bk, "parallel", body, {}, span), {}, span)


im2col = c2d_im2col  # the same op under its short name


def copy_cluster(src, dst, *, dst_block=None, cluster_mask=None, remote_barrier=None, eviction_policy=None,
                 coalesced_width=None, annotations=None, loop_layout=None):
    """T.copy_cluster(src, dst, dst_block=r): copies a shared tile of this block into the shared tile `dst` of
    block r of the thread-block cluster (distributed shared memory: each thread stores its share of the
    elements through mapa, st.shared::cluster). The copy is synchronous for the storing threads; the peer reads
    `dst` after a T.cluster_sync (or a cluster barrier) that follows it.
    T.copy_cluster(global tile, shared tile, cluster_mask=m): a TMA multicast: the lowest rank of the mask loads the
    tile once into the shared tile of every block of the mask (the others wait for it; blocks outside the mask
    load their own), each block waiting on its own barrier as after T.copy. Every block of the mask must reach the
    copy.
    T.copy_cluster(src, dst, dst_block=r, remote_barrier=bar[i]): the same copy, signalled on the peer's copy of a
    T.alloc_cluster_barrier barrier instead of a cluster_sync: after the stores the block synchronises its threads
    and its first thread arrives once on block r's `bar[i]` with release semantics at cluster scope, so block r
    waits with T.mbarrier_wait_parity(bar[i], phase) and reads `dst` (the barrier's arrive count is 1, as in
    TileLang's). The copy is the threads' stores (not TileLang's cp.async.bulk between shared memories, whose
    contiguous case it uses): the same values, the same barrier protocol."""
    ann = dict(annotations or {})
    dst_block = ann.pop("dst_block", dst_block)
    cluster_mask = ann.pop("cluster_mask", cluster_mask)
    remote_barrier = ann.pop("barrier", remote_barrier)
    if cluster_mask is not None:
        if dst_block is not None or remote_barrier is not None:
            raise TileLangTypeError("T.copy_cluster: cluster_mask= (a TMA multicast) takes no dst_block= or "
                                    "remote_barrier=")
        m = _ffi.const_int(cluster_mask) if isinstance(cluster_mask, Expr) else cluster_mask
        if not isinstance(m, int) or isinstance(m, bool) or not 0 < m < (1 << 16):
            raise TileLangTypeError(f"T.copy_cluster(..., cluster_mask=): a constant bit mask of cluster ranks "
                                    f"(1 .. 2^16 - 1), got {cluster_mask!r}")
        if eviction_policy is not None or coalesced_width is not None or loop_layout is not None or ann:
            _hint_not_implemented("T.copy_cluster", ["eviction_policy", "coalesced_width", "loop_layout"] + sorted(ann),
                                  "the multicast is one TMA copy a box")
        return _ffi.attr_stmt(None, "tl.copy_multicast", _const(m), copy(src, dst), builder.span())
    bar = None
    if remote_barrier is not None:
        if dst_block is None:
            raise TileLangTypeError("T.copy_cluster(..., remote_barrier=) signals the copy into block dst_block=r; "
                                    "name it")
        bar = _barrier_elem(remote_barrier, "T.copy_cluster(..., remote_barrier=)")
        if not _is_cluster_barrier(bar):
            raise TileLangTypeError(f"T.copy_cluster(..., remote_barrier=): '{bar.buffer.name}' is not a cluster "
                                    "barrier; allocate it with T.alloc_cluster_barrier, so that every block of the "
                                    "cluster initialises its copy before a peer arrives on it")
    if dst_block is None:
        raise TileLangTypeError("T.copy_cluster(src, dst, dst_block=r): name the block of the cluster to copy into")
    for what, v in (("eviction_policy", eviction_policy), ("loop_layout", loop_layout)):
        if v is not None:
            _hint_not_implemented("T.copy_cluster", [what], "it applies to the forms that are not implemented")
    if coalesced_width is not None or ann:
        _hint_not_implemented("T.copy_cluster", ["coalesced_width"] + sorted(ann), "each thread stores single elements")
    sb, smin, sext, _ = region_of(src, "T.copy_cluster source")
    db, dmin, dext, _ = region_of(dst, "T.copy_cluster destination")
    for b, what in ((sb, "source"), (db, "destination")):
        if b.scope != "shared":
            raise TileLangTypeError(f"T.copy_cluster(..., dst_block=) copies shared memory into a peer's shared memory; "
                                    f"the {what} '{b.name}' is {b.scope}")
    if sb.dtype != db.dtype:
        raise TileLangTypeError(f"T.copy_cluster: the source is {sb.dtype} and the destination {db.dtype}")
    s_ext = [_ffi.const_int(e) for e in sext]
    d_ext = [_ffi.const_int(e) for e in dext]
    if None in s_ext or None in d_ext:
        raise TileLangTypeError("T.copy_cluster: the tiles' extents must be constants")
    s_dims, d_dims = [e for e in s_ext if e != 1], [e for e in d_ext if e != 1]
    if s_dims != d_dims:
        raise TileLangTypeError(f"T.copy_cluster: the source tile {tuple(s_ext)} and the destination tile "
                                f"{tuple(d_ext)} differ")
    ctx = builder.require_context("T.copy_cluster")
    if not ctx.kernels:
        raise TileLangTypeError("T.copy_cluster must be inside a `with T.ClusterKernel(...)` block")
    threads = 1
    for t in ctx.kernels[-1].threads:
        threads *= _ffi.const_int(t) if not isinstance(t, int) else t
    n = 1
    for e in s_dims:
        n *= e
    rank = _const(dst_block)
    if not rank.dtype.startswith(("int", "uint")):
        raise TileLangTypeError(f"T.copy_cluster(..., dst_block=): the block rank is an integer, not {rank.dtype}")
    if rank.dtype != "int32":
        rank = _ffi.cast("int32", rank)
    sp = builder.span()
    it = _ffi.var("cc_i", "int32")
    idx = _ffi.binary("add", _ffi.binary("mul", it, _const(threads)), _ffi.call("int32", "tl.thread_idx", []))

    def at(mins, exts):  # the element of flat index idx (row-major over the non-unit extents)
        out, stride = [], n
        for m, e in zip(mins, exts):
            if e == 1:
                out.append(m)
                continue
            stride //= e
            c = _ffi.binary("floordiv", idx, _const(stride)) if stride > 1 else idx
            out.append(_ffi.binary("add", m, _ffi.binary("floormod", c, _const(e))))
        return out

    store = _ffi.evaluate(_ffi.call("void", "tl.st_cluster", [_ffi.load(db, at(dmin, d_ext)),
                                                               _ffi.load(sb, at(smin, s_ext)), rank]), sp)
    if n % threads:
        store = _ffi.if_(_ffi.binary("lt", idx, _const(n)), store, None, sp)
    loop = _ffi.for_(it, _const(0), _const((n + threads - 1) // threads), "serial", store, {}, sp)
    if bar is None:
        return loop
    # every thread's stores before the one release arrival on the peer's barrier
    sync = _ffi.evaluate(_ffi.call("void", "tl.syncthreads", []), sp)
    first = _ffi.binary("eq", _ffi.call("int32", "tl.thread_idx", []), _const(0))
    arrive = _ffi.evaluate(_ffi.call("void", "tl.mbarrier_arrive_cluster", [bar, rank]), sp)
    return _ffi.seq([loop, sync, _ffi.if_(first, arrive, None, sp)], sp)
