# expect: TileLangTypeError: T.gemm operands of dtypes int8 and int32 have no common dtype to compute in
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128, 32), "int8"), B: T.Tensor((32, 128), "int32"), C: T.Tensor((128, 128), "int32")):
    with T.Kernel(1, threads=128) as bx:
        A_shared = T.alloc_shared((128, 32), "int8")
        B_shared = T.alloc_shared((32, 128), "int32")
        C_local = T.alloc_fragment((128, 128), "int32")
        T.copy(A, A_shared)
        T.copy(B, B_shared)
        T.gemm(A_shared, B_shared, C_local)  # error-here
        T.copy(C_local, C)
