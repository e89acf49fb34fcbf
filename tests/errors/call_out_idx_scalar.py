# expect: TileLangArgumentError: out_idx names parameter 1 ('s'), which is a scalar
import tilelang
import tilelang.language as T
import numpy as np


@T.prim_func
def main(A: T.Tensor((4,), "float32"), s: T.float32):
    with T.Kernel(1, threads=32) as bx:
        A[0] = s


tilelang.compile(main, target="cpu", out_idx=[1])
