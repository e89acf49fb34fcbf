# expect: TileLangSyntaxError: IndexError while evaluating this statement: tuple index out of range
import tilelang.language as T

sizes = (64, 64)


@T.prim_func
def main(A: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        for i in T.Parallel(sizes[5]):  # error-here
            A[i] = 0.0
