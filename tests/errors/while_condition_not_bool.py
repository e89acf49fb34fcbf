# expect: TileLangTypeError: a `while` condition must be a comparison or another bool, not a int32 value
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((16,), "int32")):
    with T.Kernel(1, threads=32) as bx:
        while A[0]:  # error-here
            A[0] = A[0] - 1
