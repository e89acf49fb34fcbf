# expect: TileLangArgumentError: argument 1 ('B') of kernel 'main' is written by the kernel but the array is read-only
import numpy as np
import tilelang
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128,), "float32"), B: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        for i in T.Parallel(128):
            B[i] = A[i]


k = tilelang.compile(main, target="cuda -arch=sm_80", execution_backend="emulator")
out = np.frombuffer(bytes(512), dtype=np.float32)
k(np.zeros(128, np.float32), out)
