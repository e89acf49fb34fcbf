# expect: TileLangUnsupportedError: a `while` loop on a run-time condition is not supported
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        while A[0] < 1.0:  # error-here
            A[0] = A[0] + 1.0
