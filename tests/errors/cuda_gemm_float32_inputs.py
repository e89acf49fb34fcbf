# expect: TileLangUnsupportedError: T.gemm on CUDA (mma.sync) takes float16, bfloat16 or fp8 (float8_e4m3fn / float8_e5m2) A and B with a float32 accumulator, or int8 A and B with an int32 accumulator; got A float32
import tilelang
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((64, 64), "float32"), B: T.Tensor((64, 64), "float32"), C: T.Tensor((64, 64), "float32")):
    with T.Kernel(1, threads=128) as bx:
        A_s = T.alloc_shared((64, 64), "float32")
        B_s = T.alloc_shared((64, 64), "float32")
        C_l = T.alloc_fragment((64, 64), "float32")
        T.copy(A, A_s)
        T.copy(B, B_s)
        T.gemm(A_s, B_s, C_l, clear_accum=True)  # error-here
        T.copy(C_l, C)


tilelang.compile(main, target="cuda")
