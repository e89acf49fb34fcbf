# expect: TileLangUnsupportedError: buffer 'A' has the vector type float16x4; declare it with the element type float16
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128,), "float16x4")):  # error-here
    with T.Kernel(1, threads=128) as bx:
        pass
