"""`tilelang.cuda.intrinsics` as TileLang programs import it (its Hadamard transform, the int4 / ladder GEMM
examples): the mma operand swizzle as a T.Layout, its index function, the accumulator's index map, and the
hand-written-mma emitters refused by name. Before: ModuleNotFoundError: No module named 'tilelang.cuda'."""
import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang.cuda.intrinsics import (INT4TensorCoreIntrinEmitter, TensorCoreIntrinEmitter, get_mma_micro_size,
                                      get_swizzle_layout, make_mma_swizzle_layout, mma_store_index_map)
from tilelang.errors import TileLangUnsupportedError

SEED = 20261207


def test_swizzle_index_worked_by_hand():
    # float16, 64-element rows (128 bytes): 16-byte vector v of row r goes to v ^ (r % 8)
    assert get_swizzle_layout(1, 0, 64, "float16") == (0, 1, 8)
    assert get_swizzle_layout(3, 17, 64, "float16") == (0, 3, 9)  # vector 2 ^ 3 = 1, element 1 of it
    assert get_swizzle_layout(9, 63, 64, "float16") == (0, 9, 55)  # vector 7 ^ 1 = 6
    # 32-element rows (64 bytes): groups of 4 vectors, permuted by (r % 8) // 2
    assert get_swizzle_layout(5, 9, 32, "float16") == (0, 5, 25)  # vector 1 ^ 2 = 3
    # float32, 64-element rows (256 bytes): two 128-byte groups, the group is the first index
    assert get_swizzle_layout(2, 37, 64, "float32") == (1, 2, 13)  # vector 9: group 1, vector 1 ^ 2 = 3, element 1
    with pytest.raises(ValueError, match="multiple of 32 bytes"):
        get_swizzle_layout(0, 0, 8, "float16")


def test_swizzle_is_a_permutation_of_each_row_group():
    for rows, cols, dt in [(16, 64, "float16"), (8, 32, "float16"), (8, 64, "float32"), (16, 128, "int8")]:
        seen = {get_swizzle_layout(r, c, cols, dt) for r in range(rows) for c in range(cols)}
        assert len(seen) == rows * cols


def copy_through(M, N, dtype, smooth=False):
    @T.prim_func
    def k(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(1, threads=128):
            S = T.alloc_shared((M, N), dtype)
            T.annotate_layout({S: make_mma_swizzle_layout(S, is_smooth=smooth)})
            T.copy(A, S)
            for i, j in T.Parallel(M, N):
                B[i, j] = S[i, (j + 1) % N] * 2

    return k


@pytest.mark.parametrize("target,backend", [("cpu", None), ("cuda", "emulator")])
@pytest.mark.parametrize("M,N,dtype,smooth", [(32, 64, "float16", False), (16, 32, "float32", False),
                                              (16, 24, "float16", False), (32, 64, "float16", True)])
def test_a_swizzled_tile_reads_back_what_was_written(target, backend, M, N, dtype, smooth):
    r = np.random.default_rng(SEED)
    print(f"seed {SEED}")
    a = r.standard_normal((M, N)).astype(dtype)
    b = np.zeros_like(a)
    tilelang.compile(copy_through(M, N, dtype, smooth), target=target, execution_backend=backend)(a, b)
    np.testing.assert_array_equal(b.astype(np.float64), np.roll(a, -1, axis=1).astype(np.float64) * 2)


def test_accumulator_index_map_follows_the_isa():
    # m16n8 accumulator: lane l holds rows l/4 and l/4 + 8, columns 2*(l%4) and the next; two n8 halves
    cells = {mma_store_index_map(t, i) for t in range(32) for i in range(8)}
    assert cells == {(r, c) for r in range(16) for c in range(16)}
    assert mma_store_index_map(5, 0) == (1, 2) and mma_store_index_map(5, 3) == (9, 3)
    assert mma_store_index_map(31, 7) == (15, 15)
    assert get_mma_micro_size("float16") == (16, 16, 16) and get_mma_micro_size("int8") == (16, 16, 32)


def test_hand_written_mma_emitters_are_refused_by_name():
    for cls in (TensorCoreIntrinEmitter, INT4TensorCoreIntrinEmitter):
        with pytest.raises(TileLangUnsupportedError, match=cls.__name__ + ".*T.gemm"):
            cls(a_dtype="float16", b_dtype="float16", accum_dtype="float32")
