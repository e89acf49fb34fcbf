# expect: TileLangSyntaxError: parameter 'B' needs an annotation such as T.Tensor((M, N), "float16")
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128,), "float32"),
         B):  # error-here
    with T.Kernel(1, threads=128) as bx:
        A[bx] = 0.0
