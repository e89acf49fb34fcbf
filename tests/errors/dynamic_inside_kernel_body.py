# expect: TileLangSyntaxError: T.dynamic('n') inside a @T.prim_func body: nothing binds a size made here
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128,), "float32"), B: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        n = T.dynamic("n")  # error-here
        for i in T.Parallel(128):
            if i < n:
                B[i] = A[i]
