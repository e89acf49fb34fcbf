# expect: TileLangTypeError: T.reshape of 'A' (64,) (64 elements) to (8, 9) (72 elements): the element counts must be equal
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=64) as bx:
        V = T.reshape(A, (8, 9))  # error-here
        V[0, 0] = 1.0
