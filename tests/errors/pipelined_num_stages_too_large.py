# expect: TileLangSyntaxError: num_stages=2147483647 is more than the 32 stages a pipeline may have
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128, 128), "float16"), B: T.Tensor((128, 128), "float16")):
    with T.Kernel(1, threads=128) as bx:
        S = T.alloc_shared((32, 128), "float16")
        for k in T.Pipelined(4, num_stages=2**31 - 1):  # error-here
            T.copy(A[k * 32, 0], S)
            T.copy(S, B[k * 32, 0])
