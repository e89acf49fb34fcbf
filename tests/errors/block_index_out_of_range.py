# expect: TileLangTypeError: index 0 of 'A' (bx * 128 + i + 512) lies in [512, 1023], always outside the buffer's extent 256 in that dimens
import tilelang
import tilelang.language as T
import numpy as np


@T.prim_func
def main(A: T.Tensor((256,), "float32")):
    with T.Kernel(4, threads=128) as bx:
        for i in T.Parallel(128):
            A[bx * 128 + i + 512] = 0.0  # error-here


tilelang.compile(main, target="cpu")
