# expect: TileLangTypeError: T.gemm wg_wait is a constant integer, got 1.5
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((64, 64), "float16"), B: T.Tensor((64, 64), "float16"), C: T.Tensor((64, 64), "float32")):
    with T.Kernel(1, threads=128) as bx:
        A_s = T.alloc_shared((64, 64), "float16")
        B_s = T.alloc_shared((64, 64), "float16")
        C_l = T.alloc_fragment((64, 64), "float32")
        T.copy(A, A_s)
        T.copy(B, B_s)
        T.clear(C_l)
        T.gemm(A_s, B_s, C_l, wg_wait=1.5)  # error-here
        T.copy(C_l, C)
