# expect: TileLangTypeError: T.thread_binding over 256 threadIdx.x threads, but the kernel has threads=(128,)
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((256,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        for t in T.thread_binding(0, 256, thread="threadIdx.x"):  # error-here
            A[t] = 0.0
