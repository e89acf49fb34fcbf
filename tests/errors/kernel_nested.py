# expect: TileLangSyntaxError: T.Kernel cannot be nested inside another T.Kernel
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        with T.Kernel(1, threads=128) as by:  # error-here
            A[by] = 0.0
