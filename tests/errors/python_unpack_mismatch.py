# expect: TileLangSyntaxError: cannot unpack 3 values into 2 names
import tilelang
import tilelang.language as T
import numpy as np


@T.prim_func
def main(A: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        a, b = (1, 2, 3)  # error-here
        A[bx] = 0.0
