# expect: TileLangTypeError: index i + 1000 of dimension 0 of 'A' is always outside the tensor (extent 128)
import tilelang
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128,), "float32"), B: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        for i in T.Parallel(64):
            B[i] = A[i + 1000]  # error-here


tilelang.compile(main, target="cuda -arch=sm_80", execution_backend="emulator")
