# expect: TileLangTypeError: T.gemm operand A 'A' is in global memory; copy it to shared memory or a fragment first
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128, 32), "float16"), C: T.Tensor((128, 128), "float32")):
    with T.Kernel(1, threads=128) as bx:
        B_shared = T.alloc_shared((32, 128), "float16")
        C_local = T.alloc_fragment((128, 128), "float32")
        T.gemm(A, B_shared, C_local)  # error-here
        T.copy(C_local, C)
