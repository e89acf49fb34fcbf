# expect: TileLangUnsupportedError: T.sync_threads inside T.Parallel
import tilelang
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=64) as bx:
        for i in T.Parallel(64):
            A[i] = 1.0
            T.sync_threads()  # error-here


tilelang.compile(main, target="cuda -arch=sm_80")
