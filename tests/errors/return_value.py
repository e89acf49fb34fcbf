# expect: TileLangSyntaxError: a T.prim_func returns nothing; write results to an output tensor
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        A[bx] = 1.0
    return A  # error-here
