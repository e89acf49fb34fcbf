# expect: TileLangTypeError: unknown data type 'flaot16'
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128,), "flaot16")):  # error-here
    with T.Kernel(1, threads=128) as bx:
        A[bx] = 0.0
