# expect: TileLangTypeError: T.mbarrier_arrive takes one barrier, but 'bars' is the list of 2 barriers from T.alloc_barrier; pick one: bars[i]
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128,), "float32"), B: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        bars = T.alloc_barrier([128, 128])
        T.mbarrier_arrive(bars)  # error-here
        T.mbarrier_wait_parity(bars[0], 0)
        for i in T.Parallel(128):
            B[i] = A[i]
