# expect: TileLangUnsupportedError: the HIP backend does not support the dtype float8_e4m3fn yet
import tilelang
import tilelang.language as T
import numpy as np


@T.prim_func
def main(A: T.Tensor((128,), "float8_e4m3fn"), B: T.Tensor((128,), "float32")):  # error-here
    with T.Kernel(1, threads=128) as bx:
        for i in T.Parallel(128):
            B[i] = T.cast(A[i], "float32")


tilelang.compile(main, target="hip")
