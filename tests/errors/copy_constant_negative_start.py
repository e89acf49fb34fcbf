# expect: TileLangTypeError: T.copy: the region of 'B' starts at -1 in dimension 0, before the start of the tensor
import tilelang
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((8, 64), "float32"), B: T.Tensor((8, 64), "float32")):
    with T.Kernel(8, threads=64) as bx:
        cols = T.alloc_shared((64,), "float32")
        T.copy(A[bx, :], cols)
        T.copy(cols, B[-1, :])  # error-here


tilelang.compile(main, target="cpu")
