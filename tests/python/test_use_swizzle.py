"""T.use_swizzle(panel_size, order) is honoured (block rasterisation for L2 reuse, pass RasterizeBlocks):
the block indices the kernel sees are a bijection of the launch indices, panel by panel; results are
unchanged on the CPU target and in the emulator, with ragged grids whose last panel is partial."""
import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang import _ffi

SEED = 99


def block_ids(gx, gy, panel, order):
    @T.prim_func
    def k(X: T.Tensor((gy, gx), "int32"), Y: T.Tensor((gy, gx), "int32")):
        with T.Kernel(gx, gy, threads=32) as (bx, by):
            T.use_swizzle(panel_size=panel, order=order)
            X[by, bx] = X[by, bx] + 1  # every block visited exactly once
            Y[by, bx] = bx * 1000 + by
    return k


@pytest.mark.parametrize("gx,gy,panel,order", [(5, 7, 2, "row"), (6, 4, 3, "col"), (3, 3, 8, "row")])
def test_rasterisation_is_a_bijection(gx, gy, panel, order):
    x = np.zeros((gy, gx), np.int32)
    y = np.zeros((gy, gx), np.int32)
    tilelang.compile(block_ids(gx, gy, panel, order), target="cpu")(x, y)
    assert (x == 1).all()
    assert (y == np.add.outer(np.arange(gy), 1000 * np.arange(gx))).all()
    ir = _ffi.print_func(dict(_ffi.lower_trace_funcs(block_ids(gx, gy, panel, order), "cpu"))["RasterizeBlocks"])
    assert "block_linear = " in ir and "panel_rows = " in ir


def swizzled_gemm(M, N, K, panel):
    @T.prim_func
    def k(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, 32), T.ceildiv(M, 32), threads=128) as (bx, by):
            T.use_swizzle(panel_size=panel)
            As = T.alloc_shared((32, 32), "float16")
            Bs = T.alloc_shared((32, 32), "float16")
            Cl = T.alloc_fragment((32, 32), "float32")
            T.clear(Cl)
            for ko in T.Pipelined(T.ceildiv(K, 32), num_stages=2):
                T.copy(A[by * 32, ko * 32], As)
                T.copy(B[ko * 32, bx * 32], Bs)
                T.gemm(As, Bs, Cl)
            T.copy(Cl, C[by * 32, bx * 32])
    return k


@pytest.mark.parametrize("backend", ["cpu", "emulator"])
def test_swizzled_gemm_matches_numpy(backend):
    M, N, K = 100, 72, 64
    rng = np.random.default_rng(SEED)
    print("seed", SEED)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c = np.zeros((M, N), np.float32)
    f = swizzled_gemm(M, N, K, 2)
    kern = tilelang.compile(f, target="cpu") if backend == "cpu" else \
        tilelang.compile(f, target="cuda", execution_backend="emulator")
    kern(a, b, c)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64), rtol=2e-3, atol=2e-3)
    if backend == "emulator":
        k = tilelang.compile(f, target="cuda -arch=sm_80")
        assert not [w for w in k.warnings if "use_swizzle" in w]


def launch_order(gx, gy, panel):
    @T.prim_func
    def k(Cnt: T.Tensor((1,), "int32"), O: T.Tensor((gy, gx), "int32")):
        with T.Kernel(gx, gy, threads=32) as (bx, by):
            T.use_swizzle(panel_size=panel)
            O[by, bx] = Cnt[0]  # the emulator runs blocks one after another, in launch order
            Cnt[0] = Cnt[0] + 1
    return k


def test_blocks_are_handed_out_panel_by_panel():
    gx, gy, panel = 5, 7, 2
    cnt, order = np.zeros(1, np.int32), np.zeros((gy, gx), np.int32)
    tilelang.compile(launch_order(gx, gy, panel), target="cuda", execution_backend="emulator")(cnt, order)
    expected = np.zeros((gy, gx), np.int32)
    for lin in range(gx * gy):  # panels of `panel` rows; inside a panel column by column
        p, off = divmod(lin, panel * gx)
        rows = min(panel, gy - p * panel)
        expected[p * panel + off % rows, off // rows] = lin
    assert (order == expected).all(), order
    assert order[1, 0] == 1 and order[0, 1] == 2  # (not launch order, which would give 5 and 1)
