# expect: TileLangSyntaxError: an expression here nests 3002 operations deep; the compiler accepts at most 1000
import tilelang.language as T


def polynomial(x, n):
    """A Python helper that builds a deep expression while the kernel is parsed."""
    for _ in range(n):
        x = x * 1.0001 + 1.0
    return x


@T.prim_func
def main(A: T.Tensor((128,), "float32"), B: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        for i in T.Parallel(128):
            B[i] = polynomial(A[i], 1500)  # error-here
