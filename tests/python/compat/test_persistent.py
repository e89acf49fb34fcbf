"""T.Persistent(domain, wave_size, index, group_size): a persistent kernel's loop over output tiles (TileLang's
persistent GEMM). Before: a TileLangUnsupportedError. Each of `wave_size` blocks visits tile ids
w * wave_size + index, read in grouped order (group_size columns of the last dimension at a time); every tile is
visited exactly once, including ragged tile counts that are not a multiple of the group. Checked against NumPy on
the CPU target and in the emulator, and the visiting order against a Python model of the documented mapping."""
import numpy as np
import pytest

import tilelang
import tilelang.language as T

SEED = 404


def persistent_gemm(M, N, K, bM, bN, bK, blocks, group=8, scheduler=False):
    """A persistent GEMM over T.Persistent, or (scheduler) over T.PersistentTileScheduler's stateless decode in a
    loop over waves."""
    mt, nt = -(-M // bM), -(-N // bN)

    @T.macro
    def tile(A, B, C, A_s, B_s, C_l, bx, by):
        T.clear(C_l)
        for k in T.Pipelined(T.ceildiv(K, bK), num_stages=2):
            T.copy(A[bx * bM, k * bK], A_s)
            T.copy(B[k * bK, by * bN], B_s)
            T.gemm(A_s, B_s, C_l)
        T.copy(C_l, C[bx * bM, by * bN])

    @T.prim_func
    def gemm(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(blocks, threads=128) as bid:
            A_s = T.alloc_shared((bM, bK), "float16")
            B_s = T.alloc_shared((bK, bN), "float16")
            C_l = T.alloc_fragment((bM, bN), "float32")
            if scheduler:
                sched = T.PersistentTileScheduler(mt, nt, num_workers=blocks, swizzle_size=2, stateful=False)
                for w in T.serial(-(-mt * nt // blocks)):
                    bx, by = sched.coord(blocks * w + bid)
                    if blocks * w + bid < mt * nt:
                        tile(A, B, C, A_s, B_s, C_l, bx, by)
            else:
                for bx, by in T.Persistent([mt, nt], blocks, bid, group):
                    tile(A, B, C, A_s, B_s, C_l, bx, by)

    return gemm


@pytest.mark.parametrize("target", ["cpu", "cuda -arch=sm_80"])
@pytest.mark.parametrize("M,N,K,blocks,group", [(96, 160, 64, 3, 8), (64, 96, 32, 4, 2)])
def test_persistent_gemm(target, M, N, K, blocks, group):
    print(f"seed {SEED}")
    rng = np.random.default_rng(SEED)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c = np.full((M, N), np.nan, np.float32)
    kw = {} if target == "cpu" else {"execution_backend": "emulator"}
    tilelang.compile(persistent_gemm(M, N, K, 32, 32, 32, blocks, group), target=target, **kw)(a, b, c)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-3, atol=1e-3)


def test_visiting_order():
    """Which block writes which tile, in which wave: a 3 x 5 tile domain, 4 blocks, groups of 2 columns. Model:
    t = w * 4 + index; group position t % 2; row (t // 2) % 3; column (t // 2 // 3) * 2 + t % 2."""
    m, n, blocks, g = 3, 5, 4, 2

    @T.prim_func
    def order(O: T.Tensor((m, n), "int32")):
        with T.Kernel(blocks, threads=32) as bid:
            w = T.alloc_var("int32", init=0)
            for i, j in T.Persistent([m, n], blocks, bid, g):
                O[i, j] = w * 100 + bid
                w = w + 1

    o = np.full((m, n), -1, np.int32)
    tilelang.compile(order, target="cpu")(o)
    want = np.full((m, n), -1, np.int32)
    visits = [0] * blocks
    padded = (-(-n // g)) * m * g
    for wave in range(-(-padded // blocks)):
        for idx in range(blocks):
            t = wave * blocks + idx
            if t >= padded:
                continue
            i, j = (t // g) % m, (t // g // m) * g + t % g
            if j < n:
                assert want[i, j] == -1
                want[i, j] = visits[idx] * 100 + idx
                visits[idx] += 1
    np.testing.assert_array_equal(o, want)
    assert (o >= 0).all()


# ---- T.PersistentTileScheduler ----------------------------------------------------------------------------


def _order_model(mt, nt, workers, swizzle, column_major):
    """Worker w's tiles in order, from the documented decode: numbers w, w + workers, ...; within a panel of
    `swizzle` slow-axis tiles the fast axis (M when column-major) is swept first."""
    fast_n, slow_n = (mt, nt) if column_major else (nt, mt)
    out = {}
    for w in range(workers):
        seq = []
        t = w
        while t < mt * nt:
            panel, within = divmod(t, fast_n * swizzle)
            width = max(1, min(swizzle, slow_n - panel * swizzle))
            fast, slow = within // width, panel * swizzle + within % width
            seq.append((fast, slow) if column_major else (slow, fast))
            t += workers
        out[w] = seq
    return out


def _scheduled(mt, nt, workers, swizzle, column_major, steps):
    """Each block records the tiles its scheduler gives it, with the iteration count, into Log[block, step]."""
    @T.prim_func
    def k(Log: T.Tensor((workers, steps, 3), "int32")):
        with T.Kernel(workers, threads=32) as bid:
            sched = T.PersistentTileScheduler(mt, nt, num_workers=workers, swizzle_size=swizzle,
                                              column_major=column_major, name="tiles")
            sched.init(bid)
            while sched.valid():
                Log[bid, sched.current_iter, 0] = sched.m_idx
                Log[bid, sched.current_iter, 1] = sched.n_idx
                Log[bid, sched.current_iter, 2] = sched.linear_idx
                sched.next_tile()
    return k


@pytest.mark.parametrize("where", ["cpu", "emulator"])
@pytest.mark.parametrize("mt,nt,workers,swizzle,column_major", [(5, 3, 4, 1, True), (7, 5, 3, 2, True),
                                                                (4, 7, 5, 3, False)])
def test_persistent_tile_scheduler_visits_every_tile_once_in_its_order(where, mt, nt, workers, swizzle,
                                                                       column_major):
    """Before: T.PersistentTileScheduler was missing (AttributeError). Expected: the scheduler's while loop gives
    each block the tiles of the documented order (ragged panels included), every tile exactly once."""
    steps = -(-mt * nt // workers)
    func = _scheduled(mt, nt, workers, swizzle, column_major, steps)
    from tilelang import _ffi

    assert "tiles_m_idx" in _ffi.print_func(func) and "tiles_current_iter" in _ffi.print_func(func)  # name=
    k = tilelang.compile(func, target="cpu") if where == "cpu" else \
        tilelang.compile(func, target="cuda -arch=sm_80", execution_backend="emulator")
    log = np.full((workers, steps, 3), -1, np.int32)
    k(log)
    want = _order_model(mt, nt, workers, swizzle, column_major)
    seen = []
    for w in range(workers):
        got = [tuple(log[w, s, :2]) for s in range(steps) if log[w, s, 2] >= 0]
        assert got == want[w], (w, got, want[w])
        assert [log[w, s, 2] for s in range(len(got))] == [w + s * workers for s in range(len(got))]
        seen += got
    assert sorted(seen) == sorted((m, n) for m in range(mt) for n in range(nt))


def test_persistent_tile_scheduler_gemm_and_stateless_coord():
    """A persistent GEMM on the scheduler (the coordinates of `coord` for a `for` loop over waves, stateless),
    ragged, against NumPy in the emulator."""
    M, N, K = 96, 80, 64
    print(f"seed {SEED}")
    rng = np.random.default_rng(SEED)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c = np.full((M, N), np.nan, np.float32)
    gemm = persistent_gemm(M, N, K, 32, 32, 32, 2, scheduler=True)
    tilelang.compile(gemm, target="cuda -arch=sm_80", execution_backend="emulator")(a, b, c)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-3, atol=1e-3)
