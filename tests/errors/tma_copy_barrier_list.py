# expect: TileLangTypeError: T.tma_copy takes one barrier, but 'bars' is the list of 2 barriers
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((64, 64), "float16"), B: T.Tensor((64, 64), "float16")):
    with T.Kernel(1, threads=128) as bx:
        bars = T.alloc_barrier([1, 1])
        A_s = T.alloc_shared((64, 64), "float16")
        T.tma_copy(A[0:64, 0:64], A_s, barrier=bars)  # error-here
        T.mbarrier_wait_parity(bars[0], 0)
        T.copy(A_s, B)
