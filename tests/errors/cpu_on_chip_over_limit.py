# expect: TileLangResourceError: bytes of on-chip buffers per block, over the CPU target's limit of 268435456 bytes
import tilelang
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128,), "float32"), B: T.Tensor((128,), "float32")):
    with T.Kernel(2, threads=128) as bx:  # error-here
        S = T.alloc_shared((2**32,), "float32")
        for i in T.Parallel(128):
            S[i] = A[i]
        for i in T.Parallel(128):
            B[i] = S[i]


tilelang.compile(main, target="cpu")
