# expect: TileLangTypeError: T.gemm operands A 'A_shared' (float16) and B 'B_shared' (float32) must have the same dtype
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128, 32), "float16"), B: T.Tensor((32, 128), "float32"), C: T.Tensor((128, 128), "float32")):
    with T.Kernel(1, threads=128) as bx:
        A_shared = T.alloc_shared((128, 32), "float16")
        B_shared = T.alloc_shared((32, 128), "float32")
        C_local = T.alloc_fragment((128, 128), "float32")
        T.copy(A, A_shared)
        T.copy(B, B_shared)
        T.gemm(A_shared, B_shared, C_local)  # error-here
        T.copy(C_local, C)
