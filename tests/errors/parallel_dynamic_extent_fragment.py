# expect: TileLangUnsupportedError: a T.Parallel loop whose extent is known only at run time cannot touch the fragment 'F'
import tilelang
import tilelang.language as T

n = T.dynamic("n")


@T.prim_func
def main(A: T.Tensor((n,), "float32"), B: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=64) as bx:
        F = T.alloc_fragment((64,), "float32")
        T.fill(F, 0.0)
        for i in T.Parallel(n):  # error-here
            F[i % 64] = A[i]
        T.copy(F, B)


tilelang.compile(main, target="cuda -arch=sm_80")
