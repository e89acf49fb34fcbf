# expect: TileLangTypeError: has no value while the program is parsed
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((64,), "float32")):
    with T.Kernel(4, threads=128) as bx:
        for i in range(sorted([bx, 4])[0]):  # error-here
            A[i] = 0.0
