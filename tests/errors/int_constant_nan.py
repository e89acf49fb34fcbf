# expect: TileLangTypeError: NaN cannot be converted to the integer type int32
import tilelang
import tilelang.language as T
import numpy as np


@T.prim_func
def main(A: T.Tensor((128,), "int32")):
    with T.Kernel(1, threads=128) as bx:
        A[bx] = T.int32(float("nan"))  # error-here
