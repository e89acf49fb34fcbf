# expect: TileLangLayoutError: T.gemm: a 24x64 accumulator cannot be split over 4 warps with policy Square
import tilelang
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((24, 32), "float16"), B: T.Tensor((32, 64), "float16"), C: T.Tensor((24, 64), "float32")):
    with T.Kernel(1, threads=128) as bx:
        A_s = T.alloc_shared((24, 32), "float16")
        B_s = T.alloc_shared((32, 64), "float16")
        C_l = T.alloc_fragment((24, 64), "float32")
        T.copy(A, A_s)
        T.copy(B, B_s)
        T.gemm(A_s, B_s, C_l, clear_accum=True)  # error-here
        T.copy(C_l, C)


tilelang.compile(main, target="cuda")
