# expect: TileLangSyntaxError: T.Kernel takes at most 3 grid dimensions, got 4
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128,), "float32")):
    with T.Kernel(2, 2, 2, 2, threads=128) as (bx, by, bz, bw):  # error-here
        A[bx] = 0.0
