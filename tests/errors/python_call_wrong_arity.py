# expect: TileLangTypeError: helper() missing 1 required positional argument: 'y'
import tilelang
import tilelang.language as T
import numpy as np



def helper(x, y):
    return x + y


@T.prim_func
def main(A: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        A[bx] = helper(1.0)  # error-here
