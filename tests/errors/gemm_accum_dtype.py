# expect: TileLangTypeError: T.gemm accumulator C 'C_local' is float32 but int8 inputs need int32
import tilelang.language as T


@T.prim_func
def main(C: T.Tensor((64, 64), "float32")):
    with T.Kernel(1, threads=128) as bx:
        A_shared = T.alloc_shared((64, 32), "int8")
        B_shared = T.alloc_shared((32, 64), "int8")
        C_local = T.alloc_fragment((64, 64), "float32")
        T.gemm(A_shared, B_shared, C_local)  # error-here
        T.copy(C_local, C)
