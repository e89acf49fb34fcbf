# expect: TileLangTypeError: T.alloc_var: unknown or unsupported scope 'shared'
import tilelang
import tilelang.language as T
import numpy as np


@T.prim_func
def main(A: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        v = T.alloc_var("float32", scope="shared")  # error-here
        A[bx] = v
