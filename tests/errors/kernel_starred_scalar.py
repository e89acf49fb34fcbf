# expect: TileLangSyntaxError: the argument after * must be a Python list or tuple, not int
import tilelang.language as T

grid = 4


@T.prim_func
def main(A: T.Tensor((128,), "float32")):
    with T.Kernel(*grid, threads=128) as bx:  # error-here
        A[bx] = 0.0
