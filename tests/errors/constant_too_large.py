# expect: TileLangTypeError: the constant an integer of 401 digits does not fit in int64
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128,), "int64")):
    with T.Kernel(1, threads=128) as bx:
        for i in T.Parallel(128):
            A[i] = A[i] + 10**400  # error-here
