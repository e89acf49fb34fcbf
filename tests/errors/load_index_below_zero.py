# expect: TileLangTypeError: index i - 200 of dimension 0 of 'A' is always outside the tensor (extent 128)
import tilelang
import tilelang.language as T
import numpy as np


@T.prim_func
def main(A: T.Tensor((128,), "float32"), B: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        for i in T.Parallel(128):
            B[i] = A[i - 200]  # error-here


tilelang.compile(main, target="cpu")
