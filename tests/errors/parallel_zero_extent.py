# expect: TileLangTypeError: T.Parallel extents must be positive, got 0
import tilelang
import tilelang.language as T
import numpy as np


@T.prim_func
def main(A: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        for i in T.Parallel(128, 0):  # error-here
            A[i] = 0.0
