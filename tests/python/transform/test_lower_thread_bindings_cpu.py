"""LowerThreadBindingsCPU: per-thread statements become loops over the block's threads, split where the
GPU has a barrier; a local written per thread and used again in a later phase (or by a whole-block
statement such as T.clear) gets one copy per thread -- a [threads, ...] buffer indexed by the thread's
loop variable -- as each GPU thread has its own registers."""
import tilelang.language as T

from passes import assert_equal, run


def test_locals_live_across_a_barrier_get_one_copy_per_thread():
    @T.prim_func
    def before(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            v = T.alloc_var("float32", init=1.0)
            L = T.alloc_local((2,), "float32")
            tx = T.call_intrin("int32", "tl.thread_idx")
            T.fill(L, 0.0)
            v[0] = A[tx] * 2.0 + v[0]
            L[1] = v[0]
            T.call_intrin("void", "tl.syncthreads")
            B[tx] = v[0] + L[1] + A[(tx + 1) % 64]

    @T.prim_func
    def expected(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            v = T.alloc_local((64, 1), "float32")
            L = T.alloc_local((64, 2), "float32")
            for thread in T.serial(0, 64):
                v[thread, 0] = 1.0
                T.fill(L[thread:thread + 1, 0:2], 0.0)
                v[thread, 0] = A[thread] * 2.0 + v[thread, 0]
                L[thread, 1] = v[thread, 0]
            for thread_1 in T.serial(0, 64):
                B[thread_1] = v[thread_1, 0] + L[thread_1, 1] + A[(thread_1 + 1) % 64]

    assert_equal(run("LowerThreadBindingsCPU", before, target="cpu"), expected)


def test_a_local_used_in_one_phase_keeps_one_copy():
    @T.prim_func
    def before(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            S = T.alloc_shared((64,), "float32")
            L = T.alloc_local((1,), "float32")
            tx = T.call_intrin("int32", "tl.thread_idx")
            L[0] = A[tx] + 1.0
            S[tx] = L[0]
            T.call_intrin("void", "tl.syncthreads")
            B[tx] = S[(tx + 1) % 64]

    @T.prim_func
    def expected(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            S = T.alloc_shared((64,), "float32")
            L = T.alloc_local((1,), "float32")
            for thread in T.serial(0, 64):
                L[0] = A[thread] + 1.0
                S[thread] = L[0]
            for thread_1 in T.serial(0, 64):
                B[thread_1] = S[(thread_1 + 1) % 64]

    assert_equal(run("LowerThreadBindingsCPU", before, target="cpu"), expected)
