# expect: TileLangTypeError: unknown data type 'float17'
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        A_shared = T.alloc_shared((128,), "float17")  # error-here
        T.copy(A, A_shared)
