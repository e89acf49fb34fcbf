# expect: TileLangUnsupportedError: the thread index (T.get_thread_binding / T.thread_binding) inside T.Parallel
import tilelang
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=64) as bx:
        tx = T.get_thread_binding()
        for i in T.Parallel(64):  # error-here
            A[i] = A[i] + tx


tilelang.compile(main, target="cuda -arch=sm_80")
