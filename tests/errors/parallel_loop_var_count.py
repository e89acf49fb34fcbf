# expect: TileLangSyntaxError: the loop has 2 dimensions but 1 loop variables
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((64, 64), "float32")):
    with T.Kernel(1, threads=128) as bx:
        for i in T.Parallel(64, 64):  # error-here
            A[i, 0] = 0.0
