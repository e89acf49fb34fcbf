# expect: TileLangSyntaxError: 'Buffer' object is not callable
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        A[0] = A(0)  # error-here
