# expect: TileLangTypeError: the constant -1 does not fit in uint8
import tilelang
import tilelang.language as T
import numpy as np


@T.prim_func
def main(A: T.Tensor((128,), "uint8")):
    with T.Kernel(1, threads=128) as bx:
        A[bx] = T.uint8(-1)  # error-here
