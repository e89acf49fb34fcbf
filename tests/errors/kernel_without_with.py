# expect: TileLangSyntaxError: T.Kernel must be used as `with T.Kernel(...) as bx:`
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128,), "float32")):
    T.Kernel(1, threads=128)  # error-here
    A[0] = 0.0
