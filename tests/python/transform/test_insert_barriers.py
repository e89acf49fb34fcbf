"""InsertBarriers: a __syncthreads before a statement that reads shared bytes written since the last
barrier, or writes bytes read or written since then by another op. Writes of one tile op (one
thread partition) need no barrier among themselves; buffers alias when their byte ranges overlap."""
import tilelang.language as T

from passes import assert_equal, run


def test_raw_war_waw_and_op_identity():
    @T.prim_func
    def before(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            smem = T.alloc_shared((512,), "uint8")
            X = T.alloc_shared((64,), "float32", data=smem, byte_offset=0)
            Y = T.alloc_shared((64,), "float32", data=smem, byte_offset=256)
            tx = T.call_intrin("int32", "tl.thread_idx")
            with T.attr(None, "tl.tile_op", 0):
                for l in T.unroll(2):
                    X[l * 32 + tx % 32] = A[tx]
            with T.attr(None, "tl.tile_op", 1):
                X[tx] = B[tx]
            Y[tx] = A[tx]
            B[tx] = X[(tx + 1) % 64] + Y[tx]
            X[tx] = 0.0

    @T.prim_func
    def expected(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            smem = T.alloc_shared((512,), "uint8")
            X = T.alloc_shared((64,), "float32", data=smem, byte_offset=0)
            Y = T.alloc_shared((64,), "float32", data=smem, byte_offset=256)
            tx = T.call_intrin("int32", "tl.thread_idx")
            with T.attr(None, "tl.tile_op", 0):
                for l in T.unroll(2):
                    X[l * 32 + tx % 32] = A[tx]  # one op: no barrier between its iterations
            with T.attr(None, "tl.tile_op", 1):
                T.call_intrin("void", "tl.syncthreads")  # write after another op's write
                X[tx] = B[tx]
            Y[tx] = A[tx]  # bytes 256.. are not those of X: no barrier
            T.call_intrin("void", "tl.syncthreads")  # read after write
            B[tx] = X[(tx + 1) % 64] + Y[tx]
            T.call_intrin("void", "tl.syncthreads")  # write after read
            X[tx] = 0.0

    assert_equal(run("InsertBarriers", before), expected)


def test_overlapping_views_alias():
    @T.prim_func
    def before(A: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            smem = T.alloc_shared((256,), "uint8")
            X = T.alloc_shared((64,), "float32", data=smem, byte_offset=0)
            H = T.alloc_shared((128,), "float16", data=smem, byte_offset=0)
            tx = T.call_intrin("int32", "tl.thread_idx")
            X[tx] = A[tx]
            H[tx] = T.float16(1.0)

    @T.prim_func
    def expected(A: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            smem = T.alloc_shared((256,), "uint8")
            X = T.alloc_shared((64,), "float32", data=smem, byte_offset=0)
            H = T.alloc_shared((128,), "float16", data=smem, byte_offset=0)
            tx = T.call_intrin("int32", "tl.thread_idx")
            X[tx] = A[tx]
            T.call_intrin("void", "tl.syncthreads")
            H[tx] = T.float16(1.0)

    assert_equal(run("InsertBarriers", before), expected)


def test_pipeline_managed_buffers_are_left_to_the_pipeline():
    @T.prim_func
    def before(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            smem = T.alloc_shared((256,), "uint8")
            S = T.alloc_shared((64,), "float32", data=smem, byte_offset=0)
            tx = T.call_intrin("int32", "tl.thread_idx")
            with T.attr(S, "tl.pipeline_managed", 1):
                for k in T.serial(4):
                    S[tx] = A[tx]
                    B[tx] = S[63 - tx]

    @T.prim_func
    def expected(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            smem = T.alloc_shared((256,), "uint8")
            S = T.alloc_shared((64,), "float32", data=smem, byte_offset=0)
            tx = T.call_intrin("int32", "tl.thread_idx")
            with T.attr(S, "tl.pipeline_managed", 1):
                for k in T.serial(4):
                    S[tx] = A[tx]
                    B[tx] = S[63 - tx]

    assert_equal(run("InsertBarriers", before), expected)


def test_a_uniform_if_condition_reading_shared_memory_is_ordered():
    """Regression (found with `if S[0] > x: break`): the condition of a thread-uniform `if` reads before either
    branch, so it needs the barrier after the previous iteration's writes, before the `if`."""

    @T.prim_func
    def before(A: T.Tensor((64,), "float32"), n: T.int32):
        with T.Kernel(1, threads=64) as bx:
            smem = T.alloc_shared((256,), "uint8")
            S = T.alloc_shared((64,), "float32", data=smem, byte_offset=0)
            tx = T.call_intrin("int32", "tl.thread_idx")
            S[tx] = A[tx]
            for it in T.serial(n):
                if S[0] < 4.0:
                    S[tx] = S[tx] * 2.0
            A[tx] = S[tx]

    @T.prim_func
    def expected(A: T.Tensor((64,), "float32"), n: T.int32):
        with T.Kernel(1, threads=64) as bx:
            smem = T.alloc_shared((256,), "uint8")
            S = T.alloc_shared((64,), "float32", data=smem, byte_offset=0)
            tx = T.call_intrin("int32", "tl.thread_idx")
            S[tx] = A[tx]
            for it in T.serial(n):
                T.call_intrin("void", "tl.syncthreads")  # S[0] was written by thread 0 (here or last iteration)
                if S[0] < 4.0:
                    T.call_intrin("void", "tl.syncthreads")  # every thread read S[0] before thread 0 writes it
                    S[tx] = S[tx] * 2.0
            T.call_intrin("void", "tl.syncthreads")  # another statement's writes (the pass does not track threads)
            A[tx] = S[tx]

    assert_equal(run("InsertBarriers", before), expected)
