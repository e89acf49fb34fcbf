# expect: TileLangUnsupportedError: T.sync_threads under a condition on the thread index
import tilelang
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=64) as bx:
        tx = T.get_thread_binding()
        if tx < 32:  # error-here
            A[tx] = 1.0
            T.sync_threads()


tilelang.compile(main, target="cpu")
