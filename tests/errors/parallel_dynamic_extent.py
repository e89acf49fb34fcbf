# expect: TileLangTypeError: T.Parallel extents must be compile-time constants, but `n` is only known at run time
import tilelang.language as T

n = T.dynamic("n")


@T.prim_func
def main(A: T.Tensor((n,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        for i in T.Parallel(n):  # error-here
            A[i] = 0.0
