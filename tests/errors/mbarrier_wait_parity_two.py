# expect: TileLangTypeError: T.mbarrier_wait_parity: the parity of a phase is 0 or 1
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128,), "float32"), B: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        bars = T.alloc_barrier([128])
        T.mbarrier_arrive(bars[0])
        T.mbarrier_wait_parity(bars[0], 2)  # error-here
        for i in T.Parallel(128):
            B[i] = A[i]
