# expect: TileLangTypeError: index 0 of 'S' (i + 128) lies in [128, 255], always outside the buffer's extent 128 in that dimension
import tilelang
import tilelang.language as T
import numpy as np


@T.prim_func
def main(A: T.Tensor((128,), "float32"), B: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        S = T.alloc_shared((128,), "float32")
        for i in T.Parallel(128):
            S[i] = A[i]
        for i in T.Parallel(128):
            B[i] = S[i + 128]  # error-here


tilelang.compile(main, target="cuda -arch=sm_80", execution_backend="emulator")
