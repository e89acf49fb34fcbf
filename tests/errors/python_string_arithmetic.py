# expect: TileLangTypeError: cannot use a value of Python type str in a kernel expression
import tilelang
import tilelang.language as T
import numpy as np


@T.prim_func
def main(A: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        A[bx] = A[bx] + "1"  # error-here
