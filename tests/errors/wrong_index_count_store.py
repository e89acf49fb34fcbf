# expect: TileLangTypeError: buffer 'B' has 1 dimensions but is indexed with 2 indices
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128, 128), "float32"), B: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        for i in T.Parallel(128):
            B[i, 0] = A[i, 0]  # error-here
