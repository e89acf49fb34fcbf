# expect: TileLangTypeError: T.alloc_fragment: unknown or unsupported scope 'local.register'
import tilelang
import tilelang.language as T
import numpy as np


@T.prim_func
def main(A: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        F = T.alloc_fragment((128,), "float32", scope="local.register")  # error-here
        T.copy(A, F)
