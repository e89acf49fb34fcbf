"""TMA tile::gather4 / tile::scatter4 on the tcgen05 family (docs/blackwell.md, "gather4"), TileLang's T.tma_gather4
/ T.tma_scatter4 with T.shuffle_elect, T.tma_store_arrive and T.tma_store_wait.

Before: T.tma_gather4 and T.tma_scatter4 raised TileLangUnsupportedError naming themselves.
Expected: one elected thread issues `cp.async.bulk.tensor.2d ... tile::gather4` (four rows of the tensor, any rows, K
columns from `col`, into a row-major [4, K] shared tile; rows and columns outside the tensor read as zero) completing
the mbarrier by 4 K elements' bytes, or `tile::scatter4` (the tile into four rows; what falls outside is not
written) in the thread's bulk group. Both emulators run them from the PTX ISA's description (the map's box one row
of K, the coordinates a column and four rows); results against NumPy, seeded random data and rows (some outside the
tensor), a ragged last column range."""
import os
import re

import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import TileLangError

SM100A = "cuda -arch=sm_100a"


def _rng():
    seed = int(os.environ.get("TL_TEST_SEED") or np.random.SeedSequence().entropy % 2**32)
    print("seed", seed)
    return np.random.default_rng(seed)


def gather_scatter(M, K, Kb, G, dtype="float16", scatter=True):
    """Block b gathers rows Idx[4 b .. 4 b + 3], columns [col, col + Kb), of X into its tile, copies the tile to
    Y[4 b .. 4 b + 4, :] and (scatter) scatters it back into the same rows of Z at the same columns (TileLang's
    round trip, with a grid and an offset)."""

    @T.prim_func
    def main(X: T.Tensor((M, K), dtype), Idx: T.Tensor((4 * G,), "int32"), col: T.int32,
             Y: T.Tensor((4 * G, Kb), dtype), Z: T.Tensor((M, K), dtype)):
        with T.Kernel(G, 1, threads=128) as (bx, by):
            tile = T.alloc_shared((4, Kb), dtype)
            bar = T.alloc_barrier(1)
            rows = [Idx[4 * bx + i] for i in range(4)]
            if T.shuffle_elect(128):
                T.mbarrier_expect_tx(bar, T.tma_gather4_bytes(Kb, dtype))
                T.tma_gather4(X, tile, col, rows, barrier=bar)
                T.barrier_arrive(bar)
            T.mbarrier_wait_parity(bar, 0)
            T.copy(tile, Y[4 * bx, 0])
            if scatter:
                if T.shuffle_elect(128):
                    T.tma_scatter4(tile, Z, col, rows)
                    T.tma_store_arrive()
                T.tma_store_wait(0, read=False)

    return main


@pytest.mark.parametrize("M,K,Kb,G,dtype,col", [
    (100, 200, 64, 3, "float16", 160),   # columns 200..223 of the last range outside the tensor
    (64, 64, 64, 1, "float16", 0),       # TileLang's round trip
    (300, 96, 32, 2, "float32", 48),     # 128-byte rows of float32, columns 96..111 outside
])
def test_gather4_and_scatter4_in_the_emulator(M, K, Kb, G, dtype, col):
    rng = _rng()
    X = rng.standard_normal((M, K)).astype(dtype)
    # distinct rows a block for the scatter, one of them (per block) outside the tensor: read as zeros, not written
    idx = np.concatenate([np.append(rng.choice(M, 3, replace=False), [M + 7 if b % 2 else -1]) for b in range(G)])
    idx = idx.astype(np.int32)
    k = tilelang.compile(gather_scatter(M, K, Kb, G, dtype), target=SM100A, execution_backend="emulator")
    Y = np.full((4 * G, Kb), np.nan, dtype)
    Z = np.full((M, K), -1, dtype)
    k(X, idx, col, Y, Z)
    want_y = np.zeros((4 * G, Kb), dtype)
    want_z = np.full((M, K), -1, dtype)
    hi = min(col + Kb, K)
    for i, r in enumerate(idx):
        if 0 <= r < M:
            want_y[i, :hi - col] = X[r, col:hi]
            want_z[r, col:hi] = X[r, col:hi]
    np.testing.assert_array_equal(Y, want_y)
    np.testing.assert_array_equal(Z, want_z)
    text = "\n".join(k.choices)
    assert f"cp.async.bulk.tensor.2d tile::gather4, four rows of {Kb} values" in text, text
    assert "tile::scatter4" in text, text


def test_gather4_and_scatter4_compile_for_sm100a():
    k = tilelang.compile(gather_scatter(1024, 1024, 64, 8), target=SM100A)
    ptx = k.get_ptx()
    assert "cp.async.bulk.tensor.2d.shared::cluster.global.tile::gather4.mbarrier::complete_tx::bytes" in ptx
    assert "cp.async.bulk.tensor.2d.global.shared::cta.tile::scatter4.bulk_group" in ptx
    assert "cp.async.bulk.commit_group" in ptx and "cp.async.bulk.wait_group" in ptx
    sass = k.get_sass()
    assert re.search(r"\bUTMALDG\.2D\.GATHER4\b", sass) and re.search(r"\bUTMASTG\.2D\.SCATTER4\b", sass)


def test_gather4_bytes():
    assert [T.tma_gather4_bytes(64, d) for d in ("float16", "float32", "float4_e2m1fn", "uint8")] == [512, 1024, 128, 256]


def test_gather4_misuse_is_a_clear_error():
    # another target: ptxas has no tile::gather4 there
    with pytest.raises(TileLangError, match=re.escape("T.tma_gather4 (TMA tile::gather4)")):
        tilelang.compile(gather_scatter(64, 64, 64, 1, scatter=False), target="cuda -arch=sm_90a")
    def gather_into(shape):
        @T.prim_func
        def main(X: T.Tensor((64, 64), "float16")):
            with T.Kernel(1, threads=128):
                t = T.alloc_shared(shape, "float16")
                bar = T.alloc_barrier(1)
                T.tma_gather4(X, t, 0, [0, 1, 2, 3], barrier=bar)
        return main

    # a tile that is not [4, K]
    with pytest.raises(TileLangError, match=re.escape("must be a [4, K] shared tile")):
        gather_into((8, 64))
    # rows of 20 bytes: TMA moves multiples of 16
    with pytest.raises(TileLangError, match=re.escape("rows of a multiple of 16 bytes")):
        gather_into((4, 10))
    with pytest.raises(TileLangError, match=re.escape("exactly four row indices")):
        T.tma_gather4(None, None, 0, [0, 1, 2])
    with pytest.raises(TileLangError, match=re.escape("needs the mbarrier")):
        @T.prim_func
        def no_bar(X: T.Tensor((64, 64), "float16")):
            with T.Kernel(1, threads=128):
                t = T.alloc_shared((4, 64), "float16")
                T.tma_gather4(X, t, 0, [0, 1, 2, 3])
