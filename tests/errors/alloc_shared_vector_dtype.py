# expect: TileLangUnsupportedError: buffer 'S' has the vector type float32x4
import tilelang
import tilelang.language as T
import numpy as np


@T.prim_func
def main(A: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        S = T.alloc_shared((32,), "float32x4")  # error-here
        A[bx] = 0.0
