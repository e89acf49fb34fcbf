# expect: TileLangArgumentError: argument 1 ('s') of kernel 'main' is a scalar of type int64 but an integer of 1329 bits is out of its range
import numpy as np
import tilelang
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((1,), "int64"), s: T.int64):
    with T.Kernel(1, threads=32) as bx:
        A[0] = s


k = tilelang.compile(main, target="cuda -arch=sm_80", execution_backend="emulator")
k(np.zeros(1, np.int64), 10**400)
