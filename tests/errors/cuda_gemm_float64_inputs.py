# expect: TileLangUnsupportedError: T.gemm on CUDA (mma.sync) takes float16, bfloat16, float32 (as tf32) or fp8 (float8_e4m3fn / float8_e5m2) A and B with a float32 accumulator, float16 A and B with a float16 accumulator, or int8 A and B with an int32 accumulator; got A float64, B float64, C float64
import tilelang
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((64, 64), "float64"), B: T.Tensor((64, 64), "float64"), C: T.Tensor((64, 64), "float64")):
    with T.Kernel(1, threads=128) as bx:
        A_s = T.alloc_shared((64, 64), "float64")
        B_s = T.alloc_shared((64, 64), "float64")
        C_l = T.alloc_fragment((64, 64), "float64")
        T.copy(A, A_s)
        T.copy(B, B_s)
        T.gemm(A_s, B_s, C_l, clear_accum=True)  # error-here
        T.copy(C_l, C)


tilelang.compile(main, target="cuda")
