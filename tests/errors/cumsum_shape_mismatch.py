# expect: TileLangTypeError: T.cumsum destination 'dst' is (64, 32) but the source 'src' is (64, 64)
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((64, 64), "float32"), B: T.Tensor((64, 32), "float32")):
    with T.Kernel(1, threads=128) as bx:
        src = T.alloc_shared((64, 64), "float32")
        dst = T.alloc_shared((64, 32), "float32")
        T.copy(A, src)
        T.cumsum(src, dst, dim=0)  # error-here
        T.copy(dst, B)
