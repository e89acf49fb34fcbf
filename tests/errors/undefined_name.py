# expect: TileLangSyntaxError: name 'B_shared' is not defined
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128, 128), "float16")):
    with T.Kernel(1, threads=128) as bx:
        A_shared = T.alloc_shared((128, 128), "float16")
        T.copy(A, B_shared)  # error-here
