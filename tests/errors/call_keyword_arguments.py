# expect: TileLangArgumentError: kernel 'main' takes its arguments by position only; got keyword argument(s) B
import numpy as np
import tilelang
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128,), "float32"), B: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        for i in T.Parallel(128):
            B[i] = A[i]


k = tilelang.compile(main, target="cuda -arch=sm_80", execution_backend="emulator")
k(np.zeros(128, np.float32), B=np.zeros(128, np.float32))
