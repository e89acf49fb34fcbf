# expect: TileLangTypeError: the constant 200 does not fit in int8
import tilelang
import tilelang.language as T
import numpy as np


@T.prim_func
def main(A: T.Tensor((128,), "int8")):
    with T.Kernel(1, threads=128) as bx:
        A[bx] = T.int8(200)  # error-here
