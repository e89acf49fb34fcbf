# expect: TileLangTypeError: buffer 'A' has 2 dimensions but is indexed with 1 indices
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128, 128), "float32"), B: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        for i in T.Parallel(128):
            B[i] = A[i] * 2.0  # error-here
