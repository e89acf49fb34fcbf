# expect: TileLangArgumentError: out_idx must be an int or a list of ints, got str '0'
import tilelang
import tilelang.language as T
import numpy as np


@T.prim_func
def main(A: T.Tensor((4,), "float32")):
    with T.Kernel(1, threads=32) as bx:
        A[0] = 1.0


tilelang.compile(main, target="cpu", out_idx="0")
