# expect: TileLangTypeError: index bx * 128 + i + 512 of dimension 0 of 'A' is always outside the tensor (extent 256)
import tilelang
import tilelang.language as T
import numpy as np


@T.prim_func
def main(A: T.Tensor((256,), "float32")):
    with T.Kernel(4, threads=128) as bx:
        for i in T.Parallel(128):
            A[bx * 128 + i + 512] = 0.0  # error-here


tilelang.compile(main, target="cpu")
