# expect: TileLangTypeError: T.gemm accumulator C 'C_local' is (128, 64) but A x B is (M, N) = (128, 128)
import tilelang.language as T


@T.prim_func
def main(C: T.Tensor((128, 64), "float32")):
    with T.Kernel(1, threads=128) as bx:
        A_shared = T.alloc_shared((128, 32), "float16")
        B_shared = T.alloc_shared((32, 128), "float16")
        C_local = T.alloc_fragment((128, 64), "float32")
        T.gemm(A_shared, B_shared, C_local)  # error-here
        T.copy(C_local, C)
