# expect: TileLangArgumentError: argument 0 ('A') of kernel 'main': the array's byte strides (6,) are not multiples of its item size (4 bytes)
import tilelang
import tilelang.language as T
import numpy as np


@T.prim_func
def main(A: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=32) as bx:
        A[0] = 1.0


k = tilelang.compile(main, target="cpu")
k(np.ndarray((128,), np.float32, buffer=np.zeros(768, np.uint8), strides=(6,)))
