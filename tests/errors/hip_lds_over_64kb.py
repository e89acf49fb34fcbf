# expect: TileLangResourceError: needs 98304 bytes of shared memory, over the 65536-byte limit of gfx90a
import tilelang
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((1024, 1024), "float16"), B: T.Tensor((1024, 1024), "float16"), C: T.Tensor((1024, 1024), "float16")):
    with T.Kernel(8, 4, threads=256) as (bx, by):  # error-here
        A_s = T.alloc_shared((256, 64), "float16")
        B_s = T.alloc_shared((64, 128), "float16")
        C_l = T.alloc_fragment((256, 128), "float32")
        T.clear(C_l)
        for k in T.Pipelined(16, num_stages=2):
            T.copy(A[by * 256, k * 64], A_s)
            T.copy(B[k * 64, bx * 128], B_s)
            T.gemm(A_s, B_s, C_l)
        T.copy(C_l, C[by * 256, bx * 128])


tilelang.compile(main, target="hip", execution_backend="emulator")
