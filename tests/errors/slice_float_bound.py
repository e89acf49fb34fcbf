# expect: TileLangTypeError: slice 0 of buffer 'A' has a floating-point bound
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128,), "float32"), B: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        S = T.alloc_shared((64,), "float32")
        T.copy(A[0:64.0], S)  # error-here
        T.copy(S, B[0:64])
