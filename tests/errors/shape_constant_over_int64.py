# expect: TileLangTypeError: the constant 9223372036854775808 does not fit in int64 (-2^63 .. 2^63 - 1), the widest integer type; reduce the value
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((2**63, 4), "float32"),  # error-here
         B: T.Tensor((4,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        for i in T.Parallel(4):
            B[i] = A[0, i]
