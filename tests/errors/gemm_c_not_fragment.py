# expect: TileLangTypeError: T.gemm accumulator C 'C_shared' must be a fragment (T.alloc_fragment) or local buffer, not in shared memory
import tilelang.language as T


@T.prim_func
def main(C: T.Tensor((128, 128), "float32")):
    with T.Kernel(1, threads=128) as bx:
        A_shared = T.alloc_shared((128, 32), "float16")
        B_shared = T.alloc_shared((32, 128), "float16")
        C_shared = T.alloc_shared((128, 128), "float32")
        T.gemm(A_shared, B_shared, C_shared)  # error-here
        T.copy(C_shared, C)
