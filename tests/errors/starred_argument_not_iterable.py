# expect: TileLangSyntaxError: the argument after * must be a Python list or tuple, not int
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128,), "float32"), B: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        S = T.alloc_shared((128,), "float32")
        T.copy(A, *3)  # error-here
