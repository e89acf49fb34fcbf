# expect: TileLangArgumentError: argument 1 ('s') of kernel 'main': expected a NumPy array, a PyTorch tensor or a DLPack tensor, got complex
import tilelang
import tilelang.language as T
import numpy as np


@T.prim_func
def main(A: T.Tensor((4,), "float32"), s: T.float32):
    with T.Kernel(1, threads=32) as bx:
        for i in T.Parallel(4):
            A[i] = T.cast(s, "float32")


k = tilelang.compile(main, target="cpu")
k(np.zeros(4, np.float32), 1j)
