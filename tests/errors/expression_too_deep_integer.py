# expect: TileLangSyntaxError: an expression here nests 1401 operations deep
import tilelang
import tilelang.language as T
import numpy as np



def chain(x, n):
    for _ in range(n):
        x = x * 3 + 1
    return x


@T.prim_func
def main(A: T.Tensor((128,), "int32")):
    with T.Kernel(1, threads=128) as bx:
        for i in T.Parallel(128):
            A[i] = chain(i, 700)  # error-here
