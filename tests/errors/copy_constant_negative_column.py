# expect: TileLangTypeError: T.copy: the region of 'A' starts at -1 in dimension 1, before the start of the tensor
import tilelang
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128, 128), "float16"), B: T.Tensor((128, 128), "float16")):
    with T.Kernel(2, threads=128) as by:
        A_s = T.alloc_shared((64, 64), "float16")
        T.copy(A[by * 64, -1], A_s)  # error-here
        T.copy(A_s, B[by * 64, 0])


tilelang.compile(main, target="cuda -arch=sm_80")
