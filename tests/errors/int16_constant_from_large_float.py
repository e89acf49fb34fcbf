# expect: TileLangTypeError: the constant 1000000.000000 does not fit in int16
import tilelang
import tilelang.language as T
import numpy as np


@T.prim_func
def main(A: T.Tensor((128,), "int16")):
    with T.Kernel(1, threads=128) as bx:
        A[bx] = T.int16(1e6)  # error-here
