# expect: TileLangLayoutError: T.gemm on CUDA needs K to be a multiple of 16 (mma.sync m16n8k16); K = 24
import tilelang
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((64, 24), "float16"), B: T.Tensor((24, 64), "float16"), C: T.Tensor((64, 64), "float32")):
    with T.Kernel(1, threads=128) as bx:
        A_s = T.alloc_shared((64, 24), "float16")
        B_s = T.alloc_shared((24, 64), "float16")
        C_l = T.alloc_fragment((64, 64), "float32")
        T.copy(A, A_s)
        T.copy(B, B_s)
        T.gemm(A_s, B_s, C_l, clear_accum=True)  # error-here
        T.copy(C_l, C)


tilelang.compile(main, target="cuda")
