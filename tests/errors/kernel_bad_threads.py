# expect: TileLangSyntaxError: threads= must be positive compile-time integers, got 0
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128,), "float32")):
    with T.Kernel(4, threads=0) as bx:  # error-here
        A[bx] = 0.0
