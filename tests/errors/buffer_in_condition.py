# expect: TileLangTypeError: cannot use a value of Python type Buffer in a kernel expression
import tilelang
import tilelang.language as T
import numpy as np


@T.prim_func
def main(A: T.Tensor((128,), "float32"), B: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        for i in T.Parallel(128):
            if A[i] > 0 and A:  # error-here
                B[i] = A[i]
