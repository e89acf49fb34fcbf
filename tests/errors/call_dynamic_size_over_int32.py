# expect: TileLangArgumentError: argument 0 ('A') of kernel 'main': dimension 0 is the symbol 'n' of type int32, which cannot hold 2147483664
import tilelang
import tilelang.language as T
import numpy as np

n = T.dynamic("n")


@T.prim_func
def main(A: T.Tensor((n,), "float32")):
    with T.Kernel(1, threads=32) as bx:
        A[0] = 1.0


k = tilelang.compile(main, target="cpu")
k(np.lib.stride_tricks.as_strided(np.zeros(4, np.float32), shape=(2**31 + 16,), strides=(4,)))
