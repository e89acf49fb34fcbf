# expect: TileLangTypeError: T.alloc_buffer: unknown or unsupported scope 'weird.scope'; use one of 'shared', 'shared.dyn', 'local.fragment', 'local'
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128,), "float32"), B: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        S = T.alloc_buffer((128,), "float32", scope="weird.scope")  # error-here
        T.copy(A, S)
        T.copy(S, B)
