# expect: TileLangResourceError: kernel 'main' needs 536870912 bytes of on-chip buffers per block, over the CPU target's limit of 268435456 byt
import tilelang
import tilelang.language as T
import numpy as np


@T.prim_func
def main(A: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:  # error-here
        F = T.alloc_fragment((16384, 8192), "float32")
        for i in T.Parallel(128):
            F[0, i] = A[i]
        for i in T.Parallel(128):
            A[i] = F[0, i]


tilelang.compile(main, target="cpu")
