"""SplitInteriorBlocks: bound checks of the form `c * block index + thread/loop terms < bound` are
dropped where every block passes them, and a straight-line statement whose checks only boundary
blocks need runs without them in the interior blocks (one block-uniform branch); the pipelined
main loop and the cp.async prologue keep one copy."""
import tilelang.language as T

from passes import assert_equal, run


def test_epilogue_gets_an_interior_fast_path():
    @T.prim_func
    def before(A: T.Tensor((100, 40), "float32")):
        with T.Kernel(2, 4, threads=64) as (bx, by):
            tx = T.call_intrin("int32", "tl.thread_idx")
            for i in T.unroll(4):
                if by * 32 + i * 8 + tx // 8 < 100 and bx * 32 + tx % 8 * 4 < 40:
                    A[by * 32 + i * 8 + tx // 8, bx * 32 + tx % 8 * 4] = 1.0

    @T.prim_func
    def expected(A: T.Tensor((100, 40), "float32")):
        with T.Kernel(2, 4, threads=64) as (bx, by):
            tx = T.call_intrin("int32", "tl.thread_idx")
            if by * 32 + 31 < 100 and bx * 32 + 28 < 40:
                for i in T.unroll(4):
                    A[by * 32 + i * 8 + tx // 8, bx * 32 + tx % 8 * 4] = 1.0
            else:
                for i_1 in T.unroll(4):
                    if by * 32 + i_1 * 8 + tx // 8 < 100 and bx * 32 + tx % 8 * 4 < 40:
                        A[by * 32 + i_1 * 8 + tx // 8, bx * 32 + tx % 8 * 4] = 1.0

    assert_equal(run("SplitInteriorBlocks", before), expected)


def test_checks_every_block_passes_are_dropped_without_a_split():
    @T.prim_func
    def before(A: T.Tensor((128, 64), "float32")):
        with T.Kernel(4, threads=64) as bx:
            tx = T.call_intrin("int32", "tl.thread_idx")
            for i in T.unroll(2):
                if bx * 32 + i * 16 + tx // 4 < 128:
                    A[bx * 32 + i * 16 + tx // 4, tx % 4] = 2.0

    @T.prim_func
    def expected(A: T.Tensor((128, 64), "float32")):
        with T.Kernel(4, threads=64) as bx:
            tx = T.call_intrin("int32", "tl.thread_idx")
            for i in T.unroll(2):
                A[bx * 32 + i * 16 + tx // 4, tx % 4] = 2.0

    assert_equal(run("SplitInteriorBlocks", before), expected)


def test_serial_loops_keep_one_copy():
    @T.prim_func
    def before(A: T.Tensor((100,), "float32")):
        with T.Kernel(2, threads=64) as bx:
            tx = T.call_intrin("int32", "tl.thread_idx")
            for k in T.serial(4):
                if bx * 64 + tx < 100:
                    A[bx * 64 + tx] = A[bx * 64 + tx] + 1.0

    assert_equal(run("SplitInteriorBlocks", before), before)


def test_dynamic_sizes_get_the_fast_path_selected_per_block():
    """With a run-time size the bound is symbolic: interior blocks (bx * 32 + 31 < M) skip the checks of
    the load and the store; the emulator runs both paths (ragged M = 100: three interior blocks, one
    boundary block) and its out-of-bounds check proves the dropped checks redundant."""
    import numpy as np
    import tilelang

    M = T.dynamic("M")

    @T.prim_func
    def scale(A: T.Tensor((M, 64), "float32"), B: T.Tensor((M, 64), "float32")):
        with T.Kernel(T.ceildiv(M, 32), threads=128) as bx:
            S = T.alloc_fragment((32, 64), "float32")
            T.copy(A[bx * 32, 0], S)
            for i, j in T.Parallel(32, 64):
                S[i, j] = S[i, j] * 2.0
            T.copy(S, B[bx * 32, 0])

    k = tilelang.compile(scale, target="cuda -arch=sm_80", execution_backend="emulator")
    assert sum("interior blocks (bx * 32 + 31 < M)" in c for c in k.choices) == 2, k.choices
    seed = 3
    print(f"seed {seed}")
    a = np.random.default_rng(seed).standard_normal((100, 64)).astype("float32")
    b = np.zeros_like(a)
    k(a, b)
    np.testing.assert_array_equal(b, 2 * a)
