# expect: TileLangTypeError: dim=-3 of T.cumsum is out of range for the 2-d source 'src'
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((64, 64), "float32")):
    with T.Kernel(1, threads=128) as bx:
        src = T.alloc_shared((64, 64), "float32")
        T.copy(A, src)
        T.cumsum(src, dim=-3)  # error-here
        T.copy(src, A)
