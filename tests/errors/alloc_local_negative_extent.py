# expect: TileLangTypeError: the shape of T.alloc_local must be positive, got -4
import tilelang
import tilelang.language as T
import numpy as np


@T.prim_func
def main(A: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        L = T.alloc_local((-4,), "float32")  # error-here
        A[bx] = 0.0
