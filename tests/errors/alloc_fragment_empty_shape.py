# expect: TileLangTypeError: on-chip buffer 'F' has the empty shape (); give it a shape such as (1,)
import tilelang
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128,), "float32"), B: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        F = T.alloc_fragment((), "float32")  # error-here
        for i in T.Parallel(128):
            B[i] = A[i]


tilelang.compile(main, target="cuda -arch=sm_80", execution_backend="emulator")
