# expect: TileLangSyntaxError: a block may have at most 1024 threads, T.Kernel asks for 2048
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128,), "float32")):
    with T.Kernel(4, threads=[64, 32]) as bx:  # error-here
        A[bx] = 0.0
