# expect: TileLangUnsupportedError: T.no_such_op is not supported by TileLang-C++
import tilelang
import tilelang.language as T
import numpy as np


@T.prim_func
def main(A: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        T.no_such_op(A)  # error-here
