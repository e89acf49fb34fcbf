# expect: TileLangLayoutError: T.gemm with A in registers needs every warp to own whole rows of A; use policy=T.GemmWarpPolicy.FullRow
import tilelang
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((64, 32), "float16"), B: T.Tensor((32, 64), "float16"), C: T.Tensor((64, 64), "float32")):
    with T.Kernel(1, threads=128) as bx:
        A_r = T.alloc_fragment((64, 32), "float16")
        B_s = T.alloc_shared((32, 64), "float16")
        C_l = T.alloc_fragment((64, 64), "float32")
        T.copy(A, A_r)
        T.copy(B, B_s)
        T.gemm(A_r, B_s, C_l, clear_accum=True, policy=T.GemmWarpPolicy.FullCol)  # error-here
        T.copy(C_l, C)


tilelang.compile(main, target="cuda")
