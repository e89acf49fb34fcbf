"""Thread-block clusters (CUDA sm_90+): T.ClusterKernel, T.block_rank_in_cluster, T.cluster_sync / arrive / wait,
T.alloc_cluster_barrier and T.mbarrier_arrive(bar, cta_id), a remote arrival on a peer block's barrier. The kernel
gets __cluster_dims__ (NVRTC's PTX: .reqnctapercluster); both emulators run the blocks of a cluster as live at
once, taking turns, so a block may wait for its peers. Against NumPy in float64 on seeded inputs; the refusals
elsewhere. docs/clusters.md."""
import os
import re

import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import (TileLangArgumentError, TileLangEmulationError, TileLangSyntaxError, TileLangTypeError,
                             TileLangUnsupportedError)
from tilelang.tools.sass import find_cuobjdump

SEED = 20261206
BACKENDS = ["emulator", "ptx"]


def _x(n, salt=0):
    print("seed", SEED + salt)
    return (np.random.default_rng(SEED + salt).random(n) + 0.5).astype(np.float32)


def ranks_2d(gx, gy, cx, cy):
    @T.prim_func
    def ranks(R: T.Tensor((gy, gx), "int32"), C: T.Tensor((gy, gx), "int32")):
        with T.ClusterKernel(gx, gy, cluster_dims=(cx, cy), threads=32) as (bx, by):
            R[by, bx] = T.block_rank_in_cluster()
            C[by, bx] = bx // cx + (by // cy) * (gx // cx)

    return ranks


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("shape", [(4, 6, 2, 3), (6, 2, 3, 1), (5, 4, 1, 2)])
def test_rank_in_cluster_is_x_fastest(shape, backend):
    """before: T.ClusterKernel and T.block_rank_in_cluster raised 'not implemented'. expected: %cluster_ctarank,
    x fastest within the cluster's (cx, cy) box of blocks."""
    gx, gy, cx, cy = shape
    r, c = np.full((gy, gx), -1, np.int32), np.full((gy, gx), -1, np.int32)
    tilelang.compile(ranks_2d(gx, gy, cx, cy), target="cuda -arch=sm_90a", execution_backend=backend)(r, c)
    bx, by = np.meshgrid(np.arange(gx), np.arange(gy))
    np.testing.assert_array_equal(r, bx % cx + (by % cy) * cx)


def remote_arrive(nc, wait=True, arrive=True, count=128, peer=1):
    """Block 0 of each cluster of two writes Y = 2X and arrives (all 128 threads) on block 1's barrier; block 1
    waits on it, then reads block 0's Y: a producer and a consumer in different blocks."""
    n = nc * 2 * 128

    @T.prim_func
    def k(X: T.Tensor((n,), "float32"), Y: T.Tensor((n,), "float32")):
        with T.ClusterKernel(nc * 2, cluster_dims=2, threads=128) as bx:
            bar = T.alloc_cluster_barrier([count])
            tx = T.get_thread_binding()
            if T.block_rank_in_cluster() == 0:
                Y[bx * 128 + tx] = X[bx * 128 + tx] * 2.0
                if arrive:
                    T.mbarrier_arrive(bar[0], peer)
            else:
                if wait:
                    T.mbarrier_wait_parity(bar[0], 0)
                Y[bx * 128 + tx] = Y[(bx - 1) * 128 + tx] + 1.0
            T.cluster_sync()  # no block leaves while a peer may still arrive on its barrier

    return k


def _remote_want(x):
    y = (x.astype(np.float64) * 2).reshape(-1, 2, 128)
    y[:, 1] = y[:, 0] + 1
    return y.reshape(-1)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("nc", [1, 3])
def test_remote_arrive_hands_a_peer_the_producer_writes(nc, backend):
    """before: T.mbarrier_arrive(bar, cta_id) raised 'needs thread-block clusters'. expected: block 1 of each
    cluster reads what block 0 wrote before its remote arrival."""
    x = _x(nc * 256, nc)
    y = np.zeros_like(x)
    tilelang.compile(remote_arrive(nc), target="cuda -arch=sm_90a", execution_backend=backend)(x, y)
    np.testing.assert_allclose(y, _remote_want(x), rtol=1e-6)


@pytest.mark.parametrize("backend", BACKENDS)
def test_without_the_wait_the_consumer_reads_before_the_producer_wrote(backend):
    """The same program without the wait: block 1 is the last to pass the cluster barrier of the barrier inits and
    runs on before block 0 wrote; its reads see zeros. The wait is what makes the result right."""
    x = _x(256, 7)
    y = np.zeros_like(x)
    tilelang.compile(remote_arrive(1, wait=False), target="cuda -arch=sm_90a", execution_backend=backend)(x, y)
    np.testing.assert_allclose(y[:128], 2.0 * x[:128], rtol=1e-6)
    np.testing.assert_array_equal(y[128:], 1.0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_remote_arrival_that_never_comes_is_a_deadlock(backend):
    x = _x(256, 8)
    k = tilelang.compile(remote_arrive(1, arrive=False), target="cuda -arch=sm_90a", execution_backend=backend)
    with pytest.raises(TileLangEmulationError) as e:
        k(x, np.zeros_like(x))
    assert "deadlock" in {kind for kind, _ in e.value.reports}, str(e.value)


@pytest.mark.parametrize("backend", BACKENDS)
def test_arriving_on_a_block_outside_the_cluster_is_reported(backend):
    x = _x(256, 9)
    k = tilelang.compile(remote_arrive(1, peer=2), target="cuda -arch=sm_90a", execution_backend=backend)
    with pytest.raises(TileLangEmulationError) as e:
        k(x, np.zeros_like(x))
    assert "cluster_rank" in {kind for kind, _ in e.value.reports}, str(e.value)


def cluster_sum(nb, cs, sync=True):
    """Each block writes its 128-element partial sum to P, meets its cluster at T.cluster_sync, then divides its
    elements by the sum of the cluster's partials (cs blocks a cluster)."""
    @T.prim_func
    def k(X: T.Tensor((nb * 128,), "float32"), P: T.Tensor((nb,), "float32"), Y: T.Tensor((nb * 128,), "float32")):
        with T.ClusterKernel(nb, cluster_dims=cs, threads=128) as bx:
            s = T.alloc_shared((128,), "float32")
            acc = T.alloc_fragment((1,), "float32")
            for i in T.Parallel(128):
                s[i] = X[bx * 128 + i]
            T.reduce_sum(s, acc, dim=0)
            P[bx] = acc[0]
            if sync:
                T.cluster_sync()
            tot = T.alloc_var("float32")
            tot = 0.0
            first = bx - T.block_rank_in_cluster()
            for r in T.serial(cs):
                tot = tot + P[first + r]
            for i in T.Parallel(128):
                Y[bx * 128 + i] = s[i] / tot

    return k


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("nb,cs", [(6, 3), (8, 4), (2, 2)])
def test_cluster_sync_orders_global_writes_of_the_cluster(nb, cs, backend):
    """before: no cluster barrier. expected: every block reads every partial of its cluster after T.cluster_sync
    (clusters of 2, 3 and 4 blocks)."""
    x = _x(nb * 128, nb + cs)
    p, y = np.zeros(nb, np.float32), np.zeros_like(x)
    tilelang.compile(cluster_sum(nb, cs), target="cuda -arch=sm_90a", execution_backend=backend)(x, p, y)
    xs = x.astype(np.float64).reshape(nb // cs, cs * 128)
    np.testing.assert_allclose(y, (xs / xs.sum(1, keepdims=True)).reshape(-1), rtol=1e-5)


@pytest.mark.parametrize("backend", BACKENDS)
def test_without_cluster_sync_a_block_reads_partials_not_yet_written(backend):
    x = _x(4 * 128, 11)
    p, y = np.zeros(4, np.float32), np.zeros_like(x)
    tilelang.compile(cluster_sum(4, 2, sync=False), target="cuda -arch=sm_90a", execution_backend=backend)(x, p, y)
    # blocks run one after another: block 0 of a cluster divides by its own partial only (block 1's is still 0)
    xs = x.astype(np.float64).reshape(2, 2, 128)
    np.testing.assert_allclose(y.reshape(2, 2, 128)[:, 0], xs[:, 0] / xs[:, 0].sum(1, keepdims=True), rtol=1e-5)


def test_cluster_code_ptx_and_sass():
    k = tilelang.compile(remote_arrive(2), target="cuda -arch=sm_90a")
    src = k.get_kernel_source()
    assert "__cluster_dims__(2, 1, 1)" in src and "tl::mbarrier_arrive_cluster(" in src
    assert "tl::mbarrier_wait_parity_cluster(" in src  # waits acquire at cluster scope in a cluster kernel
    ptx = k.get_ptx()
    for s in (".reqnctapercluster 2, 1, 1", "fence.mbarrier_init.release.cluster", "barrier.cluster.arrive.release",
              "barrier.cluster.wait.acquire", "%cluster_ctarank", "mapa.shared::cluster.u32",
              "mbarrier.arrive.release.cluster.shared::cluster.b64",
              "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64"):
        assert s in ptx, s
    assert find_cuobjdump() is not None, "no cuobjdump / nvdisasm (scripts/setup.sh installs them)"
    sass = k.get_sass()
    # the cluster barrier's arrive and wait; the remote arrival is a reduction into the peer's barrier (ptxas folds
    # mapa into its address), the wait a phase check
    for s in ("UCGABAR_ARV", "UCGABAR_WAIT", "SYNCS.ARRIVE.TRANS64.RED", "SYNCS.PHASECHK.TRANS64.TRYWAIT"):
        assert s in sass, s
    # a kernel without clusters has none of it
    plain = tilelang.compile(ranks_2d(2, 2, 1, 1), target="cuda -arch=sm_90a").get_ptx()
    assert ".reqnctapercluster" not in plain


def test_t_kernel_takes_cluster_dims_too():
    @T.prim_func
    def k(R: T.Tensor((8,), "int32")):
        with T.Kernel(8, threads=32, cluster_dims=4) as bx:
            R[bx] = T.block_rank_in_cluster()

    r = np.zeros(8, np.int32)
    tilelang.compile(k, target="cuda -arch=sm_90a", execution_backend="emulator")(r)
    np.testing.assert_array_equal(r, np.arange(8) % 4)


def test_a_grid_that_is_not_whole_clusters_is_refused():
    with pytest.raises(TileLangSyntaxError, match="not a multiple of the cluster's 2"):
        ranks_2d(5, 2, 2, 1)
    with pytest.raises(TileLangSyntaxError, match="at most 8"):
        ranks_2d(4, 4, 4, 4)
    with pytest.raises(TileLangSyntaxError, match="cluster_dims="):
        ranks_2d(4, 4, 0, 1)

    n = T.dynamic("n")

    @T.prim_func
    def dyn(X: T.Tensor((n,), "float32")):
        with T.ClusterKernel(T.ceildiv(n, 32), cluster_dims=2, threads=32) as bx:
            X[bx * 32 + T.get_thread_binding()] = T.cast(T.block_rank_in_cluster(), "float32")

    k = tilelang.compile(dyn, target="cuda -arch=sm_90a", execution_backend="emulator")
    x = np.zeros(128, np.float32)
    k(x)
    np.testing.assert_array_equal(x, np.repeat(np.arange(4) % 2, 32))
    with pytest.raises(TileLangArgumentError, match="not a multiple of (the cluster's )?2"):
        k(np.zeros(96, np.float32))  # 3 blocks


@pytest.mark.parametrize("target", ["cpu", "cuda -arch=sm_80", "hip -arch=gfx942", "metal", "opencl"])
def test_targets_without_clusters_refuse_them(target):
    with pytest.raises(TileLangUnsupportedError, match="cluster"):
        tilelang.compile(ranks_2d(2, 2, 2, 1), target=target)
    with pytest.raises(TileLangUnsupportedError, match="cluster"):
        tilelang.compile(remote_arrive(1), target=target)


def test_a_remote_arrival_takes_a_64_bit_rank():
    """The rank of T.mbarrier_arrive(bar, cta_id) may be any integer expression (here int64): it is cast to int32."""
    @T.prim_func
    def k(Y: T.Tensor((256,), "float32"), R: T.Tensor((1,), "int64")):
        with T.ClusterKernel(2, cluster_dims=2, threads=128) as bx:
            bar = T.alloc_cluster_barrier([128])
            tx = T.get_thread_binding()
            if T.block_rank_in_cluster() == 0:
                Y[tx] = 1.0
                T.mbarrier_arrive(bar[0], R[0])
            else:
                T.mbarrier_wait_parity(bar[0], 0)
                Y[128 + tx] = Y[tx] + 1.0
            T.cluster_sync()

    y = np.zeros(256, np.float32)
    tilelang.compile(k, target="cuda -arch=sm_90a", execution_backend="emulator")(y, np.ones(1, np.int64))
    np.testing.assert_array_equal(y, np.repeat([1.0, 2.0], 128))


def test_remote_arrival_needs_a_cluster_barrier():
    with pytest.raises(TileLangTypeError, match="not a cluster barrier"):
        @T.prim_func
        def k(X: T.Tensor((64,), "float32")):
            with T.ClusterKernel(2, cluster_dims=2, threads=32) as bx:
                bar = T.alloc_barrier([32])
                T.mbarrier_arrive(bar[0], 1)
                X[bx] = 1.0


# ---- cluster launch control (sm_100+): T.clc_try_cancel and the response queries ---------------------------------

def clc_persistent(nb, cs=1, multicast=False):
    """Each launched cluster scales its own tile of X by 3, then cancels a cluster that has not started and takes
    its tile (the first block's x index of the cancelled cluster), until a cancel fails. W records which block
    did each tile. With multicast, rank 0 asks for the whole cluster and both blocks read the response."""
    @T.prim_func
    def k(X: T.Tensor((nb * 32,), "float32"), Y: T.Tensor((nb * 32,), "float32"), W: T.Tensor((nb,), "int32")):
        with T.ClusterKernel(nb, cluster_dims=cs, threads=32) as bx:
            resp = T.alloc_shared((4,), "uint32")
            bar = T.alloc_cluster_barrier([1])
            tile = T.alloc_var("int32")
            go = T.alloc_var("int32")
            it = T.alloc_var("int32")
            tx = T.get_thread_binding()
            tile = bx
            go = 1
            it = 0
            while go == 1:
                Y[tile * 32 + tx] = X[tile * 32 + tx] * 3.0
                if tx == 0:
                    W[tile] = bx
                    T.mbarrier_arrive_expect_tx(bar[0], 16)
                if multicast:
                    T.cluster_sync()  # every block's barrier expects the response before it lands
                    if tx == 0 and T.block_rank_in_cluster() == 0:
                        T.clc_try_cancel_multicast(resp, bar[0])
                elif tx == 0:
                    T.clc_try_cancel(resp, bar[0])
                T.mbarrier_wait_parity(bar[0], it % 2)
                go = T.clc_is_canceled(resp)
                tile = T.cast(T.clc_get_first_ctaid_x(resp), "int32") + T.block_rank_in_cluster()
                it = it + 1
                T.sync_threads()
            if multicast:
                T.cluster_sync()

    return k


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("nb,cs,multicast", [(5, 1, False), (1, 1, False), (6, 2, True)])
def test_cluster_launch_control_takes_the_work_of_cancelled_clusters(nb, cs, multicast, backend):
    """before: T.clc_try_cancel / T.clc_is_canceled / T.clc_get_first_ctaid_x were missing names. expected: every
    tile is done exactly once; clusters run in order in the emulators, so the first cluster cancels all the others
    and does every tile itself."""
    x = _x(nb * 32, 20 + nb)
    y, w = np.zeros_like(x), np.full(nb, -1, np.int32)
    tilelang.compile(clc_persistent(nb, cs, multicast), target="cuda -arch=sm_100a",
                     execution_backend=backend)(x, y, w)
    np.testing.assert_allclose(y, 3.0 * x.astype(np.float64), rtol=1e-6)
    np.testing.assert_array_equal(w, np.arange(nb) % cs)  # done by the first cluster's blocks


def test_cluster_launch_control_code():
    k = tilelang.compile(clc_persistent(6, 2, True), target="cuda -arch=sm_100a")
    ptx = k.get_ptx()
    for s in ("clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes.multicast::cluster::all.b128",
              "clusterlaunchcontrol.query_cancel.is_canceled.pred.b128",
              "clusterlaunchcontrol.query_cancel.get_first_ctaid.v4.b32.b128"):
        assert s in ptx, s
    # the cancel request in SASS (the multicast form broadcasts); ptxas decodes the response with plain bit ops
    assert "UGETNEXTWORKID.BROADCAST" in k.get_sass()
    k120 = tilelang.compile(clc_persistent(5), target="cuda -arch=sm_120a")
    assert "clusterlaunchcontrol.try_cancel.async" in k120.get_ptx() and "UGETNEXTWORKID" in k120.get_sass()
    with pytest.raises(TileLangUnsupportedError, match="needs sm_100 or newer"):
        tilelang.compile(clc_persistent(5), target="cuda -arch=sm_90a")
    with pytest.raises(TileLangUnsupportedError, match="multicast"):
        tilelang.compile(clc_persistent(6, 2, True), target="cuda -arch=sm_120a")


# ---- distributed shared memory: T.copy_cluster(src, dst, dst_block=) ---------------------------------------------

def swap_tiles(nc, rows, cols, dtype="float32", sync=True, started=True):
    """Each block loads its rows x cols tile of X into shared memory, copies it into the shared tile `theirs` of
    the other block of its cluster of two, and after the cluster barrier stores `theirs` to Y: Y is X with the
    tiles of each pair swapped."""
    n = nc * 2 * rows

    @T.prim_func
    def k(X: T.Tensor((n, cols), dtype), Y: T.Tensor((n, cols), dtype)):
        with T.ClusterKernel(nc * 2, cluster_dims=2, threads=128) as bx:
            mine = T.alloc_shared((rows, cols), dtype)
            theirs = T.alloc_shared((rows, cols), dtype)
            T.copy(X[bx * rows:(bx + 1) * rows, :], mine)
            if started:
                T.cluster_sync()  # the peer runs: its shared memory exists
            T.copy_cluster(mine, theirs, dst_block=1 - T.block_rank_in_cluster())
            if sync:
                T.cluster_sync()
            T.copy(theirs, Y[bx * rows:(bx + 1) * rows, :])
            if not sync:
                T.cluster_sync()

    return k


@pytest.mark.filterwarnings("ignore::tilelang.errors.TileLangPerformanceWarning")  # the ragged tiles' synchronous loads
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("nc,rows,cols,dtype", [(2, 8, 32, "float32"), (1, 6, 20, "float16"), (3, 3, 50, "int8")])
def test_copy_cluster_stores_into_the_peer_shared_tile(nc, rows, cols, dtype, backend):
    """before: T.copy_cluster raised 'not implemented'. expected: each block's tile lands in its peer's shared tile
    (distributed shared memory), ragged element counts (120, 150 for 128 threads) and 1-, 2- and 4-byte elements."""
    rng = np.random.default_rng(SEED + rows * cols)
    print("seed", SEED + rows * cols)
    x = (rng.integers(-100, 100, (nc * 2 * rows, cols)) if dtype == "int8"
         else rng.standard_normal((nc * 2 * rows, cols))).astype(dtype)
    y = np.zeros_like(x)
    tilelang.compile(swap_tiles(nc, rows, cols, dtype), target="cuda -arch=sm_90a", execution_backend=backend)(x, y)
    want = x.reshape(nc, 2, rows, cols)[:, ::-1].reshape(x.shape)
    np.testing.assert_array_equal(y, want)


def test_reading_the_peer_copy_before_the_cluster_barrier_is_reported():
    """Without the cluster barrier between the copy and the reads, block 1 (the last to pass the first barrier, so
    the first to run on) reads its tile before block 0 copied into it: an uninitialised read."""
    x = np.random.default_rng(SEED).standard_normal((16, 32)).astype(np.float32)
    k = tilelang.compile(swap_tiles(1, 8, 32, sync=False), target="cuda -arch=sm_90a", execution_backend="emulator")
    with pytest.raises(TileLangEmulationError) as e:
        k(x, np.zeros_like(x))
    assert "uninitialized_read" in {kind for kind, _ in e.value.reports}, str(e.value)


@pytest.mark.parametrize("backend", BACKENDS)
def test_copying_into_a_peer_that_may_not_have_started_is_reported(backend):
    x = np.random.default_rng(SEED).standard_normal((16, 32)).astype(np.float32)
    k = tilelang.compile(swap_tiles(1, 8, 32, started=False), target="cuda -arch=sm_90a", execution_backend=backend)
    with pytest.raises(TileLangEmulationError) as e:
        k(x, np.zeros_like(x))
    assert "cluster_not_started" in {kind for kind, _ in e.value.reports}, str(e.value)


def test_copy_cluster_code_and_refusals():
    k = tilelang.compile(swap_tiles(2, 8, 32), target="cuda -arch=sm_90a")
    ptx = k.get_ptx()
    assert "mapa.shared::cluster.u32" in ptx and "st.shared::cluster.b32" in ptx
    assert "STS" in k.get_sass() or "ST.E" in k.get_sass()

    def bad(**kw):
        @T.prim_func
        def f(X: T.Tensor((8, 32), "float32")):
            with T.ClusterKernel(2, cluster_dims=2, threads=128) as bx:
                a = T.alloc_shared((8, 32), "float32")
                b = T.alloc_shared((8, 32), "float32")
                bar = T.alloc_barrier([1])
                T.copy(X, a)
                T.copy_cluster(a, b, **{k: (bar[0] if v == "bar" else v) for k, v in kw.items()})
                T.copy(b, X)

        tilelang.compile(f, target="cuda -arch=sm_90a")

    with pytest.raises(TileLangUnsupportedError, match="TMA multicast, and it copies a global tile into a shared"):
        bad(cluster_mask=3)  # shared -> shared
    with pytest.raises(TileLangTypeError, match="no dst_block"):
        bad(cluster_mask=3, dst_block=1)
    with pytest.raises(TileLangTypeError, match="'bar' is not a cluster barrier"):
        bad(dst_block=1, remote_barrier="bar")  # a T.alloc_barrier barrier: the peer's copy may not be initialised
    with pytest.raises(TileLangTypeError, match="dst_block=r"):
        bad(remote_barrier="bar")
    with pytest.raises(TileLangTypeError, match="dst_block=r"):
        bad()


# ---- T.copy_cluster(src, dst, dst_block=, remote_barrier=): the copy signalled on the peer's barrier --------------

def signalled_copy(nc, rows, cols, region=None):
    """TileLang's SM-to-SM copy with a remote barrier: in each cluster of two, block 0 loads its tile of X and
    copies it into block 1's `dst` with remote_barrier=; block 1 waits on its copy of the barrier (no cluster_sync)
    and stores `dst` to Y. `region`: copy only dst[:, :region] of wider tiles (TileLang's non-contiguous case)."""
    cw = region or cols

    @T.prim_func
    def k(X: T.Tensor((nc * rows, cw), "float32"), Y: T.Tensor((nc * rows, cw), "float32")):
        with T.ClusterKernel(nc * 2, cluster_dims=2, threads=128) as bx:
            src = T.alloc_shared((rows, cols), "float32")
            dst = T.alloc_shared((rows, cols), "float32")
            bar = T.alloc_cluster_barrier([1])
            T.cluster_sync()  # every block's barrier initialised before a peer arrives on it
            if T.block_rank_in_cluster() == 0:
                for i, j in T.Parallel(rows, cw):
                    src[i, j] = X[(bx // 2) * rows + i, j]
                T.copy_cluster(src[0:rows, 0:cw], dst[0:rows, 0:cw], dst_block=1, remote_barrier=bar[0])
            if T.block_rank_in_cluster() == 1:
                T.mbarrier_wait_parity(bar[0], 0)
                for i, j in T.Parallel(rows, cw):
                    Y[(bx // 2) * rows + i, j] = dst[i, j]

    return k


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("nc,rows,cols,region", [(1, 8, 32, None), (2, 5, 24, None), (1, 8, 32, 20)])
def test_copy_cluster_with_a_remote_barrier_signals_the_peer(nc, rows, cols, region, backend):
    """before: remote_barrier= was refused ('not implemented'). expected: block 1 of each cluster reads block 0's
    tile after waiting on its own copy of the barrier, which block 0's first thread arrives on once after every
    thread's stores (release at cluster scope): Y is X, in both emulators, for whole tiles, ragged element counts
    (120 for 128 threads) and a column slice of wider tiles."""
    x = _x(nc * rows * (region or cols), rows).reshape(nc * rows, region or cols)
    y = np.zeros_like(x)
    tilelang.compile(signalled_copy(nc, rows, cols, region=region), target="cuda -arch=sm_90a",
                     execution_backend=backend)(x, y)
    np.testing.assert_array_equal(y, x)


def test_copy_cluster_with_a_remote_barrier_code():
    """The PTX: the stores through mapa, a bar.sync, and one remote arrival (mbarrier.arrive.release.cluster on a
    shared::cluster address)."""
    ptx = tilelang.compile(signalled_copy(1, 8, 32), target="cuda -arch=sm_90a").get_ptx()
    assert "st.shared::cluster" in ptx and "mbarrier.arrive.release.cluster.shared::cluster" in ptx
    assert "bar.sync" in ptx or "barrier.sync" in ptx


# ---- TMA multicast: T.copy_cluster(global tile, shared tile, cluster_mask=) ---------------------------------------

def multicast_rows(nc, cs, mask, rows=16, cols=64):
    """Every block of a cluster of cs needs the same rows x cols tile of A (the cluster's row panel) and adds its
    own row of B to it: the blocks of `mask` get A by one multicast load, the others load it themselves."""
    @T.prim_func
    def k(A: T.Tensor((nc * rows, cols), "float16"), B: T.Tensor((nc * cs, cols), "float16"),
          C: T.Tensor((nc * cs * rows, cols), "float32")):
        with T.ClusterKernel(nc * cs, cluster_dims=cs, threads=128) as bx:
            a = T.alloc_shared((rows, cols), "float16")
            T.copy_cluster(A[bx // cs * rows:(bx // cs + 1) * rows, :], a, cluster_mask=mask)
            for i, j in T.Parallel(rows, cols):
                C[bx * rows + i, j] = T.cast(a[i, j], "float32") + T.cast(B[bx, j], "float32")

    return k


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("nc,cs,mask", [(2, 2, 0b11), (1, 4, 0b1110), (2, 4, 0b0101)])
def test_tma_multicast_lands_the_tile_in_every_block_of_the_mask(nc, cs, mask, backend):
    """before: T.copy_cluster(..., cluster_mask=) raised 'not implemented'. expected: every block sees its cluster's
    tile, whether it came by the mask's multicast (issued by the lowest rank of the mask) or by its own load."""
    rng = np.random.default_rng(SEED + mask)
    print("seed", SEED + mask)
    a = rng.standard_normal((nc * 16, 64)).astype(np.float16)
    b = rng.standard_normal((nc * cs, 64)).astype(np.float16)
    c = np.zeros((nc * cs * 16, 64), np.float32)
    tilelang.compile(multicast_rows(nc, cs, mask), target="cuda -arch=sm_90a", execution_backend=backend)(a, b, c)
    want = np.repeat(a.astype(np.float64).reshape(nc, 1, 16, 64), cs, 1) + b.astype(np.float64).reshape(nc, cs, 1, 64)
    np.testing.assert_allclose(c, want.reshape(c.shape), rtol=1e-6)


def test_tma_multicast_code():
    k = tilelang.compile(multicast_rows(2, 2, 0b11), target="cuda -arch=sm_90a")
    ptx = k.get_ptx()
    assert ".multicast::cluster" in ptx and "cp.async.bulk.tensor.2d.shared::cluster.global" in ptx
    assert "UTMALDG.2D.MULTICAST" in k.get_sass()
    assert any("TMA multicast" in ch for ch in k.choices), k.choices
    with pytest.raises(TileLangUnsupportedError, match="TMA multicast"):
        tilelang.compile(multicast_rows(2, 2, 0b11), target="cuda -arch=sm_80")




def cluster_gemm(M, N, K, cluster, guard=False, bM=64, bN=64, bK=64, nest=False):
    """The reference GEMM in a cluster: blocks of a cluster along x share A's tiles (they differ in bx only), along
    y B's."""

    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, bN), T.ceildiv(M, bM), threads=128, cluster_dims=cluster) as (bx, by):
            A_s = T.alloc_shared((bM, bK), "float16")
            B_s = T.alloc_shared((bK, bN), "float16")
            C_l = T.alloc_fragment((bM, bN), "float32")
            T.clear(C_l)
            if nest:  # inside a loop run once by even blocks, twice by odd ones: no cluster barrier in it
                for r in T.serial(1 + bx % 2):
                    T.clear(C_l)
                    for ko in T.Pipelined(K // bK, num_stages=3):
                        T.copy(A[by * bM, ko * bK], A_s)
                        T.copy(B[ko * bK, bx * bN], B_s)
                        T.gemm(A_s, B_s, C_l)
            elif guard:  # under an `if`: a block may skip the loop, so no cluster barrier in it
                if by * bM < M - 100:
                    for ko in T.Pipelined(K // bK, num_stages=3):
                        T.copy(A[by * bM, ko * bK], A_s)
                        T.copy(B[ko * bK, bx * bN], B_s)
                        T.gemm(A_s, B_s, C_l)
            else:
                for ko in T.Pipelined(K // bK, num_stages=3):
                    T.copy(A[by * bM, ko * bK], A_s)
                    T.copy(B[ko * bK, bx * bN], B_s)
                    T.gemm(A_s, B_s, C_l)
            T.copy(C_l, C[by * bM, bx * bN])

    return main


@pytest.mark.parametrize("arch,cluster,shared", [
    ("sm_90", (2, 1, 1), "A"), ("sm_90", (1, 2, 1), "B"), ("sm_100a", (2, 1, 1), "A"), ("sm_90", (2, 2, 1), None),
    ("sm_90a", (2, 1, 1), "A"), ("sm_90a", (1, 2, 1), "B"),  # the warp-specialised pipeline
])
def test_tiles_a_cluster_shares_are_multicast_automatically(arch, cluster, shared):
    """A pipelined TMA copy whose tile is the same in every block of the cluster (its indices read no block index the
    cluster spans) is issued once, by rank 0, with .multicast::cluster; each stage is refilled after a cluster
    barrier (warp-specialised, sm_90a: once the consumers of every block have arrived on rank 0's 'empty' barrier).
    A (2, 2) cluster shares neither operand with all its blocks: no multicast. Ragged M (TMA's zero fill), both
    emulators, against NumPy."""
    rng = np.random.default_rng(int(os.environ.get("TL_TEST_SEED") or 7))
    M, N, K = 200, 256, 256
    k = tilelang.compile(cluster_gemm(M, N, K, cluster), target=f"cuda -arch={arch}", execution_backend="emulator")
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c = np.full((M, N), np.nan, np.float32)
    k(a, b, c)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-3, atol=1e-3)
    lines = [x for x in k.choices if "TMA multicast to the cluster's" in x]
    if shared is None:
        assert not lines, lines
    else:
        assert len(lines) == 1 and f"T.copy {shared} -> {shared}_s" in lines[0], lines


def test_automatic_multicast_code_and_where_it_is_not_chosen():
    k = tilelang.compile(cluster_gemm(1024, 1024, 1024, (2, 1, 1)), target="cuda -arch=sm_90")
    ptx = k.get_ptx()
    assert ".multicast::cluster" in ptx and "barrier.cluster.arrive" in ptx and "barrier.cluster.wait" in ptx
    assert re.search(r"\bUTMALDG\.2D\.MULTICAST\b", k.get_sass())
    # warp-specialised: the consumers of the other blocks release rank 0's stages with remote arrivals
    w = tilelang.compile(cluster_gemm(1024, 1024, 1024, (2, 1, 1)), target="cuda -arch=sm_90a")
    wptx = w.get_ptx()
    assert ".multicast::cluster" in wptx and "mbarrier.arrive.release.cluster" in wptx
    res = w.get_resource_usage()
    assert res["spill_stores"] == 0 and res["spill_loads"] == 0, res
    # the loop under an `if` on the block index: blocks of a cluster may not all run it
    g = tilelang.compile(cluster_gemm(1024, 1024, 1024, (2, 1, 1), guard=True), target="cuda -arch=sm_90")
    assert not [x for x in g.choices if "TMA multicast to the cluster's" in x]
    assert ".multicast::cluster" not in g.get_ptx()
    # inside a loop whose trip count differs between the blocks of a cluster: runs (no deadlock), no multicast
    M = N = K = 128
    n = tilelang.compile(cluster_gemm(M, N, K, (2, 1, 1), nest=True), target="cuda -arch=sm_90",
                         execution_backend="emulator")
    assert not [x for x in n.choices if "TMA multicast to the cluster's" in x]
    rng = np.random.default_rng(3)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c = np.zeros((M, N), np.float32)
    n(a, b, c)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-3, atol=1e-3)
