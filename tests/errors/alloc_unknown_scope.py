# expect: TileLangTypeError: T.alloc_shared: unknown or unsupported scope 'shared.tmem'
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128,), "float32"), B: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        S = T.alloc_shared((128,), "float32", scope="shared.tmem")  # error-here
        T.copy(A, S)
        T.copy(S, B)
