# expect: TileLangTypeError: the shape of T.alloc_shared must be compile-time constants, but dimension `n` is only known at run time
import tilelang.language as T

n = T.dynamic("n")


@T.prim_func
def main(A: T.Tensor((n,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        A_shared = T.alloc_shared((n,), "float32")  # error-here
        T.copy(A, A_shared)
