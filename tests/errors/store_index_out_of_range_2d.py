# expect: TileLangTypeError: index 64 of dimension 1 of 'B' is always outside the tensor (extent 64)
import tilelang
import tilelang.language as T
import numpy as np


@T.prim_func
def main(A: T.Tensor((64, 64), "float32"), B: T.Tensor((64, 64), "float32")):
    with T.Kernel(1, threads=128) as bx:
        for i in T.Parallel(64):
            B[i, 64] = A[i, 0]  # error-here


tilelang.compile(main, target="cpu")
