# expect: TileLangTypeError: T.c2d_im2col: kernel must be a positive int, got 0
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((1, 8, 8, 4), "float16")):
    with T.Kernel(1, threads=128) as bx:
        S = T.alloc_shared((32, 32), "float16")
        T.c2d_im2col(A, S, bx, 0, 0, 1, 1, 1)  # error-here
