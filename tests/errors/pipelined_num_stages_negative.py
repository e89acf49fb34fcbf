# expect: TileLangSyntaxError: num_stages must be a non-negative compile-time int, got -1
import tilelang
import tilelang.language as T
import numpy as np


@T.prim_func
def main(A: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        for k in T.Pipelined(4, num_stages=-1):  # error-here
            A[k] = 0.0
