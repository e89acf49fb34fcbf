# expect: TileLangSyntaxError: T.ws(1) inside T.ws(0): a block runs on the threads of the warp groups of every T.ws around it, so this body would run on no thread at all
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((256,), "float32"), B: T.Tensor((256,), "float32")):
    with T.Kernel(1, threads=256) as bx:
        tx = T.get_thread_binding()
        with T.ws(0):
            with T.ws(1):  # error-here
                B[tx] = A[tx]
