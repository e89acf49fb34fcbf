# expect: TileLangTypeError: T.alloc_global: scope must be 'global', got 'shared'
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((16,), "float32")):
    with T.Kernel(1, threads=32) as bx:
        W = T.alloc_global((16,), "float32", scope="shared")  # error-here
        A[0] = W[0]
