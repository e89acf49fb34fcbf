"""LegalizeTileOpsGPU: cp.async-eligible copies are marked `tl.copy_async`, the destinations of a
pipelined loop's async copies get `tl.num_stages`, other copies and fills become T.Parallel nests."""
import tilelang.language as T

from passes import assert_equal, run


def test_async_copies_and_pipeline_stages():
    @T.prim_func
    def before(A: T.Tensor((256, 64), "float16")):
        with T.Kernel(4, threads=128) as bx:
            S = T.alloc_shared((64, 64), "float16")
            for k in T.Pipelined(4, num_stages=3):
                T.copy(A[k * 64:k * 64 + 64, 0:64], S)

    @T.prim_func
    def expected(A: T.Tensor((256, 64), "float16")):
        with T.Kernel(4, threads=128) as bx:
            S = T.alloc_shared((64, 64), "float16")
            with T.attr(S, "tl.num_stages", 3):
                for k in T.Pipelined(4, num_stages=3):
                    with T.attr(None, "tl.copy_async", 1):
                        T.copy(A[k * 64:k * 64 + 64, 0:64], S)

    assert_equal(run("LegalizeTileOpsGPU", before), expected)


def test_unaligned_copy_and_fill_become_parallel_loops():
    @T.prim_func
    def before(A: T.Tensor((60, 6), "float16")):
        with T.Kernel(1, threads=32) as bx:
            S = T.alloc_shared((60, 6), "float16")
            T.copy(A, S)
            T.fill(S, 0.0)

    @T.prim_func
    def expected(A: T.Tensor((60, 6), "float16")):
        with T.Kernel(1, threads=32) as bx:
            S = T.alloc_shared((60, 6), "float16")
            for i, j in T.Parallel(60, 6):
                S[i, j] = A[i, j]
            for i, j in T.Parallel(60, 6):
                S[i, j] = T.float16(0.0)

    assert_equal(run("LegalizeTileOpsGPU", before), expected)


def test_disabled_async_copy_is_a_parallel_loop():
    @T.prim_func
    def before(A: T.Tensor((64, 64), "float16")):
        with T.Kernel(1, threads=128) as bx:
            S = T.alloc_shared((64, 64), "float16")
            T.copy(A, S)

    @T.prim_func
    def expected(A: T.Tensor((64, 64), "float16")):
        with T.Kernel(1, threads=128) as bx:
            S = T.alloc_shared((64, 64), "float16")
            for i, j in T.Parallel(64, 64):
                S[i, j] = A[i, j]

    assert_equal(run("LegalizeTileOpsGPU", before, **{"tl.disable_async_copy": True}), expected)
