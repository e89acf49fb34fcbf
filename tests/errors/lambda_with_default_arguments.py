# expect: TileLangSyntaxError: a lambda inside a T.prim_func takes plain positional parameters only
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        f = lambda x, scale=2.0: x * scale  # error-here
        A[0] = f(A[0])
