# expect: TileLangTypeError: the constant 1099511627781 does not fit in int32
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128,), "int32")):
    with T.Kernel(1, threads=128) as bx:
        for i in T.Parallel(128):
            A[i] = T.int32(2**40 + 5)  # error-here
