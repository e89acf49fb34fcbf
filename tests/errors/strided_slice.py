# expect: TileLangSyntaxError: strided slices of buffer 'A' are not supported
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((256,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        A_shared = T.alloc_shared((128,), "float32")
        T.copy(A[0:256:2], A_shared)  # error-here
