# expect: TileLangSyntaxError: T.Kernel has 2 grid dimensions but binds 3 names
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128, 128), "float32")):
    with T.Kernel(4, 4, threads=128) as (bx, by, bz):  # error-here
        A[bx, by] = 0.0
