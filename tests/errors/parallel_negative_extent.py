# expect: TileLangTypeError: T.Parallel extents must be positive, got -64
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128,), "float32"), B: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        for i in T.Parallel(-64):  # error-here
            B[i] = A[i]
