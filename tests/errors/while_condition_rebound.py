# expect: TileLangSyntaxError: the `while` condition reads s, which the loop body rebinds as a Python name
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        s = A[0] * 2.0
        while s < 1.0:  # error-here
            s = s + 1.0
        A[1] = s
