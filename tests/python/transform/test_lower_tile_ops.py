"""LowerTileOpsGPU and LowerTileOpsCPU: tile programs (with the facts of the earlier passes) become
thread-level / host loop programs."""
import tilelang.language as T
from tilelang import layout

from passes import assert_equal, run

STRIPED = layout.striped((64,), 32, 4).value("default (free) layout")


def test_cuda_parallel_nests_partitioned_by_their_layout():
    @T.prim_func
    def before(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            F = T.alloc_fragment((64,), "float32")
            with T.attr(F, "tl.layout", STRIPED):
                for i in T.Parallel(64, annotations={"tl.loop_layout": STRIPED}):
                    F[i] = A[i] * 2.0
                for i in T.Parallel(64, annotations={"tl.loop_layout": STRIPED}):
                    B[i] = F[i] + 1.0

    @T.prim_func
    def expected(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            F = T.alloc_local((4,), "float32")  # 64 elements in chunks of 4: threads 0-15 hold 4 each
            tx = T.call_intrin("int32", "tl.thread_idx")
            with T.attr(None, "tl.tile_op", 0):
                for l in T.unroll(4):
                    if l + tx * 4 < 64:
                        F[l] = A[l + tx * 4] * 2.0
            with T.attr(None, "tl.tile_op", 1):
                for l in T.unroll(4):
                    if l + tx * 4 < 64:
                        B[l + tx * 4] = T.if_then_else(l == 0, F[0], T.if_then_else(l == 1, F[1], T.if_then_else(
                            l == 2, F[2], F[3]))) + 1.0

    assert_equal(run("LowerTileOpsGPU", before), expected)


def test_cuda_async_copy_and_shared_flattening():
    @T.prim_func
    def before(A: T.Tensor((8, 16), "float16")):
        with T.Kernel(1, threads=32) as bx:
            S = T.alloc_shared((8, 16), "float16")
            with T.attr(None, "tl.copy_async", 1):
                T.copy(A, S)

    @T.prim_func
    def expected(A: T.Tensor((8, 16), "float16")):
        with T.Kernel(1, threads=32) as bx:
            S = T.alloc_shared((128,), "float16")
            with T.attr(S, "tl.shared_tile", T.call_intrin("handle", "list", 1, 8, 16)):
                tx = T.call_intrin("int32", "tl.thread_idx")
                with T.attr(None, "tl.tile_op", 0):
                    if tx < 16:  # 16 chunks of 16 bytes; chunk c of row r lands at chunk c ^ (r // 4 % 2)
                        T.call_intrin("void", "tl.cp_async",
                                      S[T.call_intrin("int32", "tl.bitwise_xor", tx % 2, tx // 8 % 2) * 8 + tx // 2 * 16],
                                      A[tx // 2, tx % 2 * 8], 16, tx // 2 < 8)
                    T.call_intrin("void", "tl.cp_async_commit")
                    T.call_intrin("void", "tl.cp_async_wait", 0)

    assert_equal(run("LowerTileOpsGPU", before), expected)


def test_cpu_copy_gets_a_fast_path_and_a_guarded_tail():
    @T.prim_func
    def before(A: T.Tensor((100,), "float32"), B: T.Tensor((100,), "float32")):
        with T.Kernel(T.ceildiv(100, 32), threads=32) as bx:
            S = T.alloc_shared((32,), "float32")
            T.copy(A[bx * 32:bx * 32 + 32], S)
            for i in T.Parallel(32):
                if bx * 32 + i < 100:
                    B[bx * 32 + i] = S[i] + 1.0

    @T.prim_func
    def expected(A: T.Tensor((100,), "float32"), B: T.Tensor((100,), "float32")):
        with T.Kernel(4, threads=32) as bx:
            S = T.alloc_shared((32,), "float32")
            if bx * 32 + 32 <= 100:  # the tile lies inside A: no per-element check
                for i in T.Parallel(32):
                    S[i] = A[bx * 32 + i]
            else:
                for i in T.Parallel(32):
                    S[i] = T.if_then_else(bx * 32 + i < 100, A[bx * 32 + i], 0.0)
            for i in T.Parallel(32):
                if bx * 32 + i < 100:
                    B[bx * 32 + i] = S[i] + 1.0

    assert_equal(run("LowerTileOpsCPU", before), expected)
