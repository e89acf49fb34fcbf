# expect: TileLangLayoutError: layout conflict for fragment 'C_l': T.gemm accumulator at
import tilelang
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128, 64), "float16"), B: T.Tensor((64, 128), "float16"), C: T.Tensor((128, 128), "float32")):
    with T.Kernel(1, threads=128) as bx:
        A_s = T.alloc_shared((128, 64), "float16")
        B_s = T.alloc_shared((64, 128), "float16")
        C_l = T.alloc_fragment((128, 128), "float32")
        T.copy(A, A_s)
        T.copy(B, B_s)
        T.gemm(A_s, B_s, C_l, clear_accum=True, policy=T.GemmWarpPolicy.FullRow)
        T.gemm(A_s, B_s, C_l, policy=T.GemmWarpPolicy.FullCol)  # error-here
        T.copy(C_l, C)


tilelang.compile(main, target="cuda", execution_backend="emulator")
